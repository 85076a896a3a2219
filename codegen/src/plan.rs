//! A validated description as a typed plan: the parts every engine has (the tile, the numerics mode, the pipeline's
//! depth, the tile scheduler, the epilogue, occupancy) and the engine's own part, which carries only the knobs that
//! engine has ([`EnginePlan`]). The flat description stays what people write (`variant!`, TOML, sweeps); the
//! validator is the one way from it to a plan.

use crate::description::*;
use crate::engine::EnginePlan;
use crate::fields::FieldError;
use crate::launch::TileSchedule;
use crate::validate::validate;

/// The block's tile and the window it steps through K by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Weight rows (`nbj`) and tokens (`tile_n`) of a block.
    pub rows: u32,
    pub tokens: u32,
    pub warps_m: u32,
    pub warps_n: u32,
    /// 32-wide chunks of K a stage window holds.
    pub kdr: u32,
}

/// Where each output's sums live between segments and within one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Epilogue {
    pub totals: Totals,
    pub segment: Segment,
}

/// A validated variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The description it was planned from (its name, header and canonical name come from it).
    pub desc: VariantDescription,
    pub tile: Tile,
    pub mode: NumericsMode,
    /// Shared-memory stages of the main loop.
    pub stages: u32,
    /// How the call's tiles map to blocks (whole, split-K, or a last-wave split), and the cluster.
    pub schedule: TileSchedule,
    pub epilogue: Epilogue,
    pub archs: ArchSet,
    pub engine: EnginePlan,
}

/// Validates `desc` and plans it; every violation, each naming its field, otherwise.
pub fn plan(desc: &VariantDescription) -> Result<Plan, Vec<FieldError>> {
    validate(desc)?;
    Ok(Plan {
        desc: desc.clone(),
        tile: Tile {
            rows: desc.nbj,
            tokens: desc.tile_n,
            warps_m: desc.warps_m,
            warps_n: desc.warps_n,
            kdr: desc.kdr,
        },
        mode: desc.mode,
        stages: desc.stages,
        schedule: TileSchedule::of(desc),
        epilogue: Epilogue {
            totals: desc.totals,
            segment: desc.segment,
        },
        archs: desc.archs,
        engine: EnginePlan::of(desc),
    })
}

/// The fields every engine has (beyond its own knobs, [`EnginePlan::knobs`]): the tile, the mode, the pipeline's
/// depth, the schedule's split of K, the epilogue, occupancy, the architectures and the spill permission.
pub const GENERAL_FIELDS: &[&str] = &[
    "mode",
    "kdr",
    "nbj",
    "tile_n",
    "warps_m",
    "warps_n",
    "ksplit",
    "stages",
    "totals",
    "segment",
    "blocks_per_sm",
    "archs",
    "allow_spills",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::FIELDS;

    /// Every field but the name and the engine is general or some engine's knob, and an engine's knobs are not
    /// general: the plan's parts cover the description.
    #[test]
    fn every_field_has_a_part() {
        for field in FIELDS {
            if matches!(field, "name" | "engine") {
                continue;
            }
            let general = GENERAL_FIELDS.contains(&field);
            let owners: Vec<Engine> = Engine::ALL
                .into_iter()
                .filter(|e| EnginePlan::knobs(*e).contains(&field))
                .collect();
            assert!(
                general == owners.is_empty(),
                "{field}: general = {general}, owned by {owners:?}"
            );
        }
    }

    #[test]
    fn a_plan_carries_its_engines_knobs() {
        let desc = VariantDescription {
            name: "ring".into(),
            engine: Engine::StreamRing,
            kdr: 8,
            nbj: 32,
            tile_n: 4,
            warps_m: 8,
            warps_n: 1,
            expand: ExpandWidth::Uint4,
            token_unroll: 1,
            ..VariantDescription::DEFAULTS
        };
        let plan = plan(&desc).unwrap();
        match plan.engine {
            EnginePlan::StreamRing(ring) => assert_eq!(ring.token_unroll, 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(plan.engine.engine(), Engine::StreamRing);
        assert!(crate::plan::plan(&VariantDescription { tile_n: 64, ..desc }).is_err());
    }
}
