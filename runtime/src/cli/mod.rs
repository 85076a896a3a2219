//! The `mmqgen` command line. Each subcommand lives in its own module; this one parses arguments, assembles
//! the variant list (the catalogue handed in, plus `--variants FILE`), and turns every error into one sentence
//! on stderr with a non-zero exit.

pub mod bench;
mod check;
pub(crate) mod config;
pub mod decode_step;
mod formats;
mod layout_arg;
pub mod parity;
mod profile;
mod run;
mod tune;

use crate::codegen::{canonical_name, spec_file, VariantDescription};
use crate::formats::input::{read_text_capped, shown, shown_path, VARIANT_FILE};
use clap::{Parser, Subcommand};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "mmqgen",
    version,
    about = "q6_K MMQ kernel variants: declare, emit, compile, check, time"
)]
struct Cli {
    /// A TOML file of extra `[[variant]]` tables, validated like `variant!`, and `[[sweep]]` tables, expanded
    /// to their points (repeat for several files: every one is read, and names must be unique across all of
    /// them and the catalogue).
    #[arg(long, global = true, action = clap::ArgAction::Append)]
    variants: Vec<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The main job: compile the selected variants, run the CPU reference and, on a GPU, prove and time
    /// them; says plainly what this machine could not do.
    Run(run::RunArgs),
    /// List the known variants: declared name, engine, mode, architectures, whether the embedded default picks
    /// it, canonical name; then what each sweep of the --variants files expands to (counts, refused points with
    /// their sentences, duplicates).
    List,
    /// Print the generated CUDA of one variant (declared or canonical name).
    Emit {
        name: String,
        /// Write to this file instead of stdout.
        #[arg(long)]
        output: Option<PathBuf>,
    },
    /// Compile every variant with NVRTC for its architectures (or one) and report registers, shared memory,
    /// stack, spills and, where cuobjdump is present, a SASS summary.
    Check(check::CheckArgs),
    /// q6_K block tools.
    #[command(subcommand)]
    Q6k(formats::Q6kCommand),
    /// GGUF file tools.
    #[command(subcommand)]
    Gguf(formats::GgufCommand),
    /// Selection config tools (`mmqgen.toml`).
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// Which variant a shape gets and from which rule (with --all, why every other rule did not take it).
    Explain(config::ExplainArgs),
    /// Time variants against each other and against cuBLAS bf16/f16 (CUDA events, rotated inputs, parity
    /// first), with the llama.cpp anchors quoted; ends with a markdown table.
    Bench(Box<bench::BenchArgs>),
    /// Run variants on the GPU against the CPU reference, bit for bit, each case in a fresh process.
    Parity(Box<parity::ParityArgs>),
    /// Profile one variant's kernel on one shape under Nsight Compute (`ncu --clock-control none`, line info
    /// on): the throughput plane beside the stall plane, then the SASS lines the stall samples are booked to.
    Profile(Box<profile::ProfileArgs>),
    /// Time candidate variants over chosen token counts on this GPU (parity first, like bench) and write a
    /// selection config of the fastest bit-exact one per token range, with provenance.
    Tune(Box<tune::TuneArgs>),
}

/// One subcommand's arguments, parsed exactly as a user would write them (`words` starts with the
/// subcommand's name): `mmqgen run` drives parity and bench through it, and the tests check parsing with it.
pub(crate) fn parse_args<A: clap::Args>(
    words: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
) -> Result<A, clap::Error> {
    #[derive(Parser)]
    struct Words<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    Words::<A>::try_parse_from(words).map(|w| w.args)
}

/// An error the CLI reports as one sentence.
pub type CliError = Box<dyn std::error::Error>;

/// The `mmqgen` binary over a crate's own variants (docs/DESIGN.md D8): `fn main() -> ExitCode {
/// mmqgen::cli::main_with(&my_variants()) }`.
pub fn main_with(catalogue: &[VariantDescription]) -> ExitCode {
    // A child this binary started to compile one program out of process (compile/isolated.rs).
    if let Some(code) = crate::compile::isolated::serve_if_asked() {
        return code;
    }
    sentence_on_write_errors();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let code = match run(cli, catalogue) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("mmqgen: {}", one_line(&error.to_string()));
            ExitCode::FAILURE
        }
    };
    // What is still buffered must reach stdout too, or the command says why it did not.
    if let Err(e) = std::io::Write::flush(&mut std::io::stdout()) {
        return write_failed("standard output", &e.to_string());
    }
    code
}

/// `println!` panics when stdout (or `eprintln!` when stderr) cannot be written. A closed pipe (`mmqgen list |
/// head`) ends quietly, with the status a shell gives a program that SIGPIPE stopped (128 + 13); any other
/// error (a full disk, `> /dev/full`) is one sentence on stderr and exit status 1. Every other panic keeps its
/// report.
fn sentence_on_write_errors() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        for (stream, name) in [("stdout", "standard output"), ("stderr", "standard error")] {
            if let Some(why) = message.strip_prefix(&format!("failed printing to {stream}: ")) {
                write_failed(name, why);
                std::process::exit(if why.contains("Broken pipe") { 141 } else { 1 });
            }
        }
        report(info);
    }));
}

/// Says that `stream` could not be written (unless it was a closed pipe, which ends quietly) and gives the
/// exit status: 141 for a closed pipe, else 1.
fn write_failed(stream: &str, why: &str) -> ExitCode {
    if why.contains("Broken pipe") {
        return ExitCode::from(141);
    }
    // Best effort: stderr itself may be the stream that is full.
    let _ = writeln!(
        std::io::stderr(),
        "mmqgen: cannot write to {stream}: {}",
        one_line(why)
    );
    ExitCode::FAILURE
}

/// One warning line on stderr: the command goes on.
pub(crate) fn warn(message: &str) {
    eprintln!("mmqgen: warning: {}", one_line(message));
}

/// How the CLI compiles: each program in a child process of this binary, so that a crash of NVRTC fails that
/// program with a sentence and the command goes on (compile/isolated.rs).
pub(crate) fn compiler() -> Result<crate::compile::isolated::Compiler, CliError> {
    Ok(crate::compile::isolated::Compiler::Child(
        crate::compile::isolated::ChildCompiler::current_exe()?,
    ))
}

/// The most characters of an argument parser's message shown (it quotes the arguments).
const USAGE_CHARS: usize = 1000;

/// Help and version go to stdout as clap writes them; a usage error is one line on stderr, exit status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprintln!(
                "mmqgen: a subcommand is needed, such as run, list or explain (see mmqgen --help)"
            );
            return ExitCode::from(2);
        }
        _ => {}
    }
    let text = e.to_string();
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("the command line is not valid");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    eprintln!(
        "mmqgen: {} (see mmqgen --help)",
        crate::formats::input::shown_at(&shorten_quoted(first), USAGE_CHARS)
    );
    ExitCode::from(2)
}

/// clap's message with every `'quoted'` argument it echoes cut by [`shown`], so that the words after a long
/// argument (which say what is wrong with it) survive.
fn shorten_quoted(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(open) = rest.find('\'') {
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after
            .find("' ")
            .or_else(|| after.strip_suffix('\'').map(str::len))
        {
            Some(close) => {
                out.push_str(&shown(&after[..close]));
                out.push('\'');
                rest = &after[close + 1..];
            }
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A message on one line: control characters (newlines included) escaped, never cut (the parts that come from
/// the user are already cut where they are quoted).
fn one_line(message: &str) -> String {
    crate::formats::input::escaped(message)
}

/// A sweep of a `--variants` file, as the CLI holds it: its expansion, and the name each point answers to in the
/// variant list (a point that renders like a variant already known, declared for the same architectures, is that
/// variant, never a second copy).
#[derive(Clone, Debug)]
pub struct LoadedSweep {
    pub expansion: crate::codegen::Expansion,
    /// Per valid point: the name of the variant it is in the list (its own name, or the earlier variant's).
    pub candidates: Vec<String>,
    /// `(point, variant)`: valid points that render like a variant known before them (catalogue or file), which
    /// stands for them.
    pub already_known: Vec<(String, String)>,
    /// `(point, sentence)`: valid points that render like a variant known before them but are declared for
    /// other architectures (or another `allow_spills`), so that variant cannot stand for them: refused.
    pub conflicts: Vec<(String, String)>,
}

/// The variants the CLI knows (the catalogue first) and the sweeps the files declared.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub all: Vec<VariantDescription>,
    /// How many of `all` are the catalogue handed in (the rest come from the files).
    pub catalogue_len: usize,
    pub sweeps: Vec<LoadedSweep>,
}

impl Loaded {
    /// A variant by declared or canonical name ([`find_variant`]), or a sweep point by its name: a point another
    /// variant stands for is that variant; a point that was not kept says why in one sentence.
    pub fn find(&self, name: &str) -> Result<&VariantDescription, CliError> {
        if let Some(v) = crate::catalogue::find(&self.all, name) {
            return Ok(v);
        }
        for sweep in &self.sweeps {
            let e = &sweep.expansion;
            let stands_for = sweep
                .already_known
                .iter()
                .find(|(point, _)| point == name)
                .map(|(_, known)| known)
                .or_else(|| {
                    e.duplicates
                        .iter()
                        .find(|d| d.name == name)
                        .map(|d| &d.same_as)
                });
            if let Some(v) = stands_for.and_then(|other| self.find(other).ok()) {
                return Ok(v);
            }
            let why = e
                .refused
                .iter()
                .find(|r| r.name == name)
                .map(|r| &r.sentence)
                .or_else(|| {
                    sweep
                        .conflicts
                        .iter()
                        .find(|(point, _)| point == name)
                        .map(|(_, sentence)| sentence)
                });
            if let Some(why) = why {
                return Err(format!(
                    "'{}' is a point of sweep {} that was refused, so there is no variant of that name: {why}",
                    shown(name),
                    e.name
                )
                .into());
            }
        }
        find_variant(&self.all, name)
    }

    /// [`Loaded::find`] for each name, in order, each variant once.
    pub(crate) fn named<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<VariantDescription>, CliError> {
        let mut chosen = Vec::new();
        for name in names {
            add_once(&mut chosen, self.find(name)?);
        }
        Ok(chosen)
    }
}

/// Whether two paths name one file (the same device and inode), however they are spelled.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    a == b
}

fn variants(files: &[PathBuf], catalogue: &[VariantDescription]) -> Result<Loaded, CliError> {
    let mut all = catalogue.to_vec();
    let mut names = crate::select::VariantNames::new(catalogue);
    let mut by_canonical: std::collections::HashMap<String, String> = catalogue
        .iter()
        .rev()
        .map(|v| (canonical_name(v), v.name.to_string()))
        .collect();
    let mut sweeps: Vec<LoadedSweep> = Vec::new();
    // Every sweep of every file takes its points from one budget, and has a name no other sweep has.
    let mut points_left = crate::codegen::sweep::MAX_TOTAL_SWEEP_POINTS;
    let mut sweep_files: Vec<(String, usize)> = Vec::new();
    for (i, path) in files.iter().enumerate() {
        if let Some(first) = files[..i].iter().position(|p| same_file(p, path)) {
            return Err(format!(
                "--variants {} is given twice (arguments {} and {}{}); give each variant file once",
                shown_path(path),
                first + 1,
                i + 1,
                if files[first] == *path {
                    String::new()
                } else {
                    format!(", the first as {}", shown_path(&files[first]))
                }
            )
            .into());
        }
        let text = read_text_capped(path, VARIANT_FILE)?;
        let spec = spec_file::spec_from_toml_str_within(&text, points_left)
            .map_err(|e| format!("{}: {e}", shown_path(path)))?;
        for v in spec.variants {
            names
                .add(&v, all.len(), &all)
                .map_err(|e| format!("{}: {e}", shown_path(path)))?;
            by_canonical
                .entry(canonical_name(&v))
                .or_insert_with(|| v.name.to_string());
            all.push(v);
        }
        for expansion in spec.sweeps {
            if let Some((_, file)) = sweep_files.iter().find(|(n, _)| *n == expansion.name) {
                return Err(format!(
                    "{}: sweep {} has the name of a sweep of {}; give each sweep its own name (it is the prefix \
                     of its points' names and what --sweep takes)",
                    shown_path(path),
                    expansion.name,
                    shown_path(&files[*file])
                )
                .into());
            }
            sweep_files.push((expansion.name.clone(), i));
            points_left -= expansion.total;
            let mut candidates = Vec::new();
            let mut already_known = Vec::new();
            let mut conflicts = Vec::new();
            for point in &expansion.points {
                if let Some(known) = by_canonical.get(&point.canonical) {
                    let known_desc = crate::catalogue::find(&all, known).expect("a known variant");
                    match crate::codegen::sweep::declared_differently(&point.desc, known_desc) {
                        None => {
                            already_known.push((point.desc.name.to_string(), known.clone()));
                            candidates.push(known.clone());
                        }
                        Some(sentence) => {
                            conflicts.push((point.desc.name.to_string(), sentence));
                        }
                    }
                    continue;
                }
                names
                    .add(&point.desc, all.len(), &all)
                    .map_err(|e| format!("{}: sweep {}: {e}", shown_path(path), expansion.name))?;
                by_canonical.insert(point.canonical.clone(), point.desc.name.to_string());
                candidates.push(point.desc.name.to_string());
                all.push(point.desc.clone());
            }
            sweeps.push(LoadedSweep {
                expansion,
                candidates,
                already_known,
                conflicts,
            });
        }
    }
    Ok(Loaded {
        all,
        catalogue_len: catalogue.len(),
        sweeps,
    })
}

/// What `mmqgen list` prints after the variant table for each sweep: its counts, then every point it refused
/// with the validator's sentence and every point it did not keep because it renders like another.
pub fn sweep_listing(sweep: &LoadedSweep) -> String {
    let e = &sweep.expansion;
    let mut s = format!("\n{}\n", e.summary());
    if !sweep.conflicts.is_empty() {
        s += &format!(
            "  and {} point(s) refused because they render like a known variant declared otherwise\n",
            sweep.conflicts.len()
        );
    }
    for (point, known) in &sweep.already_known {
        s += &format!(
            "  known:     {point} renders like the known variant {known}, which stands for it\n"
        );
    }
    for d in &e.duplicates {
        s += &format!("  duplicate: {} renders like {}\n", d.name, d.same_as);
    }
    for r in &e.refused {
        s += &format!("  refused:   {}: {}\n", r.name, r.sentence);
    }
    for (point, sentence) in &sweep.conflicts {
        s += &format!("  refused:   {point}: {sentence}\n");
    }
    s
}

/// Looks a variant up by declared or canonical name, or says which names exist.
pub fn find_variant<'a>(
    all: &'a [VariantDescription],
    name: &str,
) -> Result<&'a VariantDescription, CliError> {
    crate::catalogue::find(all, name).ok_or_else(|| {
        let names: Vec<&str> = all.iter().take(40).map(|v| v.name.as_ref()).collect();
        let more = if all.len() > names.len() {
            format!(" and {} more", all.len() - names.len())
        } else {
            String::new()
        };
        format!(
            "no variant named '{}': known variants are {}{more}",
            shown(name),
            names.join(", ")
        )
        .into()
    })
}

/// Adds `variant` to `chosen` unless a variant of its name is there already, so that each runs once.
pub(crate) fn add_once(chosen: &mut Vec<VariantDescription>, variant: &VariantDescription) {
    if !chosen.iter().any(|c| c.name == variant.name) {
        chosen.push(variant.clone());
    }
}

/// The variants `names` name ([`find_variant`]), in order, each once.
pub(crate) fn variants_named<'a>(
    all: &[VariantDescription],
    names: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<VariantDescription>, CliError> {
    let mut chosen = Vec::new();
    for name in names {
        add_once(&mut chosen, find_variant(all, name)?);
    }
    Ok(chosen)
}

/// The arguments a child process of this binary starts with: every `--variants FILE` of this run (wherever it
/// was given, before or after the subcommand), so that the child finds the same variants, then `subcommand`.
fn child_prefix(variant_files: &[PathBuf], subcommand: &str) -> Vec<std::ffi::OsString> {
    let mut prefix = Vec::new();
    for path in variant_files {
        prefix.push("--variants".into());
        prefix.push(path.clone().into_os_string());
    }
    prefix.push(subcommand.into());
    prefix
}

fn run(cli: Cli, catalogue: &[VariantDescription]) -> Result<ExitCode, CliError> {
    let loaded = variants(&cli.variants, catalogue)?;
    let all = loaded.all.clone();
    match cli.command {
        Command::Run(args) => run::run(&args, &all),
        Command::Bench(args) => bench::run(&args, &all),
        Command::Tune(args) => tune::run(&args, &loaded, &cli.variants),
        Command::Profile(args) => profile::run(&args, &all, &child_prefix(&cli.variants, "parity")),
        Command::List => {
            // `default` marks what a rule of the embedded config names (nothing where the list lacks its variants).
            let picked: Vec<String> = crate::select::Config::embedded(&all)
                .map(|c| c.rules.iter().map(|r| canonical_name(&r.variant)).collect())
                .unwrap_or_default();
            // Columns as wide as their longest entry, so that sweep points' long names stay aligned.
            let rows: Vec<[String; 6]> = all
                .iter()
                .map(|v| {
                    let canonical = canonical_name(v);
                    let default = if picked.contains(&canonical) {
                        "yes"
                    } else {
                        "-"
                    };
                    [
                        v.name.to_string(),
                        v.engine.to_string(),
                        v.mode.to_string(),
                        v.archs.to_string(),
                        default.to_string(),
                        canonical,
                    ]
                })
                .collect();
            let header =
                ["name", "engine", "mode", "archs", "default", "canonical"].map(String::from);
            let width = |i: usize| {
                rows.iter()
                    .chain([&header])
                    .map(|r| r[i].len())
                    .max()
                    .unwrap_or(0)
            };
            let (w0, w1, w2, w3, w4) = (width(0), width(1), width(2), width(3), width(4));
            for r in [&header].into_iter().chain(&rows) {
                println!(
                    "{:<w0$} {:<w1$} {:<w2$} {:<w3$} {:<w4$} {}",
                    r[0], r[1], r[2], r[3], r[4], r[5]
                );
            }
            for sweep in &loaded.sweeps {
                print!("{}", sweep_listing(sweep));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Emit { name, output } => {
            let variant = loaded.find(&name)?;
            let rendered = crate::codegen::render::render(variant)?;
            match output {
                Some(path) => std::fs::write(&path, rendered.source)
                    .map_err(|e| format!("cannot write {}: {e}", shown_path(&path)))?,
                None => print!("{}", rendered.source),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check(args) => check::run(&args, &loaded),
        Command::Q6k(command) => formats::run_q6k(command),
        Command::Gguf(command) => formats::run_gguf(command),
        Command::Config(command) => config::run_config(&command, &all),
        Command::Explain(args) => config::run_explain(&args, &all),
        Command::Parity(args) => {
            // Every case runs on the GPU: without one, one refusal instead of a failed row per case.
            if args.child.is_none() {
                if let Err(e) = crate::gpu::device::Gpu::open(0) {
                    return Err(format!(
                        "parity runs every case on a GPU, and none can be used here: {e}"
                    )
                    .into());
                }
            }
            let child = parity::ChildCommand::current_exe(child_prefix(&cli.variants, "parity"))?;
            Ok(parity::run(&args, &all, &child)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_get_every_variant_file_then_the_subcommand() {
        // `mmqgen profile --variants extra.toml --variant x` names the file after the subcommand: the parity child
        // that ncu starts must still be handed it (on 2026-12-02 it was not, and the child knew no `x`).
        let files = [PathBuf::from("a.toml"), PathBuf::from("b.toml")];
        assert_eq!(
            child_prefix(&files, "parity"),
            ["--variants", "a.toml", "--variants", "b.toml", "parity"]
                .map(std::ffi::OsString::from)
        );
        assert_eq!(
            child_prefix(&[], "parity"),
            [std::ffi::OsString::from("parity")]
        );
    }
}
