//! The tests of `mmqgen parity`: arguments, children, tables and mutant runs (with stand-in children).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mmqgen_codegen::{canonical_name, VariantDescription};

use super::args::{ChildCommand, LayoutChoice, ParityArgs, ParityCliError, DEFAULT_GGUF_TOKENS};
use super::child::{
    child_args, failed_row, last_line, read_f32_file, row_from_stdout, run_child_process,
    write_f32_file, ChildSpec,
};
use super::mutants::{mutant_progress_line, mutant_summary, render_mutant_table, run_mutants};
use super::report::render_table;
use super::{find_variant, run, select_variants};
use crate::check::mutants::Verdict;
use crate::check::{GgufTensorRef, ParityCase, ParityRow, Shape, Status};
use crate::gpu::weights::Layout;

fn parse(args: &[&str]) -> Result<ParityArgs, String> {
    crate::cli::parse_args::<ParityArgs>(std::iter::once("parity").chain(args.iter().copied()))
        .map_err(|e| e.to_string())
}

/// A child's command line as strings, and what `parity` parses from it.
fn child_command_line(spec: &ChildSpec) -> (Vec<String>, ParityArgs) {
    let strings: Vec<String> = child_args(spec)
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let refs: Vec<&str> = strings.iter().map(String::as_str).collect();
    let parsed = parse(&refs).unwrap();
    (strings, parsed)
}

fn catalogue() -> Vec<VariantDescription> {
    ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, n)| VariantDescription {
            name: (*n).into(),
            nbj: 32 << i,
            ..VariantDescription::DEFAULTS
        })
        .collect()
}

#[test]
fn arguments_parse() {
    let a = parse(&[]).unwrap();
    assert!(a.variant.is_empty() && a.shapes.is_empty());
    assert_eq!(a.layout, LayoutChoice::Both);
    assert_eq!(a.seed, 1);
    let a = parse(&[
        "--variant",
        "a",
        "--variant",
        "b",
        "--shape",
        "64,1,256",
        "--layout",
        "raw",
        "--seed",
        "9",
    ])
    .unwrap();
    assert_eq!(a.variant, ["a", "b"]);
    assert_eq!(a.shapes, [Shape::new(64, 1, 256)]);
    assert_eq!(a.layout.layouts(), [Layout::Raw]);
    assert_eq!(a.seed, 9);
    let e = parse(&["--shape", "64,1,250"]).unwrap_err();
    assert!(
        e.contains("shape '64,1,250' cannot be run: K = 250 is not a multiple of 256"),
        "{e}"
    );
    assert!(parse(&["--layout", "diagonal"]).is_err());
    // Child-only flags need --child.
    assert!(parse(&["--save-output", "x"]).is_err());
    assert!(parse(&["--child", "a", "--save-output", "x"]).is_ok());
    assert!(parse(&["--mutant", "off_by_one_token_edge"]).is_err());
    let a = parse(&["--child", "a", "--mutant", "off_by_one_token_edge"]).unwrap();
    assert_eq!(a.mutant.as_deref(), Some("off_by_one_token_edge"));
    assert!(!a.mutants);
    // --mutants picks its own variants, shapes and layouts; seed, JSON, GPU and timeout still apply.
    let a = parse(&[
        "--mutants",
        "--seed",
        "4",
        "--json",
        "m.json",
        "--timeout",
        "60",
    ])
    .unwrap();
    assert!(a.mutants && a.child.is_none());
    assert_eq!(a.layout, LayoutChoice::Both);
    for clash in [
        &["--mutants", "--variant", "r41"][..],
        &["--mutants", "--shape", "64,1,256"],
        &["--mutants", "--layout", "raw"],
        &["--mutants", "--child", "r41"],
    ] {
        let e = parse(clash).unwrap_err();
        assert!(e.contains("cannot be used with"), "{clash:?}: {e}");
    }
}

#[test]
fn variants_are_found_by_declared_or_canonical_name() {
    let cat = catalogue();
    assert_eq!(find_variant(&cat, "b").unwrap().name, "b");
    let canonical = canonical_name(&cat[2]);
    assert_eq!(find_variant(&cat, &canonical).unwrap().name, "c");
    assert_eq!(
        find_variant(&cat, "x").unwrap_err().to_string(),
        "no variant named 'x': known variants are a, b, c"
    );
    assert_eq!(
        find_variant(&[], "x").unwrap_err().to_string(),
        "no variant named 'x': known variants are none"
    );
    let names: Vec<String> = select_variants(&cat, &["c".into(), canonical, "a".into()])
        .unwrap()
        .iter()
        .map(|d| d.name.to_string())
        .collect();
    assert_eq!(names, ["c", "a"]);
    assert_eq!(select_variants(&cat, &[]).unwrap().len(), 3);
    assert!(matches!(
        select_variants(&[], &[]),
        Err(ParityCliError::EmptyCatalogue)
    ));
}

#[test]
fn child_arguments_parse_back() {
    let cat = catalogue();
    let cache = PathBuf::from("/tmp/c");
    let proven = ("a (raw)".to_string(), PathBuf::from("/tmp/p.f32"));
    let spec = ChildSpec {
        desc: &cat[1],
        case: ParityCase {
            shape: Shape::new(4097, 513, 4096),
            layout: Layout::Padded,
            seed: 5,
            mutant: None,
        },
        gguf: None,
        gpu: 0,
        proven: Some(&proven),
        save: None,
        cubin_cache: Some(&cache),
        timeout: Duration::from_secs(1),
    };
    let (_, a) = child_command_line(&spec);
    assert_eq!(a.child.as_deref(), Some("b"));
    assert_eq!(a.shapes, [Shape::new(4097, 513, 4096)]);
    assert_eq!(a.layout, LayoutChoice::Padded);
    assert_eq!(a.seed, 5);
    assert_eq!(a.proven, Some(PathBuf::from("/tmp/p.f32")));
    assert_eq!(a.proven_variant.as_deref(), Some("a (raw)"));
    assert_eq!(a.cubin_cache, Some(cache));
    assert_eq!(a.mutant, None);

    // A mutant's child gets --mutant and no cubin cache.
    let m = crate::check::mutants::find("off_by_one_token_edge").unwrap();
    let spec = ChildSpec {
        desc: &cat[0],
        case: m.case(2),
        gguf: None,
        gpu: 1,
        proven: None,
        save: None,
        cubin_cache: None,
        timeout: Duration::from_secs(1),
    };
    let (strings, a) = child_command_line(&spec);
    assert!(!strings.iter().any(|s| s == "--cubin-cache"), "{strings:?}");
    assert_eq!(a.mutant.as_deref(), Some("off_by_one_token_edge"));
    assert_eq!(a.shapes, [m.shape]);
    assert_eq!(a.layout, LayoutChoice::Raw);
    assert_eq!((a.seed, a.gpu, a.cubin_cache), (2, 1, None));
}

#[test]
fn child_output_is_read_back() {
    let cat = catalogue();
    let case = ParityCase {
        shape: Shape::new(64, 1, 256),
        layout: Layout::Raw,
        seed: 1,
        mutant: None,
    };
    let mut row = ParityRow::new(&cat[0], &case);
    row.status = Status::Pass;
    let stdout = format!("some noise\n{}\n", row.encode());
    assert_eq!(row_from_stdout(&stdout), Some(Ok(row)));
    assert_eq!(row_from_stdout("nothing here\n"), None);
    assert_eq!(
        last_line("a\nthread 'main' panicked at x\n\n  \n"),
        Some("thread 'main' panicked at x")
    );
    assert_eq!(last_line(""), None);
}

#[test]
fn table_shows_every_row_and_the_failures() {
    let cat = catalogue();
    let case = ParityCase {
        shape: Shape::new(1000, 77, 2816),
        layout: Layout::Raw,
        seed: 1,
        mutant: None,
    };
    let mut ok = ParityRow::new(&cat[0], &case);
    ok.status = Status::Pass;
    ok.checked = 77_000;
    let mut bad = ParityRow::new(&cat[1], &case);
    bad.error =
        Some("the matmul x failed with CUDA_ERROR_MISALIGNED_ADDRESS (misaligned address)".into());
    let t = render_table(&[ok, bad]);
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("variant  layout  shape"), "{t}");
    assert!(
        lines[2].starts_with("a        raw     1000,77,2816  77000"),
        "{t}"
    );
    assert!(lines[2].ends_with("pass"), "{t}");
    assert!(lines[3].ends_with("FAILED"), "{t}");
    assert!(t.contains(
        "b raw 1000,77,2816 (FAILED): the matmul x failed with CUDA_ERROR_MISALIGNED_ADDRESS"
    ));
}

/// A stand-in child: `sh -c SCRIPT` (the child arguments land in `$1...` and are ignored).
#[cfg(unix)]
fn shell_child(script: &str, timeout_s: u64) -> ParityRow {
    let cat = catalogue();
    let cache = std::env::temp_dir();
    let spec = ChildSpec {
        desc: &cat[0],
        case: ParityCase {
            shape: Shape::new(64, 1, 256),
            layout: Layout::Raw,
            seed: 1,
            mutant: None,
        },
        gguf: None,
        gpu: 0,
        proven: None,
        save: None,
        cubin_cache: Some(&cache),
        timeout: Duration::from_secs(timeout_s),
    };
    let child = ChildCommand {
        program: "sh".into(),
        prefix: vec!["-c".into(), script.into(), "sh".into()],
    };
    run_child_process(&child, &spec)
}

#[cfg(unix)]
#[test]
fn crashed_hung_and_garbled_children_become_failed_rows() {
    let row = shell_child(
        "echo 'stand-in child: about to crash' >&2; kill -SEGV $$",
        60,
    );
    assert_eq!(row.status, Status::Failed);
    let e = row.error.unwrap();
    assert!(
        e.starts_with("the case's process ended with signal: 11"),
        "{e}"
    );
    assert!(
        e.ends_with("printed no result: stand-in child: about to crash"),
        "{e}"
    );

    let start = Instant::now();
    let row = shell_child("echo waiting >&2; sleep 30", 1);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(
        row.error.as_deref(),
        Some("the case's process was killed after 1 s: waiting")
    );

    let row = shell_child("echo 'mmqgen-parity-row\tvariant=a'; exit 1", 60);
    let e = row.error.unwrap();
    assert!(
        e.starts_with(
            "the case's process printed an unreadable result (the result line has no field"
        ),
        "{e}"
    );

    // A row the child printed is taken as it is, whatever the exit status.
    let cat = catalogue();
    let mut good = ParityRow::new(
        &cat[0],
        &ParityCase {
            shape: Shape::new(64, 1, 256),
            layout: Layout::Raw,
            seed: 1,
            mutant: None,
        },
    );
    good.status = Status::Mismatch;
    good.mismatches = 3;
    let row = shell_child(&format!("printf '%s\\n' '{}'; exit 1", good.encode()), 60);
    assert_eq!(row, good);

    let row = run_child_process(
        &ChildCommand {
            program: "/nonexistent/mmqgen".into(),
            prefix: vec![],
        },
        &ChildSpec {
            desc: &cat[0],
            case: ParityCase {
                shape: Shape::new(64, 1, 256),
                layout: Layout::Raw,
                seed: 1,
                mutant: None,
            },
            gguf: None,
            gpu: 0,
            proven: None,
            save: None,
            cubin_cache: Some(Path::new("/tmp")),
            timeout: Duration::from_secs(5),
        },
    );
    assert!(row
        .error
        .unwrap()
        .starts_with("could not start the case's process /nonexistent/mmqgen"));
}

/// A stand-in child for `--mutants`: prints `control` when run without `--mutant` and `mutated` (with the
/// mutant's name put in) with it. Also counts its runs in `log`.
#[cfg(unix)]
fn mutant_stand_in(control: &ParityRow, mutated: &ParityRow, log: &Path) -> ChildCommand {
    let mut marked = mutated.clone();
    marked.mutant = Some("@MUTANT@".into());
    let line = marked.encode();
    let (before, after) = line.split_once("@MUTANT@").unwrap();
    let script = format!(
        "m=''; while [ $# -gt 0 ]; do [ \"$1\" = --mutant ] && m=\"$2\"; shift; done; \
         echo \"run $m\" >> '{}'; \
         if [ -z \"$m\" ]; then printf '%s\\n' '{}'; else printf '%s%s%s\\n' '{before}' \"$m\" '{after}'; fi",
        log.display(),
        control.encode()
    );
    ChildCommand {
        program: "sh".into(),
        prefix: vec!["-c".into(), script.into(), "sh".into()],
    }
}

#[cfg(unix)]
#[test]
fn mutant_runs_report_caught_missed_and_failed() {
    let all = crate::catalogue::all();
    let dir = std::env::temp_dir().join(format!("mmqgen-mutant-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("runs.log");
    let case = ParityCase::new(Shape::new(1000, 77, 2816), Layout::Raw, 1);
    let mut pass = ParityRow::new(&all[0], &case);
    pass.status = Status::Pass;
    pass.checked = 77_000;
    let mut mismatch = pass.clone();
    mismatch.status = Status::Mismatch;
    mismatch.mismatches = 1000;
    mismatch.unwritten = 1000;
    let run = |control: &ParityRow, mutated: &ParityRow| {
        let _ = std::fs::remove_file(&log);
        let child = mutant_stand_in(control, mutated, &log);
        let mut seen = 0;
        let outcomes = run_mutants(&all, &child, 1, 0, Duration::from_secs(60), |i, o| {
            assert_eq!(i, seen);
            assert!(!mutant_progress_line(o).is_empty());
            seen += 1;
        });
        assert_eq!(seen, crate::check::mutants::all().len());
        let runs = std::fs::read_to_string(&log).unwrap_or_default();
        (outcomes, runs)
    };

    // Control passes, mutant mismatches: caught.
    let (outcomes, runs) = run(&pass, &mismatch);
    assert_eq!(outcomes.len(), crate::check::mutants::all().len());
    for o in &outcomes {
        assert_eq!(
            o.verdict.to_string(),
            "CAUGHT: mismatches=1000 unwritten=1000",
            "{o:?}"
        );
        assert!(o.sites >= 1);
        assert_eq!(o.control.as_ref().unwrap().status, Status::Pass);
        assert_eq!(
            o.row.as_ref().unwrap().mutant.as_deref(),
            Some(o.mutant.name)
        );
    }
    // One control per base variant, shape and layout (two mutants share dp4a_int_per32 raw, two
    // wgmma_i12_128x64 raw), one run per mutant, each with its own --mutant.
    let lines: Vec<&str> = runs.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| l.trim() == "run").count(),
        crate::check::mutants::all().len() - 2,
        "{runs}"
    );
    for m in crate::check::mutants::all() {
        assert!(
            lines.contains(&format!("run {}", m.name).as_str()),
            "{runs}"
        );
    }
    let table = render_mutant_table(&outcomes);
    let t: Vec<&str> = table.lines().collect();
    assert!(
        t[0].starts_with("mutant                      base variant               case"),
        "{table}"
    );
    assert!(
        t[2].starts_with("swapped_fma_order           r41"),
        "{table}"
    );
    assert!(
        t[2].ends_with("CAUGHT: mismatches=1000 unwritten=1000"),
        "{table}"
    );
    assert!(
        t[5].contains("dp4a_int_per32             raw 1000,77,2816"),
        "{table}"
    );
    assert_eq!(
        mutant_summary(&outcomes),
        format!(
            "{n} mutant(s): {n} caught, 0 missed, 0 failed, 0 skipped",
            n = outcomes.len()
        )
    );

    // The mutated kernel passes: missed.
    let mut missed = pass.clone();
    missed.checked = 77_000;
    let (outcomes, _) = run(&pass, &missed);
    assert!(outcomes.iter().all(|o| o.verdict == Verdict::Missed));
    assert!(outcomes.iter().all(|o| o.verdict.is_bad()));
    assert_eq!(
        mutant_summary(&outcomes),
        format!(
            "{n} mutant(s): 0 caught, {n} missed, 0 failed, 0 skipped",
            n = outcomes.len()
        )
    );

    // A kernel fault is a catch; its sentence is shown under the table.
    let mut fault = pass.clone();
    fault.status = Status::Failed;
    fault.kernel_fault = true;
    fault.error = Some("waiting for the matmul failed with CUDA_ERROR_ILLEGAL_ADDRESS".into());
    let (outcomes, _) = run(&pass, &fault);
    assert!(outcomes.iter().all(|o| o.verdict.is_caught()));
    assert!(render_mutant_table(&outcomes).contains(
        "\noff_by_one_token_edge (CAUGHT: the kernel faulted): waiting for the matmul failed with \
         CUDA_ERROR_ILLEGAL_ADDRESS\n"
    ));

    // A base variant that fails its own case proves nothing: the mutant fails, and is not run.
    let (outcomes, runs) = run(&mismatch, &mismatch);
    assert!(!runs.contains("run off_by_one"), "{runs}");
    let e = outcomes[0].verdict.error().unwrap();
    assert_eq!(
        e,
        "the unmutated base variant 'r41' does not pass the mutant's case (padded 1000,77,2816) by itself \
         (MISMATCH: 1000 of 77000 compared outputs differ, 1000 never written), so the mutant proves nothing"
    );
    assert!(outcomes.iter().all(|o| o.verdict.is_bad()));

    // A child that prints the same failing row whatever it is asked: the controls fail.
    let child = ChildCommand {
        program: "sh".into(),
        prefix: vec![
            "-c".into(),
            format!("printf '%s\\n' '{}'", mismatch.encode()).into(),
            "sh".into(),
        ],
    };
    let outcomes = run_mutants(&all, &child, 1, 0, Duration::from_secs(60), |_, _| {});
    assert!(outcomes.iter().all(|o| o.verdict.is_bad()));
    assert!(outcomes.iter().all(|o| o
        .verdict
        .error()
        .unwrap()
        .contains("does not pass the mutant's case")));
    // A child that ignores --mutant (prints a row of the unmutated variant) is not believed.
    let child = ChildCommand {
        program: "sh".into(),
        prefix: vec![
            "-c".into(),
            format!(
                "case \"$*\" in *--mutant*) printf '%s\\n' '{}';; *) printf '%s\\n' '{}';; esac",
                mismatch.encode(),
                pass.encode()
            )
            .into(),
            "sh".into(),
        ],
    };
    let outcomes = run_mutants(&all, &child, 1, 0, Duration::from_secs(60), |_, _| {});
    assert_eq!(
        outcomes[0].verdict.error(),
        Some("the case's process reported the unmutated variant instead of mutant 'swapped_fma_order'")
    );

    // A catalogue without the base variants: every mutant fails with its sentence, and no process starts.
    let nowhere = ChildCommand {
        program: "/nonexistent/mmqgen".into(),
        prefix: vec![],
    };
    let outcomes = run_mutants(&all[..1], &nowhere, 1, 0, Duration::from_secs(5), |_, _| {});
    assert!(outcomes
        .iter()
        .all(|o| o.verdict.is_bad() && o.row.is_none() && o.control.is_none()));
    assert_eq!(
        outcomes[0].verdict.error(),
        Some(
            "mutant 'swapped_fma_order' plants its bug in variant 'r41', but the variant list has no \
             variant of that declared name"
        )
    );
    let table = render_mutant_table(&outcomes);
    assert!(table.contains("FAILED"), "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn small_q6k() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../formats/tests/fixtures/small_q6k.gguf")
}

#[test]
fn gguf_arguments_parse() {
    let a = parse(&["--gguf", "m.gguf", "--tensor", "blk.0.ffn_down.weight"]).unwrap();
    assert_eq!(
        a.gguf_tensor(),
        Some(GgufTensorRef {
            path: "m.gguf".into(),
            tensor: "blk.0.ffn_down.weight".into()
        })
    );
    assert_eq!(a.gguf_tokens(), DEFAULT_GGUF_TOKENS);
    assert_eq!(DEFAULT_GGUF_TOKENS, 77);
    let a = parse(&[
        "--gguf",
        "m.gguf",
        "--tensor",
        "w",
        "--tokens",
        "5",
        "--variant",
        "a",
        "--layout",
        "raw",
    ])
    .unwrap();
    assert_eq!((a.gguf_tokens(), a.variant.len()), (5, 1));
    assert!(parse(&["--variant", "a"]).unwrap().gguf_tensor().is_none());

    let e = parse(&["--gguf", "m.gguf"]).unwrap_err();
    assert!(
        e.contains("the following required arguments were not provided")
            && e.contains("--tensor <NAME>"),
        "{e}"
    );
    let e = parse(&["--tensor", "w"]).unwrap_err();
    assert!(e.contains("--gguf <FILE>"), "{e}");
    let e = parse(&["--tokens", "5"]).unwrap_err();
    assert!(e.contains("--gguf <FILE>"), "{e}");
    let e = parse(&["--gguf", "m.gguf", "--tensor", "w", "--shape", "64,1,256"]).unwrap_err();
    assert!(
        e.contains("the argument '--gguf <FILE>' cannot be used with '--shape <M,N,K>'"),
        "{e}"
    );
    let e = parse(&["--gguf", "m.gguf", "--tensor", "w", "--tokens", "0"]).unwrap_err();
    assert!(
        e.contains("n = 0: a matmul needs at least one token"),
        "{e}"
    );
    let e = parse(&["--gguf", "m.gguf", "--tensor", "w", "--tokens", "x"]).unwrap_err();
    assert!(e.contains("'x' is not a whole number of tokens"), "{e}");
    let e = parse(&["--mutants", "--gguf", "m.gguf", "--tensor", "w"]).unwrap_err();
    assert!(e.contains("cannot be used with"), "{e}");
}

#[test]
fn gguf_child_arguments_parse_back() {
    let cat = catalogue();
    let source = GgufTensorRef {
        path: small_q6k(),
        tensor: "blk.0.ffn_down.weight".into(),
    };
    let spec = ChildSpec {
        desc: &cat[0],
        case: ParityCase::new(Shape::new(4, 9, 512), Layout::Raw, 3),
        gguf: Some(&source),
        gpu: 0,
        proven: None,
        save: None,
        cubin_cache: None,
        timeout: Duration::from_secs(1),
    };
    let (strings, a) = child_command_line(&spec);
    assert!(!strings.iter().any(|s| s == "--shape"), "{strings:?}");
    assert_eq!(a.child.as_deref(), Some("a"));
    assert_eq!(a.gguf_tensor(), Some(source.clone()));
    assert_eq!(a.tokens, Some(9));
    assert!(a.shapes.is_empty());
    assert_eq!((a.layout, a.seed), (LayoutChoice::Raw, 3));
    // A row the parent makes for a child that printed none still names the tensor.
    let row = failed_row(&spec, "x".into(), 0.0);
    assert_eq!(row.gguf, Some(source));
}

#[test]
fn bad_gguf_weights_fail_the_run_before_any_child_starts() {
    let cat = catalogue();
    // Starting this child would give a failed row and Ok(FAILURE); an Err proves none was started.
    let nowhere = ChildCommand {
        program: "/nonexistent/mmqgen".into(),
        prefix: vec![],
    };
    let fixture = small_q6k();
    let fixture = fixture.to_str().unwrap();
    let run = |gguf: &str, tensor: &str, tokens: &str| {
        let args = parse(&["--gguf", gguf, "--tensor", tensor, "--tokens", tokens]).unwrap();
        run(&args, &cat, &nowhere).unwrap_err().to_string()
    };
    assert_eq!(
        run(fixture, "nope", "77"),
        format!(
            "cannot take the parity weights from {fixture}: no tensor named 'nope' in the file (it has 3 \
             tensors: blk.0.ffn_down.weight, output_norm.weight, token_embd.weight)"
        )
    );
    assert_eq!(
        run(fixture, "output_norm.weight", "77"),
        format!(
            "cannot take the parity weights from {fixture}: tensor 'output_norm.weight' has type F32 but a q6_K \
             tensor (type 14) is needed"
        )
    );
    assert!(run("/nonexistent/model.gguf", "w", "77")
        .starts_with("cannot read the GGUF file /nonexistent/model.gguf: "));
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    assert!(run(manifest, "w", "77").ends_with(
        ": wrong magic: a GGUF file starts with the bytes 'GGUF', this one starts with '[pac'"
    ));
    // n * K past 32-bit indexing: refused by the shape check, with its sentence.
    let e = run(fixture, "blk.0.ffn_down.weight", "600000000");
    assert!(
        e.starts_with(&format!(
            "tensor 'blk.0.ffn_down.weight' of {fixture} cannot be run with 600000000 token(s): "
        )),
        "{e}"
    );
}

/// The parent hands each child the same --gguf/--tensor/--tokens (and no --shape), and the rows carry the
/// tensor.
#[cfg(unix)]
#[test]
fn gguf_children_get_the_file_and_the_tensor() {
    let cat = catalogue();
    let dir = std::env::temp_dir().join(format!("mmqgen-gguf-parity-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("args.log");
    let json = dir.join("rows.json");
    let child = ChildCommand {
        program: "sh".into(),
        prefix: vec![
            "-c".into(),
            format!("echo \"$*\" >> '{}'", log.display()).into(),
            "sh".into(),
        ],
    };
    let fixture = small_q6k();
    let fixture = fixture.to_str().unwrap();
    let args = parse(&[
        "--gguf",
        fixture,
        "--tensor",
        "blk.0.ffn_down.weight",
        "--tokens",
        "9",
        "--variant",
        "b",
        "--json",
        json.to_str().unwrap(),
    ])
    .unwrap();
    // The stand-in prints no row: both cases (raw, padded) fail, so the run fails.
    assert_eq!(run(&args, &cat, &child).unwrap(), ExitCode::FAILURE);
    let runs = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = runs.lines().collect();
    assert_eq!(lines.len(), 2, "{runs}");
    for (line, layout) in lines.iter().zip(["raw", "padded"]) {
        assert!(
            line.starts_with(&format!(
                "--child b --gguf {fixture} --tensor blk.0.ffn_down.weight --tokens 9 --layout {layout} \
                 --seed 1 --gpu 0"
            )),
            "{line}"
        );
        assert!(!line.contains("--shape"), "{line}");
    }
    let text = std::fs::read_to_string(&json).unwrap();
    assert_eq!(
        text.matches("\"m\":4,\"n\":9,\"k\":512").count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.matches(&format!(
            "\"gguf\":{},\"tensor\":\"blk.0.ffn_down.weight\"",
            crate::check::json_string(fixture)
        ))
        .count(),
        2,
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn f32_files_round_trip() {
    let dir = std::env::temp_dir().join(format!("mmqgen-parity-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("o.f32");
    let values = [1.5f32, -0.0, f32::from_bits(0xFFC0_DEAD), f32::MAX];
    write_f32_file(&path, &values).unwrap();
    let back = read_f32_file(&path).unwrap();
    assert_eq!(
        back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        values.map(f32::to_bits)
    );
    std::fs::write(&path, [0u8; 5]).unwrap();
    assert!(read_f32_file(&path)
        .unwrap_err()
        .to_string()
        .contains("not a whole number of f32 values"));
    std::fs::remove_dir_all(&dir).unwrap();
}
