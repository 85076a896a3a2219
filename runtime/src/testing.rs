//! The project's rule for tests that need a capability this machine may lack (a GPU, NVRTC, cuobjdump):
//! print a visible `SKIPPED:` line and pass, unless the capability is required (`MMQGEN_REQUIRE_GPU=1`,
//! `MMQGEN_REQUIRE_NVRTC=1`, `MMQGEN_REQUIRE_CUOBJDUMP=1`; CI requires NVRTC and cuobjdump), then fail.
//! Public so that integration tests and user crates follow the same rule.

use std::io::Write;

/// Whether `var` is set to `1`.
pub fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

/// Writes a line straight to stderr: libtest captures `print!`/`eprint!` of passing tests, not direct writes,
/// so the line shows in a plain `cargo test` run.
pub fn visible(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Reports a missing capability: panics when `require_var` says it is required, else prints a visible
/// `SKIPPED:` line.
pub fn skip_or_fail(require_var: &str, test: &str, what: &str) {
    if required(require_var) {
        panic!("{test}: {require_var}=1 but {what}");
    }
    visible(&format!("SKIPPED: {what} ({test})"));
}

/// `true` when NVRTC can be used; otherwise [`skip_or_fail`] with `MMQGEN_REQUIRE_NVRTC`.
pub fn nvrtc_or_skip(test: &str) -> bool {
    if crate::compile::nvrtc_available() {
        return true;
    }
    skip_or_fail(
        "MMQGEN_REQUIRE_NVRTC",
        test,
        "NVRTC not found (source .ci/env.sh)",
    );
    false
}

/// `true` when cuobjdump is on PATH; otherwise [`skip_or_fail`] with `MMQGEN_REQUIRE_CUOBJDUMP`.
pub fn cuobjdump_or_skip(test: &str) -> bool {
    match crate::compile::find_cuobjdump() {
        Ok(Some(_)) => true,
        Ok(None) => {
            skip_or_fail(
                "MMQGEN_REQUIRE_CUOBJDUMP",
                test,
                "cuobjdump not found (put it on PATH, see .ci/env.sh)",
            );
            false
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

/// GPU 0, or `None` after [`skip_or_fail`] with `MMQGEN_REQUIRE_GPU`.
pub fn gpu_or_skip(test: &str) -> Option<crate::gpu::device::Gpu> {
    match crate::gpu::device::Gpu::open(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            skip_or_fail("MMQGEN_REQUIRE_GPU", test, &format!("no CUDA GPU: {e}"));
            None
        }
    }
}
