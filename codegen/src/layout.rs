//! The shared-memory layout of a variant: one function that both the validator (the architecture's limit)
//! and the renderer (the offsets in the generated code) call, so the two can never disagree.

use crate::description::{
    Engine, NumericsMode, Producer, Refill, RingLanes, Segment, Totals, VariantDescription,
    SEGMENT_SUPERBLOCKS, SUPERBLOCK_K,
};

/// Bytes added to every staged row so that neighbouring rows start in different banks, keeping 16-byte alignment.
pub const ROW_PAD_BYTES: u32 = 16;

/// A padded q6_K block (docs/DESIGN.md D2): 210 bytes, zero-padded to 16-byte alignment.
pub const PADDED_BLOCK_BYTES: u32 = 224;

/// One named region of a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The name the generated code uses for the region (`smem_weights`, ...).
    pub name: &'static str,
    /// Byte offset inside one stage; a multiple of 16.
    pub offset: u32,
    pub bytes: u32,
    /// Bytes from one row (weight row, token or chunk, per region) to the next.
    pub row_stride: u32,
}

/// All regions of one stage, repeated `stages` times, then the segment totals when they live in shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedLayout {
    pub regions: Vec<Region>,
    pub stage_bytes: u32,
    pub stages: u32,
    /// One f32 per output of the block tile after the stages (`totals = shared`), else 0.
    pub totals_bytes: u32,
    /// One f32 per output of the block tile after the totals (`segment = shared`), else 0.
    pub segment_bytes: u32,
    /// After the totals and segments, with `refill = tma`: per stage an mbarrier (8 bytes) its copies land on, then per stage
    /// a count of the warps done reading it (4 bytes) or, with a producer warpgroup, the mbarrier the warps free it on
    /// (8 bytes), 16-byte rounded; else 0.
    pub stage_barrier_bytes: u32,
    /// Regions each window's tokens are written into during the window before it, after the stages and the
    /// totals (engine `wgmma_f16_regfold`: the tokens in f16, the activation scales chunk-major), in
    /// `window_buffers` buffers of `window_buffer_bytes`; their offsets count from the start of shared memory and
    /// are those of buffer 0. Empty for other engines.
    pub window_regions: Vec<Region>,
    pub window_buffers: u32,
    pub window_buffer_bytes: u32,
    /// The fold warpgroup's ring (`fold_warps > 0`), after everything above; offsets from the start.
    pub fold_ring: Option<FoldRing>,
    pub total_bytes: u32,
}

/// Chunks of h and l fragments the fold warpgroup may be ahead of the wgmmas that read them.
pub const FOLD_SLOTS: u32 = 4;

/// Where a fold warpgroup leaves its fragments (`fold_warps > 0`), every offset from the start of shared memory: the
/// slots (one chunk's h and then l fragments of every row of the tile, 16 bytes a lane in the order the tile's lanes
/// hold them), the weight scales of two windows (one f32 a row), then the mbarriers: per stage one its weights land
/// on, per slot one the fold warps fill it on and one the tile's warps empty it on.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FoldRing {
    pub slots_offset: u32,
    pub slots: u32,
    pub slot_bytes: u32,
    pub weight_d_offset: u32,
    pub barriers_offset: u32,
    pub bytes: u32,
}

impl FoldRing {
    fn new(desc: &VariantDescription, offset: u32) -> FoldRing {
        // 128-byte aligned, as a core matrix is.
        let slots_offset = offset.div_ceil(128).saturating_mul(128);
        let slot_bytes = desc.nbj.saturating_mul(64);
        let weight_d_offset = slots_offset.saturating_add(slot_bytes.saturating_mul(FOLD_SLOTS));
        let barriers_offset = weight_d_offset.saturating_add(desc.nbj.saturating_mul(8));
        let barriers = 8u32.saturating_mul(desc.stages.saturating_add(2 * FOLD_SLOTS));
        FoldRing {
            slots_offset,
            slots: FOLD_SLOTS,
            slot_bytes,
            weight_d_offset,
            barriers_offset,
            bytes: barriers_offset.saturating_add(barriers) - offset,
        }
    }
}

impl SharedLayout {
    pub fn region(&self, name: &str) -> Option<&Region> {
        self.regions.iter().find(|r| r.name == name)
    }
}

const fn round16(x: u32) -> u32 {
    x.div_ceil(16) * 16
}

/// Chunks of tokens one copy-engine box holds. The int12 engine's boxes hold two (128-byte rows: both planes of
/// two chunks, in the 128-byte swizzle, which wgmma's descriptors read): 8-9% faster than one chunk a box in the
/// 64-byte swizzle (docs/PERF.md, prefill log 53; not through the copy engine's requests, the probe after prefill log 55 says). In a
/// cluster each block issues a share of one-chunk boxes (64-byte rows).
pub fn token_box_chunks(desc: &VariantDescription) -> u32 {
    if stages_int12_tokens_by_copy_engine(desc)
        && desc.cluster_rows.saturating_mul(desc.cluster_tokens) == 1
    {
        2
    } else {
        1
    }
}

/// The int12 engine with `refill = tma`: the copy engine brings its token planes as wgmma's swizzled boxes.
fn stages_int12_tokens_by_copy_engine(desc: &VariantDescription) -> bool {
    desc.engine == Engine::WgmmaK32Regfold
        && desc.mode == NumericsMode::Int12Per256
        && desc.refill == Refill::Tma
}

/// Whether a window's token boxes go to the copy engine as one three-dimensional box (the window's chunk groups,
/// `64 * token_box_chunks` bytes apart along a token's row, as its third dimension): the int12 engine's, except in
/// clusters that share them along the rows, whose blocks each issue a share of one-chunk boxes. One copy
/// instruction a window instead of four: 0.7-1.6% faster (docs/PERF.md, log 55).
pub fn window_token_box(desc: &VariantDescription) -> bool {
    stages_int12_tokens_by_copy_engine(desc) && desc.cluster_rows == 1
}

/// Computes the layout. Sizes use saturating arithmetic so that absurd descriptions give a huge total
/// (refused by the validator) instead of overflowing.
pub fn shared_layout(desc: &VariantDescription) -> SharedLayout {
    if desc.engine == Engine::StreamDp4a {
        return stream_layout(desc);
    }
    if desc.engine == Engine::StreamRing {
        return ring_layout(desc);
    }
    // wgmma reads 8-row x 16-byte core matrices, each 128 contiguous bytes: no padding, and the "row" the
    // regions below record is one 16-byte core-matrix row.
    let wgmma = desc.engine.is_wgmma();
    let staged_row = if wgmma {
        desc.kdr.saturating_mul(32)
    } else {
        desc.kdr.saturating_mul(32).saturating_add(ROW_PAD_BYTES)
    };
    let row_stride = if wgmma { 16 } else { staged_row };
    let weight_planes = if desc.engine.is_fold() { 2 } else { 1 };
    // The register-fold engines stage each row's whole q6_K block as it is (its d and scales included) and fold
    // in registers: one padded block per row, plus the pad that spreads rows over the banks.
    let regfold = desc.engine.builds_rows_in_registers();
    let mut regions = Vec::new();
    let mut offset = 0u32;
    // The copy engine writes each region as boxes starting 128-byte aligned (`refill = tma`), and wgmma's token
    // boxes on the atoms of their swizzle: 512 bytes (64-byte swizzle), 1024 (128-byte, two-chunk boxes).
    let atom = 512 * token_box_chunks(desc);
    let region_align = |bytes: u32| match (desc.refill, wgmma) {
        (Refill::Tma, true) => bytes.div_ceil(atom).saturating_mul(atom),
        (Refill::Tma, false) => bytes.div_ceil(128).saturating_mul(128),
        _ => round16(bytes),
    };
    let mut push = |name: &'static str, bytes: u32, row_stride: u32| {
        regions.push(Region {
            name,
            offset,
            bytes,
            row_stride,
        });
        offset = offset.saturating_add(region_align(bytes));
    };
    if regfold {
        // The f16 fold reads 8 bytes of 4 rows per half-warp: 224-byte rows put them in 4 different 32-byte
        // quarters of the banks, where the pad would make two of them collide.
        let block_row = if desc.engine == Engine::WgmmaF16Regfold {
            PADDED_BLOCK_BYTES
        } else {
            PADDED_BLOCK_BYTES + ROW_PAD_BYTES
        };
        push(
            "smem_weights",
            desc.nbj.saturating_mul(block_row),
            block_row,
        );
    } else {
        // Expanded weights: `q6 - 32` (one plane) or the fold's `h` then `l` planes, `nbj` rows each.
        push(
            "smem_weights",
            desc.nbj
                .saturating_mul(staged_row)
                .saturating_mul(weight_planes),
            row_stride,
        );
    }
    match (desc.engine, desc.mode) {
        // The block's own d and scales are staged with it.
        (engine, _) if engine.builds_rows_in_registers() => {}
        (engine, _) if engine.is_fold() => push("smem_weight_d", desc.nbj.saturating_mul(4), 4),
        // One (even, odd) pair of f32 `d*sc` per row and chunk, chunk-major like the seed's W_dsc plane.
        (_, NumericsMode::F32Per16) => push(
            "smem_weight_dsc",
            desc.nbj.saturating_mul(8).saturating_mul(desc.kdr),
            desc.nbj.saturating_mul(8),
        ),
        (_, NumericsMode::IntPer32 | NumericsMode::IntPer256 | NumericsMode::Int12Per256) => {
            push(
                "smem_weight_sc",
                desc.nbj.saturating_mul(2).saturating_mul(desc.kdr),
                desc.kdr.saturating_mul(2),
            );
            push("smem_weight_d", desc.nbj.saturating_mul(4), 4);
        }
    }
    // The f16 engine brings its tokens through registers into its window regions (below), not through a stage.
    if desc.engine != Engine::WgmmaF16Regfold {
        // The 12-bit mode's two planes are interleaved by chunk: a token's window is twice as many bytes. The copy
        // engine stages wgmma's tokens as 64-byte rows (a chunk's two planes) in the 64-byte swizzle.
        push(
            "smem_activations",
            desc.tile_n
                .saturating_mul(staged_row)
                .saturating_mul(desc.mode.activation_planes()),
            if wgmma && desc.refill == Refill::Tma {
                64
            } else {
                row_stride
            },
        );
        let scales_per_token = match desc.mode {
            NumericsMode::IntPer256 | NumericsMode::Int12Per256 => 1,
            _ => desc.kdr,
        };
        // refill = tma stages the scales chunk-major (a row of tile_n tokens per chunk), as the quantizer writes
        // them for it (docs/KERNELS.md): a lane's tokens of one chunk sit side by side.
        let scale_row = if desc.refill == Refill::Tma {
            desc.tile_n.saturating_mul(4)
        } else {
            scales_per_token.saturating_mul(4)
        };
        push(
            "smem_activation_d",
            desc.tile_n
                .saturating_mul(scales_per_token.saturating_mul(4)),
            scale_row,
        );
    }
    let stage_bytes = offset;
    let totals_bytes = match desc.totals {
        Totals::Registers => 0,
        Totals::Shared => desc.nbj.saturating_mul(desc.tile_n).saturating_mul(4),
        Totals::Output => 0,
    };
    let segment_bytes = match desc.segment {
        Segment::Registers => 0,
        Segment::Shared => desc.nbj.saturating_mul(desc.tile_n).saturating_mul(4),
    };
    let stage_barrier_bytes = match desc.refill {
        // Each stage's mbarrier and reader count, and in a cluster the mbarrier its blocks release it on.
        Refill::Tma if desc.cluster_blocks() > 1 => round16(20u32.saturating_mul(desc.stages)),
        // Each stage's mbarrier, and the one the tile's warps free it on for the producer warpgroup.
        Refill::Tma if desc.producer == Producer::Warpgroup => 16u32.saturating_mul(desc.stages),
        Refill::Tma => round16(12u32.saturating_mul(desc.stages)),
        Refill::Burst | Refill::Spread => 0,
    };
    let mut total_bytes = stage_bytes
        .saturating_mul(desc.stages)
        .saturating_add(totals_bytes)
        .saturating_add(segment_bytes)
        .saturating_add(stage_barrier_bytes);
    let mut window_regions = Vec::new();
    let mut window_buffers = 0;
    let mut window_buffer_bytes = 0u32;
    if desc.engine == Engine::WgmmaF16Regfold {
        let window_k = desc.kdr.saturating_mul(32);
        for (name, bytes, row_stride) in [
            // The window's tokens as f16 core matrices (8 tokens x 8 halves), for wgmma's B.
            (
                "smem_tokens_f16",
                desc.tile_n.saturating_mul(window_k).saturating_mul(2),
                16,
            ),
            // The window's activation scales, chunk-major, a lane's tokens of two fragments in one 16-byte slot.
            (
                "smem_activation_d_by_chunk",
                desc.tile_n.saturating_mul(desc.kdr).saturating_mul(4),
                desc.tile_n.saturating_mul(4),
            ),
        ] {
            window_regions.push(Region {
                name,
                offset: total_bytes.saturating_add(window_buffer_bytes),
                bytes,
                row_stride,
            });
            window_buffer_bytes = window_buffer_bytes.saturating_add(round16(bytes));
        }
        // Two buffers: the window the wgmmas read, and the next one, written at the end of this one.
        window_buffers = 2;
        total_bytes =
            total_bytes.saturating_add(window_buffer_bytes.saturating_mul(window_buffers));
    }
    let fold_ring = (desc.fold_warps > 0).then(|| FoldRing::new(desc, total_bytes));
    if let Some(ring) = &fold_ring {
        total_bytes = total_bytes.saturating_add(ring.bytes);
    }
    SharedLayout {
        regions,
        stage_bytes,
        stages: desc.stages,
        totals_bytes,
        segment_bytes,
        stage_barrier_bytes,
        window_regions,
        window_buffers,
        window_buffer_bytes,
        fold_ring,
        total_bytes,
    }
}

/// Super-blocks one warp of the streaming engine reads per pass: two numerics segments, four lanes a block.
pub const STREAM_SUPERBLOCKS_PER_PASS: u32 = 8;

/// Rows one step of the streaming engine reads at once: two, so that each token's activation words serve two
/// rows and a step's float work (one lane per row, token and super-block) fills more of the warp, while up to
/// four tokens; one row from five tokens on, where the registers go to the tokens. (Four rows at one token
/// took 223 registers and ran slower: docs/PERF.md, decode log.)
pub const fn stream_rows_at_once(tile_n: u32) -> u32 {
    if tile_n <= 4 {
        2
    } else {
        1
    }
}

/// Whether the streaming engine takes `-32` out of the weights through the activations' sums (one `dp4a`
/// per activation word, shared by the rows of a step) instead of out of every weight word (three operations
/// per word, shared by the tokens): cheaper while tokens are fewer than rows at once.
pub const fn stream_offset_in_sums(tile_n: u32) -> bool {
    tile_n <= 2
}

/// The streaming engine stages nothing: each warp has a private scratch where its lanes hand the exact chunk
/// sums of a step to the lanes that run the float sequence. Per warp and step: the `I32` of every (row, token,
/// super-block, chunk), the super-block sums of every (row, token, super-block), and the `d` of every (row,
/// super-block).
fn stream_layout(desc: &VariantDescription) -> SharedLayout {
    let per_pass = STREAM_SUPERBLOCKS_PER_PASS;
    let rows = stream_rows_at_once(desc.tile_n);
    let outputs = rows.saturating_mul(desc.tile_n);
    let chunk_sums = outputs.saturating_mul(per_pass).saturating_mul(8 * 4);
    let superblock_sums = outputs.saturating_mul(per_pass).saturating_mul(4);
    let weight_d = rows * per_pass * 4;
    let mut regions = Vec::new();
    let mut offset = 0u32;
    for (name, per_warp) in [
        ("smem_chunk_sums", chunk_sums),
        ("smem_superblock_sums", superblock_sums),
        ("smem_weight_d", weight_d),
    ] {
        let bytes = round16(per_warp).saturating_mul(desc.warps_m);
        regions.push(Region {
            name,
            offset,
            bytes,
            row_stride: round16(per_warp),
        });
        offset = offset.saturating_add(bytes);
    }
    SharedLayout {
        regions,
        stage_bytes: offset,
        stages: 1,
        totals_bytes: 0,
        segment_bytes: 0,
        stage_barrier_bytes: 0,
        window_regions: Vec::new(),
        window_buffers: 0,
        window_buffer_bytes: 0,
        fold_ring: None,
        total_bytes: offset,
    }
}

/// One token's activations for one super-block in the ring engine's shared memory: the 256 int8 values, the eight
/// chunk scales `da` (f32), `-32` times the sum of each 16-value sub-block (int32, the weights' offset), and a
/// pad that puts neighbouring super-blocks' records in different banks (92 words apart).
pub const RING_RECORD_BYTES: u32 = 368;
/// Where a ring record's `da` and offsets start.
pub const RING_RECORD_SCALES: u32 = 256;
pub const RING_RECORD_OFFSETS: u32 = 288;

/// A ring record under `int12_per256`: the 512 bytes of the two planes as the quantizer writes them (each chunk's 32
/// `vh` then its 32 `vl`), `-32` times each 16-value sub-block's sum of `v = 64 vh + vl` (16 int32), the
/// super-block's one `da` (f32), and a pad to 148 words, so that the eight lanes of a 16-byte load's phase, reading
/// neighbouring records, fall in different banks (148 = 20 mod 32, an odd multiple of 4).
pub const RING_I12_RECORD_BYTES: u32 = 592;
pub const RING_I12_RECORD_OFFSETS: u32 = 512;
pub const RING_I12_RECORD_SCALES: u32 = 576;

/// Where a ring record of `desc`'s mode holds what: its bytes, then where its `da` and its offsets start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingRecord {
    pub bytes: u32,
    pub scales: u32,
    pub offsets: u32,
}

/// The ring record of `desc`'s mode ([`RING_RECORD_BYTES`], or [`RING_I12_RECORD_BYTES`] under `int12_per256`).
pub fn ring_record(desc: &VariantDescription) -> RingRecord {
    if desc.mode == NumericsMode::Int12Per256 {
        RingRecord {
            bytes: RING_I12_RECORD_BYTES,
            scales: RING_I12_RECORD_SCALES,
            offsets: RING_I12_RECORD_OFFSETS,
        }
    } else {
        RingRecord {
            bytes: RING_RECORD_BYTES,
            scales: RING_RECORD_SCALES,
            offsets: RING_RECORD_OFFSETS,
        }
    }
}

/// The ring engine's mbarriers: one of 8 bytes per warp and stage, 16 bytes rounded.
/// With `ring_lanes = fragments` also one a stage for the tokens and a 4-byte count a stage.
pub fn ring_barrier_bytes(desc: &VariantDescription) -> u32 {
    let warp_barriers = 8u32
        .saturating_mul(desc.stages)
        .saturating_mul(desc.warps_m);
    if desc.ring_lanes == RingLanes::Fragments {
        // A set a group of warps along K.
        return round16(
            warp_barriers
                .saturating_add(20u32.saturating_mul(desc.stages))
                .saturating_mul(desc.warps_k),
        );
    }
    round16(warp_barriers)
}

/// How many 16-byte pieces of its block's token records (16 a token and super-block) a ring thread loads before it
/// stores any, when the quantizer kernel wrote the tokens (docs/PERF.md decode logs 23 and 40). Counted at K =
/// 12288: the rings with a separate quantizer are picked past K = 4096, where the fused ones stop (at K = 16384
/// `ring_t1` held four pieces and spilled on raw blocks, with the launch bounds of before decode log 42).
pub fn ring_record_pieces_at_once(desc: &VariantDescription) -> u32 {
    ring_loads_at_once(desc, 16, desc.threads(), 12288)
}

/// How many of its token records (one a token and super-block) a warp of a fused ring (`quantizer = fused`) loads
/// from `x` before it quantizes any (docs/PERF.md decode log 24). Counted at K = 4096, the longest K a fused ring
/// is picked at (a later round's `x` loaded early was slower: decode log 34).
pub fn ring_fused_records_at_once(desc: &VariantDescription) -> u32 {
    ring_loads_at_once(desc, 1, desc.warps_m, 4096)
}

/// Of `per_superblock` loads a token and super-block, shared by `workers`: what one worker gets at K = `at_k`, from
/// one to four, so that those loads are one round trip without holding more registers at a longer K.
fn ring_loads_at_once(
    desc: &VariantDescription,
    per_superblock: u32,
    workers: u32,
    at_k: u32,
) -> u32 {
    let loads = desc
        .tile_n
        .saturating_mul(per_superblock)
        .saturating_mul(at_k / SUPERBLOCK_K);
    (loads / workers.max(1)).clamp(1, 4)
}

/// The ring engine's shared memory that does not depend on K: `stages` slots of one padded q6_K block per thread
/// (with `ring_lanes = rows`, row by row: a row's slots of a stage, one a warp, and [`ROW_PAD_BYTES`], so that the
/// lanes' rows fall in different banks; the region's row stride), then its mbarriers ([`ring_barrier_bytes`]).
/// What depends on K, the tokens' records and the super-block sums, follows at launch ([`ring_shared_bytes`]).
fn ring_layout(desc: &VariantDescription) -> SharedLayout {
    if desc.ring_lanes == RingLanes::Fragments {
        return ring_fragments_layout(desc);
    }
    let (row_stride, slots) = match desc.ring_lanes {
        RingLanes::Superblocks => (
            PADDED_BLOCK_BYTES,
            desc.threads().saturating_mul(PADDED_BLOCK_BYTES),
        ),
        RingLanes::Rows => {
            let row = desc
                .warps_m
                .saturating_mul(PADDED_BLOCK_BYTES)
                .saturating_add(ROW_PAD_BYTES);
            (row, desc.nbj.saturating_mul(row))
        }
        RingLanes::Fragments => unreachable!("laid out by ring_fragments_layout"),
    };
    let ring = slots.saturating_mul(desc.stages);
    let regions = vec![Region {
        name: "smem_ring",
        offset: 0,
        bytes: ring,
        row_stride,
    }];
    ring_with_barriers(desc, regions, slots, ring)
}

/// A ring's layout from its regions (`ring` bytes in all, stages of `stage_bytes`), with its mbarriers
/// ([`ring_barrier_bytes`]) after them.
fn ring_with_barriers(
    desc: &VariantDescription,
    mut regions: Vec<Region>,
    stage_bytes: u32,
    ring: u32,
) -> SharedLayout {
    let barriers = ring_barrier_bytes(desc);
    regions.push(Region {
        name: "smem_ring_barriers",
        offset: ring,
        bytes: barriers,
        row_stride: 8,
    });
    SharedLayout {
        regions,
        stage_bytes,
        stages: desc.stages,
        totals_bytes: 0,
        segment_bytes: 0,
        stage_barrier_bytes: 0,
        window_regions: Vec::new(),
        window_buffers: 0,
        window_buffer_bytes: 0,
        fold_ring: None,
        total_bytes: ring.saturating_add(barriers),
    }
}

/// Super-blocks of every row a stage of a ring with `ring_lanes = fragments` holds.
pub const RING_FRAGMENT_SUPERBLOCKS: u32 = 2;

/// A ring with `ring_lanes = fragments`, stage by stage, each region boxes of the copy engine (`refill = tma`):
/// each row group's 16 rows of the stage's super-blocks, a box a super-block (a row's block and the next
/// [`ROW_PAD_BYTES`]: 240 bytes, so that the eight rows of a fragment fall in different banks; a box of raw rows
/// starts at any block and lands as a padded one does), the block's tokens' int8 values for them (a token's run and
/// the next 16 bytes, alike) and their scales, chunk-major as the quantizer writes them for the copy engine (a row
/// of `tile_n` a chunk); then the mbarriers (one a row group and stage for its rows, one a stage for the tokens)
/// and a count a stage of the warps done with it. Nothing depends on K.
fn ring_fragments_layout(desc: &VariantDescription) -> SharedLayout {
    let row = PADDED_BLOCK_BYTES + ROW_PAD_BYTES;
    let token_row = (RING_FRAGMENT_SUPERBLOCKS * SUPERBLOCK_K).saturating_add(ROW_PAD_BYTES);
    let scale_row = desc.tile_n.saturating_mul(4);
    let weights = desc
        .warps_m
        .saturating_mul(RING_FRAGMENT_SUPERBLOCKS * 16)
        .saturating_mul(row);
    let tokens = desc.tile_n.saturating_mul(token_row);
    let scales = (RING_FRAGMENT_SUPERBLOCKS * 8).saturating_mul(scale_row);
    let stage = weights.saturating_add(tokens).saturating_add(scales);
    let mut regions = Vec::new();
    let mut offset = 0u32;
    for (name, bytes, row_stride) in [
        ("smem_weights", weights, row),
        ("smem_activations", tokens, token_row),
        ("smem_activation_d", scales, scale_row),
    ] {
        regions.push(Region {
            name,
            offset,
            bytes,
            row_stride,
        });
        offset = offset.saturating_add(bytes);
    }
    // With warps_k > 1 each group of warps along K has a ring of its own, one after the other.
    let ring = stage
        .saturating_mul(desc.stages)
        .saturating_mul(desc.warps_k);
    ring_with_barriers(desc, regions, stage, ring)
}

/// The ring engine's shared memory for a call with K = `k`: the ring and its barriers ([`shared_layout`]), then
/// a [`ring_record`] per token and super-block (of the largest split's when `ksplit > 1`), then per
/// row the sums of each super-block for each
/// token and its `d` (f32; each row's run one word longer than it needs, so that the lanes that walk rows in the
/// epilogue read different banks). The kernel computes the same offsets from `k`.
pub fn ring_shared_bytes(desc: &VariantDescription, k: u64) -> u64 {
    let superblocks = k / 256;
    let fixed = u64::from(shared_layout(desc).total_bytes);
    if desc.ring_lanes == RingLanes::Fragments {
        // Its records come stage by stage with the weights and its sums stay in registers, but for the segment sums
        // of the later groups of warps along K, which the first adds at the end.
        let segments = superblocks.div_ceil(u64::from(SEGMENT_SUPERBLOCKS));
        let first_group = segments.div_ceil(u64::from(desc.warps_k.max(1)));
        let later = segments.saturating_sub(first_group);
        return fixed
            + (u64::from(desc.nbj) * u64::from(desc.tile_n) * later * 4).div_ceil(16) * 16;
    }
    // A split K gives a block the super-blocks of its split's whole segments, the most that any split takes.
    let superblocks = if desc.ksplit > 1 {
        let segments = superblocks.div_ceil(u64::from(SEGMENT_SUPERBLOCKS));
        (segments.div_ceil(u64::from(desc.ksplit)) * u64::from(SEGMENT_SUPERBLOCKS))
            .min(superblocks)
    } else {
        superblocks
    };
    let records = u64::from(desc.tile_n) * superblocks * u64::from(ring_record(desc).bytes);
    let sums = u64::from(desc.nbj) * (superblocks * u64::from(desc.tile_n) + 1) * 4;
    let d = u64::from(desc.nbj) * (superblocks + 1) * 4;
    let round16 = |x: u64| x.div_ceil(16) * 16;
    fixed + records + round16(sums) + round16(d)
}

/// The largest K (a multiple of 256) at which the ring engine's shared memory ([`ring_shared_bytes`]) fits
/// `limit` bytes; 0 when not even K = 256 does, `u64::MAX` for a fragment ring (whose shared memory does not grow
/// with K). Otherwise it grows with K, so a selection rule that picks a ring variant must bound K by this (`mmqgen
/// config check` says so).
pub fn ring_max_k(desc: &VariantDescription, limit: u32) -> u64 {
    let fits = |superblocks: u64| ring_shared_bytes(desc, superblocks * 256) <= u64::from(limit);
    if !fits(1) {
        return 0;
    }
    if desc.ring_lanes == RingLanes::Fragments && desc.warps_k == 1 {
        // Its records come stage by stage: no K is too long.
        return u64::MAX;
    }
    // Monotone in K: double, then bisect.
    let (mut low, mut high) = (1u64, 2u64);
    while fits(high) && high < (1 << 40) {
        low = high;
        high *= 2;
    }
    while high - low > 1 {
        let mid = (low + high) / 2;
        if fits(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low * 256
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::description::{Arch, Engine, VariantDescription};

    fn ring(nbj: u32, tile_n: u32, warps_m: u32, stages: u32) -> VariantDescription {
        VariantDescription {
            engine: Engine::StreamRing,
            nbj,
            tile_n,
            warps_m,
            stages,
            warps_n: 1,
            ..VariantDescription::DEFAULTS
        }
    }

    #[test]
    fn the_ring_grows_with_k_and_its_largest_k_fits() {
        let limit = Arch::Sm90.max_shared_bytes_per_block();
        for desc in [
            ring(32, 1, 8, 2),
            ring(112, 4, 8, 2),
            ring(36, 4, 12, 1),
            ring(1, 1, 1, 1),
        ] {
            let fixed = u64::from(shared_layout(&desc).total_bytes);
            assert_eq!(
                fixed,
                u64::from(
                    desc.threads() * desc.stages * PADDED_BLOCK_BYTES + ring_barrier_bytes(&desc)
                )
            );
            assert!(ring_shared_bytes(&desc, 512) > ring_shared_bytes(&desc, 256));
            let k = ring_max_k(&desc, limit);
            assert!(k >= 256 && k.is_multiple_of(256), "{k}");
            assert!(ring_shared_bytes(&desc, k) <= u64::from(limit));
            assert!(ring_shared_bytes(&desc, k + 256) > u64::from(limit));
        }
        // ring_t1_tall: 112 rows, one token, 8 warps, two stages.
        assert_eq!(ring_max_k(&ring(112, 1, 8, 2), limit), 23552);
        // A ring that alone is over the limit takes no K at all.
        assert_eq!(ring_max_k(&ring(32, 1, 32, 4), limit), 0);
    }

    #[test]
    fn a_split_ring_holds_its_largest_split_of_whole_segments() {
        let whole = ring(128, 1, 8, 2);
        let split = VariantDescription {
            ksplit: 4,
            ..whole.clone()
        };
        // K = 14336: 14 segments in splits of 3, 4, 3 and 4, so a block holds 16 super-blocks' records and sums, as
        // the whole-K ring does at K = 4096.
        assert_eq!(
            ring_shared_bytes(&split, 14336),
            ring_shared_bytes(&whole, 4096)
        );
        // K = 1024: one segment; three splits are empty and one takes it all.
        assert_eq!(
            ring_shared_bytes(&split, 1024),
            ring_shared_bytes(&whole, 1024)
        );
        let limit = Arch::Sm90.max_shared_bytes_per_block();
        assert!(ring_max_k(&split, limit) >= 4 * ring_max_k(&whole, limit) - 3 * 1024);
    }

    #[test]
    fn absurd_warp_counts_are_refused_without_overflow() {
        for (warps_m, warps_k) in [(u32::MAX, u32::MAX), (2, u32::MAX), (u32::MAX, 4)] {
            let desc = VariantDescription {
                name: "absurd".into(),
                ring_lanes: RingLanes::Fragments,
                refill: Refill::Tma,
                warps_m,
                warps_k,
                ..ring(32, 8, 2, 2)
            };
            assert!(crate::validate::validate(&desc).is_err());
        }
    }

    #[test]
    fn a_fragment_ring_takes_any_k_in_boxes_the_copy_engine_can_write() {
        let limit = Arch::Sm90.max_shared_bytes_per_block();
        for (nbj, tile_n, warps_m, stages) in [(128, 8, 8, 3), (112, 16, 7, 3), (32, 8, 2, 4)] {
            let desc = VariantDescription {
                ring_lanes: RingLanes::Fragments,
                refill: Refill::Tma,
                ..ring(nbj, tile_n, warps_m, stages)
            };
            let layout = shared_layout(&desc);
            assert_eq!(
                ring_shared_bytes(&desc, 256),
                ring_shared_bytes(&desc, 1 << 20)
            );
            assert_eq!(ring_max_k(&desc, limit), u64::MAX);
            // Tensor copies write 128-byte aligned shared memory: every region of every stage starts at one.
            assert_eq!(layout.stage_bytes % 128, 0);
            for region in &layout.regions {
                assert_eq!(region.offset % 128, 0, "{}", region.name);
            }
            // Two planes of 16 rows of a padded block and its pad a row group; 512 bytes and a pad a token.
            let rows = layout.region("smem_weights").unwrap();
            assert_eq!((rows.row_stride, rows.bytes), (240, warps_m * 2 * 16 * 240));
            assert_eq!(layout.region("smem_activations").unwrap().row_stride, 528);
        }
    }

    #[test]
    fn a_ring_loads_the_records_it_gets_at_its_longest_k_up_to_four_at_once() {
        // At K = 12288: one token over 8 warps (ring_t1) and two over 16 three; four over 16, 8 (ring_t4,
        // ring_t4_tall) or 12 warps and eight over 8 held at four; one token over 16 warps one (1.5 rounds down).
        let pieces = |tile_n, warps_m| ring_record_pieces_at_once(&ring(32, tile_n, warps_m, 1));
        assert_eq!(
            [
                pieces(1, 8),
                pieces(2, 16),
                pieces(4, 16),
                pieces(4, 8),
                pieces(4, 12),
                pieces(8, 8),
                pieces(1, 16)
            ],
            [3, 3, 4, 4, 4, 4, 1]
        );
        // Fused: ring_t1_fused and ring_t2_fused two records a warp, ring_t2_tall_fused (8 warps) four.
        let records = |tile_n, warps_m| ring_fused_records_at_once(&ring(32, tile_n, warps_m, 1));
        assert_eq!(
            [records(1, 8), records(2, 16), records(2, 8), records(4, 8)],
            [2, 2, 4, 4]
        );
    }
}
