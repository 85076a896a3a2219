//! The fold done at registration (`mma_k32_prefolded`, `wgmma_k32_prefolded`): the kernel streams the h and l planes
//! (2.95 bytes a weight on the device: never a default pick, docs/DESIGN.md D12).

use crate::codegen::VariantDescription;
use crate::variant;

/// The fold done at registration (prefill log 2): the kernel streams the h and l planes like an int8 GEMM (two
/// m16n8k32 passes a super-block into one accumulator set: H, x64, + L), one activation scale per 256. 2.95
/// bytes a weight on the device: never a default pick (docs/DESIGN.md D12). The base of a mutant.
pub const PREFOLDED_PER256: VariantDescription = variant! {
    name: "prefolded_per256", engine: mma_k32_prefolded, mode: int_per256, nbj: 128, tile_n: 64, warps_m: 4, warps_n: 2,
    cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_90],
};

/// Prefolded with a wider token tile (64 rows x 128 tokens, prefill log 3): fewer re-reads of the folded weights
/// at large n. Named by the tune tests.
pub const PREFOLDED_PER256_WIDE_N: VariantDescription = variant! {
    name: "prefolded_per256_wide_n", engine: mma_k32_prefolded, mode: int_per256, nbj: 64, tile_n: 128, warps_m: 2,
    warps_n: 4, cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
};

/// Prefolded with one activation scale per 32 (prefill log 5): one I2F and FFMA per output per chunk. Named by the
/// selection tests.
pub const PREFOLDED_PER32: VariantDescription = variant! {
    name: "prefolded_per32", engine: mma_k32_prefolded, mode: int_per32, nbj: 64, tile_n: 64, warps_m: 2, warps_n: 4,
    cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
};

/// Prefolded for few tokens: 16 tokens a block, K split in four. Named by the tune tests.
pub const PREFOLDED_SMALL_N: VariantDescription = variant! {
    name: "prefolded_small_n", engine: mma_k32_prefolded, mode: int_per256, nbj: 64, tile_n: 16, warps_m: 4, warps_n: 1,
    ksplit: 4, cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
};

/// The wide prefolded tile with H and L in their own accumulators, three stages and each refill issued a slice
/// per chunk between the mmas (prefill logs 7 and 14): the expanded engine's fastest variant, the README's
/// example of a config that names an expanded engine, and the default-promise test's example of a variant the
/// default must not pick. Three stages of 69 KB fit sm_90 only.
pub const PREFOLDED_SPREAD: VariantDescription = variant! {
    name: "prefolded_spread", engine: mma_k32_prefolded, mode: int_per256, kdr: 8, nbj: 64, tile_n: 128, warps_m: 2,
    warps_n: 4, cp_async_activations: 16, cp_async_plane: 16, stages: 3, accumulator_sets: 2, refill: spread, archs:
    [sm_90],
};

/// Hopper's warpgroup MMA on the prefolded planes (engine `wgmma_k32_prefolded`, prefill log 12): 64 rows x 128
/// tokens, two warpgroups of m64n64, H and L in their own accumulators, three stages. Bit-exact and 1.6-1.8x
/// slower than the mma.sync engine; the catalogue's example of the engine.
pub const WGMMA_64X128: VariantDescription = variant! {
    name: "wgmma_64x128", engine: wgmma_k32_prefolded, mode: int_per256, kdr: 8, nbj: 64, tile_n: 128, warps_m: 4,
    warps_n: 2, cp_async_activations: 16, cp_async_plane: 16, stages: 3, accumulator_sets: 2, archs: [sm_90],
};
