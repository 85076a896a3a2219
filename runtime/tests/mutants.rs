//! Parity catches every deliberate mutant on the GPU, through the same path as `mmqgen parity --mutants`: each
//! mutant's base variant runs its case unmutated (and must pass), then the mutant runs in its own `mmqgen`
//! process with `--mutant NAME`, and the row must show wrong or unwritten outputs or a kernel fault.
//!
//! Without a GPU this prints `SKIPPED: no CUDA GPU (mutants_are_caught)` and passes, unless
//! `MMQGEN_REQUIRE_GPU=1`. `MMQGEN_PARITY_BIN` names another `mmqgen` binary to run the cases with (for a test
//! binary carried to a GPU machine without the build tree).

use std::path::PathBuf;
use std::time::Duration;

use mmqgen::check::mutants::Verdict;
use mmqgen::cli::parity::{mutant_summary, render_mutant_table, run_mutants, ChildCommand};

use mmqgen::testing::{nvrtc_or_skip, required, visible};

#[test]
fn mutants_are_caught() {
    let Some(gpu) = mmqgen::testing::gpu_or_skip("mutants_are_caught") else {
        return;
    };
    // With a GPU here, a missing NVRTC is a set-up error whenever the GPU was required.
    assert!(
        mmqgen::compile::nvrtc_available() || !required("MMQGEN_REQUIRE_GPU"),
        "mutants_are_caught: a GPU is here but NVRTC is not installed (source .ci/env.sh)"
    );
    if !nvrtc_or_skip("mutants_are_caught") {
        return;
    }
    let catalogue = mmqgen::catalogue::all();
    // The mutants whose base variant does not target this GPU may be skipped; no other.
    let may_skip: Vec<&str> = mmqgen::check::mutants::all()
        .iter()
        .filter(|m| {
            m.base(&catalogue)
                .is_ok_and(|d| gpu.check_variant_arch(d).is_err())
        })
        .map(|m| m.name)
        .collect();
    // The cases run in child processes; this one holds no context while they do.
    drop(gpu);

    let program = std::env::var_os("MMQGEN_PARITY_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mmqgen")));
    let child = ChildCommand {
        program,
        prefix: vec!["parity".into()],
    };
    let outcomes = run_mutants(
        &catalogue,
        &child,
        1,
        0,
        Duration::from_secs(600),
        |i, o| {
            visible(&format!(
                "[{}/{}] {}: {}",
                i + 1,
                mmqgen::check::mutants::all().len(),
                o.mutant.name,
                o.verdict
            ))
        },
    );
    let report = format!(
        "{}{}",
        render_mutant_table(&outcomes),
        mutant_summary(&outcomes)
    );
    visible(&report);
    assert_eq!(outcomes.len(), mmqgen::check::mutants::all().len());
    for o in &outcomes {
        let ok = o.verdict.is_caught()
            || (matches!(o.verdict, Verdict::Skipped { .. }) && may_skip.contains(&o.mutant.name));
        assert!(
            ok,
            "mutant {} was not caught ({}):\n{report}",
            o.mutant.name, o.verdict
        );
    }
}
