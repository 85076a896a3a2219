//! The fold in the kernel (`mma_k32_fold`, docs/DESIGN.md R6): `sc * (q6 - 32) = 64 h + l` expanded into two int8 planes
//! per window.

use crate::codegen::VariantDescription;
use crate::variant;

/// The fold (docs/DESIGN.md R6) in the kernel, one activation scale per 32: engine `mma_k32_fold` under `int_per32`.
/// sm_90 only: sm_80's ptxas spills this tile. The selection tests' stock variant.
pub const FOLD_PER32: VariantDescription = variant! {
    name: "fold_per32", engine: mma_k32_fold, mode: int_per32, kdr: 4, nbj: 128, tile_n: 64, warps_m: 4, warps_n: 2,
    scale_fetch: wide, expand: uint4, cp_async_activations: 16, stages: 2, archs: [sm_90],
};

/// The fold with one activation scale per 256 (prefill log 1: 0.62x llama.cpp, the fold repeated for every
/// token tile). Named by the selection tests.
pub const FOLD_PER256: VariantDescription = variant! {
    name: "fold_per256", engine: mma_k32_fold, mode: int_per256, kdr: 4, nbj: 128, tile_n: 64, warps_m: 4, warps_n: 2,
    scale_fetch: wide, expand: uint4, cp_async_activations: 16, stages: 2, archs: [sm_80, sm_90],
};

/// The fold per 256 with the int8 scale / `d` plane copied by cp.async: the fold engine's `plane` fetch.
pub const FOLD_PER256_PLANE: VariantDescription = variant! {
    name: "fold_per256_plane", engine: mma_k32_fold, mode: int_per256, kdr: 4, nbj: 128, tile_n: 64, warps_m: 4,
    warps_n: 2, scale_fetch: plane, expand: uint4, cp_async_activations: 16, cp_async_plane: 16, stages: 3, archs:
    [sm_80, sm_90],
};

/// Split-K by four on the fold engine, 32-bit weight loads (sm_90 only: sm_80's ptxas spills a predicate of it):
/// the fold engine's split-K and `u32` expansion.
pub const SPLITK4_FOLD_PER256: VariantDescription = variant! {
    name: "splitk4_fold_per256", engine: mma_k32_fold, mode: int_per256, kdr: 4, nbj: 64, tile_n: 16, warps_m: 4,
    warps_n: 1, ksplit: 4, scale_fetch: wide, expand: u32, cp_async_activations: 16, archs: [sm_90],
};
