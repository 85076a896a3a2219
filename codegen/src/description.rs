//! What a variant *is*: the typed description a person declares with `variant!` or in TOML.
//!
//! Every field reaches the generated CUDA (the test `every_field_is_real` checks it). The types are
//! const-constructible so that `variant!` can expand to a `const`, and carry no rendering or CUDA
//! dependencies so that the proc-macro builds fast (docs/DESIGN.md D9).

pub use crate::arch::{Arch, ArchSet};
use std::borrow::Cow;
use std::fmt;

/// How the exact integer sums of NUMERICS.md 3 are computed. Never changes a bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// `__dp4a` on int8 weights `q6 - 32`, scales applied after each 16-wide sub-block.
    Dp4a,
    /// `mma.sync m16n8k16 s8` on `q6 - 32`, scales applied after the MMA (llama.cpp's engine).
    MmaK16,
    /// `mma.sync m16n8k32 s8` on two int8 planes with `sc*(q6-32) = 64*h + l` (docs/DESIGN.md R6), folded in the
    /// kernel from the q6_K blocks.
    MmaK32Fold,
    /// The same fold done by each warp in registers, one k-step ahead of the mmas that consume it, from the q6_K
    /// blocks staged raw in shared memory: the weights stay at q6_K's size on the device and in shared memory.
    MmaK32Regfold,
    /// The q6_K blocks staged as `mma_k32_regfold` stages them, but no fold: each warp widens its rows' weights
    /// to q6 in [0, 63] as uint8 in registers (about five operations per four weights against the fold's
    /// seventeen), one `mma.sync m16n8k16 u8.s8` per 16-value sub-block on an accumulator that an mma of a
    /// constant -32 tile starts at `-32 * sum(x)`, and the chunk's `I32 = sc_even * I16_even + sc_odd * I16_odd`
    /// per output after the mmas (NUMERICS.md 3). One more integer operation per output and chunk than the
    /// fold's `64 H + L`, far fewer per weight: the engine for tiles of few tokens, where the weights' work is
    /// shared by few outputs.
    MmaK16Widen,
    /// The same fold done once at registration: the kernel streams the `h`/`l` planes (2 bytes per weight on
    /// the device) with no per-weight ALU work, like an int8 GEMM.
    MmaK32Prefolded,
    /// The prefolded planes multiplied by Hopper's warpgroup MMA (`wgmma.mma_async m64nNk32 s8`, sm_90a):
    /// both operands straight from shared memory, 64 rows per warpgroup.
    WgmmaK32Prefolded,
    /// The register fold of `mma_k32_regfold` feeding Hopper's warpgroup MMA: each warp folds its 16 rows of the
    /// q6_K blocks staged in shared memory into the A registers of `wgmma.mma_async m64nNk32 s8` (sm_90a), whose
    /// B, the activations, comes from shared memory. Compact weights, one fold per row and chunk for up to 128
    /// tokens.
    WgmmaK32Regfold,
    /// The register fold in f16 for Hopper's f16 warpgroup MMA with f32 accumulation (`wgmma m64nNk16 f16`,
    /// sm_90a): each warp folds its rows into two exact f16 planes, `16*(sc>>4)*(q6-32)` and `(sc&15)*(q6-32)`,
    /// the block converts the staged int8 activations to f16 once per window, and the tensor core accumulates
    /// the chunk's whole `I32` (every partial sum an integer below 2^24, so f32 holds it exactly): one fma per
    /// output and chunk is left (NUMERICS.md 3).
    WgmmaF16Regfold,
    /// Decode: each warp streams its weight rows along K once, straight from the q6_K blocks in global memory
    /// (no shared-memory staging of weights), `__dp4a` on `q6 - 32` for a few tokens. For small token counts,
    /// where a matmul is a stream of weight bytes.
    StreamDp4a,
    /// Decode through a shared-memory ring: the block's weight rows, one contiguous run of q6_K blocks, arrive in
    /// bulk copies (`cp.async.bulk`, sm_90 and later) a stage ahead; each thread takes one whole super-block a stage
    /// and forms its eight chunk sums with `__dp4a` against the block's tokens, staged once in shared memory. On the
    /// padded layout no lane loads a weight byte from global memory and no register holds bytes in flight.
    StreamRing,
}

/// Which float sequence of NUMERICS.md 5 the kernel follows. This, and only this, decides the bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumericsMode {
    /// f32 `d*sc` per 16 weights, activation scale per 32 (the seed's dsc path).
    F32Per16,
    /// Integer scale combine per 32, activation scale per 32, `d` per super-block.
    IntPer32,
    /// Integer sum over the super-block, one activation scale per 256.
    IntPer256,
    /// Integer sum over the super-block, one activation scale per 256 and 12-bit activations (|v| <= 2047) held
    /// as two int8 planes `v = 64 vh + vl`: 35x finer than `int_per32` at `int_per256`'s one conversion a
    /// super-block (NUMERICS.md 2, 6).
    Int12Per256,
}

/// Where the kernel gets the weight scales from (docs/DESIGN.md D4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleFetch {
    /// One byte or half-word per scale and `d`, straight from the block (the seed's r41).
    Narrow,
    /// The window's scale bytes in one load and `d` as a u32 (the seed's r42); raw layout takes the narrow arm.
    Wide,
    /// A plane precomputed at registration (the seed's r56); works on both layouts.
    Plane,
}

/// Load width for the `ql`/`qh` bytes when expanding weights on the padded layout (raw reads 16 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpandWidth {
    U8,
    U32,
    Uint4,
}

/// Where each lane keeps the sums of its finished numerics segments (NUMERICS.md 4) when K is not split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Totals {
    /// One register per output.
    Registers,
    /// One shared-memory slot per output, touched once per segment: frees a register per output.
    Shared,
    /// The output itself: each segment end adds its segment into `out` (read back from L2 after the first),
    /// freeing a register per output without shared memory.
    Output,
}

/// Where each lane keeps its running segment (NUMERICS.md 4: the fma of each super-block lands on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// One register per output.
    Registers,
    /// One shared-memory slot per output, touched once per super-block: frees a register per output for
    /// engines whose integer sums fill the registers (mode int12_per256's three).
    Shared,
}

/// Which kernel quantizes the activations (NUMERICS.md 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantizer {
    /// The module's own quantizer kernel, queued before the matmul (the matmul waits for it).
    Separate,
    /// The matmul kernel itself, from `x`, before its weights arrive: one launch a call (engine `stream_ring`).
    Fused,
}

/// Which warps issue the copies that refill a stage (`refill = tma`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Producer {
    /// The tile's own: the last warp done reading a stage (a shared counter) issues its refill.
    None,
    /// A producer warpgroup after the tile's warps: its first thread waits on each stage's `stage_free`
    /// mbarrier, on which every tile warp arrives when done with the stage, and issues the refill; the tile's
    /// warps never count readers or issue copies, and take the warpgroup's registers (setmaxnreg).
    Warpgroup,
}

/// Which items a warp of the ring engine (`stream_ring`) takes from a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RingLanes {
    /// 32 consecutive (row, super-block) items in memory order, one bulk copy a warp: at K = 4096 two rows of
    /// 16 super-blocks, so that a load of token records reads sixteen of them.
    Superblocks,
    /// One super-block of 32 rows, a lane a row (`nbj = 32`): every lane reads the same token records (a
    /// broadcast), and a thread waits for every warp's copies, since its rows come from all of them.
    Rows,
    /// Sixteen rows a warp (`nbj = 16 * warps_m`) over every super-block of a stage, as the m16n8k16 fragments of
    /// `mma_k16_widen` against 8 or 16 tokens: each row group's rows come by one tensor copy on its own mbarrier, the
    /// warps keep their sums in registers, and the stage's tokens are copied once for the block by the last warp
    /// done with the slot (`refill = tma`).
    Fragments,
}

/// When a pipelined main loop issues the copies that refill a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refill {
    /// All at once, right after the window's barrier.
    Burst,
    /// One slice per chunk, between the chunks' mmas (engine `mma_k32_prefolded`).
    Spread,
    /// Three bulk tensor copies (TMA) a stage, completing on the stage's mbarrier and issued by the last warp to
    /// finish reading it, so that no warp waits at a block-wide barrier (engine `mma_k32_regfold`, padded layout;
    /// sm_90 and later).
    Tma,
}

/// cp.async copy width in bytes, or plain loads through registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpAsync {
    Off,
    B4,
    B8,
    B16,
}

/// One q6_K MMQ variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VariantDescription {
    /// The declared, human handle (`r56`). Not part of the generated source.
    pub name: Cow<'static, str>,
    pub engine: Engine,
    pub mode: NumericsMode,
    /// 32-wide K chunks per stage window; divides 8 so a window never crosses a super-block.
    pub kdr: u32,
    /// Weight rows per block (the seed's MMQ_NBJ).
    pub nbj: u32,
    /// Tokens per block.
    pub tile_n: u32,
    /// Warps along the weight rows of the tile.
    pub warps_m: u32,
    /// Warps along the tokens of the tile.
    pub warps_n: u32,
    /// Split of K across blocks, in whole segments (NUMERICS.md 4).
    pub ksplit: u32,
    pub scale_fetch: ScaleFetch,
    pub expand: ExpandWidth,
    pub cp_async_activations: CpAsync,
    pub cp_async_plane: CpAsync,
    /// Shared-memory stages of the main loop (1 = no overlap).
    pub stages: u32,
    /// Integer accumulator sets per output of the prefolded engine under `int_per256`: 1 gathers H, multiplies
    /// by 64 and adds L in the same registers (two passes over a super-block); 2 gathers H and L side by side
    /// in one pass and forms `64*H + L` at the super-block's end. The same int32 either way. Other engines: 1.
    pub accumulator_sets: u32,
    pub totals: Totals,
    pub segment: Segment,
    pub refill: Refill,
    pub quantizer: Quantizer,
    /// Blocks that must fit one SM at once (`__launch_bounds__`' second argument): caps the registers per
    /// thread at 64K / (blocks x threads) so that more warps hide latency. 1 leaves the compiler free.
    pub blocks_per_sm: u32,
    /// How far the register-fold engine unrolls its chunk loop: 0 = fully (the chunk's nibble and shifts are
    /// constants; registers may not suffice), else 1, 2 or 4 chunks at a time. Other engines unroll fully.
    pub chunk_unroll: u32,
    /// How the ring engine (`stream_ring`) runs a super-block's tokens: 0 = unrolled, every token's chunk sums side by
    /// side; 1 = one token at a time, in a loop over the block's tokens that is not unrolled, after the super-block's
    /// weights are unpacked for all of them (a smaller kernel, run once per thread). Other engines: 0.
    pub token_unroll: u32,
    /// Which items a warp of the ring engine takes from a stage ([`RingLanes`]). Other engines: `superblocks`.
    pub ring_lanes: RingLanes,
    /// Warps along K in a ring whose warps run mma fragments (`ring_lanes = fragments`): each group of the block's
    /// warps takes a contiguous run of whole segments with a ring of its own, and the first adds the later groups'
    /// segment sums in K order at the end (NUMERICS.md 4). Other variants: 1.
    pub warps_k: u32,
    /// Blocks of a thread-block cluster along the weight rows (sm_90, `wgmma_k32_regfold` with `refill = tma`):
    /// they share one token tile, and each stage's token boxes come from L2 once for all of them, multicast by the
    /// copy engine (each block issues its share). 1 = none.
    pub cluster_rows: u32,
    /// Blocks of the cluster along the token tiles: they share one row tile, and each stage's weight box comes from
    /// L2 once for all of them (the blocks take turns a window to issue it). 1 = none.
    pub cluster_tokens: u32,
    /// Fold warps (`wgmma_k32_regfold` under `int12_per256`, `refill = tma`): 0 = each warp folds its own rows into
    /// its A registers one chunk ahead of its wgmmas; 4 or 8 = that many more warps fold every row of the tile into
    /// a ring of h and l fragments in shared memory, and the tile's warps load them and only issue the wgmmas.
    pub fold_warps: u32,
    /// Which warps refill the stages (`wgmma_k32_regfold` under `int12_per256`, `refill = tma`): `none` = the
    /// tile's last warp out of a stage; `warpgroup` = four more warps whose first thread does, so that the tile's
    /// warps only arrive on an mbarrier at a window's end ([`Producer`]).
    pub producer: Producer,
    /// How many parts along K the last wave's tiles may take (`wgmma_k32_regfold`, `refill = tma`): 1 = none; 2 to
    /// 4 = where a call's tiles leave the GPU's last wave part-full, the launcher gives each of those tiles up to
    /// that many blocks with whole segments each, and the last of them to finish adds the tile's segment sums in K
    /// order (NUMERICS.md 4), so that the last wave ends sooner (docs/KERNELS.md, "The last wave").
    pub tail_parts: u32,
    pub archs: ArchSet,
    /// An experimental variant may spill; shipped ones may not (docs/DESIGN.md D10).
    pub allow_spills: bool,
}

impl Engine {
    pub const ALL: [Engine; 11] = [
        Engine::Dp4a,
        Engine::MmaK16,
        Engine::MmaK32Fold,
        Engine::MmaK32Regfold,
        Engine::MmaK16Widen,
        Engine::MmaK32Prefolded,
        Engine::WgmmaK32Prefolded,
        Engine::WgmmaK32Regfold,
        Engine::WgmmaF16Regfold,
        Engine::StreamDp4a,
        Engine::StreamRing,
    ];
    pub const fn keyword(self) -> &'static str {
        match self {
            Engine::Dp4a => "dp4a",
            Engine::MmaK16 => "mma_k16",
            Engine::MmaK32Fold => "mma_k32_fold",
            Engine::MmaK32Regfold => "mma_k32_regfold",
            Engine::MmaK16Widen => "mma_k16_widen",
            Engine::MmaK32Prefolded => "mma_k32_prefolded",
            Engine::WgmmaK32Prefolded => "wgmma_k32_prefolded",
            Engine::WgmmaK32Regfold => "wgmma_k32_regfold",
            Engine::WgmmaF16Regfold => "wgmma_f16_regfold",
            Engine::StreamDp4a => "stream_dp4a",
            Engine::StreamRing => "stream_ring",
        }
    }
    /// Engines that multiply the folded `h`/`l` planes (no per-16 partial, so no `f32_per16`).
    pub const fn is_fold(self) -> bool {
        matches!(
            self,
            Engine::MmaK32Fold
                | Engine::MmaK32Regfold
                | Engine::MmaK32Prefolded
                | Engine::WgmmaK32Prefolded
                | Engine::WgmmaK32Regfold
                | Engine::WgmmaF16Regfold
        )
    }
    /// Engines that read the planes folded at registration instead of the q6_K blocks.
    pub const fn is_prefolded(self) -> bool {
        matches!(self, Engine::MmaK32Prefolded | Engine::WgmmaK32Prefolded)
    }
    /// Engines that stage each row's q6_K block as it is and build their A fragments from it in registers (the
    /// register folds, and `mma_k16_widen`).
    pub const fn builds_rows_in_registers(self) -> bool {
        matches!(
            self,
            Engine::MmaK32Regfold
                | Engine::MmaK16Widen
                | Engine::WgmmaK32Regfold
                | Engine::WgmmaF16Regfold
        )
    }
    /// Engines whose chunk loop is `mma_k32_regfold`'s: mma.sync on A fragments built in registers, copies by
    /// cp.async or the copy engine, the chunk loop unrolled in part if asked.
    pub const fn is_mma_sync_in_registers(self) -> bool {
        matches!(self, Engine::MmaK32Regfold | Engine::MmaK16Widen)
    }
    /// Engines that multiply with Hopper's warpgroup MMA (sm_90a only).
    pub const fn is_wgmma(self) -> bool {
        matches!(
            self,
            Engine::WgmmaK32Prefolded | Engine::WgmmaK32Regfold | Engine::WgmmaF16Regfold
        )
    }
}

impl Totals {
    pub const ALL: [Totals; 3] = [Totals::Registers, Totals::Shared, Totals::Output];
    pub const fn keyword(self) -> &'static str {
        match self {
            Totals::Registers => "registers",
            Totals::Shared => "shared",
            Totals::Output => "output",
        }
    }
    /// The short form in canonical names and sweep point names (`_totreg`, `_totsmem`, `_totout`).
    pub const fn short_keyword(self) -> &'static str {
        match self {
            Totals::Registers => "reg",
            Totals::Shared => "smem",
            Totals::Output => "out",
        }
    }
}

impl Segment {
    pub const ALL: [Segment; 2] = [Segment::Registers, Segment::Shared];
    pub const fn keyword(self) -> &'static str {
        match self {
            Segment::Registers => "registers",
            Segment::Shared => "shared",
        }
    }
}

impl Quantizer {
    pub const ALL: [Quantizer; 2] = [Quantizer::Separate, Quantizer::Fused];
    pub const fn keyword(self) -> &'static str {
        match self {
            Quantizer::Separate => "separate",
            Quantizer::Fused => "fused",
        }
    }
}

impl Producer {
    pub const ALL: [Producer; 2] = [Producer::None, Producer::Warpgroup];
    pub const fn keyword(self) -> &'static str {
        match self {
            Producer::None => "none",
            Producer::Warpgroup => "warpgroup",
        }
    }
}

impl RingLanes {
    pub const ALL: [RingLanes; 3] = [
        RingLanes::Superblocks,
        RingLanes::Rows,
        RingLanes::Fragments,
    ];
    pub const fn keyword(self) -> &'static str {
        match self {
            RingLanes::Superblocks => "superblocks",
            RingLanes::Rows => "rows",
            RingLanes::Fragments => "fragments",
        }
    }
}

impl Refill {
    pub const ALL: [Refill; 3] = [Refill::Burst, Refill::Spread, Refill::Tma];
    pub const fn keyword(self) -> &'static str {
        match self {
            Refill::Burst => "burst",
            Refill::Spread => "spread",
            Refill::Tma => "tma",
        }
    }
}

impl NumericsMode {
    pub const ALL: [NumericsMode; 4] = [
        NumericsMode::F32Per16,
        NumericsMode::IntPer32,
        NumericsMode::IntPer256,
        NumericsMode::Int12Per256,
    ];
    pub const fn keyword(self) -> &'static str {
        match self {
            NumericsMode::F32Per16 => "f32_per16",
            NumericsMode::IntPer32 => "int_per32",
            NumericsMode::IntPer256 => "int_per256",
            NumericsMode::Int12Per256 => "int12_per256",
        }
    }
    /// Activation group size G (NUMERICS.md 2).
    pub const fn activation_group(self) -> u32 {
        match self {
            NumericsMode::F32Per16 | NumericsMode::IntPer32 => 32,
            NumericsMode::IntPer256 | NumericsMode::Int12Per256 => 256,
        }
    }
    /// The largest activation magnitude the quantizer writes (NUMERICS.md 2): `d = amax / limit`.
    pub const fn activation_limit(self) -> u32 {
        match self {
            NumericsMode::Int12Per256 => 2047,
            _ => 127,
        }
    }
    /// The activation quantizer's entry point (docs/KERNELS.md).
    pub fn quantizer_kernel(self) -> String {
        match self {
            NumericsMode::Int12Per256 => "mmq_quantize_activations_i12".to_string(),
            _ => format!("mmq_quantize_activations_g{}", self.activation_group()),
        }
    }
    /// int8 planes per activation value in `act_q` (NUMERICS.md 2): two for the 12-bit mode, chunk-interleaved.
    pub const fn activation_planes(self) -> u32 {
        match self {
            NumericsMode::Int12Per256 => 2,
            _ => 1,
        }
    }
}

/// Super-blocks per numerics segment (NUMERICS.md 4); the same for every mode.
pub const SEGMENT_SUPERBLOCKS: u32 = 4;
/// K values per super-block.
pub const SUPERBLOCK_K: u32 = 256;

impl ScaleFetch {
    pub const ALL: [ScaleFetch; 3] = [ScaleFetch::Narrow, ScaleFetch::Wide, ScaleFetch::Plane];
    pub const fn keyword(self) -> &'static str {
        match self {
            ScaleFetch::Narrow => "narrow",
            ScaleFetch::Wide => "wide",
            ScaleFetch::Plane => "plane",
        }
    }
}

impl ExpandWidth {
    pub const ALL: [ExpandWidth; 3] = [ExpandWidth::U8, ExpandWidth::U32, ExpandWidth::Uint4];
    pub const fn keyword(self) -> &'static str {
        match self {
            ExpandWidth::U8 => "u8",
            ExpandWidth::U32 => "u32",
            ExpandWidth::Uint4 => "uint4",
        }
    }
    pub const fn bytes(self) -> u32 {
        match self {
            ExpandWidth::U8 => 1,
            ExpandWidth::U32 => 4,
            ExpandWidth::Uint4 => 16,
        }
    }
}

impl CpAsync {
    pub const ALL: [CpAsync; 4] = [CpAsync::Off, CpAsync::B4, CpAsync::B8, CpAsync::B16];
    /// Bytes per copy; 0 when off.
    pub const fn bytes(self) -> u32 {
        match self {
            CpAsync::Off => 0,
            CpAsync::B4 => 4,
            CpAsync::B8 => 8,
            CpAsync::B16 => 16,
        }
    }
    pub const fn from_bytes(bytes: u32) -> Option<CpAsync> {
        match bytes {
            0 => Some(CpAsync::Off),
            4 => Some(CpAsync::B4),
            8 => Some(CpAsync::B8),
            16 => Some(CpAsync::B16),
            _ => None,
        }
    }
    pub const fn is_on(self) -> bool {
        !matches!(self, CpAsync::Off)
    }
}

impl VariantDescription {
    /// The explicit defaults an omitted field takes (the README lists them too), unless its engine refuses the
    /// value: then the engine's ([`crate::engine::fill_defaults`]).
    pub const DEFAULTS: VariantDescription = VariantDescription {
        name: Cow::Borrowed(""),
        engine: Engine::Dp4a,
        mode: NumericsMode::IntPer32,
        kdr: 2,
        nbj: 64,
        tile_n: 32,
        warps_m: 2,
        warps_n: 2,
        ksplit: 1,
        scale_fetch: ScaleFetch::Narrow,
        expand: ExpandWidth::U32,
        cp_async_activations: CpAsync::Off,
        cp_async_plane: CpAsync::Off,
        stages: 1,
        accumulator_sets: 1,
        totals: Totals::Registers,
        segment: Segment::Registers,
        refill: Refill::Burst,
        quantizer: Quantizer::Separate,
        blocks_per_sm: 1,
        chunk_unroll: 0,
        token_unroll: 0,
        ring_lanes: RingLanes::Superblocks,
        warps_k: 1,
        cluster_rows: 1,
        cluster_tokens: 1,
        fold_warps: 0,
        producer: Producer::None,
        tail_parts: 1,
        archs: ArchSet::EMPTY.with(Arch::Sm90),
        allow_spills: false,
    };

    /// Blocks of a thread-block cluster (`cluster_rows x cluster_tokens`; 1 = no cluster).
    pub fn cluster_blocks(&self) -> u32 {
        self.cluster_rows.saturating_mul(self.cluster_tokens)
    }

    /// Threads of a block: the warps of the tile, the fold warps beside them and a producer warpgroup after
    /// them all.
    pub fn threads(&self) -> u32 {
        self.main_loop_threads()
            .saturating_add(self.producer_threads())
    }

    /// Threads that run the main loop: the tile's warps and the fold warps (every thread but a producer's).
    pub fn main_loop_threads(&self) -> u32 {
        // Saturating: the validator sees absurd descriptions before it refuses them.
        self.tile_threads()
            .saturating_add(32u32.saturating_mul(self.fold_warps))
    }

    /// Threads of the producer warpgroup (`producer = warpgroup`), else 0.
    pub fn producer_threads(&self) -> u32 {
        match self.producer {
            Producer::None => 0,
            Producer::Warpgroup => 128,
        }
    }

    /// Threads of the warps that hold the tile's outputs (all of a block's but its fold warps).
    pub fn tile_threads(&self) -> u32 {
        32u32
            .saturating_mul(self.warps_m)
            .saturating_mul(self.warps_n)
            .saturating_mul(self.warps_k)
    }
}

/// A field's enum, as the `variant!` expansion spells it: `<TYPE_NAME>::<rust_name>`.
pub trait FieldEnum: Copy + PartialEq + fmt::Debug + 'static {
    /// The type's name as Rust spells it (`Engine`).
    const TYPE_NAME: &'static str;
    /// The value's name as Rust spells it (`MmaK16`): the derived `Debug` name of a unit variant, so that the
    /// enum's declaration is the one place it is written.
    fn rust_name(self) -> String {
        format!("{self:?}")
    }
}

/// An enum whose values a description names by keyword (`mma_k16`): every value and its keyword come from
/// the enum's `ALL` and `keyword`.
pub trait Keyword: FieldEnum {
    /// Every value, in the order sentences list them (the enum's `ALL`).
    const VALUES: &'static [Self];
    /// The keyword of every value, in the same order.
    const KEYWORDS: &'static [&'static str];
    /// The keyword of one value (the enum's own `keyword`).
    fn keyword(self) -> &'static str;
}

macro_rules! field_enums {
    ($($t:ident),*) => {$(
        impl FieldEnum for $t {
            const TYPE_NAME: &'static str = stringify!($t);
        }
    )*};
}
field_enums!(
    Engine,
    NumericsMode,
    ScaleFetch,
    ExpandWidth,
    Totals,
    Segment,
    Refill,
    Quantizer,
    Producer,
    RingLanes,
    CpAsync,
    Arch
);

macro_rules! keyword_enums {
    ($($t:ident),*) => {$(
        impl Keyword for $t {
            const VALUES: &'static [Self] = &$t::ALL;
            const KEYWORDS: &'static [&'static str] = &{
                let mut keywords = [""; $t::ALL.len()];
                let mut i = 0;
                while i < keywords.len() {
                    keywords[i] = $t::ALL[i].keyword();
                    i += 1;
                }
                keywords
            };
            fn keyword(self) -> &'static str {
                $t::keyword(self)
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.keyword())
            }
        }
    )*};
}
keyword_enums!(
    Engine,
    NumericsMode,
    ScaleFetch,
    ExpandWidth,
    Totals,
    Segment,
    Refill,
    Quantizer,
    Producer,
    RingLanes,
    Arch
);

impl fmt::Display for CpAsync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpAsync::Off => f.write_str("off"),
            other => write!(f, "{}", other.bytes()),
        }
    }
}
