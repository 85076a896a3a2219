//! The tensor maps of a `refill = tma` call, the entry points' last parameter (docs/KERNELS.md). The copy
//! engine brings each stage of the register fold as three boxes: the block tile's padded q6_K blocks, its tokens'
//! window of int8 activations, and their per-32 scales (chunk-major, as a tma variant's quantizer writes them:
//! docs/KERNELS.md). The maps are encoded on the host for the call's buffers
//! and shape and travel by value as a kernel parameter: nothing is copied to the device.

use cudarc::driver::sys::{
    self, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use mmqgen_codegen::launch::{
    Swizzle, TensorMapBoxes, RING_BOX_ELEMENTS, RING_BOX_ROWS, RING_ROWS_BOX_DEPTH,
};
use mmqgen_codegen::SUPERBLOCK_K;

use crate::gpu::weights::Layout;

/// The kernel's `TensorMaps` parameter: three `CUtensorMap`s of 128 bytes, 64-byte aligned.
#[repr(C, align(64))]
pub struct TensorMaps {
    weights: sys::CUtensorMap,
    tokens: sys::CUtensorMap,
    scales: sys::CUtensorMap,
}

/// The `raw_rows` entry point's last parameter in a ring: the raw weights in runs of eight blocks (the tensor's
/// rows of eight, or each weight row's runs) or as whole rows, 64-byte aligned.
#[repr(C, align(64))]
pub struct RingWeightsMap {
    map: sys::CUtensorMap,
}

/// A map the driver would not encode: which one, and the driver's code.
#[derive(Debug)]
pub struct EncodeError {
    pub map: &'static str,
    pub code: sys::CUresult,
}

/// One map: `rows` rows of `row_elements` elements, `row_bytes` apart, read as boxes of `box_elements` x `box_rows`,
/// and optionally a third dimension outside the rows. Elements past a row's end or rows past the last are outside
/// the tensor: the copy engine writes zeros for them.
struct MapSpec {
    name: &'static str,
    data_type: CUtensorMapDataType,
    address: u64,
    row_elements: u64,
    rows: u64,
    row_bytes: u64,
    box_elements: u32,
    box_rows: u32,
    /// How the copy engine lays each box row out in shared memory: as it is, or in the 64- or 128-byte swizzle
    /// that wgmma's descriptors read (the int12 engine's token planes).
    swizzle: CUtensorMapSwizzle,
    /// A third dimension, or none for a two-dimensional map.
    outer: Option<OuterDimension>,
}

/// The third dimension of a map: `extent` indices `stride_bytes` apart (less than a row's: the int12 engine's token
/// map counts a token's chunk groups along it), `box_depth` of them a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OuterDimension {
    extent: u64,
    stride_bytes: u64,
    box_depth: u32,
}

impl MapSpec {
    fn encode(&self) -> Result<sys::CUtensorMap, EncodeError> {
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        let outer = self.outer.unwrap_or(OuterDimension {
            extent: 1,
            stride_bytes: 0,
            box_depth: 1,
        });
        let rank = if self.outer.is_some() { 3 } else { 2 };
        let dims = [self.row_elements, self.rows, outer.extent];
        let strides = [self.row_bytes, outer.stride_bytes];
        let boxes = [self.box_elements, self.box_rows, outer.box_depth];
        let element_strides = [1u32, 1, 1];
        // SAFETY: every pointer is to a local array of at least the rank (2 or 3) the call names, `strides` has at
        // least rank - 1 entries, and `map` is a writable CUtensorMap; the driver validates the address, sizes and
        // alignment and says so in its result, which is checked.
        let code = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                self.data_type,
                rank,
                self.address as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                element_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                self.swizzle,
                CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        match code {
            sys::CUresult::CUDA_SUCCESS => Ok(map),
            code => Err(EncodeError {
                map: self.name,
                code,
            }),
        }
    }
}

/// Weights the copy engine reads: the matrix's address and its blocks' bytes (224 padded; 210 for raw rows that
/// start 16-byte aligned, whose boxes start at any 16-bit element of a row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedWeights {
    pub address: u64,
    pub block_bytes: u32,
}

/// The three maps of one call, before the driver encodes them; the weights' is `None` for raw weights the kernel
/// copies itself.
struct CallMaps {
    weights: Option<MapSpec>,
    tokens: MapSpec,
    scales: MapSpec,
}

/// Scales between a chunk's row and the next in a `refill = tma` variant's chunk-major activation scales: `n`
/// rounded up to 4, so that every row starts 16-byte aligned (a tensor map's row stride must be a multiple of 16
/// bytes). The quantizer writes that layout and the kernels read it (docs/KERNELS.md).
pub fn scale_row_stride(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// Where token `token`'s scale sits in its chunk's row of chunk-major scales: in each 16 tokens the last two quads
/// store their pairs swapped, the order in which the matmul's lanes read a quad with one 16-byte load while their
/// ldmatrix rows stay free of bank conflicts (docs/KERNELS.md). A swap stays inside its quad, so inside the row.
pub fn scale_position(token: usize) -> usize {
    token ^ ((token >> 2) & 2)
}

/// The driver's swizzle for a box's.
fn swizzle(swizzle: Swizzle) -> CUtensorMapSwizzle {
    match swizzle {
        Swizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::B64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        Swizzle::B128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

/// The maps of one call of a variant whose contract has `boxes`, on padded weights at `weights` (`m` rows of
/// `k / 256` blocks), int8 activations at `act_q` (`n` rows of `k`) and their scales at `act_d`, chunk-major
/// (`k / 32` rows of [`scale_row_stride`] scales, each token's at its [`scale_position`]). Raw weights (`None`:
/// 2-byte aligned rows, which no tensor map can describe) leave the weights' map zero: the raw entry point copies
/// its blocks itself and reads only the other two.
pub fn encode(
    boxes: &TensorMapBoxes,
    weights: Option<MappedWeights>,
    act_q: u64,
    act_d: u64,
    m: usize,
    n: usize,
    k: usize,
) -> Result<TensorMaps, EncodeError> {
    let maps = call_maps(boxes, weights, act_q, act_d, m, n, k);
    Ok(TensorMaps {
        weights: match maps.weights {
            Some(map) => map.encode()?,
            None => sys::CUtensorMap { opaque: [0; 16] },
        },
        tokens: maps.tokens.encode()?,
        scales: maps.scales.encode()?,
    })
}

/// What [`encode`] hands the driver.
fn call_maps(
    boxes: &TensorMapBoxes,
    weights: Option<MappedWeights>,
    act_q: u64,
    act_d: u64,
    m: usize,
    n: usize,
    k: usize,
) -> CallMaps {
    let superblocks = (k / SUPERBLOCK_K as usize) as u64;
    // The blocks and the tokens are read as 16-bit elements (a box's row may then be up to 512 bytes), a fragment
    // ring's tokens as 32-bit ones (its rows are 528 bytes).
    let weights = weights.map(|w| MapSpec {
        name: "weights",
        data_type: CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        address: w.address,
        row_elements: superblocks * u64::from(w.block_bytes) / 2,
        rows: m as u64,
        row_bytes: superblocks * u64::from(w.block_bytes),
        box_elements: boxes.weight_elements,
        box_rows: boxes.weight_rows,
        swizzle: CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        outer: None,
    });
    let row_elements = k as u64 * u64::from(boxes.planes) / u64::from(boxes.token_element_bytes);
    let row_bytes = k as u64 * u64::from(boxes.planes);
    let tokens = MapSpec {
        name: "tokens",
        data_type: if boxes.token_element_bytes == 4 {
            CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32
        } else {
            CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16
        },
        address: act_q,
        // A window box: [k / group][n][group] elements, a group being the box's elements of a token's row.
        row_elements: match boxes.token_groups {
            Some(_) => u64::from(boxes.token_elements),
            None => row_elements,
        },
        rows: n as u64,
        row_bytes,
        box_elements: boxes.token_elements,
        box_rows: boxes.token_rows,
        swizzle: swizzle(boxes.token_swizzle),
        outer: boxes.token_groups.map(|groups| OuterDimension {
            extent: row_elements / u64::from(boxes.token_elements),
            stride_bytes: u64::from(boxes.token_elements * boxes.token_element_bytes),
            box_depth: groups,
        }),
    };
    let scales = MapSpec {
        name: "activation scales",
        data_type: CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        address: act_d,
        // The whole row, not n: scale_position puts some of the last quad's scales past n.
        row_elements: scale_row_stride(n) as u64,
        rows: k as u64 / u64::from(boxes.group),
        row_bytes: scale_row_stride(n) as u64 * 4,
        box_elements: boxes.token_rows,
        box_rows: boxes.scale_rows,
        swizzle: CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        outer: None,
    };
    CallMaps {
        weights,
        tokens,
        scales,
    }
}

/// Blocks in a row of [`eight_block_rows_spec`]: 1680 bytes, a multiple of 16 as a map's row stride must be.
const BLOCKS_PER_MAP_ROW: u64 = 8;

/// The map of `blocks` raw blocks at `address` as rows of eight blocks (840 16-bit elements), read as boxes of
/// [`RING_BOX_ELEMENTS`] x [`RING_BOX_ROWS`]: a block and the 14 bytes after it, from four rows (past the tensor's
/// last row the copy engine writes zeros).
fn eight_block_rows_spec(address: u64, blocks: u64) -> MapSpec {
    let row_bytes = BLOCKS_PER_MAP_ROW * Layout::Raw.block_bytes() as u64;
    MapSpec {
        name: "raw weights",
        data_type: CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        address,
        row_elements: row_bytes / 2,
        rows: blocks / BLOCKS_PER_MAP_ROW,
        row_bytes,
        box_elements: RING_BOX_ELEMENTS,
        box_rows: RING_BOX_ROWS,
        swizzle: CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        outer: None,
    }
}

/// The map of `m` rows of raw blocks of K at `address` as each row's runs of eight blocks: [m][K / 2048][840 16-bit
/// elements], read as boxes of [`RING_BOX_ELEMENTS`] x 1 x [`RING_ROWS_BOX_DEPTH`] (a block and the 14 bytes after
/// it, of 32 rows; rows past m come as zeros). K is a multiple of 2048
/// ([`mmqgen_codegen::launch::RawRowsWeights::reaches`]).
fn eight_block_runs_spec(address: u64, m: u64, k: u64) -> MapSpec {
    let run_bytes = BLOCKS_PER_MAP_ROW * Layout::Raw.block_bytes() as u64;
    let superblocks = k / u64::from(SUPERBLOCK_K);
    MapSpec {
        name: "raw weights",
        data_type: CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        address,
        row_elements: run_bytes / 2,
        rows: superblocks / BLOCKS_PER_MAP_ROW,
        row_bytes: run_bytes,
        box_elements: RING_BOX_ELEMENTS,
        box_rows: 1,
        swizzle: CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        outer: Some(OuterDimension {
            extent: m,
            stride_bytes: superblocks * Layout::Raw.block_bytes() as u64,
            box_depth: RING_ROWS_BOX_DEPTH,
        }),
    }
}

/// The map of `m` rows of raw blocks of K at `address` as they are: [m][K / 256 x 105 16-bit elements], read as
/// boxes of [`RING_BOX_ELEMENTS`] x [`RING_BOX_ROWS`] (a block and the 14 bytes after it, of four rows; past a row's
/// end and past m the copy engine writes zeros). K is a multiple of 2048
/// ([`mmqgen_codegen::launch::RawRowsWeights::reaches`]).
fn quad_row_blocks_spec(address: u64, m: u64, k: u64) -> MapSpec {
    let row_bytes = k / u64::from(SUPERBLOCK_K) * Layout::Raw.block_bytes() as u64;
    MapSpec {
        name: "raw weights",
        data_type: CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        address,
        row_elements: row_bytes / 2,
        rows: m,
        row_bytes,
        box_elements: RING_BOX_ELEMENTS,
        box_rows: RING_BOX_ROWS,
        swizzle: CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        outer: None,
    }
}

/// Encodes the map of `m` rows of raw blocks of K at `address` as they are (the rows 16-byte aligned:
/// [`mmqgen_codegen::launch::RawRowsWeights::reaches`] holds).
pub fn encode_quad_row_blocks(
    address: u64,
    m: usize,
    k: usize,
) -> Result<RingWeightsMap, EncodeError> {
    Ok(RingWeightsMap {
        map: quad_row_blocks_spec(address, m as u64, k as u64).encode()?,
    })
}

/// Encodes the map of `m` rows of raw blocks of K at `address` as runs of eight blocks (the rows 16-byte aligned:
/// [`mmqgen_codegen::launch::RawRowsWeights::reaches`] holds).
pub fn encode_eight_block_runs(
    address: u64,
    m: usize,
    k: usize,
) -> Result<RingWeightsMap, EncodeError> {
    Ok(RingWeightsMap {
        map: eight_block_runs_spec(address, m as u64, k as u64).encode()?,
    })
}

/// Encodes the map of `blocks` raw blocks at `address` as rows of eight
/// ([`mmqgen_codegen::launch::RawRowsWeights::reaches`] holds).
pub fn encode_eight_block_rows(address: u64, blocks: usize) -> Result<RingWeightsMap, EncodeError> {
    Ok(RingWeightsMap {
        map: eight_block_rows_spec(address, blocks as u64).encode()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_positions_are_a_permutation_inside_each_row() {
        for n in 1..=70 {
            let mut seen = vec![false; scale_row_stride(n)];
            for token in 0..n {
                let position = scale_position(token);
                assert!(
                    position < seen.len(),
                    "n = {n}, token {token} -> {position}"
                );
                assert_eq!(position / 4, token / 4, "a swap stays inside its quad");
                assert!(!std::mem::replace(&mut seen[position], true));
            }
        }
        // Quads 2 and 3 of each 16 tokens are pair-swapped, quads 0 and 1 stay.
        let positions: Vec<usize> = (16..32).map(scale_position).collect();
        assert_eq!(
            positions,
            [16, 17, 18, 19, 20, 21, 22, 23, 26, 27, 24, 25, 30, 31, 28, 29]
        );
    }

    #[test]
    fn the_scales_map_reaches_every_tokens_scale() {
        // Found by the mutants of prefill log 38 (2026-12-01): a map `n` wide cut off the scales that scale_position
        // puts past n (n = 77: token 76's at 78), and the copy engine filled them with zeros.
        let boxes = TensorMapBoxes {
            weight_elements: 120,
            weight_rows: 128,
            token_elements: 136,
            token_element_bytes: 2,
            token_rows: 128,
            scale_rows: 8,
            planes: 1,
            group: 32,
            token_swizzle: Swizzle::None,
            token_groups: None,
        };
        for n in 1..=300 {
            let scales = call_maps(
                &boxes,
                Some(MappedWeights {
                    address: 0,
                    block_bytes: 224,
                }),
                0,
                0,
                128,
                n,
                4096,
            )
            .scales;
            let last = (0..n).map(scale_position).max().unwrap_or(0) as u64;
            assert!(scales.row_elements > last, "n = {n}");
            assert_eq!(scales.row_bytes, scales.row_elements * 4, "n = {n}");
            assert_eq!(
                scales.row_bytes % 16,
                0,
                "a map's row stride is a multiple of 16 bytes"
            );
        }
    }

    #[test]
    fn a_fragment_rings_boxes_are_a_row_group_and_a_stage_of_tokens() {
        use mmqgen_codegen::{
            Arch, ArchSet, Engine, ExpandWidth, Refill, RingLanes, ScaleFetch, VariantDescription,
        };
        let desc = VariantDescription {
            name: "ring".into(),
            engine: Engine::StreamRing,
            kdr: 8,
            nbj: 112,
            tile_n: 16,
            warps_m: 7,
            warps_n: 2,
            scale_fetch: ScaleFetch::Narrow,
            expand: ExpandWidth::Uint4,
            stages: 3,
            refill: Refill::Tma,
            ring_lanes: RingLanes::Fragments,
            archs: ArchSet::EMPTY.with(Arch::Sm90),
            ..VariantDescription::DEFAULTS
        };
        mmqgen_codegen::validate(&desc).unwrap();
        let boxes = TensorMapBoxes::of(&desc).unwrap();
        let maps = call_maps(
            &boxes,
            Some(MappedWeights {
                address: 0,
                block_bytes: 224,
            }),
            0,
            0,
            14336,
            13,
            4096,
        );
        let weights = maps.weights.unwrap();
        // A super-block of 16 rows and the next 16 bytes (the pad a row's slot has), as 16-bit elements.
        assert_eq!((weights.box_elements, weights.box_rows), (120, 16));
        // 512 bytes of a token and the next 16, as 32-bit elements: 264 16-bit ones would pass the box limit.
        assert_eq!((maps.tokens.box_elements, maps.tokens.box_rows), (132, 16));
        assert_eq!(maps.tokens.row_elements, 1024);
        assert_eq!(maps.tokens.row_bytes, 4096);
        // 16 chunks of 16 tokens' scales.
        assert_eq!((maps.scales.box_elements, maps.scales.box_rows), (16, 16));
    }

    #[test]
    fn an_int12_wgmma_box_is_a_chunk_of_two_plane_rows() {
        use mmqgen_codegen::{
            Arch, ArchSet, Engine, ExpandWidth, NumericsMode, Refill, ScaleFetch,
            VariantDescription,
        };
        let desc = VariantDescription {
            name: "i12".into(),
            engine: Engine::WgmmaK32Regfold,
            mode: NumericsMode::Int12Per256,
            kdr: 8,
            nbj: 128,
            tile_n: 64,
            warps_m: 8,
            warps_n: 1,
            scale_fetch: ScaleFetch::Narrow,
            expand: ExpandWidth::Uint4,
            stages: 3,
            refill: Refill::Tma,
            archs: ArchSet::EMPTY.with(Arch::Sm90),
            ..VariantDescription::DEFAULTS
        };
        mmqgen_codegen::validate(&desc).unwrap();
        let raw_rows = MappedWeights {
            address: 0,
            block_bytes: 210,
        };
        let maps = call_maps(
            &TensorMapBoxes::of(&desc).unwrap(),
            Some(raw_rows),
            0,
            0,
            4096,
            77,
            4096,
        );
        // Raw rows: 16 blocks of 210 bytes a row (3360 bytes, a multiple of 16), boxes of a block and the next bytes.
        let weights = maps.weights.as_ref().unwrap();
        assert_eq!((weights.row_bytes, weights.row_elements), (3360, 1680));
        assert_eq!(weights.box_rows, 128);
        assert!(weights.box_elements * 2 >= 210 && (weights.box_elements * 2).is_multiple_of(16));
        // Two chunks' 128 bytes (64 16-bit elements: both planes of each) of each of the 64 tokens' rows, 128-byte
        // swizzled, for each of the window's four chunk pairs.
        assert_eq!((maps.tokens.box_elements, maps.tokens.box_rows), (64, 64));
        assert_eq!(
            maps.tokens.swizzle,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B
        );
        // A token's row holds both planes (2 K bytes): K / 64 pairs of chunks, 128 bytes apart.
        assert_eq!(maps.tokens.row_bytes, 8192);
        assert_eq!(maps.tokens.row_elements, 64);
        assert_eq!(
            maps.tokens.outer,
            Some(OuterDimension {
                extent: 64,
                stride_bytes: 128,
                box_depth: 4
            })
        );
        // One scale a token and super-block: K / 256 rows, one a window.
        assert_eq!(maps.scales.rows, 16);
        assert_eq!((maps.scales.box_elements, maps.scales.box_rows), (64, 1));
    }

    #[test]
    fn a_rings_boxes_bring_each_lanes_block_into_the_slot_it_reads() {
        // The map as the host encodes it: rows of eight blocks, a multiple of 16 bytes apart, boxes of a block and
        // 14 bytes more from four rows.
        let blocks = 4096 * 16;
        let spec = eight_block_rows_spec(0, blocks);
        assert_eq!(
            (spec.row_elements, spec.row_bytes, spec.rows),
            (840, 1680, blocks / 8)
        );
        assert!(spec.row_bytes.is_multiple_of(16));
        assert_eq!((spec.box_elements, spec.box_rows), (112, 4));
        assert!((spec.box_elements * 2).is_multiple_of(16));
        // The kernel's side (templates/ring/whole.cu.tera), replayed on block numbers: the warp whose items start at
        // block `first` (a multiple of eight) issues box j at element 105 j of map row first / 8, which lands as
        // four 112-element rows side by side from slot 4 j; lane L reads slot 4 (L % 8) + L / 8.
        let elements = |block: u64| 105 * block..105 * block + 105;
        for first in [0u64, 8, 4096, blocks - 32] {
            let mut slots = vec![0..0; 32];
            for j in 0..8u64 {
                for r in 0..4u64 {
                    let start = (first / 8 + r) * spec.row_elements + 105 * j;
                    slots[(4 * j + r) as usize] = start..start + u64::from(spec.box_elements);
                }
            }
            for lane in 0..32u64 {
                let slot = &slots[(4 * (lane % 8) + lane / 8) as usize];
                let block = elements(first + lane);
                assert_eq!(slot.start, block.start, "first {first}, lane {lane}");
                assert!(slot.end >= block.end, "first {first}, lane {lane}");
            }
        }
    }

    #[test]
    fn a_split_rings_boxes_bring_each_lanes_block_into_the_slot_it_reads() {
        // The map as the host encodes it: the weight rows as they are (K = 14336: 56 blocks a row, 11760 bytes, a
        // multiple of 16), boxes of a block and 14 bytes more from four rows.
        let (m, k) = (4096u64, 14336u64);
        let spec = quad_row_blocks_spec(0, m, k);
        assert_eq!(
            (spec.row_elements, spec.row_bytes, spec.rows),
            (5880, 11760, m)
        );
        assert!(spec.row_bytes.is_multiple_of(16));
        assert_eq!((spec.box_elements, spec.box_rows), (112, 4));
        // The kernel's side (templates/ring/split_k.cu.tera), replayed on block numbers: a block of 128 rows from
        // row0 takes the split's run of `run` blocks from `first_block` of each row. Its items go by quads of rows:
        // item i is block (i / 4) % run of row 4 ((i / 4) / run) + i % 4, in slot i of its stage; the warp whose
        // items start at `first` issues box q (a quad) at element 105 (first_block + q % run) of rows row0 + 4 (q /
        // run) .., which lands as four 112-element rows side by side from slot 4 q - first.
        let superblocks = k / 256;
        // The splits of 14 segments of four blocks in four (3, 4, 3, 4 segments), and a split of one segment.
        for (first_block, run) in [(0u64, 12u64), (12, 16), (28, 12), (40, 16), (52, 4)] {
            for row0 in [0u64, 128, m - 128] {
                let items = 128 * run;
                for first in (0..items).step_by(32) {
                    let mut slots = vec![0..0; 32];
                    for quad in first / 4..(first + 32).min(items) / 4 {
                        let (row_quad, in_row) = (quad / run, quad % run);
                        for r in 0..4u64 {
                            let start = (row0 + 4 * row_quad + r) * spec.row_elements
                                + 105 * (first_block + in_row);
                            slots[(4 * quad - first + r) as usize] =
                                start..start + u64::from(spec.box_elements);
                        }
                    }
                    for lane in 0..(items - first).min(32) {
                        let item = first + lane;
                        let (row, block) = (4 * ((item / 4) / run) + item % 4, (item / 4) % run);
                        let at = (row0 + row) * superblocks + first_block + block;
                        let slot = &slots[lane as usize];
                        assert_eq!(
                            slot.start,
                            105 * at,
                            "split {first_block}, row0 {row0}, item {item}"
                        );
                        assert!(
                            slot.end >= 105 * at + 105,
                            "split {first_block}, item {item}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_ring_of_rows_boxes_bring_each_lanes_block_into_the_slot_it_reads() {
        // 14336 rows of K = 4096: runs of eight blocks (1680 bytes) of rows 3360 bytes apart, both multiples of 16;
        // a box is a block and 14 bytes more of 32 rows.
        let (m, k) = (14336u64, 4096u64);
        let spec = eight_block_runs_spec(0, m, k);
        assert_eq!(
            (spec.row_elements, spec.row_bytes, spec.rows),
            (840, 1680, 2)
        );
        let outer = spec.outer.unwrap();
        assert_eq!(
            (outer.extent, outer.stride_bytes, outer.box_depth),
            (m, 3360, 32)
        );
        assert!(spec.row_bytes.is_multiple_of(16) && outer.stride_bytes.is_multiple_of(16));
        assert_eq!((spec.box_elements, spec.box_rows), (112, 1));
        // The kernel's side (templates/ring/rows.cu.tera), replayed on element offsets: in stage s of a ring of W
        // warps, warp w issues the box at (105 (w % 8), (s W + w) / 8, row0), which lands as 32 rows of 112 elements
        // side by side from slot 32 w; lane L reads slot 32 w + L, which must start at block s W + w of row row0 + L.
        let superblocks = k / 256;
        for warps in [8u64, 16] {
            for (s, row0) in [(0u64, 0u64), (1, 32), (0, m - 32)] {
                for w in 0..warps.min(superblocks - s * warps) {
                    let run = (s * warps + w) / 8;
                    for lane in 0..32u64 {
                        let start = (row0 + lane) * outer.stride_bytes / 2
                            + run * spec.row_elements
                            + 105 * (w % 8);
                        let block = (row0 + lane) * superblocks + s * warps + w;
                        assert_eq!(
                            start,
                            105 * block,
                            "W {warps}, s {s}, warp {w}, lane {lane}"
                        );
                    }
                }
            }
        }
    }
}
