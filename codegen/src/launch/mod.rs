//! The launch contract: everything a launcher needs to queue a variant's kernels, computed from the description
//! beside its source (docs/KERNELS.md, "Entry points"). The entry points, the block, the shared memory, the tile
//! scheduler's grid and workspace, the copy engine's boxes and the ordered argument list the matmul entry points
//! take are data here, so that the launcher names no engine and no feature: it packs what the list asks for.
//!
//! One job per module: [`schedule`] maps tiles to blocks, [`boxes`] gives the tensor maps' boxes.

pub mod boxes;
pub mod schedule;

use crate::description::*;
use crate::layout::shared_layout;
use crate::name::canonical_name;

pub use boxes::{Swizzle, TensorMapBoxes};
pub use schedule::{
    counter_slots_to_zero, segment_count, segment_len, BlockGrid, Decomposition, GridError,
    TailSplit, TileSchedule, WorkspaceDemand, MAX_GRID_YZ, SEGMENT_K,
};

/// Shared memory a block can get without raising the function attribute.
pub const STATIC_SHARED_LIMIT: u32 = 48 * 1024;
/// Threads per block of the combine kernel (docs/KERNELS.md).
pub const COMBINE_THREADS: u32 = 256;
/// Warps per block of the activation quantizer (docs/KERNELS.md); the template's `QUANTIZER_WARPS`. Each warp
/// quantizes 256 values of one token, eight per lane, whatever the group size.
pub const QUANTIZER_WARPS: usize = 8;

/// Entry points of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelNames {
    pub quantize: String,
    pub raw: String,
    pub padded: String,
    /// Raw blocks whose rows the copy engine can reach (16-byte aligned rows): the `refill = tma` engines' third
    /// entry point, which stages them with bulk tensor copies as the padded one does.
    pub raw_rows: Option<String>,
    pub combine: Option<String>,
}

/// How a `raw_rows` entry point's copy engine reaches raw GGUF blocks: a box of a block starts at any 2-byte element
/// and lands where a padded block would (the bytes after the 210 are the next block's or zeros, which no lane reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawRowsWeights {
    /// The weights' map of the call's [`KernelArg::TensorMaps`], row by row: the stage engines (`refill = tma`)
    /// and the rings whose warps run fragments ([`RingLanes::Fragments`]), whose boxes take a block of several
    /// rows. A map's row stride must be a multiple of 16 bytes, so K is a multiple of 2048 (eight blocks), and the
    /// base 16-byte aligned.
    RowMap,
    /// A map of the whole tensor as rows of eight blocks (1680 bytes, a multiple of 16), the entry point's own last
    /// parameter ([`KernelArg::WeightsMap`]): the rings of super-blocks over all of K ([`RingLanes::Superblocks`],
    /// `ksplit = 1`), whose warp's 32 items are 32 consecutive blocks, eight boxes of [`RING_BOX_ELEMENTS`] x
    /// [`RING_BOX_ROWS`] (blocks j, j + 8, j + 16 and j + 24 each). The base must be 16-byte aligned and the
    /// tensor's blocks a multiple of eight; K may be any.
    EightBlockRows,
    /// Each weight row as runs of eight blocks (a map of [rows][K / 2048][eight blocks], the row stride a multiple
    /// of 16 bytes: K a multiple of 2048), the entry point's own last parameter: the rings whose lanes take rows
    /// ([`RingLanes::Rows`]), whose stage is super-blocks `8 i .. 8 i + 7` (or more eights) of their 32 rows, one box
    /// of [`RING_BOX_ELEMENTS`] x 1 x 32 a super-block. The base must be 16-byte aligned.
    EightBlockRuns,
    /// Each weight row whole (a map of [rows][K / 256 blocks of 105 16-bit elements], the row stride a multiple of
    /// 16 bytes: K a multiple of 2048), the entry point's own last parameter: the rings of super-blocks with a split
    /// K (`ksplit > 1`), whose split of a row is whole segments, not always whole eights of blocks. Their items go by
    /// quads of rows (a block of rows `4 i .. 4 i + 3`, then the next block of the same rows), a box of
    /// [`RING_BOX_ELEMENTS`] x [`RING_BOX_ROWS`] a quad. The base must be 16-byte aligned.
    QuadRowBlocks,
}

impl RawRowsWeights {
    /// Whether the copy engine reaches `m x k` raw blocks at `address` through this map: a map's base must be 16-byte
    /// aligned and its row stride a multiple of 16 bytes (raw rows: K a multiple of 2048, eight 210-byte blocks;
    /// rows of eight blocks: the tensor's blocks a multiple of eight, any K).
    pub fn reaches(self, address: u64, m: u64, k: u64) -> bool {
        let blocks_per_row = k / u64::from(crate::SUPERBLOCK_K);
        address.is_multiple_of(16)
            && match self {
                RawRowsWeights::RowMap
                | RawRowsWeights::EightBlockRuns
                | RawRowsWeights::QuadRowBlocks => {
                    (blocks_per_row * mmqgen_formats::q6k::BLOCK_BYTES as u64).is_multiple_of(16)
                }
                RawRowsWeights::EightBlockRows => {
                    let blocks = m * blocks_per_row;
                    blocks > 0 && blocks.is_multiple_of(8)
                }
            }
    }

    /// A ring's map: the entry point's own parameter, read by tensor copies in place of the ring's bulk copies.
    pub fn is_rings(self) -> bool {
        matches!(
            self,
            RawRowsWeights::EightBlockRows
                | RawRowsWeights::EightBlockRuns
                | RawRowsWeights::QuadRowBlocks
        )
    }
}

/// 16-bit elements of a ring's box row: one 210-byte block and the 14 bytes after it, a slot's 224 (a box row's
/// bytes are a multiple of 16).
pub const RING_BOX_ELEMENTS: u32 = 112;
/// Rows of a ring's box: four, so that eight boxes bring a warp's 32 blocks (rows of eight blocks,
/// [`RawRowsWeights::EightBlockRows`]; weight rows, [`RawRowsWeights::QuadRowBlocks`]).
pub const RING_BOX_ROWS: u32 = 4;
/// Weight rows in a box of a ring whose lanes take rows ([`RawRowsWeights::EightBlockRuns`]): its 32.
pub const RING_ROWS_BOX_DEPTH: u32 = 32;

/// How `desc`'s `raw_rows` entry point reads raw blocks, or `None` where it has none (the engines that copy raw
/// blocks themselves 16 bits at a time, in every case).
pub fn raw_rows_weights(desc: &VariantDescription) -> Option<RawRowsWeights> {
    match (desc.engine, desc.ring_lanes) {
        (Engine::StreamRing, RingLanes::Superblocks) if desc.ksplit == 1 => {
            Some(RawRowsWeights::EightBlockRows)
        }
        (Engine::StreamRing, RingLanes::Superblocks) => Some(RawRowsWeights::QuadRowBlocks),
        (Engine::StreamRing, RingLanes::Rows) => Some(RawRowsWeights::EightBlockRuns),
        // A fragment ring's boxes are a super-block of a row group's 16 rows, from the call's weights map.
        (Engine::StreamRing, RingLanes::Fragments) if desc.refill == Refill::Tma => {
            Some(RawRowsWeights::RowMap)
        }
        (Engine::StreamRing, _) => None,
        _ if desc.refill == Refill::Tma => Some(RawRowsWeights::RowMap),
        _ => None,
    }
}

/// Whether `desc` has the `raw_rows` entry point ([`raw_rows_weights`]).
pub fn has_raw_rows_entry(desc: &VariantDescription) -> bool {
    raw_rows_weights(desc).is_some()
}

/// One parameter of the matmul entry points, in the order the kernel declares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelArg {
    /// The weights the kernel reads ([`LaunchContract::weights`]).
    Weights,
    /// The mode's scale plane, or null when `used` is false (the slot stays in the ABI).
    Plane {
        used: bool,
    },
    /// The f32 activations `x`, which the matmul quantizes itself (`quantizer = fused`, in the plane's slot).
    Activations,
    /// The int8 activation quants, read (or `written` by a matmul that quantizes them).
    ActivationQuants {
        written: bool,
    },
    /// The activation scales, read (or `written`).
    ActivationScales {
        written: bool,
    },
    /// The f32 output `[n][m]`.
    Out,
    /// The workspace's f32 slots beside the activations, or null when `used` is false.
    Workspace {
        used: bool,
    },
    M,
    N,
    K,
    /// The call's tensor maps, by value ([`LaunchContract::tensor_maps`] gives their boxes).
    TensorMaps,
    /// The raw weights' own map, by value: the last parameter of a ring's `raw_rows` entry point only
    /// ([`RawRowsWeights::is_rings`]).
    WeightsMap,
    /// The tiles a last-wave split leaves whole ([`TailSplit::whole_tiles`]).
    WholeTiles,
    /// The blocks each split tile takes ([`TailSplit::split`]).
    TailSplit,
}

impl KernelArg {
    /// The parameter as the generated entry point declares it.
    pub const fn c_parameter(self) -> &'static str {
        match self {
            KernelArg::Weights => "const uint8* __restrict__ weights",
            KernelArg::Plane { .. } => "const uint8* __restrict__ plane",
            KernelArg::Activations => "const float* __restrict__ x",
            KernelArg::ActivationQuants { written: false } => "const int8* __restrict__ act_q",
            KernelArg::ActivationQuants { written: true } => "int8* __restrict__ act_q",
            KernelArg::ActivationScales { written: false } => "const float* __restrict__ act_d",
            KernelArg::ActivationScales { written: true } => "float* __restrict__ act_d",
            KernelArg::Out => "float* __restrict__ out",
            KernelArg::Workspace { .. } => "float* __restrict__ segments",
            KernelArg::M => "int m",
            KernelArg::N => "int n",
            KernelArg::K => "int k",
            KernelArg::TensorMaps => "const __grid_constant__ TensorMaps maps",
            KernelArg::WeightsMap => "const __grid_constant__ TensorMap weights_map",
            KernelArg::WholeTiles => "int whole_tiles",
            KernelArg::TailSplit => "int tail_split",
        }
    }
}

/// What the matmul reads as its weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightSource {
    /// The registered layout's q6_K blocks.
    Blocks,
    /// The `h`/`l` planes folded at registration.
    FoldedPlane,
}

/// Who quantizes the activations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantizerLaunch {
    /// The module's quantizer kernel, queued before the matmul (which is its programmatic dependent).
    Separate,
    /// The matmul itself, from `x` ([`KernelArg::Activations`]): one launch, queued the ordinary way (it may
    /// follow whatever still writes `x`).
    InMatmul,
}

/// The dynamic shared memory of a matmul launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMemory {
    /// Declared statically by the kernel (at most 48 KiB).
    Static,
    /// This many bytes, dynamic: the launcher raises the function attribute first.
    Dynamic(u32),
    /// Sized by each call from K ([`LaunchContract::shared_bytes_at`]): the launcher raises the attribute as far
    /// as the GPU allows, and each call asks for its own.
    GrowsWithK,
}

/// The activations the quantizer leaves in the workspace and the matmul reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActivationLayout {
    /// Activation values per scale (G).
    pub group: u32,
    /// int8 planes per value (2 under `int12_per256`).
    pub planes: u32,
    /// Scales chunk-major (`[K/G]` rows of `round_up(n, 4)`, so that the copy engine stages a chunk's tokens side
    /// by side) rather than token-major (`[n][K/G]`).
    pub by_chunk: bool,
}

impl ActivationLayout {
    /// What `desc`'s quantizer writes.
    pub fn of(desc: &VariantDescription) -> ActivationLayout {
        ActivationLayout {
            group: desc.mode.activation_group(),
            planes: desc.mode.activation_planes(),
            by_chunk: desc.refill == Refill::Tma,
        }
    }
}

/// Everything a launcher needs to queue one variant (docs/KERNELS.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchContract {
    pub kernels: KernelNames,
    /// Threads of a matmul block.
    pub threads: u32,
    pub shared: SharedMemory,
    pub schedule: TileSchedule,
    /// The matmul entry points' parameters, in order.
    pub args: Vec<KernelArg>,
    pub quantizer: QuantizerLaunch,
    pub weights: WeightSource,
    /// The mode, whose scale plane [`KernelArg::Plane`] reads when used.
    pub mode: NumericsMode,
    pub activations: ActivationLayout,
    /// The boxes of the call's tensor maps, when the argument list has [`KernelArg::TensorMaps`].
    pub tensor_maps: Option<TensorMapBoxes>,
    /// How the `raw_rows` entry point reads raw blocks, where there is one.
    pub raw_rows: Option<RawRowsWeights>,
    /// The `raw_rows` entry point's parameters, in order: [`Self::args`], and the weights' map after them for a
    /// ring's (empty without the entry point).
    pub raw_rows_args: Vec<KernelArg>,
    /// For [`SharedMemory::GrowsWithK`]: the description the ring's records and sums are sized from.
    sized_by_k: Option<VariantDescription>,
}

impl LaunchContract {
    /// The contract of `desc` (a valid description: the validator's refusals come first).
    pub fn of(desc: &VariantDescription) -> LaunchContract {
        let canonical = canonical_name(desc);
        let kernels = KernelNames {
            quantize: desc.mode.quantizer_kernel(),
            raw: format!("{canonical}_raw"),
            padded: format!("{canonical}_padded"),
            raw_rows: has_raw_rows_entry(desc).then(|| format!("{canonical}_raw_rows")),
            combine: (desc.ksplit > 1).then(|| format!("{canonical}_combine")),
        };
        let total = shared_layout(desc).total_bytes;
        // The ring engine's records and sums grow with K: its shared memory is sized at launch.
        let grows = desc.engine == Engine::StreamRing;
        let shared = if grows {
            SharedMemory::GrowsWithK
        } else if total > STATIC_SHARED_LIMIT {
            SharedMemory::Dynamic(total)
        } else {
            SharedMemory::Static
        };
        let schedule = TileSchedule::of(desc);
        let fused = desc.quantizer == Quantizer::Fused;
        let tensor_maps = TensorMapBoxes::of(desc);
        let mut args = vec![
            KernelArg::Weights,
            if fused {
                KernelArg::Activations
            } else {
                KernelArg::Plane {
                    used: desc.scale_fetch == ScaleFetch::Plane,
                }
            },
            KernelArg::ActivationQuants { written: fused },
            KernelArg::ActivationScales { written: fused },
            KernelArg::Out,
            KernelArg::Workspace {
                used: schedule.decomposition != Decomposition::Whole,
            },
            KernelArg::M,
            KernelArg::N,
            KernelArg::K,
        ];
        if tensor_maps.is_some() {
            args.push(KernelArg::TensorMaps);
        }
        if let Decomposition::LastWaveSplit { .. } = schedule.decomposition {
            args.extend([KernelArg::WholeTiles, KernelArg::TailSplit]);
        }
        let raw_rows = raw_rows_weights(desc);
        let raw_rows_args = match raw_rows {
            None => Vec::new(),
            Some(RawRowsWeights::RowMap) => args.clone(),
            Some(
                RawRowsWeights::EightBlockRows
                | RawRowsWeights::EightBlockRuns
                | RawRowsWeights::QuadRowBlocks,
            ) => {
                let mut with_map = args.clone();
                with_map.push(KernelArg::WeightsMap);
                with_map
            }
        };
        LaunchContract {
            kernels,
            threads: desc.threads(),
            shared,
            schedule,
            args,
            quantizer: if fused {
                QuantizerLaunch::InMatmul
            } else {
                QuantizerLaunch::Separate
            },
            weights: if desc.engine.is_prefolded() {
                WeightSource::FoldedPlane
            } else {
                WeightSource::Blocks
            },
            mode: desc.mode,
            activations: ActivationLayout::of(desc),
            tensor_maps,
            raw_rows,
            raw_rows_args,
            sized_by_k: grows.then(|| desc.clone()),
        }
    }

    /// Dynamic shared memory of one matmul launch at K = `k` (0 when static).
    pub fn shared_bytes_at(&self, k: u64) -> u64 {
        match (self.shared, &self.sized_by_k) {
            (SharedMemory::Static, _) => 0,
            (SharedMemory::Dynamic(bytes), _) => u64::from(bytes),
            (SharedMemory::GrowsWithK, Some(desc)) => crate::layout::ring_shared_bytes(desc, k),
            (SharedMemory::GrowsWithK, None) => 0,
        }
    }

    /// Dynamic shared memory the launcher sets aside at load: the fixed amount, or for shared memory that grows
    /// with K the layout's fixed part (the launcher raises it to the GPU's limit).
    pub fn dynamic_shared_bytes(&self) -> u32 {
        match self.shared {
            SharedMemory::Static => 0,
            SharedMemory::Dynamic(bytes) => bytes,
            SharedMemory::GrowsWithK => self
                .sized_by_k
                .as_ref()
                .map_or(0, |desc| shared_layout(desc).total_bytes),
        }
    }

    /// Whether the matmul reads the mode's scale plane.
    pub fn reads_scale_plane(&self) -> bool {
        self.args.contains(&KernelArg::Plane { used: true })
    }

    /// Whether the matmul takes the workspace's slots beside the activations.
    pub fn uses_workspace(&self) -> bool {
        self.args.contains(&KernelArg::Workspace { used: true })
    }

    /// The raw and padded entry points' parameter list as the generated source declares it.
    pub fn c_parameters(&self) -> Vec<&'static str> {
        self.args.iter().map(|a| a.c_parameter()).collect()
    }

    /// The `raw_rows` entry point's parameter list as the generated source declares it (empty without one).
    pub fn raw_rows_c_parameters(&self) -> Vec<&'static str> {
        self.raw_rows_args.iter().map(|a| a.c_parameter()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_reaches_raw_blocks_from_a_16_byte_aligned_base() {
        let rows_of_eight = RawRowsWeights::EightBlockRows;
        assert!(rows_of_eight.reaches(0x7f00_0000_0080, 4096, 4096));
        // ggml's views and odd tensors: the kernel copies those blocks itself.
        assert!(!rows_of_eight.reaches(0x7f00_0000_0082, 4096, 4096));
        assert!(!rows_of_eight.reaches(0x7f00_0000_0080, 4095, 11008));
        assert!(!rows_of_eight.reaches(0x7f00_0000_0080, 0, 4096));
        // K need not be a multiple of 2048 (43 blocks a row, K = 11008), where the rows of eight do.
        assert!(rows_of_eight.reaches(0x7f00_0000_0080, 4096, 11008));
        // A map of rows needs rows a multiple of 16 bytes (K a multiple of 2048) and the base aligned.
        for map in [
            RawRowsWeights::RowMap,
            RawRowsWeights::EightBlockRuns,
            RawRowsWeights::QuadRowBlocks,
        ] {
            assert!(map.reaches(0x7f00_0000_0080, 333, 4096), "{map:?}");
            assert!(!map.reaches(0x7f00_0000_0082, 333, 4096), "{map:?}");
            assert!(!map.reaches(0x7f00_0000_0080, 333, 11008), "{map:?}");
        }
    }

    /// A small mma tile: 64 rows, 32 tokens, 2 x 2 warps (also the schedule's tests').
    pub(super) fn desc() -> VariantDescription {
        VariantDescription {
            name: "t".into(),
            nbj: 64,
            tile_n: 32,
            warps_m: 2,
            warps_n: 2,
            ..VariantDescription::DEFAULTS
        }
    }

    #[test]
    fn entry_points_follow_kernels_md() {
        let d = VariantDescription {
            mode: NumericsMode::IntPer256,
            ..desc()
        };
        let e = LaunchContract::of(&d).kernels;
        let canonical = canonical_name(&d);
        assert_eq!(e.quantize, "mmq_quantize_activations_g256");
        assert_eq!(e.raw, format!("{canonical}_raw"));
        assert_eq!(e.padded, format!("{canonical}_padded"));
        assert_eq!(e.combine, None);
        let e = LaunchContract::of(&VariantDescription {
            ksplit: 2,
            mode: NumericsMode::F32Per16,
            ..desc()
        })
        .kernels;
        assert_eq!(e.quantize, "mmq_quantize_activations_g32");
        assert!(e
            .combine
            .unwrap()
            .ends_with("_ks2_narrow_u32_cpa0_cpp0_s1_combine"));
    }

    #[test]
    fn the_argument_list_is_kernels_md_args() {
        let plain = LaunchContract::of(&desc());
        assert_eq!(
            plain.c_parameters().join(", "),
            "const uint8* __restrict__ weights, const uint8* __restrict__ plane, const int8* __restrict__ act_q, \
             const float* __restrict__ act_d, float* __restrict__ out, float* __restrict__ segments, int m, int n, \
             int k"
        );
        assert!(!plain.reads_scale_plane());
        assert_eq!(plain.weights, WeightSource::Blocks);
        assert_eq!(plain.quantizer, QuantizerLaunch::Separate);
        let plane = LaunchContract::of(&VariantDescription {
            scale_fetch: ScaleFetch::Plane,
            ksplit: 2,
            ..desc()
        });
        assert!(plane.reads_scale_plane());
        assert!(plane.args.contains(&KernelArg::Workspace { used: true }));
    }

    #[test]
    fn dynamic_shared_memory_only_above_48_kib() {
        let small = desc();
        assert!(shared_layout(&small).total_bytes <= 48 * 1024);
        assert_eq!(LaunchContract::of(&small).shared, SharedMemory::Static);
        assert_eq!(LaunchContract::of(&small).dynamic_shared_bytes(), 0);
        let big = VariantDescription {
            engine: Engine::MmaK32Fold,
            nbj: 128,
            tile_n: 64,
            kdr: 8,
            stages: 3,
            expand: ExpandWidth::Uint4,
            cp_async_activations: CpAsync::B16,
            ..small
        };
        let total = shared_layout(&big).total_bytes;
        assert!(total > 48 * 1024, "{total}");
        let contract = LaunchContract::of(&big);
        assert_eq!(contract.shared, SharedMemory::Dynamic(total));
        assert_eq!(contract.shared_bytes_at(4096), u64::from(total));
    }
}
