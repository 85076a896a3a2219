//! The project's declared variants. Each is one `variant!`; `all()` lists them, the CLI and the tests walk that
//! list, and every one has a snapshot of its generated source (tests/tests/snapshots). A variant stays here
//! because a rule of the embedded default (`runtime/mmqgen.toml`) picks it, because a test or a document names
//! it, or because it is the catalogue's example of a field value or an engine, so that the compile, SASS and
//! GPU parity checks keep covering that code. Retired variants stay in git history
//! (`git show c36f0f2:runtime/src/catalogue.rs`); docs/PERF.md tells what each lever measured.

use crate::codegen::VariantDescription;
use crate::variant;

/// The walking skeleton: `dp4a` with the default staging, in the seed's `f32_per16` mode (its `int_per256`
/// form is `small_n_dp4a`).
pub const DP4A_F32_PER16: VariantDescription = variant! {
    name: "dp4a_f32_per16", engine: dp4a, mode: f32_per16, archs: [sm_80, sm_90],
};
/// The walking skeleton in `int_per32`; the base of two of the mutants (`check::mutants`) and of the
/// every-field test. Declared for every architecture: the default above 16 tokens on sm_75, which has no
/// int8 mma of these shapes.
pub const DP4A_INT_PER32: VariantDescription = variant! {
    name: "dp4a_int_per32", engine: dp4a, mode: int_per32, archs: [turing_and_later],
};
/// The seed's r41 (docs/DESIGN.md R1): uint4 weight-expand loads, narrow scale reads (`d * sc` in f32 per 16). The
/// base of the `swapped_fma_order` mutant and of many CLI tests.
pub const R41: VariantDescription = variant! {
    name: "r41", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64, warps_m: 2, warps_n: 2,
    scale_fetch: narrow, expand: uint4, archs: [sm_80, sm_90],
};
/// The seed's r42 (reverted there, kept here to compare): the window's scales as one wide load, `d` as a u32.
pub const R42: VariantDescription = variant! {
    name: "r42", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64, warps_m: 2, warps_n: 2,
    scale_fetch: wide, expand: uint4, archs: [sm_80, sm_90],
};
/// The seed's r56: the precomputed f32 `d * sc` plane copied with 16-byte cp.async, the activations too, two
/// stages. The README's example variant and the base of the every-field test.
pub const R56: VariantDescription = variant! {
    name: "r56", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64, warps_m: 2, warps_n: 2,
    scale_fetch: plane, expand: uint4, cp_async_activations: 16, cp_async_plane: 16, stages: 2,
    archs: [sm_80, sm_90],
};
/// llama.cpp's shape (docs/DESIGN.md R3): 128 rows x 64 tokens, 8 warps, a super-block a step, mma k16, integer
/// scales per 32. sm_90 only: sm_80's ptxas spills this tile. The default for raw registrations from n = 65
/// (rule `raw-prefill-sm90`; decode log 18).
pub const LLAMACPP: VariantDescription = variant! {
    name: "llamacpp", engine: mma_k16, mode: int_per32, kdr: 8, nbj: 128, tile_n: 64, warps_m: 4, warps_n: 2,
    scale_fetch: wide, expand: uint4, cp_async_activations: 16, archs: [sm_90],
};
/// The fold (docs/DESIGN.md R6) in the kernel, one activation scale per 32: engine `mma_k32_fold` under `int_per32`.
/// sm_90 only: sm_80's ptxas spills this tile. The selection tests' stock variant.
pub const FOLD_PER32: VariantDescription = variant! {
    name: "fold_per32", engine: mma_k32_fold, mode: int_per32, kdr: 4, nbj: 128, tile_n: 64, warps_m: 4,
    warps_n: 2, scale_fetch: wide, expand: uint4, cp_async_activations: 16, stages: 2, archs: [sm_90],
};
/// The fold with one activation scale per 256 (prefill log 1: 0.62x llama.cpp, the fold repeated for every
/// token tile). Named by the selection tests.
pub const FOLD_PER256: VariantDescription = variant! {
    name: "fold_per256", engine: mma_k32_fold, mode: int_per256, kdr: 4, nbj: 128, tile_n: 64, warps_m: 4,
    warps_n: 2, scale_fetch: wide, expand: uint4, cp_async_activations: 16, stages: 2, archs: [sm_80, sm_90],
};
/// The fold per 256 with the int8 scale / `d` plane copied by cp.async: the fold engine's `plane` fetch.
pub const FOLD_PER256_PLANE: VariantDescription = variant! {
    name: "fold_per256_plane", engine: mma_k32_fold, mode: int_per256, kdr: 4, nbj: 128, tile_n: 64,
    warps_m: 4, warps_n: 2, scale_fetch: plane, expand: uint4, cp_async_activations: 16, cp_async_plane: 16,
    stages: 3, archs: [sm_80, sm_90],
};
/// The fold done at registration (prefill log 2): the kernel streams the h and l planes like an int8 GEMM (two
/// m16n8k32 passes a super-block into one accumulator set: H, x64, + L), one activation scale per 256. 2.95
/// bytes a weight on the device: never a default pick (docs/DESIGN.md D12). The base of a mutant.
pub const PREFOLDED_PER256: VariantDescription = variant! {
    name: "prefolded_per256", engine: mma_k32_prefolded, mode: int_per256, kdr: 8, nbj: 128, tile_n: 64,
    warps_m: 4, warps_n: 2, scale_fetch: plane, cp_async_activations: 16, cp_async_plane: 16, stages: 2,
    archs: [sm_90],
};
/// Prefolded with a wider token tile (64 rows x 128 tokens, prefill log 3): fewer re-reads of the folded weights
/// at large n. Named by the tune tests.
pub const PREFOLDED_PER256_WIDE_N: VariantDescription = variant! {
    name: "prefolded_per256_wide_n", engine: mma_k32_prefolded, mode: int_per256, kdr: 8, nbj: 64, tile_n: 128,
    warps_m: 2, warps_n: 4, scale_fetch: plane, cp_async_activations: 16, cp_async_plane: 16, stages: 2,
    archs: [sm_80, sm_90],
};
/// The wide prefolded tile with H and L in their own accumulators, three stages and each refill issued a slice
/// per chunk between the mmas (prefill logs 7 and 14): the expanded engine's fastest variant, the README's
/// example of a config that names an expanded engine, and the default-promise test's example of a variant the
/// default must not pick. Three stages of 69 KB fit sm_90 only.
pub const PREFOLDED_SPREAD: VariantDescription = variant! {
    name: "prefolded_spread", engine: mma_k32_prefolded, mode: int_per256, kdr: 8, nbj: 64, tile_n: 128,
    warps_m: 2, warps_n: 4, scale_fetch: plane, cp_async_activations: 16, cp_async_plane: 16, stages: 3,
    accumulator_sets: 2, refill: spread, archs: [sm_90],
};
/// Hopper's warpgroup MMA on the prefolded planes (engine `wgmma_k32_prefolded`, prefill log 12): 64 rows x 128
/// tokens, two warpgroups of m64n64, H and L in their own accumulators, three stages. Bit-exact and 1.6-1.8x
/// slower than the mma.sync engine; the catalogue's example of the engine.
pub const WGMMA_64X128: VariantDescription = variant! {
    name: "wgmma_64x128", engine: wgmma_k32_prefolded, mode: int_per256, kdr: 8, nbj: 64, tile_n: 128,
    warps_m: 4, warps_n: 2, scale_fetch: plane, cp_async_activations: 16, cp_async_plane: 16, stages: 3,
    accumulator_sets: 2, archs: [sm_90],
};
/// Prefolded with one activation scale per 32 (prefill log 5): one I2F and FFMA per output per chunk. Named by the
/// selection tests.
pub const PREFOLDED_PER32: VariantDescription = variant! {
    name: "prefolded_per32", engine: mma_k32_prefolded, mode: int_per32, kdr: 8, nbj: 64, tile_n: 64,
    warps_m: 2, warps_n: 4, scale_fetch: plane, cp_async_activations: 16, cp_async_plane: 16, stages: 2,
    archs: [sm_80, sm_90],
};
/// Prefolded for few tokens: 16 tokens a block, K split in four. Named by the tune tests.
pub const PREFOLDED_SMALL_N: VariantDescription = variant! {
    name: "prefolded_small_n", engine: mma_k32_prefolded, mode: int_per256, kdr: 8, nbj: 64, tile_n: 16,
    warps_m: 4, warps_n: 1, ksplit: 4, scale_fetch: plane, cp_async_activations: 16, cp_async_plane: 16,
    stages: 2, archs: [sm_80, sm_90],
};
/// Split-K for few tokens: K in two halves of whole segments, then the ordered combine. The default on sm_80 (and,
/// unmeasured, on sm_86, sm_87, sm_89, sm_120 and sm_121; ptxas spills it on sm_100), and for raw registrations at
/// n = 17..64 (to 128 below m = 8192; decode log 18).
pub const SPLITK2_PER32: VariantDescription = variant! {
    name: "splitk2_per32", engine: mma_k16, mode: int_per32, kdr: 4, nbj: 64, tile_n: 32, warps_m: 2,
    warps_n: 2, ksplit: 2, scale_fetch: narrow, expand: uint4, cp_async_activations: 16, stages: 2,
    archs: [sm_80, sm_86, sm_87, sm_89, sm_90, sm_120, sm_121],
};
/// Split-K by four on the fold engine, 32-bit weight loads (sm_90 only: sm_80's ptxas spills a predicate of it):
/// the fold engine's split-K and `u32` expansion.
pub const SPLITK4_FOLD_PER256: VariantDescription = variant! {
    name: "splitk4_fold_per256", engine: mma_k32_fold, mode: int_per256, kdr: 4, nbj: 64, tile_n: 16,
    warps_m: 4, warps_n: 1, ksplit: 4, scale_fetch: wide, expand: u32, cp_async_activations: 16,
    archs: [sm_90],
};
/// Small n with mma k16 under `f32_per16`: 8 tokens a block, K split by four. Named by the selection tests.
pub const SMALL_N_F32: VariantDescription = variant! {
    name: "small_n_f32", engine: mma_k16, mode: f32_per16, kdr: 4, nbj: 64, tile_n: 8, warps_m: 4, warps_n: 1,
    ksplit: 4, scale_fetch: plane, expand: uint4, cp_async_activations: 16, cp_async_plane: 16, stages: 2,
    archs: [sm_80, sm_90],
};
/// Small n with dp4a: 4 tokens a block, narrow u8 loads, 4-byte cp.async (the simplest arm: the catalogue's
/// example of `expand = u8` and `cp_async_activations = 4`).
pub const SMALL_N_DP4A: VariantDescription = variant! {
    name: "small_n_dp4a", engine: dp4a, mode: int_per256, kdr: 8, nbj: 32, tile_n: 4, warps_m: 4, warps_n: 1,
    ksplit: 2, scale_fetch: narrow, expand: u8, cp_async_activations: 4, stages: 2, archs: [sm_80, sm_90],
};

/// Engine `mma_k32_regfold` (prefill log 15): q6_K blocks staged as they are (0.82 bytes a weight on the device
/// and in shared memory), folded by each warp in registers a chunk ahead of its mmas, one activation scale per
/// 32. 64 rows x 64 tokens, 4 warps, three stages, the refill spread over the chunks. Named by the selection
/// tests; its K-split forms are picks.
pub const REGFOLD_64X64: VariantDescription = variant! {
    name: "regfold_64x64", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 64, tile_n: 64,
    warps_m: 4, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: 16, stages: 3,
    refill: spread, chunk_unroll: 4, archs: [sm_90],
};
/// The winner of `examples/sweeps/regfold.toml` (prefill log 20): 128 rows x 128 tokens, 8 warps of 16 x 128,
/// segment totals in shared memory, two stages, the refill in one burst, the chunk loop not unrolled. The
/// register fold's `refill = burst` example and the baseline the warpgroup engines were measured against
/// (prefill logs 22-27).
pub const REGFOLD_128X128: VariantDescription = variant! {
    name: "regfold_128x128", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 128, tile_n: 128,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: 16, stages: 2,
    totals: shared, chunk_unroll: 1, archs: [sm_90],
};
/// The register fold fed by the copy engine (`refill = tma`, prefill log 31): each stage is three bulk tensor
/// copies on the stage's mbarrier, issued by the last warp to finish the stage before, so no warp waits at a block
/// barrier or issues copies. 128 rows x 128 tokens, two stages (prefill log 33). The `int_per32` prefill default
/// from n = 385 until the int12 engine took it (prefill log 49); the base of a mutant and of the bench tests.
pub const TMA_128X128: VariantDescription = variant! {
    name: "tma_128x128", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 128, tile_n: 128,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: off, stages: 2,
    refill: tma, chunk_unroll: 1, archs: [sm_90],
};
/// 128 rows x 64 tokens, segment totals in shared memory: not picked on sm_90 since the third tune of the copy-engine
/// fold (57.0 against 54.4 µs for `tma_64x64_b2` at 14336x64x4096). sm_100 and sm_103 take it from n = 129
/// (unmeasured: ptxas spills the larger tiles there).
pub const TMA_128X64: VariantDescription = variant! {
    name: "tma_128x64", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 128, tile_n: 64,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: off, stages: 2,
    totals: shared, refill: tma, chunk_unroll: 4, archs: [sm_90, sm_100, sm_103],
};
/// 64 rows x 64 tokens, 4 warps of 16 x 64, two blocks an SM (prefill log 36): the default at n = 33..80 from
/// m = 8192, and below it at 65..96 up to K = 4096 and 97..128 up to K = 14335 (34.8 against 39.7 µs for `regfold_64x32_ks2` at
/// 4096x96x4096, decode log 29; 34.4 against 42.0 for `wgmma_i12_128x64` at 4096x128x4096).
pub const TMA_64X64_B2: VariantDescription = variant! {
    name: "tma_64x64_b2", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 64, tile_n: 64,
    warps_m: 4, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: off, stages: 2,
    blocks_per_sm: 2, refill: tma, chunk_unroll: 4, archs: [sm_90],
};
/// 64 rows x 64 tokens, 4 x 2 warps of 16 x 32, three stages: not picked on sm_90 since the third tune of the
/// copy-engine fold (39.2 against 37.7 µs for `tma_64x64_b2` at 4096x128x4096). sm_100 and sm_103 take it at
/// n = 33..128 (unmeasured: ptxas spills `tma_64x64_b2` on sm_103).
pub const TMA_64X64_W2: VariantDescription = variant! {
    name: "tma_64x64_w2", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 64, tile_n: 64,
    warps_m: 4, warps_n: 2, scale_fetch: narrow, expand: uint4, cp_async_activations: off, stages: 3,
    refill: tma, chunk_unroll: 4, archs: [sm_90, sm_100, sm_103],
};

/// Small batches without the fold (engine `mma_k16_widen`, decode logs 26-27): each weight widened to q6 in [0, 63]
/// in registers, one m16n8k16 per sub-block on top of an accumulator that starts at -32 * sum(x); copies by the
/// copy engine, the chunk loop unrolled fully. 128 rows x 16 tokens, K whole: the default at n = 9..16 from m =
/// 8192 (the fragment ring takes 3..8 there) (29.8 / 29.6 µs against 34.9 / 36.0 for the K-split register fold at 14336 x 8 / 16 x 4096), and at n =
/// 33..64 below it up to K = 4096 (26.8 against 28.6 for `regfold_64x64_ks4` at 4096x64x4096, decode log 29).
pub const WIDEN_128X16: VariantDescription = variant! {
    name: "widen_128x16", engine: mma_k16_widen, mode: int_per32, kdr: 8, nbj: 128, tile_n: 16,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: off, stages: 2,
    refill: tma, blocks_per_sm: 2, archs: [sm_90, sm_100, sm_103],
};
/// 128 rows x 16 tokens, K split in four, four stages: the default at n = 9..16 below m = 8192 (15.9 / 15.6 µs
/// against 17.7 / 17.5 for the K-split register fold at 4096 x 8 / 16 x 4096, 33.1 / 33.3 against 39.5 / 40.0 at
/// K = 14336).
pub const WIDEN_128X16_KS4: VariantDescription = variant! {
    name: "widen_128x16_ks4", engine: mma_k16_widen, mode: int_per32, kdr: 8, nbj: 128, tile_n: 16,
    warps_m: 8, warps_n: 1, ksplit: 4, scale_fetch: narrow, expand: uint4, cp_async_activations: off,
    stages: 4, refill: tma, archs: [sm_90],
};
/// 112 rows (7 warps) x 32 tokens, K whole: 128 blocks at m = 14336, one an SM (decode log 28). The default at
/// n = 17..32 from m = 8192 (37.5 / 37.2 µs against 47.2 / 49.3 for the K-split register fold at 14336 x 24 /
/// 32 x 4096).
pub const WIDEN_112X32: VariantDescription = variant! {
    name: "widen_112x32", engine: mma_k16_widen, mode: int_per32, kdr: 8, nbj: 112, tile_n: 32,
    warps_m: 7, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: off, stages: 2,
    refill: tma, archs: [sm_90, sm_100, sm_103],
};
/// 64 rows x 32 tokens, K split in four: the default at n = 17..32 below m = 8192 (18.7 / 18.2 µs against 21.5 /
/// 22.3 at 4096 x 24 / 32 x 4096, 44.9 against 56.0 at 4096x32x14336).
pub const WIDEN_64X32_KS4: VariantDescription = variant! {
    name: "widen_64x32_ks4", engine: mma_k16_widen, mode: int_per32, kdr: 8, nbj: 64, tile_n: 32,
    warps_m: 4, warps_n: 1, ksplit: 4, scale_fetch: narrow, expand: uint4, cp_async_activations: off,
    stages: 2, refill: tma, blocks_per_sm: 2, archs: [sm_90],
};
/// `regfold_64x64` with K split in four (decode log 9): the default at n = 33..64 below m = 8192 from K = 4097
/// (`widen_128x16` at shorter K since decode log 29).
pub const REGFOLD_64X64_KS4: VariantDescription = variant! {
    name: "regfold_64x64_ks4", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 64, tile_n: 64,
    warps_m: 4, warps_n: 1, ksplit: 4, scale_fetch: narrow, expand: uint4, cp_async_activations: 16,
    stages: 3, refill: spread, chunk_unroll: 4, archs: [sm_90],
};
/// 32 tokens a block, K split in two (decode log 9): the default at n = 65..96 below m = 8192 from K = 4097
/// (`tma_64x64_b2` at shorter K since decode log 29).
pub const REGFOLD_64X32_KS2: VariantDescription = variant! {
    name: "regfold_64x32_ks2", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 64, tile_n: 32,
    warps_m: 4, warps_n: 1, ksplit: 2, scale_fetch: narrow, expand: uint4, cp_async_activations: 16,
    stages: 3, refill: spread, archs: [sm_90],
};

/// The register fold feeding Hopper's int8 warpgroup MMA under `int_per32` (prefill log 22): each warp folds its
/// 16 rows into wgmma's A registers; two warpgroups of 64 rows x 64 tokens. Bit-exact, 0.85-0.89x
/// `regfold_128x128`: the per-32 epilogue (combine, conversion, fma per output and chunk) bounds it. The
/// catalogue's example of `wgmma_k32_regfold` under `int_per32`.
pub const WGMMA_REGFOLD_128X64: VariantDescription = variant! {
    name: "wgmma_regfold_128x64", engine: wgmma_k32_regfold, mode: int_per32, kdr: 8, nbj: 128, tile_n: 64,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: 16, stages: 2,
    accumulator_sets: 2, totals: shared, archs: [sm_90],
};
/// Mode `int12_per256` (prefill logs 43-49): 12-bit activations per 256 in two int8 planes times the fold's two
/// weight planes, four wgmmas a chunk summing the whole super-block, no per-chunk epilogue; two warpgroups of 64
/// rows x 64 tokens, each window brought by the copy engine (its tokens one box a window, 128-byte swizzled:
/// prefill logs 53, 55), each lane's q6_K words read once a half super-block (prefill log 49), its wgmma
/// descriptors in uniform registers (prefill log 69). Bit-exact, 35x the per-32 mode's activation accuracy. Its
/// producer form, `wgmma_i12_128x64_producer`, takes every range it had (prefill log 79: 4.1-5.0% faster); this
/// stays the baseline the producer is measured against and the base of three mutants.
pub const WGMMA_I12_128X64: VariantDescription = variant! {
    name: "wgmma_i12_128x64", engine: wgmma_k32_regfold, mode: int12_per256, kdr: 8, nbj: 128, tile_n: 64,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, refill: tma,
    archs: [sm_90],
};
/// `wgmma_i12_128x64` with a producer warpgroup (prefill log 79): four more warps, whose first thread waits on
/// each stage's `stage_free` mbarrier and issues its refill, so that the tile's warps only arrive on that mbarrier
/// at a window's end instead of counting themselves out with a shared atomic and issuing the copies themselves;
/// the producer keeps 24 registers (prefill log 89) and the tile's warps take 240 (setmaxnreg). The same bits.
/// The default on padded weights at 81..128 tokens from m = 8192 (97..128 from m = 14336), 97..128 from K = 14336, 129..256 below
/// m = 8192 (193..256 at m = 8192) and 385..512 (4.1-5.0% faster than 128 x 64: 71.9 against 74.9 µs at
/// 4096x512x4096, 230 against 240 at 4096x512x14336).
pub const WGMMA_I12_128X64_PRODUCER: VariantDescription = variant! {
    name: "wgmma_i12_128x64_producer", engine: wgmma_k32_regfold, mode: int12_per256, kdr: 8, nbj: 128,
    tile_n: 64, warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, refill: tma,
    producer: warpgroup, archs: [sm_90],
};
/// The int12 engine with 96 tokens a block (prefill logs 46-49): the fold serves half as many tokens again; the
/// three sums of 64 x 96 leave no registers for the super-block totals, which live in shared memory (its output
/// scales read once before the first store to them, prefill log 59). The default on padded weights at 81..96
/// tokens from m = 14336 and 129..384 where no 128 x 64 rule takes the shape (102.8 against 176.2 µs for
/// `tma_128x128` at 14336x160x4096); behind 128 x 64 at 512 tokens (99.8 against 76.3 at 4096x512x4096: 192
/// blocks are 1.45 waves of 132 SMs).
pub const WGMMA_I12_128X96: VariantDescription = variant! {
    name: "wgmma_i12_128x96", engine: wgmma_k32_regfold, mode: int12_per256, kdr: 8, nbj: 128, tile_n: 96,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, refill: tma, totals: shared,
    archs: [sm_90],
};
/// `wgmma_i12_128x96` whose last wave's tiles split along K in up to three parts where they leave the wave
/// part-full (`tail_parts`, prefill log 74; docs/KERNELS.md, "The last wave"): 273 µs at 4096x2048x4096
/// against 286 for 128 x 96, 837 against 919 at 4096x2048x14336. The default from 513 tokens until its producer
/// form took it (prefill log 89: 1.1-1.4% slower than that form); kept as its baseline and the catalogue's
/// `tail_parts` without a producer.
pub const WGMMA_I12_128X96_TAIL: VariantDescription = variant! {
    name: "wgmma_i12_128x96_tail", engine: wgmma_k32_regfold, mode: int12_per256, kdr: 8, nbj: 128, tile_n: 96,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, refill: tma, totals: shared,
    tail_parts: 3, archs: [sm_90],
};
/// `wgmma_i12_128x96_tail` with a producer warpgroup (prefill log 89), as in `wgmma_i12_128x64_producer`, which
/// 128 x 96 could take once the producer kept 24 registers and left the tile's warps 240. It spills two words a
/// window at the super-block end (none in the chunk loop), hence `allow_spills`. The same bits. The default on
/// padded weights from 513 tokens (1.6-2.9% faster than `wgmma_i12_128x96_tail` with the split instantiations
/// of prefill log 88: 269.0 against 273.2 µs at 4096x2048x4096, 819.5 against 841.2 at 14336x2048x4096); its
/// last wave's parts are cut at super-blocks (prefill log 92: 1.3% off 4096x2048x4096).
pub const WGMMA_I12_128X96_TAIL_PRODUCER: VariantDescription = variant! {
    name: "wgmma_i12_128x96_tail_producer", engine: wgmma_k32_regfold, mode: int12_per256, kdr: 8, nbj: 128,
    tile_n: 96, warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, refill: tma,
    totals: shared, producer: warpgroup, tail_parts: 3, archs: [sm_90], allow_spills: true,
};
/// The int12 engine with fold warps (prefill logs 60-64): a warpgroup folds every row of each chunk into fragments
/// in shared memory, four chunks ahead, and the tile's two warpgroups load them and only issue wgmmas, each with 64
/// of the 128 tokens, so that one fold serves 128 tokens; the fold warps give the tile's warps their registers
/// (setmaxnreg). Not selected: it ties 128 x 64 since both read their descriptors from uniform registers (76.5
/// against 76.3 µs at 4096x512x4096, prefill log 69). The catalogue's example of `fold_warps`.
pub const WGMMA_I12_64X128_FOLD: VariantDescription = variant! {
    name: "wgmma_i12_64x128_fold", engine: wgmma_k32_regfold, mode: int12_per256, kdr: 8, nbj: 64, tile_n: 128,
    warps_m: 4, warps_n: 2, scale_fetch: narrow, expand: uint4, stages: 2, refill: tma, fold_warps: 4,
    archs: [sm_90],
};
/// The fold in f16 for the f16 warpgroup MMA with f32 accumulation (engine `wgmma_f16_regfold`, prefill logs
/// 23-27; docs/NUMERICS.md 3): the tensor core sums each chunk's whole `I32` exactly, leaving one fma per output
/// and chunk. Bit-exact, about 0.8x `regfold_128x128` (1175 against 948 µs at 4096^3). The catalogue's example
/// of the engine.
pub const WGMMA_F16_128X64: VariantDescription = variant! {
    name: "wgmma_f16_128x64", engine: wgmma_f16_regfold, mode: int_per32, kdr: 8, nbj: 128, tile_n: 64,
    warps_m: 8, warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2,
    totals: shared, archs: [sm_90],
};

/// Decode (decode logs 1-8): each warp streams its rows along K straight from the q6_K blocks into registers, a pass
/// ahead, two rows at a time, with `dp4a`; 8 rows of 4 warps a block. One token a block: the default at n = 1 for
/// raw registrations and where K is too long for the ring. It, `stream_t2`, `stream_t4` and `stream_t4_wide` need
/// nothing but dp4a, so they are declared for every architecture (the decode picks on sm_75, sm_100 and sm_103).
pub const STREAM_T1: VariantDescription = variant! {
    name: "stream_t1", engine: stream_dp4a, mode: int_per32, kdr: 8, nbj: 8, tile_n: 1, warps_m: 4, warps_n: 1,
    scale_fetch: narrow, expand: uint4, archs: [turing_and_later],
};
/// The streaming engine with 2 tokens a block: the default at n = 2 for raw registrations and where K is too
/// long for the ring.
pub const STREAM_T2: VariantDescription = variant! {
    name: "stream_t2", engine: stream_dp4a, mode: int_per32, kdr: 8, nbj: 8, tile_n: 2, warps_m: 4, warps_n: 1,
    scale_fetch: narrow, expand: uint4, archs: [turing_and_later],
};
/// The streaming engine with 4 tokens a block: the default for raw registrations at n = 5..16, in token tiles
/// of 4 (decode log 18).
pub const STREAM_T4: VariantDescription = variant! {
    name: "stream_t4", engine: stream_dp4a, mode: int_per32, kdr: 8, nbj: 8, tile_n: 4, warps_m: 4, warps_n: 1,
    scale_fetch: narrow, expand: uint4, archs: [turing_and_later],
};
/// 4 tokens, 16 rows a block (4 a warp): the default for raw registrations at n = 3..4 (decode log 16).
pub const STREAM_T4_WIDE: VariantDescription = variant! {
    name: "stream_t4_wide", engine: stream_dp4a, mode: int_per32, kdr: 8, nbj: 16, tile_n: 4, warps_m: 4,
    warps_n: 1, scale_fetch: narrow, expand: uint4, archs: [turing_and_later],
};

/// Decode through a shared-memory ring (engine `stream_ring`, decode logs 12-14): the block's 32 rows stream in
/// as bulk copies, a warp's 32 super-blocks at a time, two stages deep; one super-block a thread. One token a
/// block: the default at n = 1 below m = 8192 for K above 4096 where the K-split ring does not take it.
pub const RING_T1: VariantDescription = variant! {
    name: "ring_t1", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 1, warps_m: 8, warps_n: 1,
    scale_fetch: narrow, expand: uint4, stages: 2, archs: [sm_90, sm_100, sm_103],
};
/// The ring with 112 rows a block (about one block an SM at m = 14336): the default at n = 1 from m = 8192 for K
/// above 4096 (`ring_t1_tall_fused` below).
pub const RING_T1_TALL: VariantDescription = variant! {
    name: "ring_t1_tall", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 112, tile_n: 1, warps_m: 8,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, archs: [sm_90],
};
/// `ring_t1` quantizing its token itself from x (`quantizer = fused`), one launch a call, x loaded before the
/// weights' first copies: the default at n = 1 below m = 8192 up to K = 4096 (decode logs 17, 21).
pub const RING_T1_FUSED: VariantDescription = variant! {
    name: "ring_t1_fused", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 1, warps_m: 8,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, quantizer: fused, archs: [sm_90],
};
/// `ring_t1_tall` with the fused quantizer: the default at n = 1 from m = 8192 up to K = 4096.
pub const RING_T1_TALL_FUSED: VariantDescription = variant! {
    name: "ring_t1_tall_fused", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 112, tile_n: 1, warps_m: 8,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, quantizer: fused, archs: [sm_90],
};
/// `ring_t1_fused` with K split in four across blocks of 128 rows (decode log 46): each block streams and
/// quantizes a quarter of K's segments, and the combine adds the segment sums in K order. The default at n = 1
/// below m = 8192 where K's segments split evenly or nearly (20.4 against 21.7 µs for `ring_t1` at 4096x1x14336,
/// 13.65 against 14.96 at 4096x1x8192); at K = 6144 and 10240 `ring_t1` stays ahead.
pub const RING_T1_KS4_FUSED: VariantDescription = variant! {
    name: "ring_t1_ks4_fused", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 128, tile_n: 1, warps_m: 8,
    warps_n: 1, ksplit: 4, scale_fetch: narrow, expand: uint4, stages: 2, quantizer: fused, archs: [sm_90],
};
/// Two tokens, 8 warps over two stages (decode log 41: 16.3 / 23.35 against 18.3 / 25.05 µs with 16 warps over one
/// stage at 4096 x 2 x 8192 / 14336): the default at n = 2 below m = 8192 for K above 4096.
pub const RING_T2: VariantDescription = variant! {
    name: "ring_t2", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 2, warps_m: 8, warps_n: 1,
    scale_fetch: narrow, expand: uint4, stages: 2, archs: [sm_90, sm_100, sm_103],
};
/// `ring_t2` quantizing its tokens itself, x loaded before the weights' first copies: the default at n = 2 below
/// m = 8192 up to K = 4096 (9.9 against 11.9 µs for `ring_t2` at 4096x2x4096, decode log 21).
pub const RING_T2_FUSED: VariantDescription = variant! {
    name: "ring_t2_fused", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 2, warps_m: 16,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 1, quantizer: fused, archs: [sm_90],
};
/// Two tokens quantized in the kernel with 112 rows a block, 16 warps over one stage: the default at n = 2 from
/// m = 8192 up to K = 4096 and from K = 7937 to 14336 (21.5 against 23.2 µs for `ring_t4_tall` at 14336x2x4096,
/// decode log 21; 19.05 against 19.6 µs with 8 warps over two stages, decode log 41).
pub const RING_T2_TALL_FUSED: VariantDescription = variant! {
    name: "ring_t2_tall_fused", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 112, tile_n: 2, warps_m: 16,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 1, quantizer: fused, archs: [sm_90],
};
/// Three tokens quantized in the kernel, one token at a time: the default at n = 3 below m = 8192 up to K = 4096
/// (11.35 against 11.55 µs for `ring_t4_fused` at 4096x3x4096, decode log 36).
pub const RING_T3_FUSED: VariantDescription = variant! {
    name: "ring_t3_fused", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 3, warps_m: 16,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 1, quantizer: fused, token_unroll: 1,
    archs: [sm_90],
};
/// Four tokens, a warp's lanes on 32 rows (decode log 39), 8 warps over two stages (decode log 41), one token at a
/// time (decode log 42: 19.05 against 21.1 µs unrolled at 4096x4x8192): the default at n = 3..4 below m = 8192 for
/// K from 4097 (n = 4 to 9215, n = 3 to 14080).
pub const RING_T4: VariantDescription = variant! {
    name: "ring_t4", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 4, warps_m: 8, warps_n: 1,
    scale_fetch: narrow, expand: uint4, stages: 2, token_unroll: 1, ring_lanes: rows,
    archs: [sm_90, sm_100, sm_103],
};
/// `ring_t4` quantizing its tokens itself, each warp's four records loaded from x at once before the first copies
/// (decode log 24), one token at a time (decode log 36), a warp's lanes on 32 rows (decode log 39: 13.02 against
/// 13.22 µs at 4096x4x4096): the default at n = 4 below m = 8192 up to K = 4096.
pub const RING_T4_FUSED: VariantDescription = variant! {
    name: "ring_t4_fused", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 4, warps_m: 16,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 1, quantizer: fused, token_unroll: 1,
    ring_lanes: rows, archs: [sm_90],
};
/// Four tokens, 112 rows a block, one token at a time (decode log 36: 24.25 / 26.85 against 24.7 / 28.25 µs
/// unrolled at 14336 x 3 / 4 x 4096): the default at n = 3 from m = 8192 and n = 2 there from K = 4097, K up to
/// 7936 (its records and sums outgrow shared memory beyond).
pub const RING_T4_TALL: VariantDescription = variant! {
    name: "ring_t4_tall", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 112, tile_n: 4, warps_m: 8,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, token_unroll: 1, archs: [sm_90],
};
/// Three to eight tokens in a ring whose warps run mma fragments (decode log 43): 128 rows a block in row groups
/// of 16, each group's rows of two super-blocks one tensor copy, the block's 8 tokens copied by one warp's lanes
/// (decode log 48), three stages, and the widened engine's m16n8k16 on them. The default at n = 4..8 from
/// m = 8192 and at n = 3 there beyond `ring_t4_tall`'s K (23.4 against 28.0 µs for `widen_128x16` at
/// 14336x8x4096, 23.6 against 26.2 for `ring_t4_tall` at 14336x4x4096).
pub const RING_MMA_128X8: VariantDescription = variant! {
    name: "ring_mma_128x8", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 128, tile_n: 8, warps_m: 8,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 3, refill: tma, ring_lanes: fragments,
    archs: [sm_90],
};
/// The same ring below m = 8192 (decode log 43): 32 rows a block in two row groups, and K split between four
/// groups of its warps (`warps_k = 4`), each with whole segments and a ring of its own, two stages; the first
/// group adds the others' segment sums in K order at the end. The default at n = 5..8 below m = 8192, n = 4 from
/// K = 9216 and n = 3 beyond `ring_t4`'s K (13.5 against 15.7 µs for `widen_128x16_ks4` at 4096x8x4096, decode
/// log 43; 27.2 against 33.0 for the four-token long-K ring at 4096x4x14336, decode log 44).
pub const RING_MMA_32X8_K4: VariantDescription = variant! {
    name: "ring_mma_32x8_k4", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 8, warps_m: 2,
    warps_n: 1, scale_fetch: narrow, expand: uint4, stages: 2, refill: tma, ring_lanes: fragments, warps_k: 4,
    archs: [sm_90],
};

/// Every declared variant, in a stable order.
pub fn all() -> Vec<VariantDescription> {
    vec![
        DP4A_F32_PER16,
        DP4A_INT_PER32,
        R41,
        R42,
        R56,
        LLAMACPP,
        FOLD_PER32,
        FOLD_PER256,
        FOLD_PER256_PLANE,
        PREFOLDED_PER256,
        PREFOLDED_PER256_WIDE_N,
        PREFOLDED_PER32,
        PREFOLDED_SMALL_N,
        PREFOLDED_SPREAD,
        WGMMA_64X128,
        SPLITK2_PER32,
        SPLITK4_FOLD_PER256,
        SMALL_N_F32,
        SMALL_N_DP4A,
        REGFOLD_64X64,
        REGFOLD_128X128,
        TMA_128X128,
        TMA_128X64,
        TMA_64X64_B2,
        TMA_64X64_W2,
        WIDEN_128X16,
        WIDEN_128X16_KS4,
        WIDEN_112X32,
        WIDEN_64X32_KS4,
        REGFOLD_64X64_KS4,
        REGFOLD_64X32_KS2,
        WGMMA_REGFOLD_128X64,
        WGMMA_I12_128X64,
        WGMMA_I12_128X64_PRODUCER,
        WGMMA_I12_128X96,
        WGMMA_I12_128X96_TAIL,
        WGMMA_I12_128X96_TAIL_PRODUCER,
        WGMMA_I12_64X128_FOLD,
        WGMMA_F16_128X64,
        STREAM_T1,
        STREAM_T2,
        STREAM_T4,
        STREAM_T4_WIDE,
        RING_T1,
        RING_T1_TALL,
        RING_T1_FUSED,
        RING_T1_TALL_FUSED,
        RING_T1_KS4_FUSED,
        RING_T2,
        RING_T2_FUSED,
        RING_T2_TALL_FUSED,
        RING_T3_FUSED,
        RING_T4,
        RING_T4_FUSED,
        RING_T4_TALL,
        RING_MMA_128X8,
        RING_MMA_32X8_K4,
    ]
}

/// Finds a variant by declared or canonical name (docs/DESIGN.md D7).
pub fn find<'a>(variants: &'a [VariantDescription], name: &str) -> Option<&'a VariantDescription> {
    variants
        .iter()
        .find(|v| v.name == name || crate::codegen::canonical_name(v) == name)
}
