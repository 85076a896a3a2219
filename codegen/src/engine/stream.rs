//! `stream_dp4a`: decode with nothing staged. Each warp streams its weight rows along K once, straight from the q6_K
//! blocks in global memory, `__dp4a` against a few tokens a pass ahead; one lane per output runs the float sequence
//! of NUMERICS.md 5. It has no knob of its own: its tile and occupancy are the general ones.

use super::Written;
use crate::description::*;
use crate::fields::FieldError;
use crate::validate::{require, require_fields, require_int_per32};

/// Whole blocks (kdr 8) in 16-byte runs (uint4), every warp all the block's tokens (warps_n 1).
pub(super) fn fill_defaults(desc: &mut VariantDescription, written: &Written) {
    if !written("kdr") {
        desc.kdr = 8;
    }
    if !written("expand") {
        desc.expand = ExpandWidth::Uint4;
    }
    if !written("warps_n") {
        desc.warps_n = 1;
    }
}

/// The engine's own rules: it reads whole q6_K blocks from global memory with no staging, and one lane per output
/// runs the float sequence of NUMERICS.md 5.
pub(super) fn rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require_int_per32(desc, errors);
    require_fields(
        errors,
        &[
            ("kdr", desc.kdr == 8),
            ("stages", desc.stages == 1),
            ("cp_async_activations", !desc.cp_async_activations.is_on()),
            ("cp_async_plane", !desc.cp_async_plane.is_on()),
        ],
        format!(
            "engine stream_dp4a reads whole q6_K blocks and the activations straight into registers, a pass \
             ahead, with nothing staged: kdr must be 8, stages 1 and cp.async off; got kdr = {}, stages = {}, \
             cp_async_activations = {}, cp_async_plane = {}",
            desc.kdr, desc.stages, desc.cp_async_activations, desc.cp_async_plane
        ),
    );
    require_fields(
        errors,
        &[
            ("scale_fetch", desc.scale_fetch == ScaleFetch::Narrow),
            ("expand", desc.expand == ExpandWidth::Uint4),
        ],
        format!(
            "engine stream_dp4a loads each lane's 32-byte runs 16 bytes at a time (padded layout) and its scales \
             from the block: scale_fetch must be narrow and expand uint4; got {} and {}",
            desc.scale_fetch, desc.expand
        ),
    );
    let mut check = |ok: bool, field: &str, message: String| require(errors, ok, field, message);
    check(
        desc.ksplit == 1,
        "ksplit",
        format!(
            "engine stream_dp4a gives each warp all of K for its rows (rows, not K, fill the GPU): ksplit must \
             be 1; got {}",
            desc.ksplit
        ),
    );
    let rows_at_once = crate::layout::stream_rows_at_once(desc.tile_n);
    let row_unit = desc.warps_m.max(1).saturating_mul(rows_at_once);
    check(
        desc.warps_n == 1 && desc.nbj.is_multiple_of(row_unit),
        "nbj",
        format!(
            "engine stream_dp4a gives every warp all the block's tokens and an equal share of its rows, walked \
             {rows_at_once} at a time at tile_n = {}: warps_n must be 1 and nbj a multiple of warps_m x \
             {rows_at_once} = {row_unit}; got nbj = {}, warps_n = {}",
            desc.tile_n, desc.nbj, desc.warps_n
        ),
    );
    check(
        desc.tile_n <= 32,
        "tile_n",
        format!(
            "engine stream_dp4a runs one lane per token of a row in its float sequence: tile_n must be at most 32; \
             got {}",
            desc.tile_n
        ),
    );
    // It keeps its sums itself: each lane's total and segment in registers.
    require_fields(
        errors,
        &[
            ("totals", desc.totals == Totals::Registers),
            ("segment", desc.segment == Segment::Registers),
        ],
        format!(
            "engine stream_dp4a keeps each lane's total and running segment in registers itself: totals and \
             segment must be registers; got totals = {}, segment = {}",
            desc.totals, desc.segment
        ),
    );
}
