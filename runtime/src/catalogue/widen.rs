//! The register engine without the fold (`mma_k16_widen`): each weight widened to q6 in registers, for few tokens.

use crate::codegen::VariantDescription;
use crate::variant;

/// Small batches without the fold (engine `mma_k16_widen`, decode logs 26-27): each weight widened to q6 in [0, 63]
/// in registers, one m16n8k16 per sub-block on top of an accumulator that starts at -32 * sum(x); copies by the
/// copy engine, the chunk loop unrolled fully. 128 rows x 16 tokens, K whole: the default at n = 9..16 from m =
/// 8192 (the fragment ring takes 3..8 there) (29.8 / 29.6 µs against 34.9 / 36.0 for the K-split register fold at 14336 x 8 / 16 x 4096), and at n =
/// 33..64 below it up to K = 4096 (26.8 against 28.6 for `regfold_64x64_ks4` at 4096x64x4096, decode log 29).
pub const WIDEN_128X16: VariantDescription = variant! {
    name: "widen_128x16", engine: mma_k16_widen, mode: int_per32, nbj: 128, tile_n: 16, warps_m: 8, warps_n: 1, stages:
    2, blocks_per_sm: 2, archs: [sm_90, sm_100, sm_103],
};

/// 128 rows x 16 tokens, K split in four, four stages: the default at n = 9..16 below m = 8192 (15.9 / 15.6 µs
/// against 17.7 / 17.5 for the K-split register fold at 4096 x 8 / 16 x 4096, 33.1 / 33.3 against 39.5 / 40.0 at
/// K = 14336).
pub const WIDEN_128X16_KS4: VariantDescription = variant! {
    name: "widen_128x16_ks4", engine: mma_k16_widen, mode: int_per32, nbj: 128, tile_n: 16, warps_m: 8, warps_n: 1,
    ksplit: 4, stages: 4, archs: [sm_90],
};

/// 112 rows (7 warps) x 32 tokens, K whole: 128 blocks at m = 14336, one an SM (decode log 28). The default at
/// n = 17..32 from m = 8192 (37.5 / 37.2 µs against 47.2 / 49.3 for the K-split register fold at 14336 x 24 /
/// 32 x 4096).
pub const WIDEN_112X32: VariantDescription = variant! {
    name: "widen_112x32", engine: mma_k16_widen, mode: int_per32, nbj: 112, tile_n: 32, warps_m: 7, warps_n: 1, stages:
    2, archs: [sm_90, sm_100, sm_103],
};

/// 64 rows x 32 tokens, K split in four: the default at n = 17..32 below m = 8192 (18.7 / 18.2 µs against 21.5 /
/// 22.3 at 4096 x 24 / 32 x 4096, 44.9 against 56.0 at 4096x32x14336).
pub const WIDEN_64X32_KS4: VariantDescription = variant! {
    name: "widen_64x32_ks4", engine: mma_k16_widen, mode: int_per32, nbj: 64, tile_n: 32, warps_m: 4, warps_n: 1,
    ksplit: 4, stages: 2, blocks_per_sm: 2, archs: [sm_90],
};
