//! `mmqgen parity`: every variant, layout and shape checked bit for bit against the CPU reference, each case in
//! a fresh process (docs/DESIGN.md D11: a misaligned access inside a kernel leaves the CUDA context unusable, and
//! would hide every case after it).
//!
//! The parent never touches the GPU. For each case it re-executes its own binary (`std::env::current_exe()`)
//! with the arguments that led to this subcommand plus a hidden `--child VARIANT --shape m,n,k --layout L`;
//! the child runs [`crate::check::run_case`] and prints one line ([`ParityRow::encode`]) on stdout. A child
//! that crashes, times out or prints no line becomes a failed row with the last line of its stderr. On sampled
//! shapes the first variant of a numerics mode that passes saves its output, and every later variant of that
//! mode (same inputs, so the same bits) is compared with it output by output.
//!
//! `mmqgen parity --gguf FILE --tensor NAME [--tokens N]` takes the weights from that q6_K tensor instead (m and
//! K are the tensor's, n is `--tokens`, default [`DEFAULT_GGUF_TOKENS`]; the activations stay seeded). The parent
//! reads the tensor first, so a missing file, a file that is not GGUF, a missing or non-q6_K tensor or a shape
//! no kernel runs fails the run with its sentence before any child starts; each child gets the same
//! `--gguf/--tensor/--tokens` and reads the file itself.
//!
//! `mmqgen parity --mutants` runs the shipped deliberate mutants ([`crate::check::mutants`]) instead: each is planted
//! in its base variant's rendered source by a child started with the hidden `--mutant NAME`, run on its own
//! case, and reported as caught (wrong or unwritten outputs, or a kernel fault) or MISSED; the run fails when
//! any mutant is missed or could not be tried.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use mmqgen_codegen::{canonical_name, VariantDescription};

use crate::check::mutants::{Mutant, Verdict};
use crate::check::{
    run_case_with, GgufTensorRef, GgufWeights, GgufWeightsError, ParityCase, ParityRow,
    ProvenOutput, Shape, Status, DEFAULT_SHAPES, ROW_LINE_PREFIX,
};
use crate::gpu::device::Gpu;
use crate::gpu::weights::Layout;

/// Which weight layouts to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutChoice {
    Raw,
    Padded,
    Both,
}

impl LayoutChoice {
    pub fn layouts(self) -> Vec<Layout> {
        match self {
            LayoutChoice::Raw => vec![Layout::Raw],
            LayoutChoice::Padded => vec![Layout::Padded],
            LayoutChoice::Both => Layout::ALL.to_vec(),
        }
    }
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    s.parse()
}

/// Tokens (n) of a `--gguf` run when `--tokens` is not given.
pub const DEFAULT_GGUF_TOKENS: usize = 77;

fn parse_tokens(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("n = 0: a matmul needs at least one token".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a whole number of tokens")),
    }
}

/// `mmqgen parity [--variant NAME]... [--shape m,n,k]... [--layout raw|padded|both] [--seed N] [--json FILE]`,
/// `mmqgen parity [--variant NAME]... --gguf FILE --tensor NAME [--tokens N] [--layout ...] [--seed N] ...`,
/// or `mmqgen parity --mutants [--seed N] [--json FILE]`
#[derive(Args, Clone, Debug)]
pub struct ParityArgs {
    // The field is `variant`, not `variants`: clap keys arguments by field name, and the `mmqgen` command has a
    // global `--variants FILE` (a clash panics when the arguments are read).
    /// A variant to check, by declared or canonical name (repeat for several; default: every variant known).
    #[arg(long = "variant", value_name = "NAME")]
    pub variant: Vec<String>,

    /// A shape m,n,k (weight rows, tokens, K) to check (repeat for several; default: 1000,77,2816, 64,1,256
    /// and 4097,513,4096, the last one sampled).
    #[arg(long = "shape", value_name = "M,N,K", value_parser = parse_shape)]
    pub shapes: Vec<Shape>,

    /// Take the weights from a q6_K tensor of this GGUF file (with --tensor) instead of seeded random blocks:
    /// m and K are the tensor's, n is --tokens; the activations stay seeded. Not with --shape.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tensor",
        conflicts_with = "shapes"
    )]
    pub gguf: Option<PathBuf>,

    /// The q6_K tensor of --gguf to check on, by name (`mmqgen gguf ls FILE` lists them).
    #[arg(long, value_name = "NAME", requires = "gguf")]
    pub tensor: Option<String>,

    /// Tokens (n) of a --gguf run (default 77).
    #[arg(long, value_name = "N", requires = "gguf", value_parser = parse_tokens)]
    pub tokens: Option<usize>,

    /// Weight layouts to check.
    #[arg(long, value_enum, default_value_t = LayoutChoice::Both)]
    pub layout: LayoutChoice,

    /// Seed of the weights, the activations and the sampled outputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Also write every row as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub gpu: usize,

    /// Seconds a case may take before its process is killed and the case fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub timeout: u64,

    /// Run every deliberate mutant (a bug planted in a variant's generated source, each on its own shape and
    /// layout) and report whether parity catches it; fails when any mutant is missed.
    #[arg(long, conflicts_with_all = ["variant", "shapes", "layout", "child", "gguf"])]
    pub mutants: bool,

    /// Internal: run one case in this process (VARIANT by declared or canonical name) and print its row.
    #[arg(long, value_name = "VARIANT", hide = true)]
    pub child: Option<String>,

    /// Internal (child): file of f32 outputs of a variant already proven on these inputs.
    #[arg(long, value_name = "FILE", hide = true, requires = "child")]
    pub proven: Option<PathBuf>,

    /// Internal (child): the name of the variant that wrote `--proven`.
    #[arg(long, value_name = "NAME", hide = true, requires = "proven")]
    pub proven_variant: Option<String>,

    /// Internal (child): write this case's f32 outputs to FILE.
    #[arg(long, value_name = "FILE", hide = true, requires = "child")]
    pub save_output: Option<PathBuf>,

    /// Internal (child): folder of compiled cubins shared by the cases of one run.
    #[arg(long, value_name = "DIR", hide = true, requires = "child")]
    pub cubin_cache: Option<PathBuf>,

    /// Internal (child): plant this mutant (runtime/src/check/mutants.rs) in the variant's source before compiling.
    #[arg(long, value_name = "NAME", hide = true, requires = "child")]
    pub mutant: Option<String>,
}

/// Why `mmqgen parity` could not run at all (a bad case is a row, not an error). Each displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum ParityCliError {
    #[error("no variant named '{name}': known variants are {known}")]
    UnknownVariant { name: String, known: String },
    #[error("there is no variant to check: the catalogue is empty")]
    EmptyCatalogue,
    #[error("{0}")]
    Usage(String),
    #[error(
        "could not find this program's own executable to run each case in a fresh process: {0}"
    )]
    CurrentExe(#[source] std::io::Error),
    #[error(transparent)]
    Weights(#[from] GgufWeightsError),
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// How the parent starts a child: the program and the arguments that reach the parity subcommand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildCommand {
    pub program: PathBuf,
    /// Everything before the child's own arguments: global options and the subcommand (`["parity"]`).
    pub prefix: Vec<OsString>,
}

impl ParityArgs {
    /// The GGUF tensor of `--gguf FILE --tensor NAME`, if given.
    pub fn gguf_tensor(&self) -> Option<GgufTensorRef> {
        match (&self.gguf, &self.tensor) {
            (Some(path), Some(tensor)) => Some(GgufTensorRef {
                path: path.clone(),
                tensor: tensor.clone(),
            }),
            _ => None,
        }
    }

    /// n of a `--gguf` run.
    pub fn gguf_tokens(&self) -> usize {
        self.tokens.unwrap_or(DEFAULT_GGUF_TOKENS)
    }
}

impl ChildCommand {
    /// This executable with the given prefix (global options the child needs, then the subcommand), e.g.
    /// `["--variants", "extra.toml", "parity"]`.
    pub fn current_exe(prefix: Vec<OsString>) -> Result<ChildCommand, ParityCliError> {
        let program = std::env::current_exe().map_err(ParityCliError::CurrentExe)?;
        Ok(ChildCommand { program, prefix })
    }
}

/// Finds a variant by declared name, then by canonical name.
pub fn find_variant<'a>(
    catalogue: &'a [VariantDescription],
    name: &str,
) -> Result<&'a VariantDescription, ParityCliError> {
    catalogue
        .iter()
        .find(|d| d.name == name)
        .or_else(|| catalogue.iter().find(|d| canonical_name(d) == name))
        .ok_or_else(|| ParityCliError::UnknownVariant {
            name: name.to_string(),
            known: if catalogue.is_empty() {
                "none".to_string()
            } else {
                catalogue
                    .iter()
                    .map(|d| d.name.as_ref())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
}

/// Runs `mmqgen parity` with `catalogue` (the binary's variants), each case in a child process started as
/// `child` (this executable with every `--variants FILE` of the run, then `parity`).
pub fn run(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
) -> Result<ExitCode, ParityCliError> {
    if args.child.is_some() {
        return run_child(args, catalogue);
    }
    if args.mutants {
        return run_mutants_parent(args, catalogue, child);
    }
    run_parent(args, catalogue, child)
}

/// The variants a run checks: the named ones (declared or canonical names, each once) or the whole catalogue.
pub fn select_variants<'a>(
    catalogue: &'a [VariantDescription],
    names: &[String],
) -> Result<Vec<&'a VariantDescription>, ParityCliError> {
    if catalogue.is_empty() {
        return Err(ParityCliError::EmptyCatalogue);
    }
    if names.is_empty() {
        return Ok(catalogue.iter().collect());
    }
    let mut out: Vec<&VariantDescription> = Vec::new();
    for name in names {
        let d = find_variant(catalogue, name)?;
        if !out.iter().any(|o| std::ptr::eq(*o, d)) {
            out.push(d);
        }
    }
    Ok(out)
}

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, ParityCliError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("mmqgen-parity-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(path.join("cubins")).map_err(|source| ParityCliError::Io {
            what: "creating the scratch folder",
            path: path.clone(),
            source,
        })?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_parent(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
) -> Result<ExitCode, ParityCliError> {
    let variants = select_variants(catalogue, &args.variant)?;
    let mut stderr = std::io::stderr();
    let gguf = args.gguf_tensor();
    let shapes: Vec<Shape> = if let Some(source) = &gguf {
        // Read here first, so that a bad file or tensor fails the run before any process starts; each child
        // reads it again (the weights are not kept here).
        let weights = GgufWeights::load(source)?;
        let shape = weights.shape(args.gguf_tokens())?;
        let _ = writeln!(
            stderr,
            "weights: q6_K {source} (m = {}, K = {}); activations seeded with seed {}, n = {}",
            shape.m, shape.k, args.seed, shape.n
        );
        vec![shape]
    } else if args.shapes.is_empty() {
        DEFAULT_SHAPES.to_vec()
    } else {
        args.shapes.clone()
    };
    let layouts = args.layout.layouts();
    let scratch = Scratch::new()?;
    let total = variants.len() * shapes.len() * layouts.len();
    let mut rows = Vec::with_capacity(total);
    // (mode, shape) -> (who, file) of the first passing output on a sampled shape.
    let mut proven: Vec<((String, Shape), (String, PathBuf))> = Vec::new();
    for desc in &variants {
        for &shape in &shapes {
            for &layout in &layouts {
                let case = ParityCase::new(shape, layout, args.seed);
                let key = (desc.mode.keyword().to_string(), shape);
                let proven_for = if shape.compares_every_output() {
                    None
                } else {
                    proven
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map(|(_, v)| v.clone())
                };
                let save = (!shape.compares_every_output() && proven_for.is_none())
                    .then(|| scratch.0.join(format!("output-{}.f32", rows.len())));
                let spec = ChildSpec {
                    desc,
                    case,
                    gguf: gguf.as_ref(),
                    gpu: args.gpu,
                    proven: proven_for.as_ref(),
                    save: save.as_deref(),
                    cubin_cache: Some(&scratch.0.join("cubins")),
                    timeout: Duration::from_secs(args.timeout.max(1)),
                };
                let row = run_child_process(child, &spec);
                let _ = writeln!(
                    stderr,
                    "[{}/{total}] {}",
                    rows.len() + 1,
                    progress_line(&row)
                );
                if row.status == Status::Pass {
                    if let Some(path) = save.filter(|p| p.is_file()) {
                        proven.push((key, (format!("{} ({layout})", desc.name), path)));
                    }
                }
                rows.push(row);
            }
        }
    }
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(render_table(&rows).as_bytes());
    if let Some(path) = &args.json {
        write_json(path, &rows)?;
    }
    let bad = rows.iter().filter(|r| r.status.is_bad()).count();
    let skipped = rows.iter().filter(|r| r.status == Status::Skipped).count();
    let _ = writeln!(
        stdout,
        "{} case(s): {} passed, {} failed or mismatched, {} skipped",
        rows.len(),
        rows.iter().filter(|r| r.status == Status::Pass).count(),
        bad,
        skipped
    );
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What `mmqgen parity --mutants` made of one mutant.
#[derive(Clone, Debug)]
pub struct MutantOutcome {
    pub mutant: &'static Mutant,
    /// Places the mutant changed in its base variant's rendered source (0 when it could not be planted).
    pub sites: usize,
    /// The base variant's own row on the mutant's case, unmutated: a mutant is only caught if this passes.
    pub control: Option<ParityRow>,
    /// The mutated case's row, when its process ran.
    pub row: Option<ParityRow>,
    pub verdict: Verdict,
}

/// Plants and runs every shipped mutant ([`crate::check::mutants::all`]), each in its own child process started from
/// `child` with `--mutant NAME` and no cubin cache, after a control run of its unmutated base variant on the same
/// case (once per base, shape and layout); calls `progress` with each outcome. A mutant that does not plant into
/// its base variant's current source, or whose control does not pass, fails without running.
pub fn run_mutants(
    catalogue: &[VariantDescription],
    child: &ChildCommand,
    seed: u64,
    gpu: usize,
    timeout: Duration,
    mut progress: impl FnMut(usize, &MutantOutcome),
) -> Vec<MutantOutcome> {
    let mut controls: Vec<((String, Shape, Layout), ParityRow)> = Vec::new();
    let mut outcomes = Vec::new();
    for (i, mutant) in crate::check::mutants::all().iter().enumerate() {
        let outcome = run_mutant(mutant, catalogue, child, seed, gpu, timeout, &mut controls);
        progress(i, &outcome);
        outcomes.push(outcome);
    }
    outcomes
}

fn run_mutant(
    mutant: &'static Mutant,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
    seed: u64,
    gpu: usize,
    timeout: Duration,
    controls: &mut Vec<((String, Shape, Layout), ParityRow)>,
) -> MutantOutcome {
    let mut outcome = MutantOutcome {
        mutant,
        sites: 0,
        control: None,
        row: None,
        verdict: Verdict::Missed,
    };
    let fail = |mut outcome: MutantOutcome, error: String| {
        outcome.verdict = Verdict::Failed { error };
        outcome
    };
    let desc = match mutant.base(catalogue) {
        Ok(d) => d,
        Err(e) => return fail(outcome, e.to_string()),
    };
    // Planted here first (host only), so that a mutant the templates no longer admit fails with its sentence
    // before any process starts; the child plants it again into the source it compiles.
    outcome.sites = match mutant.render(desc) {
        Ok((_, sites)) => sites,
        Err(e) => return fail(outcome, e.to_string()),
    };
    let case = mutant.case(seed);
    let key = (desc.name.to_string(), case.shape, case.layout);
    let control = match controls.iter().find(|(k, _)| *k == key) {
        Some((_, row)) => row.clone(),
        None => {
            let spec = ChildSpec {
                desc,
                case: ParityCase::new(case.shape, case.layout, seed),
                gguf: None,
                gpu,
                proven: None,
                save: None,
                cubin_cache: None,
                timeout,
            };
            let row = run_child_process(child, &spec);
            controls.push((key, row.clone()));
            row
        }
    };
    let control_status = control.status;
    let control_why = control_summary(&control);
    outcome.control = Some(control);
    match control_status {
        Status::Pass => {}
        Status::Skipped => {
            outcome.verdict = Verdict::Skipped {
                reason: control_why,
            };
            return outcome;
        }
        other => {
            return fail(
                outcome,
                format!(
                    "the unmutated base variant '{}' does not pass the mutant's case ({} {}) by itself ({other}: \
                     {control_why}), so the mutant proves nothing",
                    desc.name, case.layout, case.shape
                ),
            );
        }
    }
    let spec = ChildSpec {
        desc,
        case,
        gguf: None,
        gpu,
        proven: None,
        save: None,
        cubin_cache: None,
        timeout,
    };
    let row = run_child_process(child, &spec);
    outcome.verdict = if row.mutant.as_deref() == Some(mutant.name) {
        Verdict::from_row(&row)
    } else {
        Verdict::Failed {
            error: format!(
                "the case's process reported {} instead of mutant '{}'",
                row.mutant
                    .as_deref()
                    .map_or("the unmutated variant".to_string(), |m| format!(
                        "mutant '{m}'"
                    )),
                mutant.name
            ),
        }
    };
    outcome.row = Some(row);
    outcome
}

/// Why a control row did not pass: its error, or its counts and first bad output.
fn control_summary(row: &ParityRow) -> String {
    if let Some(e) = &row.error {
        return e.clone();
    }
    let mut s = format!(
        "{} of {} compared outputs differ, {} never written",
        row.mismatches + row.proven_mismatches,
        row.checked,
        row.unwritten
    );
    if row.quant_mismatches > 0 {
        s.push_str(&format!(
            ", {} quantized activations differ",
            row.quant_mismatches
        ));
    }
    if let Some(b) = row.any_first_bad() {
        s.push_str(&format!("; first {b}"));
    }
    s
}

fn mutant_progress_line(o: &MutantOutcome) -> String {
    let mut s = format!(
        "mutant {} in {} ({} {}, {} site(s)): {}",
        o.mutant.name, o.mutant.base_variant, o.mutant.layout, o.mutant.shape, o.sites, o.verdict
    );
    if let Some(e) = o.verdict.error() {
        s.push_str(": ");
        s.push_str(e);
    }
    s
}

/// Left-aligned columns two spaces apart, with a dashed rule under the header (the parity and mutant tables).
fn text_table<const N: usize>(header: [&str; N], cells: &[[String; N]]) -> String {
    let mut widths = header.map(str::len);
    for c in cells {
        for (w, cell) in widths.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |c: &[String]| -> String {
        let parts: Vec<String> = c
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = line(&header.map(String::from));
    out.push_str(&line(&widths.map(|w| "-".repeat(w))));
    for c in cells {
        out.push_str(&line(c));
    }
    out
}

/// The `--mutants` report: mutant, base variant, case, sites, what, result; then every fault's, skip's and
/// failure's sentence.
pub fn render_mutant_table(outcomes: &[MutantOutcome]) -> String {
    let header = ["mutant", "base variant", "case", "sites", "what", "result"];
    let cells: Vec<[String; 6]> = outcomes
        .iter()
        .map(|o| {
            [
                o.mutant.name.to_string(),
                o.mutant.base_variant.to_string(),
                format!("{} {}", o.mutant.layout, o.mutant.shape),
                o.sites.to_string(),
                o.mutant.what.to_string(),
                o.verdict.to_string(),
            ]
        })
        .collect();
    let mut out = text_table(header, &cells);
    let notes: Vec<String> = outcomes
        .iter()
        .filter_map(|o| {
            o.verdict
                .error()
                .map(|e| format!("{} ({}): {e}\n", o.mutant.name, o.verdict))
        })
        .collect();
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&n);
        }
    }
    out
}

/// The last line of the `--mutants` report.
pub fn mutant_summary(outcomes: &[MutantOutcome]) -> String {
    let count = |f: fn(&Verdict) -> bool| outcomes.iter().filter(|o| f(&o.verdict)).count();
    format!(
        "{} mutant(s): {} caught, {} missed, {} failed, {} skipped",
        outcomes.len(),
        count(Verdict::is_caught),
        count(|v| *v == Verdict::Missed),
        count(|v| matches!(v, Verdict::Failed { .. })),
        count(|v| matches!(v, Verdict::Skipped { .. })),
    )
}

fn run_mutants_parent(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
) -> Result<ExitCode, ParityCliError> {
    let total = crate::check::mutants::all().len();
    let mut stderr = std::io::stderr();
    let outcomes = run_mutants(
        catalogue,
        child,
        args.seed,
        args.gpu,
        Duration::from_secs(args.timeout.max(1)),
        |i, o| {
            let _ = writeln!(stderr, "[{}/{total}] {}", i + 1, mutant_progress_line(o));
        },
    );
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(render_mutant_table(&outcomes).as_bytes());
    if let Some(path) = &args.json {
        let mut rows: Vec<ParityRow> = Vec::new();
        for o in &outcomes {
            for r in [&o.control, &o.row].into_iter().flatten() {
                if !rows.contains(r) {
                    rows.push(r.clone());
                }
            }
        }
        write_json(path, &rows)?;
    }
    let _ = writeln!(stdout, "{}", mutant_summary(&outcomes));
    Ok(if outcomes.iter().any(|o| o.verdict.is_bad()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

struct ChildSpec<'a> {
    desc: &'a VariantDescription,
    case: ParityCase,
    /// The GGUF tensor of the weights (the child gets `--gguf/--tensor/--tokens` instead of `--shape`).
    gguf: Option<&'a GgufTensorRef>,
    gpu: usize,
    proven: Option<&'a (String, PathBuf)>,
    save: Option<&'a Path>,
    /// `None` for a mutant: its source is compiled fresh in its own process.
    cubin_cache: Option<&'a Path>,
    timeout: Duration,
}

/// The child's arguments after the prefix.
fn child_args(spec: &ChildSpec<'_>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["--child".into(), spec.desc.name.as_ref().into()];
    match spec.gguf {
        Some(g) => a.extend([
            "--gguf".into(),
            g.path.as_os_str().to_owned(),
            "--tensor".into(),
            g.tensor.as_str().into(),
            "--tokens".into(),
            spec.case.shape.n.to_string().into(),
        ]),
        None => a.extend(["--shape".into(), spec.case.shape.to_string().into()]),
    }
    a.extend([
        "--layout".into(),
        spec.case.layout.keyword().into(),
        "--seed".into(),
        spec.case.seed.to_string().into(),
        "--gpu".into(),
        spec.gpu.to_string().into(),
    ]);
    if let Some(dir) = spec.cubin_cache {
        a.extend(["--cubin-cache".into(), dir.as_os_str().to_owned()]);
    }
    if let Some(mutant) = &spec.case.mutant {
        a.extend(["--mutant".into(), mutant.into()]);
    }
    if let Some((who, path)) = spec.proven {
        a.extend([
            "--proven".into(),
            path.as_os_str().to_owned(),
            "--proven-variant".into(),
            who.into(),
        ]);
    }
    if let Some(path) = spec.save {
        a.extend(["--save-output".into(), path.as_os_str().to_owned()]);
    }
    a
}

fn failed_row(spec: &ChildSpec<'_>, error: String, wall_ms: f64) -> ParityRow {
    let mut row = ParityRow::new(spec.desc, &spec.case);
    row.gguf = spec.gguf.cloned();
    row.status = Status::Failed;
    row.error = Some(error);
    row.wall_ms = wall_ms;
    row
}

/// The last non-empty line of a child's stderr, for a failed row.
pub fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

/// The row a child printed on stdout (the last line with the row prefix).
pub fn row_from_stdout(stdout: &str) -> Option<Result<ParityRow, String>> {
    stdout
        .lines()
        .rfind(|l| l.starts_with(ROW_LINE_PREFIX))
        .map(ParityRow::decode)
}

/// A pipe read to its end on a thread, into a shared buffer.
struct Drained {
    text: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Drained {
    /// The text read so far, after waiting until `deadline` at most for the end of the pipe.
    fn finish(self, deadline: Instant) -> String {
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let bytes = self.text.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn drain(pipe: Option<Box<dyn Read + Send>>) -> Drained {
    let text = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (tx, done) = std::sync::mpsc::channel();
    let shared = text.clone();
    std::thread::spawn(move || {
        if let Some(mut p) = pipe {
            let mut chunk = [0u8; 8192];
            loop {
                match p.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(k) => match shared.lock() {
                        Ok(mut b) => b.extend_from_slice(&chunk[..k]),
                        Err(_) => break,
                    },
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        }
        let _ = tx.send(());
    });
    Drained { text, done }
}

/// One variant on one case in a fresh process started from `child` (docs/DESIGN.md D11), compared with the CPU
/// reference: how `mmqgen tune` proves each candidate on a ragged shape before timing it. Returns the row and
/// its one-line summary.
pub fn prove_in_child(
    child: &ChildCommand,
    desc: &VariantDescription,
    case: ParityCase,
    gpu: usize,
    cubin_cache: Option<&Path>,
    timeout: Duration,
) -> (ParityRow, String) {
    let row = run_child_process(
        child,
        &ChildSpec {
            desc,
            case,
            gguf: None,
            gpu,
            proven: None,
            save: None,
            cubin_cache,
            timeout,
        },
    );
    let line = progress_line(&row);
    (row, line)
}

fn run_child_process(child: &ChildCommand, spec: &ChildSpec<'_>) -> ParityRow {
    let start = Instant::now();
    let ms = |start: Instant| start.elapsed().as_secs_f64() * 1e3;
    let mut cmd = Command::new(&child.program);
    cmd.args(&child.prefix)
        .args(child_args(spec))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut proc = match cmd.spawn() {
        Ok(p) => p,
        Err(e) => {
            return failed_row(
                spec,
                format!(
                    "could not start the case's process {}: {e}",
                    child.program.display()
                ),
                ms(start),
            )
        }
    };
    // Drain both pipes on threads so that a chatty child never blocks on a full pipe. The text is shared, not
    // returned, so that a pipe still held open by something the child started cannot hold the parent up.
    let out_buf = drain(
        proc.stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err_buf = drain(
        proc.stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut timed_out = false;
    let status = loop {
        match proc.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if start.elapsed() >= spec.timeout => {
                timed_out = true;
                let _ = proc.kill();
                break proc.wait();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(e),
        }
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    let stdout = out_buf.finish(deadline);
    let stderr = err_buf.finish(deadline);
    let tail = last_line(&stderr)
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            return failed_row(
                spec,
                format!("waiting for the case's process failed: {e}"),
                ms(start),
            )
        }
    };
    if timed_out {
        return failed_row(
            spec,
            format!(
                "the case's process was killed after {} s{tail}",
                spec.timeout.as_secs()
            ),
            ms(start),
        );
    }
    match row_from_stdout(&stdout) {
        Some(Ok(row)) => row,
        Some(Err(e)) => failed_row(
            spec,
            format!("the case's process printed an unreadable result ({e}){tail}"),
            ms(start),
        ),
        None => {
            // Show the end of what a crashed child said, for the person reading the log.
            let lines: Vec<&str> = stderr.lines().collect();
            let shown = &lines[lines.len().saturating_sub(20)..];
            if !shown.is_empty() {
                let mut err = std::io::stderr();
                let _ = writeln!(err, "--- last lines of the failed case's stderr ---");
                for l in shown {
                    let _ = writeln!(err, "    {l}");
                }
            }
            failed_row(
                spec,
                format!("the case's process ended with {status} and printed no result{tail}"),
                ms(start),
            )
        }
    }
}

fn read_f32_file(path: &Path) -> Result<Vec<f32>, ParityCliError> {
    let bytes = std::fs::read(path).map_err(|source| ParityCliError::Io {
        what: "reading the proven output",
        path: path.to_path_buf(),
        source,
    })?;
    if !bytes.len().is_multiple_of(4) {
        return Err(ParityCliError::Usage(format!(
            "the proven output {} is {} bytes, not a whole number of f32 values",
            path.display(),
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn write_f32_file(path: &Path, values: &[f32]) -> Result<(), ParityCliError> {
    let mut bytes = Vec::with_capacity(values.len() * 4);
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).map_err(|source| ParityCliError::Io {
        what: "writing the output",
        path: path.to_path_buf(),
        source,
    })
}

/// The child: one case in this process; prints its row and exits 0 (pass or skipped) or 1.
fn run_child(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
) -> Result<ExitCode, ParityCliError> {
    let name = args.child.as_deref().unwrap_or_default();
    let desc = find_variant(catalogue, name)?;
    let gguf = match args.gguf_tensor() {
        Some(source) => Some(GgufWeights::load(&source)?),
        None => None,
    };
    let shape = match (&gguf, args.shapes.as_slice()) {
        (Some(weights), _) => weights.shape(args.gguf_tokens())?,
        (None, [one]) => *one,
        (None, _) => {
            return Err(ParityCliError::Usage(
                "--child needs exactly one --shape m,n,k, or --gguf FILE --tensor NAME".to_string(),
            ))
        }
    };
    let layout = match args.layout {
        LayoutChoice::Raw => Layout::Raw,
        LayoutChoice::Padded => Layout::Padded,
        LayoutChoice::Both => {
            return Err(ParityCliError::Usage(
                "--child needs --layout raw or --layout padded".to_string(),
            ))
        }
    };
    let case = ParityCase {
        shape,
        layout,
        seed: args.seed,
        mutant: args.mutant.clone(),
    };
    let proven = match &args.proven {
        Some(path) => Some(ProvenOutput {
            variant: args
                .proven_variant
                .clone()
                .unwrap_or_else(|| path.display().to_string()),
            output: read_f32_file(path)?,
        }),
        None => None,
    };
    let outcome = match Gpu::open(args.gpu) {
        Ok(gpu) => run_case_with(
            &gpu,
            desc,
            &case,
            gguf.as_ref(),
            proven.as_ref(),
            args.cubin_cache.as_deref(),
        ),
        Err(e) => {
            let mut row = ParityRow::new(desc, &case);
            row.gguf = gguf.as_ref().map(|g| g.source.clone());
            row.error = Some(e.to_string());
            crate::check::CaseOutcome { row, output: None }
        }
    };
    if let (Some(path), Some(output)) = (&args.save_output, &outcome.output) {
        write_f32_file(path, output)?;
    }
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{}", outcome.row.encode());
    let _ = stdout.flush();
    Ok(if outcome.row.status.is_bad() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn progress_line(row: &ParityRow) -> String {
    let mut s = format!(
        "{} {} {}: {} ({} checked{}, {} mismatched, {:.0} ms)",
        row.variant,
        row.layout,
        row.shape,
        row.status,
        row.checked,
        if row.proven_checked > 0 {
            format!(
                " + all {} vs {}",
                row.proven_checked,
                row.proven_by.as_deref().unwrap_or("?")
            )
        } else {
            String::new()
        },
        row.mismatches + row.proven_mismatches + row.unwritten,
        row.wall_ms
    );
    if let Some(e) = &row.error {
        s.push_str(": ");
        s.push_str(e);
    }
    s
}

fn first_bad_cell(row: &ParityRow) -> String {
    if let Some(b) = row.any_first_bad() {
        return b.to_string();
    }
    if let Some(q) = &row.quant_first_bad {
        return format!("activations: {q}");
    }
    if row.unwritten > 0 {
        return format!("{} output(s) never written", row.unwritten);
    }
    match (&row.status, &row.error) {
        (Status::Failed | Status::Skipped, Some(_)) => "see below".to_string(),
        _ => "-".to_string(),
    }
}

/// The report table (variant, layout, shape, checked, mismatches, first bad, status), then every failure's
/// sentence.
pub fn render_table(rows: &[ParityRow]) -> String {
    let header = [
        "variant",
        "layout",
        "shape",
        "checked",
        "mismatches",
        "first bad",
        "status",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            let checked = if r.proven_checked > 0 {
                format!("{}+all", r.checked)
            } else if r.full {
                r.checked.to_string()
            } else {
                format!("{} sampled", r.checked)
            };
            let mismatches = r.mismatches + r.proven_mismatches + r.quant_mismatches + r.unwritten;
            [
                r.variant.clone(),
                r.layout.to_string(),
                r.shape.to_string(),
                checked,
                mismatches.to_string(),
                first_bad_cell(r),
                r.status.to_string(),
            ]
        })
        .collect();
    let mut out = text_table(header, &cells);
    let notes: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            r.error.as_ref().map(|e| {
                format!(
                    "{} {} {} ({}): {e}\n",
                    r.variant, r.layout, r.shape, r.status
                )
            })
        })
        .collect();
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&n);
        }
    }
    out
}

fn write_json(path: &Path, rows: &[ParityRow]) -> Result<(), ParityCliError> {
    let mut text = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        text.push_str("  ");
        text.push_str(&r.to_json());
        text.push_str(if i + 1 < rows.len() { ",\n" } else { "\n" });
    }
    text.push_str("]\n");
    std::fs::write(path, text).map_err(|source| ParityCliError::Io {
        what: "writing the JSON report",
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        bad.error = Some(
            "the matmul x failed with CUDA_ERROR_MISALIGNED_ADDRESS (misaligned address)".into(),
        );
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
            "10 mutant(s): 10 caught, 0 missed, 0 failed, 0 skipped"
        );

        // The mutated kernel passes: missed.
        let mut missed = pass.clone();
        missed.checked = 77_000;
        let (outcomes, _) = run(&pass, &missed);
        assert!(outcomes.iter().all(|o| o.verdict == Verdict::Missed));
        assert!(outcomes.iter().all(|o| o.verdict.is_bad()));
        assert_eq!(
            mutant_summary(&outcomes),
            "10 mutant(s): 0 caught, 10 missed, 0 failed, 0 skipped"
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
        let dir =
            std::env::temp_dir().join(format!("mmqgen-gguf-parity-test-{}", std::process::id()));
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
}
