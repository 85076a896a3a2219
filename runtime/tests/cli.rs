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
fn list_marks_the_variants_the_embedded_default_picks() {
    let output = mmqgen(&["list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let all = mmqgen::catalogue::all();
    let config = mmqgen::select::Config::embedded(&all).unwrap();
    let picked: Vec<&str> = config
        .rules
        .iter()
        .map(|r| r.variant.name.as_ref())
        .collect();
    let text = stdout(&output);
    // The mark is the word before the canonical name (the architectures hold spaces).
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header[header.len() - 2..], ["default", "canonical"]);
    for variant in &all {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{} ", variant.name)))
            .unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let mark = words[words.len() - 2];
        let expected = if picked.contains(&variant.name.as_ref()) {
            "yes"
        } else {
            "-"
        };
        assert_eq!(mark, expected, "{line}");
    }
    assert!(picked.contains(&"wgmma_i12_128x96_tail_producer") && !picked.contains(&"r41"));
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
    let out = stdout(&explain);
    // What the pick costs (docs/DESIGN.md D12) and what error its mode adds (docs/DESIGN.md D13), both within the caps.
    assert!(
        out.contains("footprint: ") && out.contains("1.07x the GGUF"),
        "{out}"
    );
    assert!(
        out.contains("accuracy: mode ") && out.contains("1.5e-4: within)"),
        "{out}"
    );
}

#[test]
fn list_shows_what_a_sweep_expands_to() {
    let file = scratch("sweep.toml");
    std::fs::write(
        &file,
        "[[sweep]]\nname = \"sw\"\nengine = \"mma_k16\"\nstages = [1, 2]\ncp_async_activations = [\"off\", 16]\n\
         archs = [[\"sm_90\"], [\"sm_80\", \"sm_90\"]]\n",
    )
    .unwrap();
    let output = mmqgen(&["--variants", file.to_str().unwrap(), "list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    // 2 x 2 x 2 = 8: stages 2 without cp.async is refused (2 points); the two architecture sets render alike,
    // and a point declared for [sm_80, sm_90] cannot be stood for by one declared for [sm_90] (it would never be
    // compiled for sm_80): refused with a sentence (3 points).
    assert!(
        out.contains(
            "sweep sw: 3 point(s) of a product of 8 (5 refused, 0 render like another point)"
        ),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("sw_cpaoff_s1_sm90 ")),
        "{out}"
    );
    assert!(
        out.contains("  refused:   sw_cpaoff_s2_sm90: stages: "),
        "{out}"
    );
    assert!(
        out.contains(
            "  refused:   sw_cpaoff_s1_sm80sm90: it renders like sw_cpaoff_s1_sm90 (the same kernel) but is \
             declared for [sm_80, sm_90] and sw_cpaoff_s1_sm90 for [sm_90]"
        ),
        "{out}"
    );

    // The shipped example sweeps the regfold engine's knobs: at least 100 valid points.
    let output = mmqgen(&[
        "--variants",
        repo("examples/sweeps/regfold.toml").to_str().unwrap(),
        "list",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    let summary = out
        .lines()
        .find(|l| l.starts_with("sweep rf: "))
        .unwrap_or_else(|| panic!("no sweep summary in {out}"));
    let points: usize = summary["sweep rf: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(points >= 100, "{summary}");

    // A sweep that cannot be expanded is one sentence naming it.
    std::fs::write(&file, "[[sweep]]\nname = \"sw\"\nstages = []\n").unwrap();
    let output = mmqgen(&["--variants", file.to_str().unwrap(), "list"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("sweep #1 (sw): field `stages` has an empty list"),
        "{}",
        stderr(&output)
    );
}

/// `mmqgen ... | head` closes stdout early: the command ends quietly (SIGPIPE's shell status), no panic report.
#[test]
fn a_reader_that_stops_early_gets_no_panic() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let sweep = repo("examples/sweeps/regfold.toml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmqgen"))
        .arg("--variants")
        .arg(&sweep)
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mmqgen binary runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_line(&mut first)
        .expect("one line");
    assert!(first.starts_with("name "), "{first}");
    // The reader is dropped here: the rest of the listing (hundreds of lines) meets a closed pipe.
    let output = child.wait_with_output().expect("mmqgen ends");
    let err = stderr(&output);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        output.status.success() || output.status.code() == Some(141),
        "{:?}: {err}",
        output.status
    );
}

#[test]
fn check_writes_each_modules_sass_for_diffing() {
    if !mmqgen::testing::nvrtc_or_skip("check_writes_each_modules_sass_for_diffing")
        || !mmqgen::testing::cuobjdump_or_skip("check_writes_each_modules_sass_for_diffing")
    {
        return;
    }
    let dir = scratch("sass");
    let output = mmqgen(&[
        "check",
        "--arch",
        "sm_90",
        "--variant",
        "ring_t1",
        "--sass-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let sass = std::fs::read_to_string(dir.join("ring_t1.sm_90.sass")).unwrap();
    // Both entry points, whole: a diff of two of these files is a SASS diff of two descriptions.
    assert!(sass.contains("_raw") && sass.contains("_padded"), "{sass}");
    assert!(sass.lines().filter(|l| l.contains("EXIT")).count() >= 2);
    let refused = mmqgen(&["check", "--no-sass", "--sass-dir", dir.to_str().unwrap()]);
    assert!(!refused.status.success());
}

/// `explain --address` shows what the library picks for raw weights at that address: a view two bytes into a buffer
/// passes over the rings, whose tensor copies cannot reach it, saying so; an aligned one gets `select`'s pick; bad
/// input is one sentence.
#[test]
fn explain_shows_the_pick_for_raw_weights_at_an_address() {
    let shape = [
        "explain", "--arch", "sm_90", "--m", "4096", "--n", "1", "--k", "4096",
    ];
    let at = |extra: &[&str]| mmqgen(&[&shape[..], extra].concat());
    let view = at(&["--layout", "raw", "--address", "0x7f0000000102", "--all"]);
    assert!(view.status.success(), "{}", stderr(&view));
    let text = stdout(&view);
    assert!(text.contains("variant stream_t1 "), "{text}");
    assert!(
        text.contains(
            "ring_t1_fused reads raw blocks by tensor copies, which do not reach them at 0x7f0000000102"
        ),
        "{text}"
    );
    let aligned = stdout(&at(&["--layout", "raw", "--address", "139637976727808"]));
    assert!(aligned.contains("variant ring_t1_fused "), "{aligned}");
    let padded = at(&["--address", "0x10"]);
    assert!(!padded.status.success());
    assert!(
        stderr(&padded).contains("--address applies to raw weights"),
        "{}",
        stderr(&padded)
    );
    let bad = at(&["--layout", "raw", "--address", "0xzz"]);
    assert!(!bad.status.success());
    assert_eq!(
        stderr(&bad).trim(),
        "mmqgen: --address '0xzz' is not an address: give a 64-bit device address in hex (0x7f0000000102) or decimal"
    );
}
