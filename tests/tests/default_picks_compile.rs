//! Every variant the embedded default names, compiled for the architecture of each rule that names it, through
//! the library's own compile path ([`mmqgen::compile::compile_variant`], what `Mmq` calls on first use): a pick
//! that only the CLI could build (a wgmma module compiled for plain `sm_90`, say) fails here, without a GPU.
//!
//! NVRTC is mandatory in CI (`MMQGEN_REQUIRE_NVRTC=1`); elsewhere the test prints a visible SKIPPED line.

use mmqgen::compile::cache::CubinCache;
use mmqgen::compile::compile_variant;
use mmqgen::select::Config;
use mmqgen::{Arch, VariantDescription};
use std::collections::BTreeMap;

#[test]
fn every_default_pick_compiles_through_the_library_path() {
    if !mmqgen::testing::nvrtc_or_skip("every_default_pick_compiles_through_the_library_path") {
        return;
    }
    let catalogue = mmqgen::catalogue::all();
    let config = Config::embedded(&catalogue).expect("the embedded config parses");
    // One compile per (architecture, variant), through a cache of this test's own.
    let picks: BTreeMap<(&str, &str), (Arch, &VariantDescription)> = config
        .rules
        .iter()
        .map(|r| ((r.arch.keyword(), &*r.variant.name), (r.arch, &r.variant)))
        .collect();
    assert!(picks.len() >= 10, "the default names {} picks", picks.len());
    let cache = CubinCache::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cubins"));
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = picks
            .values()
            .map(|&(arch, variant)| {
                let cache = &cache;
                scope.spawn(move || match compile_variant(variant, arch, Some(cache)) {
                    Ok(compiled) => {
                        assert!(compiled.compiled.cubin.starts_with(b"\x7fELF"));
                        // The one function's choice: the arch-specific target exactly for wgmma modules.
                        let suffix = if variant.engine.is_wgmma() { "a" } else { "" };
                        assert_eq!(
                            compiled.target,
                            format!("{}{suffix}", arch.keyword()),
                            "{}",
                            variant.name
                        );
                        None
                    }
                    Err(e) => Some(format!("{} on {}: {e}", variant.name, arch.keyword())),
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "default picks that the library cannot compile:\n{}",
        failures.join("\n")
    );
}
