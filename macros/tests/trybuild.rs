//! The `variant!` and `sweep!` diagnostics, locked: each `ui/*.rs` is one invalid description and its `.stderr` the exact
//! sentence and caret a user sees; `ui_pass/*.rs` must build and run. Regenerate after an intended change
//! with `TRYBUILD=overwrite cargo test -p mmqgen-macros --test trybuild`, then read every changed `.stderr`.
//!
//! They live in the macro crate because trybuild builds the crate's dependencies (dev ones too) a second
//! time: here that is only `mmqgen_codegen` without rendering, never the runtime or cudarc (docs/DESIGN.md D9).
//! The pinned toolchain keeps the rustc output stable.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui_pass/*.rs");
}
