//! The `mmqgen` binary as a user runs it: every subcommand that needs no GPU, its output and its sentences.

use std::path::PathBuf;
use std::process::{Command, Output};

fn mmqgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmqgen"))
        .args(args)
        .output()
        .expect("the mmqgen binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmqgen-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn list_names_every_declared_variant_with_its_canonical_name() {
    let output = mmqgen(&["list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    for variant in mmqgen::catalogue::all() {
        let line = stdout(&output)
            .lines()
            .find(|l| l.starts_with(&format!("{} ", variant.name)))
            .unwrap_or_else(|| panic!("{} is not listed", variant.name))
            .to_string();
        assert!(
            line.ends_with(&mmqgen::codegen::canonical_name(&variant)),
            "{line}"
        );
    }
}

#[test]
fn emit_prints_the_source_by_either_name_and_refuses_unknown_names() {
    let by_name = mmqgen(&["emit", "r56"]);
    assert!(by_name.status.success());
    let canonical = mmqgen::codegen::canonical_name(&mmqgen::catalogue::R56);
    let by_canonical = mmqgen(&["emit", &canonical]);
    assert_eq!(stdout(&by_name), stdout(&by_canonical));
    assert!(stdout(&by_name).contains(&format!("{canonical}_padded(")));

    let unknown = mmqgen(&["emit", "r99"]);
    assert!(!unknown.status.success());
    let message = stderr(&unknown);
    assert!(
        message.starts_with("mmqgen: no variant named 'r99': known variants are"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "one sentence: {message}");
}

#[test]
fn q6k_dequantize_matches_the_gguf_package_bit_for_bit() {
    // random_blocks.q6k and its dequantization were written by the PyPI `gguf` package (formats/tests/fixtures).
    let out = scratch("random.f32");
    let output = mmqgen(&[
        "q6k",
        "dequantize",
        "--input",
        repo("formats/tests/fixtures/random_blocks.q6k")
            .to_str()
            .unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let ours = std::fs::read(&out).unwrap();
    let theirs = std::fs::read(repo("formats/tests/fixtures/random_blocks_dequant.f32")).unwrap();
    assert_eq!(ours.len(), theirs.len());
    assert!(
        ours == theirs,
        "dequantization differs from the gguf package"
    );
}

#[test]
fn q6k_quantize_reproduces_ggml_and_refuses_bad_input() {
    let fixtures = repo("formats/tests/fixtures/q6k-ggml-ref");
    assert!(
        fixtures.exists(),
        "the ggml fixtures are missing at {}",
        fixtures.display()
    );
    let out = scratch("ggml.q6k");
    let output = mmqgen(&[
        "q6k",
        "quantize",
        "--input",
        fixtures.join("input.f32").to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(fixtures.join("ggml.q6k")).unwrap());

    let short = scratch("short.f32");
    std::fs::write(&short, [0u8; 12]).unwrap();
    let refused = mmqgen(&[
        "q6k",
        "quantize",
        "--input",
        short.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("multiple of 256"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn gguf_ls_lists_a_file_written_by_the_gguf_package() {
    let output = mmqgen(&[
        "gguf",
        "ls",
        repo("formats/tests/fixtures/small_q6k.gguf")
            .to_str()
            .unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("Q6_K"), "{text}");
    assert!(text.contains("bytes"), "{text}");

    let garbage = scratch("garbage.gguf");
    std::fs::write(&garbage, b"NOTGGUF-------------------------").unwrap();
    let refused = mmqgen(&["gguf", "ls", garbage.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("magic"), "{}", stderr(&refused));
}

#[test]
fn a_variant_file_is_validated_with_the_macro_sentences() {
    let file = scratch("bad.toml");
    std::fs::write(&file, "[[variant]]\nname = \"x\"\nkdr = 3\n").unwrap();
    let output = mmqgen(&["--variants", file.to_str().unwrap(), "list"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("kdr must divide 8"),
        "{}",
        stderr(&output)
    );

    std::fs::write(
        &file,
        "[[variant]]\nname = \"mine\"\nengine = \"mma_k16\"\n",
    )
    .unwrap();
    let output = mmqgen(&["--variants", file.to_str().unwrap(), "emit", "mine"]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn the_embedded_config_checks_clean_and_explains_a_shape() {
    let check = mmqgen(&["config", "check"]);
    assert!(
        check.status.success(),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    let explain = mmqgen(&[
        "explain", "--arch", "sm_90", "--m", "4096", "--n", "512", "--k", "14336",
    ]);
    assert!(explain.status.success(), "{}", stderr(&explain));
    assert!(!stdout(&explain).is_empty());
}
