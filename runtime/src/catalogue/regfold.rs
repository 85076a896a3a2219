//! The register fold (`mma_k32_regfold`): q6_K blocks staged as they are and folded in registers, by cp.async or the
//! copy engine.

use crate::codegen::VariantDescription;
use crate::variant;

/// Engine `mma_k32_regfold` (prefill log 15): q6_K blocks staged as they are (0.82 bytes a weight on the device
/// and in shared memory), folded by each warp in registers a chunk ahead of its mmas, one activation scale per
/// 32. 64 rows x 64 tokens, 4 warps, three stages, the refill spread over the chunks. Named by the selection
/// tests; its K-split forms are picks.
pub const REGFOLD_64X64: VariantDescription = variant! {
    name: "regfold_64x64", engine: mma_k32_regfold, mode: int_per32, nbj: 64, tile_n: 64, warps_m: 4, warps_n: 1,
    stages: 3, refill: spread, chunk_unroll: 4, archs: [sm_90],
};

/// The winner of `examples/sweeps/regfold.toml` (prefill log 20): 128 rows x 128 tokens, 8 warps of 16 x 128,
/// segment totals in shared memory, two stages, the refill in one burst, the chunk loop not unrolled. The
/// register fold's `refill = burst` example and the baseline the warpgroup engines were measured against
/// (prefill logs 22-27).
pub const REGFOLD_128X128: VariantDescription = variant! {
    name: "regfold_128x128", engine: mma_k32_regfold, mode: int_per32, nbj: 128, tile_n: 128, warps_m: 8, warps_n: 1,
    stages: 2, totals: shared, chunk_unroll: 1, archs: [sm_90],
};

/// The register fold fed by the copy engine (`refill = tma`, prefill log 31): each stage is three bulk tensor
/// copies on the stage's mbarrier, issued by the last warp to finish the stage before, so no warp waits at a block
/// barrier or issues copies. 128 rows x 128 tokens, two stages (prefill log 33). The `int_per32` prefill default
/// from n = 385 until the int12 engine took it (prefill log 49); the base of a mutant and of the bench tests.
pub const TMA_128X128: VariantDescription = variant! {
    name: "tma_128x128", engine: mma_k32_regfold, mode: int_per32, nbj: 128, tile_n: 128, warps_m: 8, warps_n: 1,
    stages: 2, refill: tma, chunk_unroll: 1, archs: [sm_90],
};

/// 128 rows x 64 tokens, segment totals in shared memory: not picked on sm_90 since the third tune of the copy-engine
/// fold (57.0 against 54.4 µs for `tma_64x64_b2` at 14336x64x4096). sm_100 and sm_103 take it from n = 129
/// (unmeasured: ptxas spills the larger tiles there).
pub const TMA_128X64: VariantDescription = variant! {
    name: "tma_128x64", engine: mma_k32_regfold, mode: int_per32, nbj: 128, tile_n: 64, warps_m: 8, warps_n: 1, stages:
    2, totals: shared, refill: tma, chunk_unroll: 4, archs: [sm_90, sm_100, sm_103],
};

/// 64 rows x 64 tokens, 4 warps of 16 x 64, two blocks an SM (prefill log 36): the default at n = 33..80 from
/// m = 8192, and below it at 65..96 up to K = 4096 and 97..128 up to K = 14335 (34.8 against 39.7 µs for `regfold_64x32_ks2` at
/// 4096x96x4096, decode log 29; 34.4 against 42.0 for `wgmma_i12_128x64` at 4096x128x4096).
pub const TMA_64X64_B2: VariantDescription = variant! {
    name: "tma_64x64_b2", engine: mma_k32_regfold, mode: int_per32, nbj: 64, tile_n: 64, warps_m: 4, warps_n: 1, stages:
    2, blocks_per_sm: 2, refill: tma, chunk_unroll: 4, archs: [sm_90],
};

/// 64 rows x 64 tokens, 4 x 2 warps of 16 x 32, three stages: not picked on sm_90 since the third tune of the
/// copy-engine fold (39.2 against 37.7 µs for `tma_64x64_b2` at 4096x128x4096). sm_100 and sm_103 take it at
/// n = 33..128 (unmeasured: ptxas spills `tma_64x64_b2` on sm_103).
pub const TMA_64X64_W2: VariantDescription = variant! {
    name: "tma_64x64_w2", engine: mma_k32_regfold, mode: int_per32, nbj: 64, tile_n: 64, warps_m: 4, warps_n: 2, stages:
    3, refill: tma, chunk_unroll: 4, archs: [sm_90, sm_100, sm_103],
};

/// `regfold_64x64` with K split in four (decode log 9): the default at n = 33..64 below m = 8192 from K = 4097
/// (`widen_128x16` at shorter K since decode log 29).
pub const REGFOLD_64X64_KS4: VariantDescription = variant! {
    name: "regfold_64x64_ks4", engine: mma_k32_regfold, mode: int_per32, nbj: 64, tile_n: 64, warps_m: 4, warps_n: 1,
    ksplit: 4, stages: 3, refill: spread, chunk_unroll: 4, archs: [sm_90],
};

/// `regfold_64x64_ks4` staged by the copy engine (`refill = tma`), so that its `raw_rows` entry point reads raw GGUF
/// rows in place: the default on raw blocks where the padded ones get `regfold_64x64_ks4` (33-64 tokens below
/// m = 8192 past K = 4096, K a multiple of 2048; not yet timed).
pub const TMA_64X64_KS4: VariantDescription = variant! {
    name: "tma_64x64_ks4", engine: mma_k32_regfold, mode: int_per32, nbj: 64, tile_n: 64, warps_m: 4, warps_n: 1,
    ksplit: 4, stages: 3, refill: tma, chunk_unroll: 4, archs: [sm_90],
};

/// 32 tokens a block, K split in two (decode log 9): the default at n = 65..96 below m = 8192 from K = 4097
/// (`tma_64x64_b2` at shorter K since decode log 29).
pub const REGFOLD_64X32_KS2: VariantDescription = variant! {
    name: "regfold_64x32_ks2", engine: mma_k32_regfold, mode: int_per32, nbj: 64, tile_n: 32, warps_m: 4, warps_n: 1,
    ksplit: 2, stages: 3, refill: spread, archs: [sm_90],
};

/// `regfold_64x32_ks2` staged by the copy engine (`refill = tma`), so that its `raw_rows` entry point reads raw GGUF
/// rows in place: the default on raw blocks where the padded ones get `regfold_64x32_ks2` (65-96 tokens below
/// m = 8192 past K = 4096, K a multiple of 2048; not yet timed).
pub const TMA_64X32_KS2: VariantDescription = variant! {
    name: "tma_64x32_ks2", engine: mma_k32_regfold, mode: int_per32, nbj: 64, tile_n: 32, warps_m: 4, warps_n: 1,
    ksplit: 2, stages: 3, refill: tma, archs: [sm_90],
};
