//! Bad input gets a sentence, never a panic: every numeric field of every declared variant set to an absurd value
//! (0, a huge count, the largest u32) goes through the validator, and whatever it accepts through the naming, the
//! shared-memory layout and the renderer. Tests build with overflow checks, so an unchecked product of two such
//! fields (one was found in `threads()` on 2026-12-02) fails here instead of wrapping silently in a release build.

use mmqgen::codegen::fields::{set_field, FieldKind, FieldValue, FIELD_TABLE};
use mmqgen::codegen::render::render;
use mmqgen::codegen::{canonical_name, shared_layout, validate};

/// The description's integer fields (counts and unrolls), from the field table: a new one is covered by itself.
fn count_fields() -> Vec<&'static str> {
    FIELD_TABLE
        .iter()
        .filter(|f| matches!(f.kind, FieldKind::Count | FieldKind::Unroll))
        .map(|f| f.name)
        .collect()
}

const ABSURD_VALUES: [i64; 6] = [0, 3, 65_535, 1 << 31, u32::MAX as i64, u32::MAX as i64 + 1];

#[test]
fn absurd_counts_are_refused_or_handled_without_overflow() {
    let fields = count_fields();
    assert_eq!(fields.len(), 16, "the integer fields: {fields:?}");
    let mut refused = 0;
    let mut tried = 0;
    for variant in mmqgen::catalogue::all() {
        for &field in &fields {
            for value in ABSURD_VALUES {
                let mut desc = variant.clone();
                // A value the field cannot hold is refused by set_field itself, with its sentence.
                if set_field(&mut desc, field, &FieldValue::Int(value)).is_err() {
                    refused += 1;
                    continue;
                }
                tried += 1;
                match validate(&desc) {
                    Err(errors) => {
                        assert!(
                            errors.iter().all(|e| !e.to_string().is_empty()),
                            "{} with {field} = {value}: a refusal without a sentence",
                            variant.name
                        );
                        refused += 1;
                    }
                    Ok(()) => {
                        // Accepted: it names, lays out and renders like any declared variant.
                        let _ = canonical_name(&desc);
                        let _ = shared_layout(&desc);
                        render(&desc).unwrap_or_else(|e| {
                            panic!(
                                "{} with {field} = {value} validated but did not render: {e}",
                                variant.name
                            )
                        });
                    }
                }
            }
        }
    }
    assert!(tried > 0 && refused > 0, "tried {tried}, refused {refused}");
}

#[test]
fn two_absurd_counts_together_are_refused_without_overflow() {
    // Products of two fields (warps_m x warps_k, nbj x stages, ...) are where an unchecked multiply overflows.
    let fields = count_fields();
    for variant in mmqgen::catalogue::all() {
        for (i, first) in fields.iter().enumerate() {
            for second in &fields[i + 1..] {
                for value in [65_535, u32::MAX as i64] {
                    let mut desc = variant.clone();
                    let set = set_field(&mut desc, first, &FieldValue::Int(value))
                        .and_then(|()| set_field(&mut desc, second, &FieldValue::Int(value)));
                    assert!(set.is_ok(), "{first} and {second} hold {value}");
                    assert!(
                        validate(&desc).is_err(),
                        "{} with {first} = {second} = {value} was accepted",
                        variant.name
                    );
                }
            }
        }
    }
}
