//! The copy engine's boxes of a `refill = tma` variant: what each call's tensor maps read, fixed by the
//! description (docs/KERNELS.md). The launcher encodes maps of these boxes for a call's buffers and shape; it
//! never asks which engine or staging made them.

use crate::description::{Refill, RingLanes, VariantDescription};
use crate::layout::{shared_layout, token_box_chunks, window_token_box, RING_FRAGMENT_SUPERBLOCKS};

/// How the copy engine lays each box row out in shared memory: as it is, or in the 64- or 128-byte swizzle that
/// wgmma's descriptors read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B64,
    B128,
}

/// The boxes of a `refill = tma` variant. Each box is one region of a stage: a weight row of the stage is the block
/// and the first bytes of the next (`smem_weights`' row stride), a token row the window's 256 bytes and the next
/// few (`smem_activations`' row stride), which no lane reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapBoxes {
    /// 16-bit elements of a weight row's box, and its rows.
    pub weight_elements: u32,
    pub weight_rows: u32,
    /// Elements of a token row's box (16-bit, or 32-bit for a fragment ring, whose rows are longer than 256
    /// 16-bit elements), and its rows (`tile_n`).
    pub token_elements: u32,
    pub token_element_bytes: u32,
    pub token_rows: u32,
    /// Groups of the scales' box (`kdr` chunks of per-32 scales, or one super-block's per-256 ones): rows of
    /// `tile_n` scales, one a group.
    pub scale_rows: u32,
    /// int8 planes per activation value (2 under `int12_per256`): a token's row is `k * planes` bytes.
    pub planes: u32,
    /// Activation values per scale (32 or 256): the scales have `k / group` rows.
    pub group: u32,
    /// The swizzle the tokens' boxes land in: wgmma reads them through swizzled descriptors, in the 64-byte swizzle
    /// for one chunk a box and the 128-byte one for two; the mma engines' boxes are not swizzled.
    pub token_swizzle: Swizzle,
    /// Chunk groups of a window that one token box takes (the map's third dimension: the int12 engine's window
    /// box, [`window_token_box`]), or none for two-dimensional token boxes.
    pub token_groups: Option<u32>,
}

impl TensorMapBoxes {
    /// The boxes of `desc`, or none when its stages are not brought by the copy engine.
    pub fn of(desc: &VariantDescription) -> Option<TensorMapBoxes> {
        if desc.refill != Refill::Tma {
            return None;
        }
        let layout = shared_layout(desc);
        let stride = |region: &str| layout.region(region).map_or(0, |r| r.row_stride);
        if desc.ring_lanes == RingLanes::Fragments {
            // A ring's box is one row group's 16 rows, and a stage holds RING_FRAGMENT_SUPERBLOCKS super-blocks.
            return Some(TensorMapBoxes {
                weight_elements: stride("smem_weights") / 2,
                weight_rows: 16,
                token_elements: stride("smem_activations") / 4,
                token_element_bytes: 4,
                token_rows: desc.tile_n,
                scale_rows: RING_FRAGMENT_SUPERBLOCKS * 8,
                planes: 1,
                group: 32,
                token_swizzle: Swizzle::None,
                token_groups: None,
            });
        }
        let group = desc.mode.activation_group();
        let box_chunks = token_box_chunks(desc);
        Some(TensorMapBoxes {
            weight_elements: stride("smem_weights") / 2,
            weight_rows: desc.nbj,
            // wgmma reads its tokens through swizzled descriptors: the kernel copies a window token_box_chunks
            // chunks a box, their 64 bytes (both planes) each of every token's row (docs/KERNELS.md).
            token_elements: if desc.engine.is_wgmma() {
                32 * box_chunks
            } else {
                stride("smem_activations") / 2
            },
            token_element_bytes: 2,
            token_rows: desc.tile_n,
            scale_rows: (desc.kdr * 32).div_ceil(group),
            planes: desc.mode.activation_planes(),
            group,
            token_swizzle: match (desc.engine.is_wgmma(), box_chunks) {
                (false, _) => Swizzle::None,
                (true, 1) => Swizzle::B64,
                (true, _) => Swizzle::B128,
            },
            token_groups: window_token_box(desc).then(|| desc.kdr / box_chunks),
        })
    }
}
