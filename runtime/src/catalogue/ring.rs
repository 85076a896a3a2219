//! Decode through a shared-memory ring of bulk copies (`stream_ring`): lanes over super-blocks or rows, a fused
//! quantizer, and the fragment rings.

use crate::codegen::VariantDescription;
use crate::variant;

/// Decode through a shared-memory ring (engine `stream_ring`, decode logs 12-14): the block's 32 rows stream in
/// as bulk copies, a warp's 32 super-blocks at a time, two stages deep; one super-block a thread. One token a
/// block: the default at n = 1 below m = 8192 for K above 4096 where the K-split ring does not take it.
pub const RING_T1: VariantDescription = variant! {
    name: "ring_t1", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 1, warps_m: 8, warps_n: 1, stages: 2, archs:
    [sm_90, sm_100, sm_103],
};

/// The ring with 112 rows a block (about one block an SM at m = 14336): the default at n = 1 from m = 8192 for K
/// above 4096 (`ring_t1_tall_fused` below).
pub const RING_T1_TALL: VariantDescription = variant! {
    name: "ring_t1_tall", engine: stream_ring, mode: int_per32, nbj: 112, tile_n: 1, warps_m: 8, warps_n: 1, stages: 2,
    archs: [sm_90],
};

/// `ring_t1` quantizing its token itself from x (`quantizer = fused`), one launch a call, x loaded before the
/// weights' first copies: the default at n = 1 below m = 8192 up to K = 4096 (decode logs 17, 21).
pub const RING_T1_FUSED: VariantDescription = variant! {
    name: "ring_t1_fused", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 1, warps_m: 8, warps_n: 1, stages: 2,
    quantizer: fused, archs: [sm_90],
};

/// `ring_t1_tall` with the fused quantizer: the default at n = 1 from m = 8192 up to K = 4096.
pub const RING_T1_TALL_FUSED: VariantDescription = variant! {
    name: "ring_t1_tall_fused", engine: stream_ring, mode: int_per32, nbj: 112, tile_n: 1, warps_m: 8, warps_n: 1,
    stages: 2, quantizer: fused, archs: [sm_90],
};

/// `ring_t1_fused` with K split in four across blocks of 128 rows (decode log 46): each block streams and
/// quantizes a quarter of K's segments, and the combine adds the segment sums in K order. The default at n = 1
/// below m = 8192 where K's segments split evenly or nearly (20.4 against 21.7 µs for `ring_t1` at 4096x1x14336,
/// 13.65 against 14.96 at 4096x1x8192); at K = 6144 and 10240 `ring_t1` stays ahead.
pub const RING_T1_KS4_FUSED: VariantDescription = variant! {
    name: "ring_t1_ks4_fused", engine: stream_ring, mode: int_per32, nbj: 128, tile_n: 1, warps_m: 8, warps_n: 1,
    ksplit: 4, stages: 2, quantizer: fused, archs: [sm_90],
};

/// Two tokens, 8 warps over two stages (decode log 41: 16.3 / 23.35 against 18.3 / 25.05 µs with 16 warps over one
/// stage at 4096 x 2 x 8192 / 14336): the default at n = 2 below m = 8192 for K above 4096.
pub const RING_T2: VariantDescription = variant! {
    name: "ring_t2", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 2, warps_m: 8, warps_n: 1, stages: 2, archs:
    [sm_90, sm_100, sm_103],
};

/// `ring_t2` quantizing its tokens itself, x loaded before the weights' first copies: the default at n = 2 below
/// m = 8192 up to K = 4096 (9.9 against 11.9 µs for `ring_t2` at 4096x2x4096, decode log 21).
pub const RING_T2_FUSED: VariantDescription = variant! {
    name: "ring_t2_fused", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 2, warps_m: 16, warps_n: 1, stages: 1,
    quantizer: fused, archs: [sm_90],
};

/// Two tokens quantized in the kernel with 112 rows a block, 16 warps over one stage: the default at n = 2 from
/// m = 8192 up to K = 4096 and from K = 7937 to 14336 (21.5 against 23.2 µs for `ring_t4_tall` at 14336x2x4096,
/// decode log 21; 19.05 against 19.6 µs with 8 warps over two stages, decode log 41).
pub const RING_T2_TALL_FUSED: VariantDescription = variant! {
    name: "ring_t2_tall_fused", engine: stream_ring, mode: int_per32, nbj: 112, tile_n: 2, warps_m: 16, warps_n: 1,
    stages: 1, quantizer: fused, archs: [sm_90],
};

/// Three tokens quantized in the kernel, one token at a time: the default at n = 3 below m = 8192 up to K = 4096
/// (11.35 against 11.55 µs for `ring_t4_fused` at 4096x3x4096, decode log 36).
pub const RING_T3_FUSED: VariantDescription = variant! {
    name: "ring_t3_fused", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 3, warps_m: 16, warps_n: 1, stages: 1,
    quantizer: fused, token_unroll: 1, archs: [sm_90],
};

/// Four tokens, a warp's lanes on 32 rows (decode log 39), 8 warps over two stages (decode log 41), one token at a
/// time (decode log 42: 19.05 against 21.1 µs unrolled at 4096x4x8192): the default at n = 3..4 below m = 8192 for
/// K from 4097 (n = 4 to 9215, n = 3 to 14080).
pub const RING_T4: VariantDescription = variant! {
    name: "ring_t4", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 4, warps_m: 8, warps_n: 1, stages: 2,
    token_unroll: 1, ring_lanes: rows, archs: [sm_90, sm_100, sm_103],
};

/// `ring_t4` quantizing its tokens itself, each warp's four records loaded from x at once before the first copies
/// (decode log 24), one token at a time (decode log 36), a warp's lanes on 32 rows (decode log 39: 13.02 against
/// 13.22 µs at 4096x4x4096): the default at n = 4 below m = 8192 up to K = 4096.
pub const RING_T4_FUSED: VariantDescription = variant! {
    name: "ring_t4_fused", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 4, warps_m: 16, warps_n: 1, stages: 1,
    quantizer: fused, token_unroll: 1, ring_lanes: rows, archs: [sm_90],
};

/// Four tokens, 112 rows a block, one token at a time (decode log 36: 24.25 / 26.85 against 24.7 / 28.25 µs
/// unrolled at 14336 x 3 / 4 x 4096): the default at n = 3 from m = 8192 and n = 2 there from K = 4097, K up to
/// 7936 (its records and sums outgrow shared memory beyond).
pub const RING_T4_TALL: VariantDescription = variant! {
    name: "ring_t4_tall", engine: stream_ring, mode: int_per32, nbj: 112, tile_n: 4, warps_m: 8, warps_n: 1, stages: 2,
    token_unroll: 1, archs: [sm_90],
};

/// Three to eight tokens in a ring whose warps run mma fragments (decode log 43): 128 rows a block in row groups
/// of 16, each group's rows of two super-blocks one tensor copy, the block's 8 tokens copied by one warp's lanes
/// (decode log 48), three stages, and the widened engine's m16n8k16 on them. The default at n = 4..8 from
/// m = 8192 and at n = 3 there beyond `ring_t4_tall`'s K (23.4 against 28.0 µs for `widen_128x16` at
/// 14336x8x4096, 23.6 against 26.2 for `ring_t4_tall` at 14336x4x4096).
pub const RING_MMA_128X8: VariantDescription = variant! {
    name: "ring_mma_128x8", engine: stream_ring, mode: int_per32, nbj: 128, tile_n: 8, warps_m: 8, warps_n: 1, stages:
    3, refill: tma, ring_lanes: fragments, archs: [sm_90],
};

/// The same ring below m = 8192 (decode log 43): 32 rows a block in two row groups, and K split between four
/// groups of its warps (`warps_k = 4`), each with whole segments and a ring of its own, two stages; the first
/// group adds the others' segment sums in K order at the end. The default at n = 5..8 below m = 8192, n = 4 from
/// K = 9216 and n = 3 beyond `ring_t4`'s K (13.5 against 15.7 µs for `widen_128x16_ks4` at 4096x8x4096, decode
/// log 43; 27.2 against 33.0 for the four-token long-K ring at 4096x4x14336, decode log 44).
pub const RING_MMA_32X8_K4: VariantDescription = variant! {
    name: "ring_mma_32x8_k4", engine: stream_ring, mode: int_per32, nbj: 32, tile_n: 8, warps_m: 2, warps_n: 1, stages:
    2, refill: tma, ring_lanes: fragments, warps_k: 4, archs: [sm_90],
};

// ---- The rings under int12_per256 (issue 54, target 3): the per-32 rings' geometry, 12-bit activations in two
// planes and one scale per 256 (NUMERICS.md 2, 3, 5), so that a selection may use one mode at every batch size
// (docs/DESIGN.md D16). Each thread forms its super-block's exact S with dp4a on both planes; the records are 592
// bytes instead of 368, so each ring reaches a shorter K (`codegen::ring_max_k`). Candidates: not yet timed.

/// `ring_t1` under int12_per256.
pub const RING_I12_T1: VariantDescription = variant! {
    name: "ring_i12_t1", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 1, warps_m: 8, warps_n: 1, stages: 2,
    archs: [sm_90],
};

/// `ring_t1_fused` under int12_per256: the token quantized to 12 bits in the kernel, one launch a call.
pub const RING_I12_T1_FUSED: VariantDescription = variant! {
    name: "ring_i12_t1_fused", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 1, warps_m: 8, warps_n: 1,
    stages: 2, quantizer: fused, archs: [sm_90],
};

/// `ring_t1_tall` under int12_per256: 112 rows a block.
pub const RING_I12_T1_TALL: VariantDescription = variant! {
    name: "ring_i12_t1_tall", engine: stream_ring, mode: int12_per256, nbj: 112, tile_n: 1, warps_m: 8, warps_n: 1,
    stages: 2, archs: [sm_90],
};

/// `ring_t1_tall_fused` under int12_per256.
pub const RING_I12_T1_TALL_FUSED: VariantDescription = variant! {
    name: "ring_i12_t1_tall_fused", engine: stream_ring, mode: int12_per256, nbj: 112, tile_n: 1, warps_m: 8,
    warps_n: 1, stages: 2, quantizer: fused, archs: [sm_90],
};

/// `ring_t1_ks4_fused` under int12_per256: K split in four across blocks of 128 rows, the segment sums combined in
/// K order.
pub const RING_I12_T1_KS4_FUSED: VariantDescription = variant! {
    name: "ring_i12_t1_ks4_fused", engine: stream_ring, mode: int12_per256, nbj: 128, tile_n: 1, warps_m: 8,
    warps_n: 1, ksplit: 4, stages: 2, quantizer: fused, archs: [sm_90],
};

/// `ring_t2` under int12_per256.
pub const RING_I12_T2: VariantDescription = variant! {
    name: "ring_i12_t2", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 2, warps_m: 8, warps_n: 1, stages: 2,
    archs: [sm_90],
};

/// `ring_t2_fused` under int12_per256.
pub const RING_I12_T2_FUSED: VariantDescription = variant! {
    name: "ring_i12_t2_fused", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 2, warps_m: 16, warps_n: 1,
    stages: 1, quantizer: fused, archs: [sm_90],
};

/// `ring_t2_tall_fused` under int12_per256.
pub const RING_I12_T2_TALL_FUSED: VariantDescription = variant! {
    name: "ring_i12_t2_tall_fused", engine: stream_ring, mode: int12_per256, nbj: 112, tile_n: 2, warps_m: 16,
    warps_n: 1, stages: 1, quantizer: fused, archs: [sm_90],
};

/// `ring_t3_fused` under int12_per256: three tokens quantized in the kernel, one at a time.
pub const RING_I12_T3_FUSED: VariantDescription = variant! {
    name: "ring_i12_t3_fused", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 3, warps_m: 16, warps_n: 1,
    stages: 1, quantizer: fused, token_unroll: 1, archs: [sm_90],
};

/// `ring_t4` under int12_per256: four tokens, a warp's lanes on 32 rows, one token at a time.
pub const RING_I12_T4: VariantDescription = variant! {
    name: "ring_i12_t4", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 4, warps_m: 8, warps_n: 1, stages: 2,
    token_unroll: 1, ring_lanes: rows, archs: [sm_90],
};

/// `ring_t4_fused` under int12_per256, with `ring_t4`'s 8 warps over two stages: at 16 warps (128 registers a
/// thread) the unpacked q6 words and a chunk's two planes spill 8 bytes.
pub const RING_I12_T4_FUSED: VariantDescription = variant! {
    name: "ring_i12_t4_fused", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 4, warps_m: 8, warps_n: 1,
    stages: 2, quantizer: fused, token_unroll: 1, ring_lanes: rows, archs: [sm_90],
};

/// `ring_t4_tall` under int12_per256: four tokens, 112 rows a block, one token at a time.
pub const RING_I12_T4_TALL: VariantDescription = variant! {
    name: "ring_i12_t4_tall", engine: stream_ring, mode: int12_per256, nbj: 112, tile_n: 4, warps_m: 8, warps_n: 1,
    stages: 2, token_unroll: 1, archs: [sm_90],
};

/// Eight tokens a block, lanes on rows, one token at a time: the int12 ring for n = 5..8 (and, a tile of 8 tokens
/// at a time, a little beyond), where the per-32 default runs the fragment rings, which have no int12 form.
pub const RING_I12_T8: VariantDescription = variant! {
    name: "ring_i12_t8", engine: stream_ring, mode: int12_per256, nbj: 32, tile_n: 8, warps_m: 8, warps_n: 1, stages: 2,
    token_unroll: 1, ring_lanes: rows, archs: [sm_90],
};
