//! Which features of the architecture table ([`crate::arch`]) a description's module uses, each with the part of
//! the description that asks for it: the validator refuses an architecture that lacks one, naming the part and the
//! feature, and the renderer records them so that the NVRTC target follows ([`crate::arch::Arch::nvrtc_target`]).
//! The test `every_module_uses_the_features_its_description_names` holds this to the generated sources.

use crate::arch::{Feature, FeatureSet};
use crate::description::*;

/// Features one part of a description asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureNeed {
    /// The field the validator files a refusal under (`archs`: the need is of the description as declared).
    pub field: &'static str,
    /// What asks for them, as sentences name it: `engine stream_ring`, `refill = tma`.
    pub what: String,
    pub features: FeatureSet,
}

fn set(features: &[Feature]) -> FeatureSet {
    features.iter().copied().collect()
}

/// The features `desc`'s module uses, grouped by what asks for them (empty groups left out). Programmatic
/// dependent launch is not among them: the kernels use it only where the architecture has it.
pub fn feature_needs(desc: &VariantDescription) -> Vec<FeatureNeed> {
    use Feature::*;
    let mut needs = Vec::new();
    let mut need = |what: String, features: FeatureSet| {
        if !features.is_empty() {
            needs.push(FeatureNeed {
                field: "archs",
                what,
                features,
            });
        }
    };
    let engine = match desc.engine {
        Engine::Dp4a | Engine::StreamDp4a => set(&[Dp4a]),
        Engine::MmaK16 => set(&[MmaS8K16]),
        Engine::MmaK32Fold => set(&[MmaS8K32]),
        Engine::MmaK32Regfold | Engine::MmaK32Prefolded => set(&[MmaS8K32, Ldmatrix]),
        Engine::MmaK16Widen => set(&[MmaS8K16, Ldmatrix]),
        Engine::WgmmaK32Prefolded | Engine::WgmmaK32Regfold | Engine::WgmmaF16Regfold => {
            set(&[Wgmma])
        }
        // A fragment ring runs mma_k16_widen's fragments (built from shared memory without ldmatrix), its lanes
        // copying the tokens by cp.async; the others bring whole blocks by bulk copies and sum them with dp4a.
        // Both wait on mbarriers.
        Engine::StreamRing if desc.ring_lanes == RingLanes::Fragments => {
            set(&[MmaS8K16, CpAsync, MbarrierTx])
        }
        // Their raw_rows entry point reads raw blocks by tensor copies.
        Engine::StreamRing => set(&[Dp4a, BulkCopy, MbarrierTx, TensorCopy]),
    };
    need(format!("engine {}", desc.engine), engine);
    // The register-fold engines copy the padded layout's blocks with cp.async unless the copy engine does.
    if desc.engine.builds_rows_in_registers() && desc.refill != Refill::Tma {
        need(
            format!(
                "engine {} with refill = {} (its blocks copied by cp.async)",
                desc.engine, desc.refill
            ),
            set(&[CpAsync]),
        );
    }
    for (field, width) in [
        ("cp_async_activations", desc.cp_async_activations),
        ("cp_async_plane", desc.cp_async_plane),
    ] {
        if width.is_on() {
            need(format!("{field} = {width}"), set(&[CpAsync]));
        }
    }
    if desc.refill == Refill::Tma {
        need("refill = tma".to_string(), set(&[TensorCopy, MbarrierTx]));
    }
    if desc.cluster_blocks() > 1 {
        need(
            format!(
                "a cluster of {} x {} blocks",
                desc.cluster_rows, desc.cluster_tokens
            ),
            set(&[Clusters, TensorCopyMulticast]),
        );
    }
    if desc.fold_warps > 0 {
        need(
            format!(
                "fold_warps = {} (registers handed over by setmaxnreg)",
                desc.fold_warps
            ),
            set(&[Setmaxnreg]),
        );
    }
    if desc.producer == Producer::Warpgroup {
        need(
            "producer = warpgroup (registers handed over by setmaxnreg)".to_string(),
            set(&[Setmaxnreg]),
        );
    }
    needs
}

/// Every feature `desc`'s module uses.
pub fn features_used(desc: &VariantDescription) -> FeatureSet {
    feature_needs(desc)
        .iter()
        .fold(FeatureSet::EMPTY, |all, n| all.union(n.features))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;

    #[test]
    fn an_engine_needs_its_instructions() {
        let dp4a = VariantDescription::DEFAULTS;
        assert_eq!(features_used(&dp4a), set(&[Feature::Dp4a]));
        let ring = VariantDescription {
            engine: Engine::StreamRing,
            ..VariantDescription::DEFAULTS
        };
        // Its raw_rows entry point brings raw blocks by tensor copies, with K whole or split.
        let ring_features = set(&[
            Feature::Dp4a,
            Feature::BulkCopy,
            Feature::MbarrierTx,
            Feature::TensorCopy,
        ]);
        assert_eq!(features_used(&ring), ring_features);
        let needs = feature_needs(&ring);
        assert_eq!(needs.len(), 1);
        assert_eq!(needs[0].what, "engine stream_ring");
        assert_eq!(needs[0].field, "archs");
        let split = VariantDescription { ksplit: 4, ..ring };
        assert_eq!(features_used(&split), ring_features);
    }

    fn ring_on(archs: &str) -> Result<VariantDescription, String> {
        let text = format!(
            "[[variant]]\nname = \"ring\"\nengine = \"stream_ring\"\nkdr = 8\nnbj = 32\ntile_n = 1\n\
             warps_m = 8\nwarps_n = 1\nexpand = \"uint4\"\nstages = 1\narchs = {archs}\n"
        );
        crate::spec_file::variants_from_toml_str(&text)
            .map(|mut v| v.remove(0))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_validator_refuses_an_architecture_without_a_feature_in_one_sentence() {
        // A family is every architecture of a generation and the later ones.
        let ring = ring_on("[\"hopper_and_later\"]").unwrap();
        assert_eq!(
            ring.archs.iter().map(Arch::keyword).collect::<Vec<_>>(),
            ["sm_90", "sm_100", "sm_103", "sm_120", "sm_121"]
        );
        assert_eq!(
            ring_on("[\"ampere_and_later\"]").unwrap_err(),
            "variant #1 (ring): field `archs`: engine stream_ring needs mbarriers with transaction counts \
             (mbarrier.expect_tx), bulk copies (cp.async.bulk) and tensor copies (TMA, cp.async.bulk.tensor), \
             which only sm_90, sm_100, sm_103, sm_120 and sm_121 have: archs names sm_80, sm_86, sm_87 and sm_89, \
             which do not"
        );
        let wgmma = VariantDescription {
            name: "w".into(),
            engine: Engine::WgmmaK32Prefolded,
            mode: NumericsMode::IntPer256,
            kdr: 8,
            nbj: 64,
            tile_n: 128,
            warps_m: 4,
            warps_n: 2,
            scale_fetch: ScaleFetch::Plane,
            cp_async_activations: CpAsync::B16,
            cp_async_plane: CpAsync::B16,
            stages: 2,
            ..VariantDescription::DEFAULTS
        };
        assert_eq!(crate::validate(&wgmma), Ok(()));
        let on_blackwell = VariantDescription {
            archs: ArchSet::EMPTY.with(Arch::Sm90).with(Arch::Sm100),
            ..wgmma
        };
        let errors = crate::validate(&on_blackwell).unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].field, "archs");
        assert_eq!(
            errors[0].message,
            "engine wgmma_k32_prefolded needs wgmma (warpgroup MMA), which only sm_90 (as sm_90a) has: archs names \
             sm_100, which does not"
        );
    }

    #[test]
    fn a_wgmma_producer_module_is_arch_specific() {
        let producer = VariantDescription {
            engine: Engine::WgmmaK32Regfold,
            producer: Producer::Warpgroup,
            refill: Refill::Tma,
            ..VariantDescription::DEFAULTS
        };
        let used = features_used(&producer);
        assert!(used.contains(Feature::Setmaxnreg) && used.contains(Feature::Wgmma));
        assert_eq!(Arch::Sm90.nvrtc_target(used), "sm_90a");
    }
}
