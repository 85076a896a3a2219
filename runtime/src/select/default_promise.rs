//! The embedded default keeps q6_K's promise (docs/DESIGN.md D12 and D13): every variant it can pick reads at most
//! 1.10x the GGUF bytes on the device, in a mode that adds at most 1.5e-4 NMSE on the activation side at 16
//! outlier channels per 4096 (`int_per32`: 1.1e-4; `int12_per256`: 3.1e-6; `int_per256`: 8.2e-4 does not).

use super::*;
use crate::gpu::weights::{device_footprint, gguf_bytes, Layout};

#[test]
fn the_default_selects_only_compact_accurate_variants() {
    let config = Config::embedded(&crate::catalogue::all()).expect("the embedded config parses");
    assert!(!config.rules.is_empty());
    for rule in &config.rules {
        let v = &rule.variant;
        for (m, k) in [(4096, 4096), (14336, 4096), (4096, 14336), (100, 256)] {
            for layout in [Layout::Raw, Layout::Padded] {
                let device = device_footprint([v], m, k, layout);
                assert!(
                    device as f64 <= 1.10 * gguf_bytes(m, k) as f64,
                    "rule {} picks {}: {device} bytes on the device for {m} x {k}, over 1.10x GGUF",
                    rule.name,
                    v.name
                );
            }
        }
    }
    // docs/DESIGN.md D13, measured by the CPU reference (which each mode's kernels match bit for bit), once per mode
    // the config picks.
    let mut modes: Vec<_> = config.rules.iter().map(|rule| rule.variant.mode).collect();
    modes.sort_by_key(|mode| mode.keyword());
    modes.dedup();
    for mode in modes {
        let nmse = crate::reference::default_cap_nmse(mode);
        let pickers: Vec<&str> = config
            .rules
            .iter()
            .filter(|rule| rule.variant.mode == mode)
            .map(|rule| rule.name.as_str())
            .collect();
        assert!(
            nmse <= crate::reference::DEFAULT_ACTIVATION_NMSE_CAP,
            "rules {pickers:?} pick mode {mode}, which adds NMSE {nmse:.2e} at 16 outliers per 4096, over 1.5e-4"
        );
    }
}

#[test]
fn the_accuracy_cap_admits_per32_and_int12_but_not_per256() {
    use mmqgen_codegen::NumericsMode;
    let cap = crate::reference::DEFAULT_ACTIVATION_NMSE_CAP;
    let nmse = crate::reference::default_cap_nmse;
    assert!(nmse(NumericsMode::IntPer32) <= cap);
    assert!(nmse(NumericsMode::Int12Per256) <= cap / 10.0);
    assert!(nmse(NumericsMode::IntPer256) > cap);
}

#[test]
fn an_expanded_variant_costs_what_it_reads() {
    let spread = crate::catalogue::PREFOLDED_SPREAD;
    let (m, k) = (4096, 4096);
    let device = device_footprint([&spread], m, k, Layout::Padded);
    // Padded blocks (224 per 256 weights) + the folded planes (2 bytes per weight) + the int scale plane.
    assert!(device > 2 * m * k);
    assert!(device as f64 > 3.0 * gguf_bytes(m, k) as f64);
}
