//! The TOML loader against the macro: a `[[variant]]` file yields the same description as `variant!`, and
//! a bad file is refused with the same sentence the macro prints at the field. The expected sentence is
//! computed through `from_fields`/`validate` (the code both front ends call), never copied by hand, and is
//! also looked for in the macro's locked diagnostic (`ui/*.stderr`), so the three cannot drift apart.

use mmqgen_codegen::fields::{from_fields, FieldValue};
use mmqgen_codegen::spec_file::{variants_from_toml_str, SpecError};
use mmqgen_codegen::{validate, FieldError, VariantDescription};

const R56: VariantDescription = mmqgen_macros::variant! {
    name: "r56", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64,
    warps_m: 2, warps_n: 2, scale_fetch: plane, expand: uint4,
    cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
};

const MINIMAL: VariantDescription = mmqgen_macros::variant! { name: "minimal" };

#[test]
fn a_valid_file_gives_the_macros_descriptions() {
    let text = r#"
        [[variant]]
        name = "r56"
        engine = "mma_k16"
        mode = "f32_per16"
        kdr = 2
        nbj = 64
        tile_n = 64
        warps_m = 2
        warps_n = 2
        scale_fetch = "plane"
        expand = "uint4"
        cp_async_activations = 16
        cp_async_plane = 16
        stages = 2
        archs = ["sm_80", "sm_90"]

        [[variant]]
        name = "minimal"
    "#;
    let variants = variants_from_toml_str(text).expect("valid file");
    assert_eq!(variants, [R56, MINIMAL]);
}

/// The sentence codegen gives for these fields, as the macro would get it.
fn codegen_sentence(pairs: &[(&str, FieldValue)]) -> FieldError {
    let errors = match from_fields(pairs.iter().map(|(k, v)| (*k, v))) {
        Err(errors) => errors,
        Ok(desc) => validate(&desc).expect_err("the description should be invalid"),
    };
    assert_eq!(errors.len(), 1, "one error expected: {errors:?}");
    errors.into_iter().next().unwrap()
}

fn check(toml: &str, pairs: &[(&str, FieldValue)], macro_stderr: &str) {
    let expected = codegen_sentence(pairs);
    let err = variants_from_toml_str(toml).expect_err("the file should be refused");
    assert!(
        matches!(&err, SpecError::Field { index: 1, error, .. } if *error == expected),
        "{err:?} is not {expected:?}"
    );
    let shown = err.to_string();
    assert!(
        shown.contains(&expected.message),
        "{shown:?} lacks {:?}",
        expected.message
    );
    assert!(
        macro_stderr.contains(&format!("error: {}\n", expected.message)),
        "the macro's diagnostic lacks {:?}:\n{macro_stderr}",
        expected.message
    );
}

fn word(w: &str) -> FieldValue {
    FieldValue::Str(w.to_string())
}

#[test]
fn kdr_3_is_refused_with_the_macros_sentence() {
    check(
        "[[variant]]\nname = \"bad\"\nkdr = 3\n",
        &[("name", word("bad")), ("kdr", FieldValue::Int(3))],
        include_str!("ui/kdr_3.stderr"),
    );
}

#[test]
fn an_unknown_field_is_refused_with_the_macros_sentence() {
    check(
        "[[variant]]\nname = \"bad\"\nwarp_m = 2\n",
        &[("name", word("bad")), ("warp_m", FieldValue::Int(2))],
        include_str!("ui/unknown_field.stderr"),
    );
}

#[test]
fn fold_with_f32_per16_is_refused_with_the_macros_sentence() {
    check(
        "[[variant]]\nname = \"bad\"\nengine = \"mma_k32_fold\"\nmode = \"f32_per16\"\n",
        &[
            ("name", word("bad")),
            ("engine", word("mma_k32_fold")),
            ("mode", word("f32_per16")),
        ],
        include_str!("ui/fold_with_f32_per16.stderr"),
    );
}
