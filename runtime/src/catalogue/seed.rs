//! The seed's engines, `dp4a` and `mma_k16` (docs/DESIGN.md R1-R4): the walking skeleton, the seed's r41, r42 and r56,
//! llama.cpp's shape, and their split-K and small-batch forms.

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
    name: "r41", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64, warps_m: 2, warps_n: 2, scale_fetch:
    narrow, expand: uint4, archs: [sm_80, sm_90],
};

/// The seed's r42 (reverted there, kept here to compare): the window's scales as one wide load, `d` as a u32.
pub const R42: VariantDescription = variant! {
    name: "r42", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64, warps_m: 2, warps_n: 2, scale_fetch:
    wide, expand: uint4, archs: [sm_80, sm_90],
};

/// The seed's r56: the precomputed f32 `d * sc` plane copied with 16-byte cp.async, the activations too, two
/// stages. The README's example variant and the base of the every-field test.
pub const R56: VariantDescription = variant! {
    name: "r56", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64, warps_m: 2, warps_n: 2, scale_fetch:
    plane, expand: uint4, cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
};

/// llama.cpp's shape (docs/DESIGN.md R3): 128 rows x 64 tokens, 8 warps, a super-block a step, mma k16, integer
/// scales per 32. sm_90 only: sm_80's ptxas spills this tile. The default for raw registrations from n = 65
/// (rule `raw-prefill-sm90`; decode log 18).
pub const LLAMACPP: VariantDescription = variant! {
    name: "llamacpp", engine: mma_k16, mode: int_per32, kdr: 8, nbj: 128, tile_n: 64, warps_m: 4, warps_n: 2,
    scale_fetch: wide, expand: uint4, cp_async_activations: 16, archs: [sm_90],
};

/// Split-K for few tokens: K in two halves of whole segments, then the ordered combine. The default on sm_80 (and,
/// unmeasured, on sm_86, sm_87, sm_89, sm_120 and sm_121; ptxas spills it on sm_100), and for raw registrations at
/// n = 17..64 (to 128 below m = 8192; decode log 18).
pub const SPLITK2_PER32: VariantDescription = variant! {
    name: "splitk2_per32", engine: mma_k16, mode: int_per32, kdr: 4, nbj: 64, tile_n: 32, warps_m: 2, warps_n: 2,
    ksplit: 2, scale_fetch: narrow, expand: uint4, cp_async_activations: 16, stages: 2, archs: [sm_80, sm_86, sm_87,
    sm_89, sm_90, sm_120, sm_121],
};

/// Small n with mma k16 under `f32_per16`: 8 tokens a block, K split by four. Named by the selection tests.
pub const SMALL_N_F32: VariantDescription = variant! {
    name: "small_n_f32", engine: mma_k16, mode: f32_per16, kdr: 4, nbj: 64, tile_n: 8, warps_m: 4, warps_n: 1, ksplit:
    4, scale_fetch: plane, expand: uint4, cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80,
    sm_90],
};

/// Small n with dp4a: 4 tokens a block, narrow u8 loads, 4-byte cp.async (the simplest arm: the catalogue's
/// example of `expand = u8` and `cp_async_activations = 4`).
pub const SMALL_N_DP4A: VariantDescription = variant! {
    name: "small_n_dp4a", engine: dp4a, mode: int_per256, kdr: 8, nbj: 32, tile_n: 4, warps_m: 4, warps_n: 1, ksplit: 2,
    scale_fetch: narrow, expand: u8, cp_async_activations: 4, stages: 2, archs: [sm_80, sm_90],
};
