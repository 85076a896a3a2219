//! Each engine's defaults for the fields a declaration leaves out (`mmqgen::codegen::engine::fill_defaults`) never
//! change what a declaration that validated before means: an engine default differs from the global one only where
//! the engine refuses the global one. And they let a declaration write only what it chooses.

use mmqgen::codegen::fields::{from_fields, FieldValue, FIELD_TABLE};
use mmqgen::codegen::{validate, Engine, VariantDescription};

/// `desc` as written fields, less those in `left_out`.
fn written(desc: &VariantDescription, left_out: &[&str]) -> Vec<(&'static str, FieldValue)> {
    FIELD_TABLE
        .iter()
        .filter(|f| f.name == "name" || !left_out.contains(&f.name))
        .map(|f| (f.name, (f.written)(desc)))
        .collect()
}

/// What `pairs` gave before engine defaults: the global defaults for every field left out.
fn with_global_defaults(pairs: &[(&'static str, FieldValue)]) -> VariantDescription {
    let mut desc = VariantDescription::DEFAULTS;
    for (field, value) in pairs {
        mmqgen::codegen::fields::set_field(&mut desc, field, value).unwrap();
    }
    desc
}

#[test]
fn a_declaration_that_validated_before_means_what_it_meant() {
    let names: Vec<&str> = FIELD_TABLE
        .iter()
        .map(|f| f.name)
        .filter(|n| !matches!(*n, "name" | "engine"))
        .collect();
    let mut tried = 0;
    let mut changed = 0;
    for variant in mmqgen::catalogue::all() {
        // Every single field and every pair of fields left out.
        for (i, a) in names.iter().enumerate() {
            for b in &names[i..] {
                let pairs = written(&variant, &[a, b]);
                let before = with_global_defaults(&pairs);
                let refs: Vec<(&str, &FieldValue)> = pairs.iter().map(|(f, v)| (*f, v)).collect();
                let now = from_fields(refs).unwrap();
                tried += 1;
                if now != before {
                    changed += 1;
                    assert!(
                        validate(&before).is_err(),
                        "{} without {a} and {b}: validated with the global defaults, and the engine's \
                         changed it: {before:?} -> {now:?}",
                        variant.name
                    );
                }
            }
        }
    }
    // Some left-out fields do take an engine's default (the test is not vacuous).
    assert!(changed > 100, "{changed} of {tried}");
}

#[test]
fn a_declaration_writes_only_what_it_chooses() {
    // Each engine with nothing but its name (and its architectures) validates: every field it pins has its value.
    for engine in Engine::ALL {
        let pairs = [
            ("name", FieldValue::Str("minimal".into())),
            ("engine", FieldValue::Word(engine.keyword().into())),
        ];
        let desc = from_fields(pairs.iter().map(|(f, v)| (*f, v))).unwrap();
        if let Err(errors) = validate(&desc) {
            panic!("engine {engine} with nothing else written: {}", errors[0]);
        }
    }
}
