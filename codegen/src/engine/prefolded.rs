//! The prefolded engines, `mma_k32_prefolded` and `wgmma_k32_prefolded`: they stream the `h`/`l` planes folded at
//! registration, with no q6_K block on the device, and take `d` from the scale plane.

use super::Written;
use crate::description::*;
use crate::fields::FieldError;
use crate::validate::require;

/// The knobs of a prefolded engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefolded {
    /// 1: H pass, x64, L pass into one set; 2: H and L side by side (under `int_per256`).
    pub accumulator_sets: u32,
    pub expand: ExpandWidth,
    pub cp_async_activations: CpAsync,
    pub cp_async_plane: CpAsync,
    /// `burst`, or `spread` (`mma_k32_prefolded`: a slice of the refill between each chunk's mmas).
    pub refill: Refill,
}

/// The knobs of `mma_k32_prefolded`; `wgmma_k32_prefolded` has them but `refill`.
pub const KNOBS: &[&str] = &[
    "accumulator_sets",
    "expand",
    "cp_async_activations",
    "cp_async_plane",
    "refill",
];

impl Prefolded {
    pub fn of(desc: &VariantDescription) -> Prefolded {
        Prefolded {
            accumulator_sets: desc.accumulator_sets,
            expand: desc.expand,
            cp_async_activations: desc.cp_async_activations,
            cp_async_plane: desc.cp_async_plane,
            refill: desc.refill,
        }
    }
}

/// The planes hold `d`: scale_fetch can only be plane; one accumulator set stages a whole super-block (kdr 8); the
/// warpgroup engine runs `int_per256` only.
pub(super) fn fill_defaults(desc: &mut VariantDescription, written: &Written) {
    if !written("scale_fetch") {
        desc.scale_fetch = ScaleFetch::Plane;
    }
    if !written("kdr") && desc.accumulator_sets != 2 {
        desc.kdr = 8;
    }
    if desc.engine == Engine::WgmmaK32Prefolded && !written("mode") {
        desc.mode = NumericsMode::IntPer256;
    }
}

pub(super) fn rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        desc.scale_fetch == ScaleFetch::Plane,
        "scale_fetch",
        format!(
            "engine {} keeps no q6_K blocks on the device, so its d comes from the plane: scale_fetch \
             must be plane, not {}",
            desc.engine, desc.scale_fetch
        ),
    );
    require(
        errors,
        desc.kdr == 8 || desc.accumulator_sets == 2,
        "kdr",
        format!(
            "engine {} with one accumulator set stages a whole super-block (h pass, x64, l pass): kdr must \
             be 8, or accumulator_sets 2; got kdr = {}",
            desc.engine, desc.kdr
        ),
    );
}

/// The warpgroup engine's mode, checked with the warpgroup rules.
pub(super) fn warpgroup_mode(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    if desc.engine == Engine::WgmmaK32Prefolded {
        require(
            errors,
            desc.mode == NumericsMode::IntPer256,
            "mode",
            format!(
                "engine wgmma_k32_prefolded implements mode int_per256 only (one I2F per super-block); got {}",
                desc.mode
            ),
        );
    }
}
