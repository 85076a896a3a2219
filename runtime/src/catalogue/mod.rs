//! The project's declared variants, one `variant!` each, in a module a family of engines (each variant writes only
//! what it chooses: the fields its engine pins take the engine's defaults). The CLI and the tests walk [`all()`],
//! and every variant has a snapshot of its generated source (tests/tests/snapshots).
//!
//! A variant stays here for one of three roles, each a list: the embedded default (`runtime/mmqgen.toml`) picks it
//! ([`DEFAULT_PICKS`]; a test keeps the list and the config in step); it is a baseline the others are measured
//! against ([`BASELINES`]: the walking skeleton and the seed's r41, r42 and r56); or it is the catalogue's example of
//! an engine or a field value, which a test or a document names ([`EXAMPLES`]), so that the compile, SASS and GPU
//! parity checks keep covering that code. Retired variants stay in git history (`git show
//! c36f0f2:runtime/src/catalogue.rs`); docs/PERF.md tells what each lever measured.

mod fold;
mod prefolded;
mod regfold;
mod ring;
mod seed;
mod stream;
mod wgmma;
mod widen;

pub use fold::*;
pub use prefolded::*;
pub use regfold::*;
pub use ring::*;
pub use seed::*;
pub use stream::*;
pub use wgmma::*;
pub use widen::*;

use crate::codegen::VariantDescription;

/// The variants a rule of the embedded default config picks.
pub const DEFAULT_PICKS: &[VariantDescription] = &[
    DP4A_INT_PER32,
    LLAMACPP,
    SPLITK2_PER32,
    TMA_128X64,
    TMA_64X64_B2,
    TMA_64X64_W2,
    WIDEN_128X16,
    WIDEN_128X16_KS4,
    WIDEN_112X32,
    WIDEN_64X32_KS4,
    REGFOLD_64X64_KS4,
    TMA_64X64_KS4,
    REGFOLD_64X32_KS2,
    TMA_64X32_KS2,
    WGMMA_I12_128X64_PRODUCER,
    WGMMA_I12_128X96,
    WGMMA_I12_128X96_TAIL_PRODUCER,
    STREAM_T1,
    STREAM_T2,
    STREAM_T4,
    STREAM_T4_WIDE,
    RING_T1,
    RING_T1_TALL,
    RING_T1_FUSED,
    RING_T1_TALL_FUSED,
    RING_T1_KS4_FUSED,
    RING_T2,
    RING_T2_FUSED,
    RING_T2_TALL_FUSED,
    RING_T3_FUSED,
    RING_T4,
    RING_T4_FUSED,
    RING_T4_TALL,
    RING_MMA_128X8,
    RING_MMA_32X8_K4,
];

/// The baselines: the walking skeleton and the seed's variants (docs/DESIGN.md R1), which the others are measured
/// against.
pub const BASELINES: &[VariantDescription] = &[DP4A_F32_PER16, R41, R42, R56];

/// Examples of an engine or a field value that no default rule picks, named by a test or a document.
pub const EXAMPLES: &[VariantDescription] = &[
    FOLD_PER32,
    FOLD_PER256,
    FOLD_PER256_PLANE,
    PREFOLDED_PER256,
    PREFOLDED_PER256_WIDE_N,
    PREFOLDED_PER32,
    PREFOLDED_SMALL_N,
    PREFOLDED_SPREAD,
    WGMMA_64X128,
    SPLITK4_FOLD_PER256,
    SMALL_N_F32,
    SMALL_N_DP4A,
    REGFOLD_64X64,
    REGFOLD_128X128,
    TMA_128X128,
    WGMMA_REGFOLD_128X64,
    WGMMA_I12_128X64,
    WGMMA_I12_128X96_TAIL,
    WGMMA_I12_64X128_FOLD,
    WGMMA_F16_128X64,
    // The int12 rings (issue 54): candidates for a batch-invariant selection (runtime/batch_invariant.toml).
    RING_I12_T1,
    RING_I12_T1_FUSED,
    RING_I12_T1_TALL,
    RING_I12_T1_TALL_FUSED,
    RING_I12_T1_KS4_FUSED,
    RING_I12_T2,
    RING_I12_T2_FUSED,
    RING_I12_T2_TALL_FUSED,
    RING_I12_T3_FUSED,
    RING_I12_T4,
    RING_I12_T4_FUSED,
    RING_I12_T4_TALL,
    RING_I12_T8,
];

/// Every declared variant: the baselines, the default's picks, then the examples.
pub fn all() -> Vec<VariantDescription> {
    [BASELINES, DEFAULT_PICKS, EXAMPLES].concat()
}

/// Finds a variant by declared or canonical name (docs/DESIGN.md D7).
pub fn find<'a>(variants: &'a [VariantDescription], name: &str) -> Option<&'a VariantDescription> {
    variants
        .iter()
        .find(|v| v.name == name || crate::codegen::canonical_name(v) == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::canonical_name;

    /// The family modules' declarations, as their source has them.
    const FAMILIES: [&str; 8] = [
        include_str!("seed.rs"),
        include_str!("fold.rs"),
        include_str!("prefolded.rs"),
        include_str!("regfold.rs"),
        include_str!("widen.rs"),
        include_str!("wgmma.rs"),
        include_str!("stream.rs"),
        include_str!("ring.rs"),
    ];

    /// Every declared variant has exactly one role, so that `all()` holds each once and none is left out.
    #[test]
    fn every_declared_variant_has_one_role() {
        let declared = FAMILIES
            .iter()
            .map(|source| source.matches("pub const ").count())
            .sum::<usize>();
        let all = all();
        assert_eq!(
            all.len(),
            declared,
            "a declared variant has no role, or two"
        );
        let mut names: Vec<&str> = all.iter().map(|v| v.name.as_ref()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "a variant has two roles");
    }

    /// The default's picks are what the embedded config's rules name, no more and no fewer.
    #[test]
    fn the_default_picks_are_the_configs() {
        let config = crate::select::Config::embedded(&all()).unwrap();
        let mut named: Vec<String> = config
            .rules
            .iter()
            .map(|r| canonical_name(&r.variant))
            .collect();
        named.sort_unstable();
        named.dedup();
        let mut picks: Vec<String> = DEFAULT_PICKS.iter().map(canonical_name).collect();
        picks.sort_unstable();
        assert_eq!(picks, named);
    }
}
