//! `mmqgen tune` as a user runs it without a GPU: arguments are checked first, then one sentence says a GPU
//! is needed, with a non-zero exit and no config written. (The measurements -> rules -> TOML part is unit
//! tested in `runtime/src/cli/tune.rs`.)

use std::path::PathBuf;
use std::process::{Command, Output};

fn mmqgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmqgen"))
        .args(args)
        .output()
        .expect("the mmqgen binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmqgen-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// One `mmqgen: ...` line on stderr.
fn one_sentence(output: &Output) -> String {
    assert!(!output.status.success(), "expected a failure");
    let err = stderr(output);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("tune: WARNING"))
        .collect();
    assert_eq!(lines.len(), 1, "not one sentence: {err}");
    assert!(lines[0].starts_with("mmqgen: "), "{err}");
    lines[0].to_string()
}

#[test]
fn without_a_gpu_tune_says_it_needs_one_and_writes_nothing() {
    if mmqgen::device::Gpu::open(0).is_ok() {
        eprintln!("skipped: this machine has a GPU, and tune would run");
        return;
    }
    let out = scratch("tuned.toml");
    let output = mmqgen(&["tune", "--tokens", "1", "--output", out.to_str().unwrap()]);
    let line = one_sentence(&output);
    assert!(line.contains("mmqgen: tune needs a GPU"), "{line}");
    assert!(!out.exists(), "a config was written without measurements");
}

#[test]
fn arguments_are_checked_before_the_gpu() {
    let line = one_sentence(&mmqgen(&["tune", "--variant", "nope"]));
    assert!(line.contains("no variant named 'nope'"), "{line}");
    let line = one_sentence(&mmqgen(&["tune", "--k", "300"]));
    assert!(line.contains("256"), "{line}");
    let missing = scratch("no-such-folder").join("tuned.toml");
    let line = one_sentence(&mmqgen(&["tune", "--output", missing.to_str().unwrap()]));
    assert!(line.contains("does not exist"), "{line}");
    // clap's own refusals.
    assert!(!mmqgen(&["tune", "--tokens", "0"]).status.success());
    assert!(!mmqgen(&["tune", "--repeats", "0"]).status.success());
}
