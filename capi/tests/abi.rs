//! The C ABI as a C program sees it, in CI without a GPU: `tests/c/abi_errors.c` is compiled against
//! `include/mmqgen.h` (`-Wall -Wextra -Werror`) and linked to the `libmmqgen.so` cargo built for this test, then
//! run; and the header declares exactly the functions the library exports.
//!
//! A C compiler (`cc`) is required where `MMQGEN_REQUIRE_CC=1` (CI); elsewhere its absence is a visible SKIPPED
//! line.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `libmmqgen.so` is for this test: the profile folder above this test binary's `deps/`. Cargo does not build
/// a cdylib for its package's integration tests, so the test builds it there (with the cargo that runs it, in the
/// same profile) when it is missing or older than the test.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf();
    let library = dir.join("libmmqgen.so");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&library) < modified(&exe) {
        let release = dir.file_name().is_some_and(|name| name == "release");
        let target_dir = dir.parent().expect("target/<profile>");
        let status = Command::new(env!("CARGO"))
            .args(["build", "--locked", "-p", "mmqgen-capi"])
            .args(release.then_some("--release"))
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(crate_dir())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p mmqgen-capi failed");
    }
    assert!(
        library.is_file(),
        "libmmqgen.so is not in {}",
        dir.display()
    );
    dir
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cc_or_skip(test: &str) -> bool {
    if Command::new("cc").arg("--version").output().is_ok() {
        return true;
    }
    mmqgen_runtime::testing::skip_or_fail("MMQGEN_REQUIRE_CC", test, "no C compiler (cc) on PATH");
    false
}

#[test]
fn a_c_program_meets_every_refusal_with_a_code_and_a_sentence() {
    if !cc_or_skip("a_c_program_meets_every_refusal_with_a_code_and_a_sentence") {
        return;
    }
    let lib = library_dir();
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi-abi-errors");
    std::fs::create_dir_all(&scratch).unwrap();
    let program = scratch.join("abi_errors");
    let compiled = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread", "-o"])
        .arg(&program)
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("tests/c/abi_errors.c"))
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lmmqgen")
        .output()
        .expect("cc runs");
    assert!(
        compiled.status.success(),
        "the C test does not compile against mmqgen.h:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    // No cache folder is needed to be refused, but give the library one of its own rather than $HOME's.
    let run = Command::new(&program)
        .arg(&scratch)
        .env("MMQGEN_CACHE_DIR", scratch.join("cache"))
        .output()
        .expect("the C test runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    mmqgen_runtime::testing::visible(&stdout);
    assert!(
        run.status.success(),
        "the C test failed ({}):\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("all checks passed"), "{stdout}");
}

/// `mmqgen_*` function names declared in the header.
fn declared() -> Vec<String> {
    let header = std::fs::read_to_string(crate_dir().join("include/mmqgen.h")).unwrap();
    let mut names: Vec<String> = header
        .lines()
        .filter(|l| !l.trim_start().starts_with('*') && !l.trim_start().starts_with("/*"))
        .filter_map(|l| {
            let open = l.find('(')?;
            let name = l[..open].rsplit([' ', '*']).next()?;
            name.starts_with("mmqgen_").then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `mmqgen_*` functions the library exports (its dynamic symbol table, read with `nm -D`).
fn exported(lib: &Path) -> Option<Vec<String>> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .ok()?;
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut fields = l.split_whitespace().rev();
            let name = fields.next()?;
            let kind = fields.next()?;
            (kind == "T" && name.starts_with("mmqgen_")).then(|| name.to_string())
        })
        .collect();
    names.sort();
    Some(names)
}

#[test]
fn the_header_declares_exactly_the_exported_functions() {
    let lib = library_dir().join("libmmqgen.so");
    let Some(exports) = exported(&lib) else {
        mmqgen_runtime::testing::skip_or_fail(
            "MMQGEN_REQUIRE_CC",
            "the_header_declares_exactly_the_exported_functions",
            "no nm on PATH",
        );
        return;
    };
    let declared = declared();
    assert_eq!(declared, exports, "mmqgen.h and libmmqgen.so disagree");
    assert!(declared.contains(&"mmqgen_q6k_matmul".to_string()));
    assert!(declared.len() >= 7, "{declared:?}");
}
