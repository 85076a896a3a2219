//! `stream_ring`: decode through a shared-memory ring of bulk copies. It owns the knobs of how a warp takes a
//! stage (`ring_lanes`, `warps_k`), how a thread runs a block's tokens (`token_unroll`) and the fused quantizer
//! (`quantizer`); each knob's rule is here, with the sentence another engine gets for it.

use super::Written;
use crate::description::*;
use crate::fields::FieldError;
use crate::validate::{one_of, require, require_fields};

/// Tokens the ring engine takes a block at most: each thread forms every token's sums of its super-block.
pub const RING_MAX_TOKENS: u32 = 8;
/// The token tiles of a ring whose warps run mma fragments (`ring_lanes = fragments`): one or two of 8 tokens.
pub const RING_FRAGMENT_TOKENS: [u32; 2] = [8, 16];
/// The legal `warps_k` values: groups of a fragment ring's warps along K, each with whole segments.
pub const RING_WARPS_K: [u32; 3] = [1, 2, 4];
/// Row groups a fragment ring may have: each has a named barrier of its own (1..=15; 0 is the block's).
pub const RING_FRAGMENT_ROW_GROUPS: u32 = 15;

/// The knobs of `stream_ring`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    pub lanes: RingLanes,
    /// Groups of a fragment ring's warps along K.
    pub warps_k: u32,
    /// 0: a super-block's tokens side by side; 1: one at a time in a loop.
    pub token_unroll: u32,
    pub quantizer: Quantizer,
    /// `burst`, or `tma` (fragments).
    pub refill: Refill,
}

/// The knobs of `stream_ring`.
pub const KNOBS: &[&str] = &[
    "ring_lanes",
    "warps_k",
    "token_unroll",
    "quantizer",
    "refill",
];

impl Ring {
    pub fn of(desc: &VariantDescription) -> Ring {
        Ring {
            lanes: desc.ring_lanes,
            warps_k: desc.warps_k,
            token_unroll: desc.token_unroll,
            quantizer: desc.quantizer,
            refill: desc.refill,
        }
    }
}

/// Whole blocks (kdr 8, uint4); a few tokens (8); one warp along the tokens but in a fragment ring of 16 tokens; the
/// copy engine for fragments, a row group of 16 a warp; 32 rows for lanes that take a row each.
pub(super) fn fill_defaults(desc: &mut VariantDescription, written: &Written) {
    if !written("kdr") {
        desc.kdr = 8;
    }
    if !written("expand") {
        desc.expand = ExpandWidth::Uint4;
    }
    if !written("tile_n") {
        desc.tile_n = 8;
    }
    let fragments = desc.ring_lanes == RingLanes::Fragments;
    // Two warps share a fragment ring's row group only at 16 tokens (8 a warp).
    let two_warps = fragments && desc.tile_n == 16;
    if !written("warps_n") && !two_warps {
        desc.warps_n = 1;
    }
    if fragments && !written("refill") {
        desc.refill = Refill::Tma;
    }
    if !written("nbj") {
        match desc.ring_lanes {
            RingLanes::Fragments => desc.nbj = desc.warps_m.saturating_mul(16),
            RingLanes::Rows => desc.nbj = 32,
            RingLanes::Superblocks => {}
        }
    }
}

/// The engine's own rules: bulk copies of whole q6_K blocks (on the architectures the feature table gives them),
/// whole K per block, and a few tokens. (`stages` is the depth of each warp's ring: 1 still works, with no copy in
/// flight during a stage.)
pub(super) fn rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    mode_rule(desc, errors);
    require_fields(
        errors,
        &[
            ("kdr", desc.kdr == 8),
            ("cp_async_activations", !desc.cp_async_activations.is_on()),
            ("cp_async_plane", !desc.cp_async_plane.is_on()),
            ("scale_fetch", desc.scale_fetch == ScaleFetch::Narrow),
            ("expand", desc.expand == ExpandWidth::Uint4),
        ],
        format!(
            "engine stream_ring copies whole q6_K blocks with bulk copies and stages the tokens itself: kdr must \
             be 8, cp.async off, scale_fetch narrow and expand uint4; got kdr = {}, cp_async_activations = {}, \
             cp_async_plane = {}, scale_fetch = {}, expand = {}",
            desc.kdr, desc.cp_async_activations, desc.cp_async_plane, desc.scale_fetch, desc.expand
        ),
    );
    let mut check = |ok: bool, field: &str, message: String| require(errors, ok, field, message);
    check(
        desc.totals == Totals::Registers,
        "totals",
        format!(
            "engine stream_ring sums its super-blocks in shared memory itself: totals must be registers; got {}",
            desc.totals
        ),
    );
    check(
        desc.ksplit == 1 || desc.ring_lanes == RingLanes::Superblocks,
        "ksplit",
        format!(
            "engine stream_ring splits K across blocks only when its lanes take super-blocks (ring_lanes = \
             superblocks); ring_lanes = {} walks all of K in every block: ksplit must be 1; got {}",
            desc.ring_lanes, desc.ksplit
        ),
    );
    check(
        desc.ring_lanes != RingLanes::Superblocks || desc.nbj.is_multiple_of(8),
        "nbj",
        format!(
            "engine stream_ring with ring_lanes = superblocks takes rows in eights, so that each warp's 32 blocks \
             start at a multiple of eight, as the copy engine's boxes of raw blocks need: nbj must be a multiple \
             of 8; got {}",
            desc.nbj
        ),
    );
    check(
        desc.ring_lanes != RingLanes::Rows || desc.warps_m.is_multiple_of(8),
        "warps_m",
        format!(
            "engine stream_ring with ring_lanes = rows takes a super-block a warp, eight or more a stage, so that a \
             stage is whole runs of eight blocks, as the copy engine's boxes of raw blocks need: warps_m must be a \
             multiple of 8; got {}",
            desc.warps_m
        ),
    );
    if desc.ring_lanes == RingLanes::Fragments {
        let tokens_per_warp = desc.tile_n / desc.warps_n.max(1);
        check(
            RING_FRAGMENT_TOKENS.contains(&desc.tile_n)
                && matches!(desc.warps_n, 1 | 2)
                && desc.tile_n.is_multiple_of(desc.warps_n.max(1))
                && tokens_per_warp.is_multiple_of(8)
                && desc.nbj == desc.warps_m.saturating_mul(16)
                && desc.warps_m.saturating_mul(desc.warps_k) <= RING_FRAGMENT_ROW_GROUPS,
            "tile_n",
            format!(
                "ring_lanes = fragments gives each warp 16 rows as mma fragments against 8 or 16 of the block's \
                 tokens: tile_n must be {}, warps_n 1 or 2 with at least 8 tokens a warp, nbj 16 x warps_m and \
                 warps_m x warps_k at most {RING_FRAGMENT_ROW_GROUPS} (a named barrier a row group); got tile_n = {}, \
                 warps_n = {}, nbj = {}, warps_m = {}, warps_k = {}",
                one_of(&RING_FRAGMENT_TOKENS),
                desc.tile_n,
                desc.warps_n,
                desc.nbj,
                desc.warps_m,
                desc.warps_k
            ),
        );
        check(
            desc.quantizer == Quantizer::Separate && desc.token_unroll == 0 && desc.refill == Refill::Tma,
            "ring_lanes",
            format!(
                "ring_lanes = fragments copies the tokens the quantizer kernel wrote with the copy engine and runs \
                 them all in its mmas: quantizer must be separate, token_unroll full and refill tma; got quantizer \
                 = {}, refill = {}, token_unroll = {}",
                desc.quantizer,
                desc.refill,
                match desc.token_unroll {
                    0 => "full".to_string(),
                    n => n.to_string(),
                }
            ),
        );
    } else {
        check(
            desc.warps_n == 1 && (1..=RING_MAX_TOKENS).contains(&desc.tile_n),
            "tile_n",
            format!(
                "engine stream_ring gives every thread all the block's tokens: warps_n must be 1 and tile_n 1 to \
                 {RING_MAX_TOKENS}; got warps_n = {}, tile_n = {}",
                desc.warps_n, desc.tile_n
            ),
        );
    }
    require(
        errors,
        desc.segment == Segment::Registers || desc.engine != Engine::StreamRing,
        "segment",
        format!(
            "engine stream_ring sums its super-blocks in shared memory itself: segment must be registers; got {}",
            desc.segment
        ),
    );
}

/// The modes of the ring: `int_per32` with every lane form, and `int12_per256` (its exact `S` per super-block by dp4a
/// on both activation planes, NUMERICS.md 3) where a thread takes whole super-blocks, `ring_lanes = superblocks`
/// or `rows`; the fragment ring's mmas form per-32 sums only.
fn mode_rule(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    let ok = match desc.mode {
        NumericsMode::IntPer32 => true,
        NumericsMode::Int12Per256 => desc.ring_lanes != RingLanes::Fragments,
        NumericsMode::F32Per16 | NumericsMode::IntPer256 => false,
    };
    require(
        errors,
        ok,
        "mode",
        format!(
            "engine stream_ring implements mode int_per32 (one scale per 32 activations), and mode int12_per256 \
             when its lanes take whole super-blocks (ring_lanes = superblocks or rows); got mode {} with ring_lanes \
             = {}",
            desc.mode, desc.ring_lanes
        ),
    );
}

/// The rules of this engine's knobs, for every description (another engine gets the same sentence).
pub(super) fn knob_rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        desc.quantizer == Quantizer::Separate || desc.engine == Engine::StreamRing,
        "quantizer",
        format!(
            "only engine stream_ring quantizes the activations inside its matmul (quantizer = fused); engine {} \
             reads what the quantizer kernel wrote: quantizer must be separate",
            desc.engine
        ),
    );
    require(
        errors,
        desc.token_unroll == 0 || (desc.token_unroll == 1 && desc.engine == Engine::StreamRing),
        "token_unroll",
        format!(
            "token_unroll must be full, or 1 with engine stream_ring (the only engine with a loop over a block's \
             tokens inside a thread); got {} with engine {}",
            desc.token_unroll, desc.engine
        ),
    );
    require(
        errors,
        RING_WARPS_K.contains(&desc.warps_k)
            && (desc.warps_k == 1 || desc.ring_lanes == RingLanes::Fragments),
        "warps_k",
        format!(
            "warps_k splits K between the warps of a ring whose warps run mma fragments: it must be {}, and more \
             than 1 only with engine stream_ring and ring_lanes = fragments; got warps_k = {} with engine {} and \
             ring_lanes = {}",
            one_of(&RING_WARPS_K),
            desc.warps_k,
            desc.engine,
            desc.ring_lanes
        ),
    );
    require(
        errors,
        match desc.ring_lanes {
            RingLanes::Superblocks => true,
            RingLanes::Rows => desc.engine == Engine::StreamRing && desc.nbj == 32,
            RingLanes::Fragments => desc.engine == Engine::StreamRing,
        },
        "ring_lanes",
        format!(
            "ring_lanes = rows (a row for each of a warp's 32 lanes) needs engine stream_ring and nbj = 32, and \
             ring_lanes = fragments engine stream_ring; got ring_lanes = {} with engine {} and nbj = {}",
            desc.ring_lanes, desc.engine, desc.nbj
        ),
    );
}
