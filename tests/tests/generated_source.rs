//! The generated CUDA is code people review: every declared variant's source is an insta snapshot (keyed by
//! the declared name, recording the canonical one), so any change to templates or descriptions shows up as a
//! diff in review and fails CI until accepted.

use mmqgen::codegen::render::render;

#[test]
fn every_declared_variant_matches_its_snapshot() {
    for variant in mmqgen::catalogue::all() {
        let rendered = render(&variant).expect("declared variants render");
        insta::with_settings!({
            description => format!("{} = {}", variant.name, rendered.canonical),
            omit_expression => true,
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(format!("source_{}", variant.name), rendered.source);
        });
    }
}
