//! Which descriptions are legal, each refusal one sentence tied to the field at fault.
//!
//! The same function serves the `variant!` macro (a compile error at the field), the TOML loader and the
//! runtime, so a rule is written once. Rules follow docs/DESIGN.md D2-D4 and D9-D10 and the shapes the templates
//! can render; the shared-memory rule uses the renderer's own layout function. The rules here hold for every
//! engine (the name, the window, the tile, the split, the pipeline, the architectures, occupancy and shared
//! memory); an engine's own rules, and those of the knobs one engine owns, live with the engine
//! ([`crate::engine`]).

use crate::arch::{FeatureSet, ARCH_FAMILIES};
use crate::description::*;
use crate::features::{feature_needs, FeatureNeed};
use crate::fields::FieldError;
use crate::layout::shared_layout;
use mmqgen_formats::input::shown;

/// Rows and tokens one warp-level instruction tile covers, per engine.
pub const fn engine_tile(engine: Engine) -> (u32, u32) {
    match engine {
        // 32 lanes as 8 rows x 4 tokens.
        Engine::Dp4a => (8, 4),
        // mma.sync m16n8.
        Engine::MmaK16 | Engine::MmaK32Fold => (16, 8),
        // B fragments are loaded two at a time (ldmatrix.x4).
        Engine::MmaK32Prefolded | Engine::MmaK32Regfold | Engine::MmaK16Widen => (16, 16),
        // Each warp of a warpgroup holds 16 rows of the m64 tile; N comes in steps of 16.
        Engine::WgmmaK32Prefolded | Engine::WgmmaK32Regfold | Engine::WgmmaF16Regfold => (16, 16),
        // Each warp streams whole rows; every lane takes part in every row and token.
        Engine::StreamDp4a => (1, 1),
        // Each thread takes whole super-blocks, in memory order across the block's rows: no warp tile.
        Engine::StreamRing => (1, 1),
    }
}

/// Outputs one lane may own; beyond this the accumulators no longer fit the register file.
pub const MAX_OUTPUTS_PER_LANE: u32 = 64;
/// The legal `ksplit` values: each split takes whole numerics segments.
pub const KSPLITS: [u32; 3] = [1, 2, 4];
/// The legal `stages` values.
pub const STAGES: [u32; 4] = [1, 2, 3, 4];

/// `a, b or c`, as the sentences spell a short list of legal values.
pub(crate) fn one_of(values: &[u32]) -> String {
    match values {
        [] => String::new(),
        [only] => only.to_string(),
        [rest @ .., last] => format!(
            "{} or {last}",
            rest.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Threads per block CUDA allows.
pub const MAX_THREADS: u32 = 1024;

/// The longest declared variant name, in bytes: room for any canonical name (about 80 bytes), which a
/// description may take as its declared name, and no more.
pub const MAX_NAME_BYTES: usize = 128;

fn fail(field: &str, message: String) -> FieldError {
    FieldError {
        field: field.to_string(),
        message,
    }
}

/// Pushes `message` as the refusal of `field` unless `ok`.
pub(crate) fn require(errors: &mut Vec<FieldError>, ok: bool, field: &str, message: String) {
    if !ok {
        errors.push(fail(field, message));
    }
}

/// One sentence about several fields that must hold together, filed under the first that does not (so that the
/// macro points at a field that is wrong).
pub(crate) fn require_fields(
    errors: &mut Vec<FieldError>,
    fields: &[(&str, bool)],
    message: String,
) {
    if let Some((field, _)) = fields.iter().find(|(_, ok)| !ok) {
        errors.push(fail(field, message));
    }
}

/// The engines that implement only the accurate mode say so in one sentence.
pub(crate) fn require_int_per32(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        desc.mode == NumericsMode::IntPer32,
        "mode",
        format!(
            "engine {} implements mode int_per32 only (one scale per 32 activations, the accurate mode); got {}",
            desc.engine, desc.mode
        ),
    );
}

/// Rows (weight rows or tokens) of one bulk tensor copy's box at most (`refill = tma`): the copy engine's limit.
pub const TMA_MAX_BOX_ROWS: u32 = 256;

pub use crate::engine::ring::{
    RING_FRAGMENT_ROW_GROUPS, RING_FRAGMENT_TOKENS, RING_MAX_TOKENS, RING_WARPS_K,
};
pub use crate::engine::wgmma_regfold::{
    CLUSTER_BLOCKS, CRASHING_WARPS, FOLD_WARPS, MAX_CLUSTER_BLOCKS, MAX_TAIL_PARTS,
};

/// Refuses the architectures of `archs` that lack a feature `need` names, in one sentence naming the feature and
/// the architectures that have it.
fn require_features(errors: &mut Vec<FieldError>, archs: ArchSet, need: &FeatureNeed) {
    let having = ArchSet::having(need.features);
    let lacking = archs.without(having);
    if lacking.is_empty() {
        return;
    }
    // The sentence names the features some named architecture lacks, not those every one has.
    let missing: FeatureSet = need
        .features
        .iter()
        .filter(|f| lacking.iter().any(|a| !a.has(*f)))
        .collect();
    let having_missing = ArchSet::having(missing);
    let who = match having_missing.iter().count() {
        0 => "no architecture mmqgen targets has".to_string(),
        1 => format!("only {} has", having_missing.list_for(missing)),
        _ => format!("only {} have", having_missing.list_for(missing)),
    };
    let not = if lacking.iter().count() == 1 {
        "does"
    } else {
        "do"
    };
    errors.push(fail(
        need.field,
        format!(
            "{} needs {}, which {who}: archs names {}, which {not} not",
            need.what,
            missing,
            lacking.list()
        ),
    ));
}

/// Checks every rule; returns all violations (each names its field) or nothing.
pub fn validate(desc: &VariantDescription) -> Result<(), Vec<FieldError>> {
    let mut errors = Vec::new();
    let check = require;

    let name_ok = !desc.name.is_empty()
        && desc
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    check(
        &mut errors,
        name_ok,
        "name",
        format!(
            "name \"{}\" must be non-empty and use only a-z, 0-9, '_' and '-'",
            shown(&desc.name)
        ),
    );
    check(
        &mut errors,
        desc.name.len() <= MAX_NAME_BYTES,
        "name",
        format!(
            "name \"{}\" is {} bytes long: a variant name has at most {MAX_NAME_BYTES}",
            shown(&desc.name),
            desc.name.len()
        ),
    );
    check(
        &mut errors,
        matches!(desc.kdr, 1 | 2 | 4 | 8),
        "kdr",
        format!(
            "kdr must divide 8 (1, 2, 4 or 8) so that a stage window never crosses a super-block or a \
             numerics segment; got {}",
            desc.kdr
        ),
    );
    // The engine's own rules and its families', then the rules of the knobs engines own (crate::engine).
    crate::engine::rules(desc, &mut errors);
    crate::engine::knob_rules(desc, &mut errors);

    let (tile_rows, tile_tokens) = engine_tile(desc.engine);
    let threads = desc.threads();
    check(
        &mut errors,
        desc.warps_m >= 1 && desc.warps_n >= 1 && threads <= MAX_THREADS,
        "warps_m",
        format!(
            "warps_m x warps_n (x warps_k) must be between 1 and {} warps ({MAX_THREADS} threads); got {} x {} (x {})",
            MAX_THREADS / 32,
            desc.warps_m,
            desc.warps_n,
            desc.warps_k
        ),
    );
    let row_unit = desc.warps_m.max(1).saturating_mul(tile_rows);
    check(
        &mut errors,
        desc.nbj >= 1 && desc.nbj.is_multiple_of(row_unit),
        "nbj",
        format!(
            "nbj = {} does not split over {} warps of {tile_rows}-row {} tiles: nbj must be a multiple of \
             {row_unit}",
            desc.nbj, desc.warps_m, desc.engine
        ),
    );
    let token_unit = desc.warps_n.max(1).saturating_mul(tile_tokens);
    check(
        &mut errors,
        desc.tile_n >= 1 && desc.tile_n.is_multiple_of(token_unit),
        "tile_n",
        format!(
            "tile_n = {} does not split over {} warps of {tile_tokens}-token {} tiles: tile_n must be a \
             multiple of {token_unit}",
            desc.tile_n, desc.warps_n, desc.engine
        ),
    );
    if desc.warps_m >= 1
        && desc.warps_n >= 1
        && desc.nbj.is_multiple_of(row_unit)
        && desc.tile_n.is_multiple_of(token_unit)
    {
        let per_lane = (desc.nbj / desc.warps_m).saturating_mul(desc.tile_n / desc.warps_n) / 32;
        check(
        &mut errors,
            per_lane <= MAX_OUTPUTS_PER_LANE,
            "tile_n",
            format!(
                "a {} x {} warp tile gives each lane {per_lane} outputs; at most {MAX_OUTPUTS_PER_LANE} fit \
                 in registers (lower nbj or tile_n, or add warps)",
                desc.nbj / desc.warps_m,
                desc.tile_n / desc.warps_n
            ),
        );
    }
    check(
        &mut errors,
        KSPLITS.contains(&desc.ksplit),
        "ksplit",
        format!(
            "ksplit must be {} (each split takes whole {}-value segments); got {}",
            one_of(&KSPLITS),
            SEGMENT_SUPERBLOCKS * SUPERBLOCK_K,
            desc.ksplit
        ),
    );
    check(
        &mut errors,
        !(desc.cp_async_plane.is_on() && desc.scale_fetch != ScaleFetch::Plane),
        "cp_async_plane",
        format!(
            "cp_async_plane = {} needs scale_fetch = plane: only a precomputed plane is copied with cp.async",
            desc.cp_async_plane
        ),
    );
    let staged_scale_run = 2u32.saturating_mul(desc.kdr);
    check(
        &mut errors,
        !(desc.cp_async_plane.bytes() > staged_scale_run
            && !desc.engine.is_fold()
            && desc.mode != NumericsMode::F32Per16),
        "cp_async_plane",
        format!(
            "cp_async_plane = {} is wider than the {staged_scale_run} scale bytes a row has per window at kdr = \
             {}: use a width of at most {staged_scale_run}, or a larger kdr",
            desc.cp_async_plane, desc.kdr
        ),
    );
    check(
        &mut errors,
        STAGES.contains(&desc.stages),
        "stages",
        format!("stages must be {}; got {}", one_of(&STAGES), desc.stages),
    );
    check(
        &mut errors,
        desc.stages == 1
            || desc.cp_async_activations.is_on()
            || desc.cp_async_plane.is_on()
            || desc.engine.builds_rows_in_registers()
            || desc.engine == Engine::StreamRing,
        "stages",
        format!(
            "stages = {} overlaps copies with compute, so it needs cp_async_activations or cp_async_plane on \
             (or an engine that folds in registers, whose weight copies are cp.async, or stream_ring, whose are \
             bulk copies)",
            desc.stages
        ),
    );
    match desc.refill {
        Refill::Burst => {}
        Refill::Spread => check(
            &mut errors,
            // mma_k16_widen's own rule (refill must be tma) says what it needs.
            desc.engine == Engine::MmaK16Widen
                || matches!(desc.engine, Engine::MmaK32Prefolded | Engine::MmaK32Regfold)
                    && desc.stages > 1,
            "refill",
            format!(
                "refill = spread issues each refill a slice at a time between the mmas of the running window, \
                 which needs engine mma_k32_prefolded or mma_k32_regfold and stages > 1; this is engine {} with \
                 stages = {}",
                desc.engine, desc.stages
            ),
        ),
        Refill::Tma => check(
            &mut errors,
            (desc.engine.is_mma_sync_in_registers()
                || desc.ring_lanes == RingLanes::Fragments
                || (desc.engine == Engine::WgmmaK32Regfold && desc.mode == NumericsMode::Int12Per256))
                && desc.stages > 1
                && desc.nbj <= TMA_MAX_BOX_ROWS
                && desc.tile_n <= TMA_MAX_BOX_ROWS,
            "refill",
            format!(
                "refill = tma stages each window with bulk tensor copies (TMA) completing on an mbarrier, whose \
                 boxes take at most {TMA_MAX_BOX_ROWS} rows: it needs engine mma_k32_regfold or mma_k16_widen (or \
                 wgmma_k32_regfold under mode int12_per256, or stream_ring with ring_lanes = fragments), stages > 1, \
                 nbj and tile_n at most {TMA_MAX_BOX_ROWS}; this is engine {} (mode {}) with stages = {}, nbj = {}, \
                 tile_n = {}",
                desc.engine, desc.mode, desc.stages, desc.nbj, desc.tile_n
            ),
        ),
    }
    check(
        &mut errors,
        desc.totals == Totals::Registers || desc.ksplit == 1,
        "totals",
        format!(
            "totals = {} keeps the sums of finished segments, which a split K (ksplit = {}) writes to global \
             memory instead: use totals = registers",
            desc.totals, desc.ksplit
        ),
    );
    check(
        &mut errors,
        desc.segment == Segment::Registers || desc.mode != NumericsMode::F32Per16,
        "segment",
        format!(
            "segment = shared keeps each output's running segment in shared memory and scales a super-block's \
             integer sums into it once, at its end; mode f32_per16 adds a float into it every chunk instead: \
             segment must be registers; got {} with mode {}",
            desc.segment, desc.mode
        ),
    );
    check(
        &mut errors,
        !desc.archs.is_empty(),
        "archs",
        format!(
            "archs must name at least one of {} (or a family: {})",
            Arch::ALL.map(Arch::keyword).join(", "),
            ARCH_FAMILIES.map(|f| f.keyword).join(", ")
        ),
    );
    for need in feature_needs(desc) {
        require_features(&mut errors, desc.archs, &need);
    }
    check(
        &mut errors,
        (1..=8).contains(&desc.blocks_per_sm)
            && desc.blocks_per_sm.saturating_mul(desc.threads()) <= 2048,
        "blocks_per_sm",
        format!(
            "blocks_per_sm must be 1 to 8 with at most 2048 threads per SM ({} blocks of {} threads asked)",
            desc.blocks_per_sm,
            desc.threads()
        ),
    );
    if errors.is_empty() {
        let layout = shared_layout(desc);
        for arch in desc.archs.iter() {
            let per_sm = arch.shared_bytes_per_sm();
            let needed = desc
                .blocks_per_sm
                .saturating_mul(layout.total_bytes.saturating_add(1024));
            check(
                &mut errors,
                desc.blocks_per_sm == 1 || needed <= per_sm,
                "blocks_per_sm",
                format!(
                    "blocks_per_sm = {} blocks of {} bytes of shared memory (+1 KiB each) need {needed} bytes, more \
                     than an {arch} SM has ({per_sm}); lower blocks_per_sm or stages",
                    desc.blocks_per_sm, layout.total_bytes
                ),
            );
            let limit = arch.max_shared_bytes_per_block();
            check(
        &mut errors,
                layout.total_bytes <= limit,
                "stages",
                format!(
                    "the tile needs {} bytes of shared memory over {} stages, more than {arch} allows one block \
                     ({limit}); lower stages, kdr, nbj or tile_n",
                    layout.total_bytes, desc.stages
                ),
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use crate::spec_file::variants_from_toml_str;

    /// The int12 copy-engine tile: `warps_n`, `blocks_per_sm` and `totals` as given.
    fn int12_tma(warps_n: u32, blocks_per_sm: u32, totals: &str) -> String {
        format!(
            "[[variant]]\nname = \"t\"\nengine = \"wgmma_k32_regfold\"\nmode = \"int12_per256\"\nkdr = 8\n\
             nbj = 128\ntile_n = 64\nwarps_m = 8\nwarps_n = {warps_n}\nscale_fetch = \"narrow\"\n\
             expand = \"uint4\"\nstages = 3\nrefill = \"tma\"\ntotals = \"{totals}\"\n\
             blocks_per_sm = {blocks_per_sm}\narchs = [\"sm_90\"]\n"
        )
    }

    /// Issue 55's description (128 x 64 on 8 x 2 warps, 3 stages, refill = tma, totals = output), which
    /// crashed NVRTC inside nvrtcCompileProgram, is refused with a sentence at `totals`; so is 8 x 1 at two
    /// blocks per SM (the same register budget); the same tile with fewer warps, or totals elsewhere, is not.
    #[test]
    fn the_shapes_that_crash_nvrtc_are_refused() {
        for (warps_n, blocks) in [(2, 1), (1, 2)] {
            let e = variants_from_toml_str(&int12_tma(warps_n, blocks, "output"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("field `totals`"), "{e}");
            assert!(e.contains("crashes NVRTC 13.0"), "{e}");
            assert!(e.contains(&format!("got 8 x {warps_n} x {blocks}")), "{e}");
        }
        variants_from_toml_str(&int12_tma(1, 1, "output")).unwrap();
        variants_from_toml_str(&int12_tma(2, 1, "shared")).unwrap();
        variants_from_toml_str(&int12_tma(2, 1, "registers")).unwrap();
    }
}
