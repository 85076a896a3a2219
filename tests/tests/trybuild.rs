//! The `variant!` diagnostics, locked: each `ui/*.rs` is one invalid description and its `.stderr` the exact
//! sentence and caret a user sees; `ui_pass/*.rs` must build and run. Regenerate after an intended change
//! with `TRYBUILD=overwrite cargo test -p mmqgen-tests --test trybuild`, then read every changed `.stderr`.
//!
//! trybuild builds this crate's dependencies a second time, so the UI files use only `mmqgen_macros` and
//! `mmqgen_codegen`, never the runtime or cudarc (DECISIONS.md 9). The pinned toolchain keeps the
//! rustc output stable.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui_pass/*.rs");
}
