//! Every declared variant through NVRTC for each of its architectures (docs/DESIGN.md D9-D10):
//! the ptxas report shows no spills and no stack frame for shipped variants, static shared memory equal to
//! the validator's layout figure, and, where cuobjdump is installed, the engine's instruction in the SASS,
//! 128-bit loads for `uint4`, LDGSTS for cp.async.
//!
//! NVRTC is mandatory in CI (`MMQGEN_REQUIRE_NVRTC=1`): there its absence fails the test. Elsewhere the test
//! prints a visible SKIPPED line.

use mmqgen::codegen::{CpAsync, Engine, ExpandWidth, Refill, RingLanes};
use mmqgen::compile::cache::CubinCache;
use mmqgen::compile::inspect::inspect;
use mmqgen::{Arch, VariantDescription};

#[test]
fn every_declared_variant_compiles_cleanly_with_its_sass_as_declared() {
    if !mmqgen::testing::nvrtc_or_skip(
        "every_declared_variant_compiles_cleanly_with_its_sass_as_declared",
    ) {
        return;
    }
    let require_sass = mmqgen::testing::required("MMQGEN_REQUIRE_CUOBJDUMP");
    // The cubins are kept for `default_picks_compile`, which compiles the default's picks again.
    let cache = CubinCache::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cubins"));
    let jobs: Vec<(VariantDescription, Arch)> = mmqgen::catalogue::all()
        .into_iter()
        .flat_map(|v| v.archs.iter().map(move |a| (v.clone(), a)))
        .collect();
    // A thread a core, each taking every n-th (variant, architecture).
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let problems: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|first| {
                let (jobs, cache) = (&jobs, &cache);
                scope.spawn(move || {
                    jobs.iter()
                        .skip(first)
                        .step_by(threads)
                        .flat_map(|(variant, arch)| check(variant, *arch, cache, require_sass))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Compiles `variant` for `arch`, asserts its SASS is as declared, and returns what it may not have.
fn check(
    variant: &VariantDescription,
    arch: Arch,
    cache: &CubinCache,
    require_sass: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    let report = inspect(variant, arch, true, Some(cache))
        .unwrap_or_else(|e| panic!("{} on {arch} does not compile: {e}", variant.name));
    problems.extend(report.problems());
    for (entry, layout) in report
        .entries
        .iter()
        .zip(mmqgen::compile::inspect::ENTRY_LAYOUTS)
    {
        let Some(sass) = &entry.sass else {
            assert!(
                !require_sass,
                "cuobjdump is required (MMQGEN_REQUIRE_CUOBJDUMP=1) but absent"
            );
            continue;
        };
        let at = format!("{} {layout} on {arch}", variant.name);
        match variant.engine {
            Engine::Dp4a => assert!(sass.idp4a > 0, "{at}: no IDP.4A"),
            Engine::MmaK16 => assert!(sass.imma_16816_s8 > 0, "{at}: no IMMA.16816.S8.S8"),
            Engine::MmaK32Fold | Engine::MmaK32Prefolded => {
                assert!(sass.imma_16832_s8 > 0, "{at}: no IMMA.16832.S8.S8")
            }
            Engine::MmaK32Regfold | Engine::MmaK16Widen => {
                if variant.engine == Engine::MmaK16Widen {
                    assert!(sass.imma_16816_s8 > 0, "{at}: no IMMA.16816.S8.S8");
                } else {
                    assert!(sass.imma_16832_s8 > 0, "{at}: no IMMA.16832.S8.S8");
                }
                if layout != "raw" {
                    // The blocks arrive by cp.async alone: no weight byte passes through registers.
                    assert_eq!(
                        (sass.ldg.b8, sass.ldg.b16, sass.ldg.b128),
                        (0, 0, 0),
                        "{at}: padded blocks should be staged by cp.async only"
                    );
                }
            }
            Engine::StreamDp4a => {
                assert!(sass.idp4a > 0, "{at}: no IDP.4A");
                // Nothing is staged: no weight or activation byte goes through shared memory.
                assert_eq!(sass.ldgsts, 0, "{at}: the streaming engine stages nothing");
            }
            Engine::StreamRing => {
                if variant.ring_lanes == RingLanes::Fragments {
                    // The widened engine's m16n8k16 (its -32 tile signed, the q6 rows unsigned).
                    assert!(sass.imma_16816_s8 > 0, "{at}: no IMMA.16816.S8.S8");
                } else {
                    assert!(sass.idp4a > 0, "{at}: no IDP.4A");
                }
                if layout == "padded" {
                    // The blocks arrive by bulk copies alone: the only global loads are the tokens'.
                    assert_eq!(
                        (sass.ldg.b8, sass.ldg.b16),
                        (0, 0),
                        "{at}: padded blocks should arrive by bulk copies only"
                    );
                }
            }
            Engine::WgmmaK32Regfold => {
                assert!(sass.igmma_s8 > 0, "{at}: no IGMMA.64xNx32.S8.S8")
            }
            Engine::WgmmaF16Regfold => {
                assert!(sass.hgmma_f32 > 0, "{at}: no HGMMA.64xNx16.F32");
                // The tensor core gives f(I32) itself; the one I2F left is the block numbering's division.
                assert!(
                    sass.int_to_float <= 1,
                    "{at}: I2F per output: the tensor core gives f(I32) itself"
                );
            }
            Engine::WgmmaK32Prefolded => {
                assert!(sass.igmma_s8 > 0, "{at}: no IGMMA.64xNx32.S8.S8");
                assert_eq!(
                    sass.ldsm, 0,
                    "{at}: wgmma reads shared memory itself, no LDSM"
                );
            }
        }
        // The register-fold engines copy the padded layout's blocks with cp.async whatever they declare,
        // except with refill = tma, where the copy engine stages the tokens and scales on both layouts and
        // the padded blocks too (raw blocks, 2-byte aligned, by plain loads and stores). A fragment ring
        // copies its tokens with its lanes' cp.async instead (decode log 48), and only them.
        if variant.ring_lanes == RingLanes::Fragments {
            assert!(
                sass.ldgsts > 0,
                "{at}: a fragment ring's token copies, but no LDGSTS"
            );
        } else if variant.refill == Refill::Tma {
            assert_eq!(sass.ldgsts, 0, "{at}: refill = tma, but LDGSTS");
        } else if variant.cp_async_activations != CpAsync::Off
            || variant.cp_async_plane != CpAsync::Off
            || (layout == "padded" && variant.engine.builds_rows_in_registers())
        {
            assert!(sass.ldgsts > 0, "{at}: cp.async declared but no LDGSTS");
        } else {
            assert_eq!(sass.ldgsts, 0, "{at}: LDGSTS without cp.async");
        }
        // A fragment ring's weights arrive by tensor copies and its tokens by cp.async: no global load at all.
        if layout == "padded"
            && variant.expand == ExpandWidth::Uint4
            && !variant.engine.builds_rows_in_registers()
            && variant.ring_lanes != RingLanes::Fragments
        {
            assert!(
                sass.ldg.b128 > 0,
                "{at}: uint4 expand but no 128-bit global load"
            );
        }
        if layout == "raw_rows" {
            // Raw rows that start 16-byte aligned arrive by tensor copies, like padded blocks: no weight byte is
            // loaded 16 bits at a time.
            assert_eq!(
                sass.ldg.b16, 0,
                "{at}: raw rows by tensor copies, but 16-bit loads"
            );
        }
        if layout == "raw" && !variant.engine.is_prefolded() {
            // docs/DESIGN.md D2: raw blocks are 2-byte aligned; weight bytes are read 16 bits at a time.
            assert!(sass.ldg.b16 > 0, "{at}: raw layout without 16-bit loads");
        }
    }
    problems
}
