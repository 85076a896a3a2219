//! The engines, a module each: the knobs an engine has (its part of a [`Plan`](crate::plan::Plan): [`EnginePlan`]),
//! the defaults it gives the fields a declaration leaves out, and its own rules. A knob that one engine owns lives
//! in that engine's part and module, and so does the sentence another engine gets for it; the rules a family of
//! engines shares (the folds, the warpgroup engines) are here.
//!
//! - [`classic`]: `dp4a`, `mma_k16`, `mma_k32_fold` (how they stage a window);
//! - [`prefolded`]: `mma_k32_prefolded`, `wgmma_k32_prefolded`;
//! - [`register_rows`]: `mma_k32_regfold`, `mma_k16_widen`, `wgmma_f16_regfold`, and what `wgmma_k32_regfold`
//!   shares with them;
//! - [`wgmma_regfold`]: `wgmma_k32_regfold` (int12, producer, fold warps, clusters, the last wave's split);
//! - [`stream`](mod@stream): `stream_dp4a`;
//! - [`ring`]: `stream_ring` (lanes, warps along K, the token loop, the fused quantizer).

pub mod classic;
pub mod prefolded;
pub mod register_rows;
pub mod ring;
pub mod stream;
pub mod wgmma_regfold;

pub use classic::Staging;
pub use prefolded::Prefolded;
pub use register_rows::RegisterRows;
pub use ring::Ring;
pub use wgmma_regfold::WgmmaRegfold;

use crate::description::*;
use crate::fields::FieldError;
use crate::validate::require;

/// Whether a declaration wrote a field (by name); the fields it did not write take their engine's defaults.
pub type Written<'a> = dyn Fn(&str) -> bool + 'a;

/// An engine with the knobs it has: the engine's part of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnginePlan {
    Dp4a(Staging),
    MmaK16(Staging),
    MmaK32Fold(Staging),
    MmaK32Regfold(RegisterRows),
    MmaK16Widen(RegisterRows),
    MmaK32Prefolded(Prefolded),
    WgmmaK32Prefolded(Prefolded),
    WgmmaK32Regfold(WgmmaRegfold),
    WgmmaF16Regfold,
    StreamDp4a,
    StreamRing(Ring),
}

impl EnginePlan {
    /// The engine part of `desc`.
    pub fn of(desc: &VariantDescription) -> EnginePlan {
        match desc.engine {
            Engine::Dp4a => EnginePlan::Dp4a(Staging::of(desc)),
            Engine::MmaK16 => EnginePlan::MmaK16(Staging::of(desc)),
            Engine::MmaK32Fold => EnginePlan::MmaK32Fold(Staging::of(desc)),
            Engine::MmaK32Regfold => EnginePlan::MmaK32Regfold(RegisterRows::of(desc)),
            Engine::MmaK16Widen => EnginePlan::MmaK16Widen(RegisterRows::of(desc)),
            Engine::MmaK32Prefolded => EnginePlan::MmaK32Prefolded(Prefolded::of(desc)),
            Engine::WgmmaK32Prefolded => EnginePlan::WgmmaK32Prefolded(Prefolded::of(desc)),
            Engine::WgmmaK32Regfold => EnginePlan::WgmmaK32Regfold(WgmmaRegfold::of(desc)),
            Engine::WgmmaF16Regfold => EnginePlan::WgmmaF16Regfold,
            Engine::StreamDp4a => EnginePlan::StreamDp4a,
            Engine::StreamRing => EnginePlan::StreamRing(Ring::of(desc)),
        }
    }

    pub fn engine(&self) -> Engine {
        match self {
            EnginePlan::Dp4a(_) => Engine::Dp4a,
            EnginePlan::MmaK16(_) => Engine::MmaK16,
            EnginePlan::MmaK32Fold(_) => Engine::MmaK32Fold,
            EnginePlan::MmaK32Regfold(_) => Engine::MmaK32Regfold,
            EnginePlan::MmaK16Widen(_) => Engine::MmaK16Widen,
            EnginePlan::MmaK32Prefolded(_) => Engine::MmaK32Prefolded,
            EnginePlan::WgmmaK32Prefolded(_) => Engine::WgmmaK32Prefolded,
            EnginePlan::WgmmaK32Regfold(_) => Engine::WgmmaK32Regfold,
            EnginePlan::WgmmaF16Regfold => Engine::WgmmaF16Regfold,
            EnginePlan::StreamDp4a => Engine::StreamDp4a,
            EnginePlan::StreamRing(_) => Engine::StreamRing,
        }
    }

    /// The fields that are this engine's own knobs (beyond the tile, mode, pipeline depth, schedule, epilogue and
    /// occupancy every engine has).
    pub fn knobs(engine: Engine) -> &'static [&'static str] {
        match engine {
            Engine::Dp4a | Engine::MmaK16 | Engine::MmaK32Fold => classic::KNOBS,
            Engine::MmaK32Regfold => register_rows::KNOBS,
            Engine::MmaK16Widen => &register_rows::KNOBS[..1],
            Engine::MmaK32Prefolded => prefolded::KNOBS,
            Engine::WgmmaK32Prefolded => &prefolded::KNOBS[..4],
            Engine::WgmmaK32Regfold => wgmma_regfold::KNOBS,
            Engine::WgmmaF16Regfold | Engine::StreamDp4a => &[],
            Engine::StreamRing => ring::KNOBS,
        }
    }
}

/// Gives the fields a declaration did not write its engine's defaults: for each, where the global default
/// ([`VariantDescription::DEFAULTS`]) is a value the engine refuses, the value the engine takes (a declaration that
/// spells them out still parses, and one that validated before means what it meant: the global default stays
/// wherever the engine could take it).
pub fn fill_defaults(desc: &mut VariantDescription, written: &Written) {
    if desc.engine.is_wgmma() {
        // A warpgroup is four warps over 64 rows.
        if !written("warps_m") {
            desc.warps_m = 4;
        }
        if !written("nbj") {
            desc.nbj = desc.warps_m.saturating_mul(16);
        }
    }
    match desc.engine {
        Engine::Dp4a | Engine::MmaK16 | Engine::MmaK32Fold => {}
        Engine::MmaK32Prefolded | Engine::WgmmaK32Prefolded => {
            prefolded::fill_defaults(desc, written)
        }
        Engine::MmaK32Regfold
        | Engine::MmaK16Widen
        | Engine::WgmmaK32Regfold
        | Engine::WgmmaF16Regfold => register_rows::fill_defaults(desc, written),
        Engine::StreamDp4a => stream::fill_defaults(desc, written),
        Engine::StreamRing => ring::fill_defaults(desc, written),
    }
}

/// The rules of the description's engine and of its families.
pub(crate) fn rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    fold_rules(desc, errors);
    if desc.engine.is_prefolded() {
        prefolded::rules(desc, errors);
    }
    if desc.engine.builds_rows_in_registers() {
        register_rows::modes(desc, errors);
    }
    wgmma_regfold::int12_rule(desc, errors);
    wgmma_regfold::crash_rule(desc, errors);
    if desc.engine.builds_rows_in_registers() {
        register_rows::rules(desc, errors);
    }
    match desc.engine {
        Engine::StreamDp4a => stream::rules(desc, errors),
        Engine::StreamRing => ring::rules(desc, errors),
        _ => {}
    }
}

/// The rules of the knobs engines own, for every description: an engine's own values, and another engine's
/// refusal, in the owner's sentence.
pub(crate) fn knob_rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    ring::knob_rules(desc, errors);
    wgmma_regfold::knob_rules(desc, errors);
    prefolded::warpgroup_mode(desc, errors);
    if desc.engine.is_wgmma() {
        warpgroup_rules(desc, errors);
    }
    accumulator_rules(desc, errors);
    register_rows::knob_rules(desc, errors);
}

/// The folds multiply the `h`/`l` planes: no per-16 partial.
fn fold_rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        !(desc.engine.is_fold() && desc.mode == NumericsMode::F32Per16),
        "mode",
        format!(
            "engine {} has no per-16 partial, so it cannot run mode f32_per16; use int_per32 or int_per256",
            desc.engine
        ),
    );
}

/// The warpgroup engines: four warps over 64 rows, 16-byte rows of core matrices.
fn warpgroup_rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        desc.warps_m.is_multiple_of(4) && desc.nbj == desc.warps_m.saturating_mul(16),
        "warps_m",
        format!(
            "engine {} runs warpgroups of 4 warps over 64 rows (16 per warp): warps_m must \
             be a multiple of 4 and nbj = 16 x warps_m; got warps_m = {}, nbj = {}",
            desc.engine, desc.warps_m, desc.nbj
        ),
    );
    require(
        errors,
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

/// Accumulator sets: H and L apart is the prefolded engines' (under `int_per256`) and `wgmma_k32_regfold`'s.
fn accumulator_rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        matches!(desc.accumulator_sets, 1 | 2),
        "accumulator_sets",
        format!(
            "accumulator_sets must be 1 (h pass, x64, l pass) or 2 (h and l side by side); got {}",
            desc.accumulator_sets
        ),
    );
    require(
        errors,
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
}
