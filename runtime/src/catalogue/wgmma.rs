//! Hopper's warpgroup MMA fed by the register fold (`wgmma_k32_regfold`, `wgmma_f16_regfold`): the int_per32 and int12
//! prefill engines, with their producer warpgroup, fold warps and last-wave split.

use crate::codegen::VariantDescription;
use crate::variant;

/// The register fold feeding Hopper's int8 warpgroup MMA under `int_per32` (prefill log 22): each warp folds its
/// 16 rows into wgmma's A registers; two warpgroups of 64 rows x 64 tokens. Bit-exact, 0.85-0.89x
/// `regfold_128x128`: the per-32 epilogue (combine, conversion, fma per output and chunk) bounds it. The
/// catalogue's example of `wgmma_k32_regfold` under `int_per32`.
pub const WGMMA_REGFOLD_128X64: VariantDescription = variant! {
    name: "wgmma_regfold_128x64", engine: wgmma_k32_regfold, mode: int_per32, nbj: 128, tile_n: 64, warps_m: 8, warps_n:
    1, stages: 2, accumulator_sets: 2, totals: shared, archs: [sm_90],
};

/// Mode `int12_per256` (prefill logs 43-49): 12-bit activations per 256 in two int8 planes times the fold's two
/// weight planes, four wgmmas a chunk summing the whole super-block, no per-chunk epilogue; two warpgroups of 64
/// rows x 64 tokens, each window brought by the copy engine (its tokens one box a window, 128-byte swizzled:
/// prefill logs 53, 55), each lane's q6_K words read once a half super-block (prefill log 49), its wgmma
/// descriptors in uniform registers (prefill log 69). Bit-exact, 35x the per-32 mode's activation accuracy. Its
/// producer form, `wgmma_i12_128x64_producer`, takes every range it had (prefill log 79: 4.1-5.0% faster); this
/// stays the baseline the producer is measured against and the base of three mutants.
pub const WGMMA_I12_128X64: VariantDescription = variant! {
    name: "wgmma_i12_128x64", engine: wgmma_k32_regfold, mode: int12_per256, nbj: 128, tile_n: 64, warps_m: 8, warps_n:
    1, stages: 2, refill: tma, archs: [sm_90],
};

/// `wgmma_i12_128x64` with a producer warpgroup (prefill log 79): four more warps, whose first thread waits on
/// each stage's `stage_free` mbarrier and issues its refill, so that the tile's warps only arrive on that mbarrier
/// at a window's end instead of counting themselves out with a shared atomic and issuing the copies themselves;
/// the producer keeps 24 registers (prefill log 89) and the tile's warps take 240 (setmaxnreg). The same bits.
/// The default on padded weights at 81..128 tokens from m = 8192 (97..128 from m = 14336), 97..128 from K = 14336, 129..256 below
/// m = 8192 (193..256 at m = 8192) and 385..512 (4.1-5.0% faster than 128 x 64: 71.9 against 74.9 µs at
/// 4096x512x4096, 230 against 240 at 4096x512x14336).
pub const WGMMA_I12_128X64_PRODUCER: VariantDescription = variant! {
    name: "wgmma_i12_128x64_producer", engine: wgmma_k32_regfold, mode: int12_per256, nbj: 128, tile_n: 64, warps_m: 8,
    warps_n: 1, stages: 2, refill: tma, producer: warpgroup, archs: [sm_90],
};

/// The int12 engine with 96 tokens a block (prefill logs 46-49): the fold serves half as many tokens again; the
/// three sums of 64 x 96 leave no registers for the super-block totals, which live in shared memory (its output
/// scales read once before the first store to them, prefill log 59). The default on padded weights at 81..96
/// tokens from m = 14336 and 129..384 where no 128 x 64 rule takes the shape (102.8 against 176.2 µs for
/// `tma_128x128` at 14336x160x4096); behind 128 x 64 at 512 tokens (99.8 against 76.3 at 4096x512x4096: 192
/// blocks are 1.45 waves of 132 SMs).
pub const WGMMA_I12_128X96: VariantDescription = variant! {
    name: "wgmma_i12_128x96", engine: wgmma_k32_regfold, mode: int12_per256, nbj: 128, tile_n: 96, warps_m: 8, warps_n:
    1, stages: 2, refill: tma, totals: shared, archs: [sm_90],
};

/// `wgmma_i12_128x96` whose last wave's tiles split along K in up to three parts where they leave the wave
/// part-full (`tail_parts`, prefill log 74; docs/KERNELS.md, "The last wave"): 273 µs at 4096x2048x4096
/// against 286 for 128 x 96, 837 against 919 at 4096x2048x14336. The default from 513 tokens until its producer
/// form took it (prefill log 89: 1.1-1.4% slower than that form); kept as its baseline and the catalogue's
/// `tail_parts` without a producer.
pub const WGMMA_I12_128X96_TAIL: VariantDescription = variant! {
    name: "wgmma_i12_128x96_tail", engine: wgmma_k32_regfold, mode: int12_per256, nbj: 128, tile_n: 96, warps_m: 8,
    warps_n: 1, stages: 2, refill: tma, totals: shared, tail_parts: 3, archs: [sm_90],
};

/// `wgmma_i12_128x96_tail` with a producer warpgroup (prefill log 89), as in `wgmma_i12_128x64_producer`, which
/// 128 x 96 could take once the producer kept 24 registers and left the tile's warps 240. It spills two words a
/// window at the super-block end (none in the chunk loop), hence `allow_spills`. The same bits. The default on
/// padded weights from 513 tokens (1.6-2.9% faster than `wgmma_i12_128x96_tail` with the split instantiations
/// of prefill log 88: 269.0 against 273.2 µs at 4096x2048x4096, 819.5 against 841.2 at 14336x2048x4096); its
/// last wave's parts are cut at super-blocks (prefill log 92: 1.3% off 4096x2048x4096).
pub const WGMMA_I12_128X96_TAIL_PRODUCER: VariantDescription = variant! {
    name: "wgmma_i12_128x96_tail_producer", engine: wgmma_k32_regfold, mode: int12_per256, nbj: 128, tile_n: 96,
    warps_m: 8, warps_n: 1, stages: 2, refill: tma, totals: shared, producer: warpgroup, tail_parts: 3, archs: [sm_90],
    allow_spills: true,
};

/// The int12 engine with fold warps (prefill logs 60-64): a warpgroup folds every row of each chunk into fragments
/// in shared memory, four chunks ahead, and the tile's two warpgroups load them and only issue wgmmas, each with 64
/// of the 128 tokens, so that one fold serves 128 tokens; the fold warps give the tile's warps their registers
/// (setmaxnreg). Not selected: it ties 128 x 64 since both read their descriptors from uniform registers (76.5
/// against 76.3 µs at 4096x512x4096, prefill log 69). The catalogue's example of `fold_warps`.
pub const WGMMA_I12_64X128_FOLD: VariantDescription = variant! {
    name: "wgmma_i12_64x128_fold", engine: wgmma_k32_regfold, mode: int12_per256, nbj: 64, tile_n: 128, warps_m: 4,
    warps_n: 2, stages: 2, refill: tma, fold_warps: 4, archs: [sm_90],
};

/// The fold in f16 for the f16 warpgroup MMA with f32 accumulation (engine `wgmma_f16_regfold`, prefill logs
/// 23-27; docs/NUMERICS.md 3): the tensor core sums each chunk's whole `I32` exactly, leaving one fma per output
/// and chunk. Bit-exact, about 0.8x `regfold_128x128` (1175 against 948 µs at 4096^3). The catalogue's example
/// of the engine.
pub const WGMMA_F16_128X64: VariantDescription = variant! {
    name: "wgmma_f16_128x64", engine: wgmma_f16_regfold, mode: int_per32, nbj: 128, tile_n: 64, warps_m: 8, warps_n: 1,
    stages: 2, totals: shared, archs: [sm_90],
};
