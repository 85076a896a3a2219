//! The embedded default keeps q6_K's promise (DECISIONS.md 12 and 13): every variant it can pick reads at most
//! 1.10x the GGUF bytes on the device and quantizes activations per 32.

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
        assert_eq!(
            v.mode.activation_group(),
            32,
            "rule {} picks {} with activation groups of {}",
            rule.name,
            v.name,
            v.mode.activation_group()
        );
    }
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
