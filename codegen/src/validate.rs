//! Which descriptions are legal, each refusal one sentence tied to the field at fault.
//!
//! The same function serves the `variant!` macro (a compile error at the field), the TOML loader and the
//! runtime, so a rule is written once. Rules follow docs/DESIGN.md D2-D4 and D9-D10 and the shapes the templates
//! can render; the shared-memory rule uses the renderer's own layout function.

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
fn one_of(values: &[u32]) -> String {
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

/// Tile warps times blocks per SM from which the int12 copy-engine tile with totals in the output crashes NVRTC
/// 13.0 (see the rule in [`validate`]).
pub const CRASHING_WARPS: u32 = 16;

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
fn require(errors: &mut Vec<FieldError>, ok: bool, field: &str, message: String) {
    if !ok {
        errors.push(fail(field, message));
    }
}

/// One sentence about several fields that must hold together, filed under the first that does not (so that the
/// macro points at a field that is wrong).
fn require_fields(errors: &mut Vec<FieldError>, fields: &[(&str, bool)], message: String) {
    if let Some((field, _)) = fields.iter().find(|(_, ok)| !ok) {
        errors.push(fail(field, message));
    }
}

/// The engines that implement only the accurate mode say so in one sentence.
fn require_int_per32(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
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

/// The streaming (decode) engine's own rules: it reads whole q6_K blocks from global memory with no staging,
/// and one lane per output runs the float sequence of NUMERICS.md 5.
fn validate_stream(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
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
}

/// Rows (weight rows or tokens) of one bulk tensor copy's box at most (`refill = tma`): the copy engine's limit.
pub const TMA_MAX_BOX_ROWS: u32 = 256;

/// Tokens the ring engine takes a block at most: each thread forms every token's sums of its super-block.
pub const RING_MAX_TOKENS: u32 = 8;
/// The token tiles of a ring whose warps run mma fragments (`ring_lanes = fragments`): one or two of 8 tokens.
pub const RING_FRAGMENT_TOKENS: [u32; 2] = [8, 16];
/// The legal `warps_k` values: groups of a fragment ring's warps along K, each with whole segments.
pub const RING_WARPS_K: [u32; 3] = [1, 2, 4];
/// The legal nonzero `fold_warps`: one or two warpgroups.
pub const FOLD_WARPS: [u32; 2] = [4, 8];

/// The most parts along K a tile of the last wave may take (`tail_parts`).
pub const MAX_TAIL_PARTS: u32 = 4;

/// The legal `cluster_rows` and `cluster_tokens` values: blocks of a thread-block cluster along each axis.
pub const CLUSTER_BLOCKS: [u32; 3] = [1, 2, 4];
/// Blocks a cluster may have in all (the portable cluster size).
pub const MAX_CLUSTER_BLOCKS: u32 = 8;
/// Row groups a fragment ring may have: each has a named barrier of its own (1..=15; 0 is the block's).
pub const RING_FRAGMENT_ROW_GROUPS: u32 = 15;

/// The ring engine's own rules: bulk copies of whole q6_K blocks (on the architectures the feature table gives
/// them), whole K per block, and a few tokens. (`stages` is the depth of each warp's ring: 1 still works, with no
/// copy in flight during a stage.)
fn validate_stream_ring(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require_int_per32(desc, errors);
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
}

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
    check(
        &mut errors,
        !(desc.engine.is_fold() && desc.mode == NumericsMode::F32Per16),
        "mode",
        format!(
            "engine {} has no per-16 partial, so it cannot run mode f32_per16; use int_per32 or int_per256",
            desc.engine
        ),
    );
    if desc.engine.is_prefolded() {
        check(
            &mut errors,
            desc.scale_fetch == ScaleFetch::Plane,
            "scale_fetch",
            format!(
                "engine {} keeps no q6_K blocks on the device, so its d comes from the plane: scale_fetch \
                 must be plane, not {}",
                desc.engine, desc.scale_fetch
            ),
        );
        check(
            &mut errors,
            desc.kdr == 8 || desc.accumulator_sets == 2,
            "kdr",
            format!(
                "engine {} with one accumulator set stages a whole super-block (h pass, x64, l pass): kdr must \
                 be 8, or accumulator_sets 2; got kdr = {}",
                desc.engine,
                desc.kdr
            ),
        );
    }
    if desc.engine == Engine::WgmmaK32Regfold {
        check(
            &mut errors,
            matches!(desc.mode, NumericsMode::IntPer32 | NumericsMode::Int12Per256),
            "mode",
            format!(
                "engine wgmma_k32_regfold implements modes int_per32 and int12_per256 (the accurate modes); got {}",
                desc.mode
            ),
        );
    } else if desc.engine.builds_rows_in_registers() {
        require_int_per32(desc, &mut errors);
    }
    if desc.mode == NumericsMode::Int12Per256 {
        check(
            &mut errors,
            // (The other register-fold engines refuse every mode but int_per32 above, in their own sentence.)
            (desc.engine == Engine::WgmmaK32Regfold
                && matches!(desc.refill, Refill::Burst | Refill::Tma)
                && desc.ksplit == 1
                && desc.accumulator_sets == 1)
                || (desc.engine != Engine::WgmmaK32Regfold
                    && desc.engine.builds_rows_in_registers()),
            "mode",
            format!(
                "mode int12_per256 multiplies its two activation planes by the fold's two weight planes with wgmma, \
                 which engine wgmma_k32_regfold does with refill = burst or tma, ksplit = 1 and accumulator_sets = 1 (its \
                 three sums are not h and l sets); got engine {}, refill = {}, ksplit = {}, accumulator_sets = {}",
                desc.engine, desc.refill, desc.ksplit, desc.accumulator_sets
            ),
        );
    }
    // NVRTC 13.0 (13.0.88) dies inside nvrtcCompileProgram (a segmentation fault, or glibc aborting on a
    // corrupted heap) on this engine's int12 copy-engine tile with its totals in the output once the tile's
    // warps get 128 registers or fewer each. Of the 36 such shapes tried on 2026-12-07 (16 or 32 warps, or 8
    // warps at 2 or 3 blocks per SM; 64 x 32 to 128 x 128; 2 or 3 stages; either segment; clusters), 24
    // crashed it, 6 spilled and 6 compiled; none of the 65 with fewer warps crashed, nor any with refill =
    // burst or totals elsewhere. Which of the 36 crash follows no field we could find, so all are refused.
    let tile_warps = desc.warps_m.saturating_mul(desc.warps_n);
    check(
        &mut errors,
        !(desc.engine == Engine::WgmmaK32Regfold
            && desc.mode == NumericsMode::Int12Per256
            && desc.refill == Refill::Tma
            && desc.totals == Totals::Output
            && tile_warps.saturating_mul(desc.blocks_per_sm) >= CRASHING_WARPS),
        "totals",
        format!(
            "totals = output on engine wgmma_k32_regfold under mode int12_per256 with refill = tma crashes NVRTC 13.0 \
             once warps_m x warps_n x blocks_per_sm reaches {CRASHING_WARPS} (128 registers a thread or fewer); got \
             {} x {} x {}: use totals = registers or shared, or fewer warps or blocks per SM",
            desc.warps_m, desc.warps_n, desc.blocks_per_sm
        ),
    );
    if desc.engine.builds_rows_in_registers() {
        check(
            &mut errors,
            desc.kdr == 8,
            "kdr",
            format!(
                "engine {} stages whole q6_K blocks (each chunk reads bytes spread over its \
                 block): kdr must be 8; got {}",
                desc.engine, desc.kdr
            ),
        );
        require_fields(
            &mut errors,
            &[
                ("scale_fetch", desc.scale_fetch == ScaleFetch::Narrow),
                ("expand", desc.expand == ExpandWidth::Uint4),
            ],
            format!(
                "engine {} copies whole blocks in 16-byte pieces and reads the scales from them: \
                 scale_fetch must be narrow and expand uint4; got {} and {}",
                desc.engine, desc.scale_fetch, desc.expand
            ),
        );
        check(
            &mut errors,
            desc.stages >= 2,
            "stages",
            format!(
                "engine {} pipelines its weight copies: stages must be at least 2; got {}",
                desc.engine, desc.stages
            ),
        );
        // The f16 engine brings its tokens through registers; with refill = tma the copy engine stages them;
        // otherwise the int8 engines stage them with cp.async.
        let (tokens_arrive, cp_async_tokens) = if desc.engine == Engine::WgmmaF16Regfold {
            (
                "loads each window's tokens into registers during the window before and converts them to \
                 f16 itself",
                CpAsync::Off,
            )
        } else if desc.refill == Refill::Tma {
            (
                "with refill = tma takes each window's tokens and scales from the copy engine",
                CpAsync::Off,
            )
        } else {
            ("stages its tokens with cp.async", CpAsync::B16)
        };
        check(
            &mut errors,
            desc.cp_async_activations == cp_async_tokens,
            "cp_async_activations",
            format!(
                "engine {} {tokens_arrive}: cp_async_activations must be {cp_async_tokens}; got {}",
                desc.engine, desc.cp_async_activations
            ),
        );
        if desc.engine == Engine::WgmmaF16Regfold {
            // With warps_m a multiple of 4 this also makes the tokens per warp a multiple of 16, which the
            // 16-byte loads of a lane's activation scales need.
            check(
                &mut errors,
                desc.tile_n
                    .saturating_mul(8)
                    .is_multiple_of(desc.threads().max(1)),
                "tile_n",
                format!(
                    "engine {} has every thread load an equal share of a window's tile_n x 8 activation \
                     scales: tile_n x 8 must be a multiple of the block's {} threads; got tile_n = {}",
                    desc.engine,
                    desc.threads(),
                    desc.tile_n
                ),
            );
        }
    }
    if desc.engine == Engine::MmaK16Widen {
        check(
            &mut errors,
            desc.refill == Refill::Tma,
            "refill",
            format!(
                "engine mma_k16_widen pairs its token fragments the way the copy engine stages them: refill must \
                 be tma; got {}",
                desc.refill
            ),
        );
    }
    if desc.engine == Engine::StreamDp4a {
        validate_stream(desc, &mut errors);
    }
    if desc.engine == Engine::StreamRing {
        validate_stream_ring(desc, &mut errors);
    }
    check(
        &mut errors,
        desc.quantizer == Quantizer::Separate || desc.engine == Engine::StreamRing,
        "quantizer",
        format!(
            "only engine stream_ring quantizes the activations inside its matmul (quantizer = fused); engine {} \
             reads what the quantizer kernel wrote: quantizer must be separate",
            desc.engine
        ),
    );
    check(
        &mut errors,
        desc.token_unroll == 0 || (desc.token_unroll == 1 && desc.engine == Engine::StreamRing),
        "token_unroll",
        format!(
            "token_unroll must be full, or 1 with engine stream_ring (the only engine with a loop over a block's \
             tokens inside a thread); got {} with engine {}",
            desc.token_unroll, desc.engine
        ),
    );
    check(
        &mut errors,
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
    check(
        &mut errors,
        CLUSTER_BLOCKS.contains(&desc.cluster_rows)
            && CLUSTER_BLOCKS.contains(&desc.cluster_tokens)
            && desc.cluster_blocks() <= MAX_CLUSTER_BLOCKS
            && (desc.cluster_blocks() == 1
                || (desc.engine == Engine::WgmmaK32Regfold
                    && desc.refill == Refill::Tma
                    && desc.ksplit == 1
                    && desc.kdr.is_multiple_of(desc.cluster_rows))),
        "cluster_rows",
        format!(
            "cluster_rows x cluster_tokens blocks form a thread-block cluster sharing each stage's token boxes (along \
             the rows, each block issuing kdr / cluster_rows of them) and weight box (along the tokens, the blocks \
             taking turns), multicast by the copy engine: each must be {}, their product at most \
             {MAX_CLUSTER_BLOCKS}, and a cluster needs engine wgmma_k32_regfold, refill = tma, ksplit = 1 and kdr a \
             multiple of cluster_rows; got {} x {} with engine {}, refill = {}, ksplit = {}, kdr = {}",
            one_of(&CLUSTER_BLOCKS),
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.engine,
            desc.refill,
            desc.ksplit,
            desc.kdr
        ),
    );
    check(
        &mut errors,
        desc.fold_warps == 0
            || (FOLD_WARPS.contains(&desc.fold_warps)
                && desc.engine == Engine::WgmmaK32Regfold
                && desc.mode == NumericsMode::Int12Per256
                && desc.refill == Refill::Tma
                && desc.kdr == 8
                && desc.stages >= 2
                && desc.ksplit == 1
                && desc.warps_m.saturating_mul(desc.warps_n) == 8
                && desc.cluster_blocks() == 1
                && desc.nbj.is_multiple_of(16 * desc.fold_warps)),
        "fold_warps",
        format!(
            "fold_warps adds warps that fold every row of the tile into shared memory for the other warps' \
             wgmmas: it must be 0, {}, and more than 0 needs engine wgmma_k32_regfold, mode int12_per256, refill \
             = tma, kdr = 8, stages >= 2, ksplit = 1, two warpgroups (warps_m x warps_n = 8), no cluster and nbj a \
             multiple of 16 x fold_warps (whole fragment groups a fold warp); got fold_warps = {} with engine {}, \
             mode {}, refill = {}, kdr = {}, stages = {}, ksplit = {}, warps_m x warps_n = {} x {}, cluster {} x \
             {}, nbj = {}",
            one_of(&FOLD_WARPS),
            desc.fold_warps,
            desc.engine,
            desc.mode,
            desc.refill,
            desc.kdr,
            desc.stages,
            desc.ksplit,
            desc.warps_m,
            desc.warps_n,
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.nbj
        ),
    );
    check(
        &mut errors,
        desc.producer == Producer::None
            || (desc.engine == Engine::WgmmaK32Regfold
                && desc.mode == NumericsMode::Int12Per256
                && desc.refill == Refill::Tma
                && desc.ksplit == 1
                && desc.warps_m.saturating_mul(desc.warps_n) == 8
                && desc.warps_k == 1
                && desc.cluster_blocks() == 1
                && desc.fold_warps == 0
                && desc.quantizer == Quantizer::Separate
                && desc.blocks_per_sm == 1),
        "producer",
        format!(
            "producer = warpgroup adds four warps that refill the stages while the tile's two warpgroups take \
             their registers (setmaxnreg): it needs engine wgmma_k32_regfold, mode int12_per256, refill = tma, \
             ksplit = 1, warps_m x warps_n = 8 with warps_k = 1, no cluster, no fold warps, \
             quantizer = separate and blocks_per_sm = 1; got producer = {} with engine {}, mode {}, refill = {}, \
             ksplit = {}, warps_m x warps_n x warps_k = {} x {} x {}, cluster {} x {}, \
             fold_warps = {}, quantizer = {}, blocks_per_sm = {}",
            desc.producer,
            desc.engine,
            desc.mode,
            desc.refill,
            desc.ksplit,
            desc.warps_m,
            desc.warps_n,
            desc.warps_k,
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.fold_warps,
            desc.quantizer,
            desc.blocks_per_sm
        ),
    );
    check(
        &mut errors,
        (1..=MAX_TAIL_PARTS).contains(&desc.tail_parts)
            && (desc.tail_parts == 1
                || (desc.engine == Engine::WgmmaK32Regfold
                    && desc.refill == Refill::Tma
                    && desc.ksplit == 1
                    && desc.totals != Totals::Output
                    && desc.segment == Segment::Registers
                    && desc.quantizer == Quantizer::Separate
                    && desc.cluster_blocks() == 1
                    && desc.fold_warps == 0)),
        "tail_parts",
        format!(
            "tail_parts is how many parts along K a tile of a part-full last wave may take: it must be 1 to \
             {MAX_TAIL_PARTS}, and more than 1 needs engine wgmma_k32_regfold, refill = tma, ksplit = 1, totals = \
             registers or shared, segment = registers, quantizer = separate, no cluster and no fold warps; got tail_parts = {} \
             with engine {}, refill = {}, ksplit = {}, totals = {}, segment = {}, quantizer = {}, cluster {} x {}, \
             fold_warps = {}",
            desc.tail_parts,
            desc.engine,
            desc.refill,
            desc.ksplit,
            desc.totals,
            desc.segment,
            desc.quantizer,
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.fold_warps
        ),
    );
    check(
        &mut errors,
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
    if desc.engine == Engine::WgmmaK32Prefolded {
        check(
            &mut errors,
            desc.mode == NumericsMode::IntPer256,
            "mode",
            format!(
                "engine wgmma_k32_prefolded implements mode int_per256 only (one I2F per super-block); got {}",
                desc.mode
            ),
        );
    }
    if desc.engine.is_wgmma() {
        check(
            &mut errors,
            desc.warps_m.is_multiple_of(4) && desc.nbj == desc.warps_m.saturating_mul(16),
            "warps_m",
            format!(
                "engine {} runs warpgroups of 4 warps over 64 rows (16 per warp): warps_m must \
                 be a multiple of 4 and nbj = 16 x warps_m; got warps_m = {}, nbj = {}",
                desc.engine, desc.warps_m, desc.nbj
            ),
        );
        check(
            &mut errors,
            [CpAsync::Off, CpAsync::B16].contains(&desc.cp_async_activations)
                && [CpAsync::Off, CpAsync::B16].contains(&desc.cp_async_plane),
            "cp_async_plane",
            format!(
                "engine {} stages 16-byte rows of core matrices: cp_async_activations and \
                 cp_async_plane must be 16 or off; got {} and {}",
                desc.engine, desc.cp_async_activations, desc.cp_async_plane
            ),
        );
    }
    check(
        &mut errors,
        matches!(desc.accumulator_sets, 1 | 2),
        "accumulator_sets",
        format!(
            "accumulator_sets must be 1 (h pass, x64, l pass) or 2 (h and l side by side); got {}",
            desc.accumulator_sets
        ),
    );
    check(
        &mut errors,
        desc.accumulator_sets != 2
            || (desc.engine.is_prefolded() && desc.mode == NumericsMode::IntPer256)
            || desc.engine == Engine::WgmmaK32Regfold,
        "accumulator_sets",
        format!(
            "accumulator_sets = 2 keeps h and l sums apart, which only the prefolded engines under mode \
             int_per256 and engine wgmma_k32_regfold have; this is engine {} with mode {}",
            desc.engine, desc.mode
        ),
    );

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
    // The streaming engines keep their sums themselves: each lane's total and segment in registers (stream_dp4a),
    // or the super-blocks' sums in shared memory (stream_ring, whose totals are refused with its other rules).
    if desc.engine == Engine::StreamDp4a {
        require_fields(
            &mut errors,
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
    check(
        &mut errors,
        desc.segment == Segment::Registers || desc.engine != Engine::StreamRing,
        "segment",
        format!(
            "engine stream_ring sums its super-blocks in shared memory itself: segment must be registers; got {}",
            desc.segment
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
        matches!(desc.chunk_unroll, 0 | 1 | 2 | 4)
            && (desc.chunk_unroll == 0 || desc.engine.is_mma_sync_in_registers()),
        "chunk_unroll",
        format!(
            "chunk_unroll must be full, or 1, 2 or 4 with engine mma_k32_regfold or mma_k16_widen (the only \
             engines whose chunk loop is not always unrolled fully); got {} with engine {}",
            desc.chunk_unroll, desc.engine
        ),
    );
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
