//! Decode with nothing staged (`stream_dp4a`): each warp streams its rows' q6_K blocks straight from global memory.

use crate::codegen::VariantDescription;
use crate::variant;

/// Decode (decode logs 1-8): each warp streams its rows along K straight from the q6_K blocks into registers, a pass
/// ahead, two rows at a time, with `dp4a`; 8 rows of 4 warps a block. One token a block: the default at n = 1 for
/// raw registrations and where K is too long for the ring. It, `stream_t2`, `stream_t4` and `stream_t4_wide` need
/// nothing but dp4a, so they are declared for every architecture (the decode picks on sm_75, sm_100 and sm_103).
pub const STREAM_T1: VariantDescription = variant! {
    name: "stream_t1", engine: stream_dp4a, mode: int_per32, nbj: 8, tile_n: 1, warps_m: 4, warps_n: 1, archs:
    [turing_and_later],
};

/// The streaming engine with 2 tokens a block: the default at n = 2 for raw registrations and where K is too
/// long for the ring.
pub const STREAM_T2: VariantDescription = variant! {
    name: "stream_t2", engine: stream_dp4a, mode: int_per32, nbj: 8, tile_n: 2, warps_m: 4, warps_n: 1, archs:
    [turing_and_later],
};

/// The streaming engine with 4 tokens a block: the default for raw registrations at n = 5..16, in token tiles
/// of 4 (decode log 18).
pub const STREAM_T4: VariantDescription = variant! {
    name: "stream_t4", engine: stream_dp4a, mode: int_per32, nbj: 8, tile_n: 4, warps_m: 4, warps_n: 1, archs:
    [turing_and_later],
};

/// 4 tokens, 16 rows a block (4 a warp): the default for raw registrations at n = 3..4 (decode log 16).
pub const STREAM_T4_WIDE: VariantDescription = variant! {
    name: "stream_t4_wide", engine: stream_dp4a, mode: int_per32, nbj: 16, tile_n: 4, warps_m: 4, warps_n: 1, archs:
    [turing_and_later],
};
