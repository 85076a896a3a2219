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

fn sweep_file() -> PathBuf {
    let file = scratch("sweep.toml");
    // Two points compile for sm_90 (stages 2 without cp.async is refused); a variant declared for sm_80 only.
    std::fs::write(
        &file,
        "[[sweep]]\nname = \"sw\"\nengine = \"mma_k16\"\nstages = [1, 2]\ntile_n = [32, 64]\n\n\
         [[variant]]\nname = \"only80\"\nengine = \"mma_k16\"\ntile_n = 48\narchs = [\"sm_80\"]\n",
    )
    .unwrap();
    file
}

#[test]
fn a_sweep_is_checked_before_the_gpu() {
    let file = sweep_file();
    let file = file.to_str().unwrap();
    let line = one_sentence(&mmqgen(&["--variants", file, "tune", "--sweep", "nope"]));
    assert!(line.contains("no sweep named 'nope'"), "{line}");
    assert!(line.contains("they declare sw"), "{line}");
    if mmqgen::device::Gpu::open(0).is_err() {
        let out = scratch("sweep-tuned.toml");
        let line = one_sentence(&mmqgen(&[
            "--variants",
            file,
            "tune",
            "--shape",
            "4096,512,4096",
            "--output",
            out.to_str().unwrap(),
        ]));
        assert!(line.contains("mmqgen: tune needs a GPU"), "{line}");
        assert!(!out.exists());
    }
    // --shape replaces --tokens/--m/--k.
    assert!(
        !mmqgen(&["tune", "--shape", "4096,512,4096", "--tokens", "8"])
            .status
            .success()
    );
}

/// The CPU half alone: every point compiled in parallel, the one not declared for sm_90 dropped with its
/// sentence, the ranking written as JSON lines and markdown; no GPU is touched.
#[test]
fn compile_only_runs_the_cpu_half_and_writes_the_ranking() {
    if !mmqgen::testing::nvrtc_or_skip("compile_only_runs_the_cpu_half_and_writes_the_ranking") {
        return;
    }
    let file = sweep_file();
    let prefix = scratch("ranking");
    let output = mmqgen(&[
        "--variants",
        file.to_str().unwrap(),
        "tune",
        "--compile-only",
        "--sweep",
        "sw",
        "--variant",
        "only80",
        "--jobs",
        "2",
        "--ranking",
        prefix.to_str().unwrap(),
    ]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        err.contains("tune: compiling 3 candidate(s) for sm_90 on 2 thread(s)"),
        "{err}"
    );
    assert!(err.contains("compile [3/3]"), "{err}");
    // Each drop is said once, with its reason, as it happens (issue 53: they were said twice).
    assert_eq!(
        err.matches("only80: dropped: declared for [sm_80], not sm_90")
            .count(),
        1,
        "{err}"
    );
    assert!(!out.contains("only80"), "{out}");
    assert!(
        out.contains("2 of 3 candidate(s) compiled cleanly for sm_90, 1 dropped"),
        "{out}"
    );
    let jsonl = std::fs::read_to_string(prefix.with_extension("jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3, "{jsonl}");
    assert_eq!(rows[0]["stage"], "compiled");
    assert!(rows[0]["registers"].as_u64().unwrap() > 0, "{jsonl}");
    assert_eq!(rows[2]["stage"], "dropped at compile");
    assert_eq!(rows[0]["variant"], "sw_t32_s1");
    let md = std::fs::read_to_string(prefix.with_extension("md")).unwrap();
    assert!(
        md.contains("| only80 | dropped at compile | declared for [sm_80], not sm_90"),
        "{md}"
    );
}
