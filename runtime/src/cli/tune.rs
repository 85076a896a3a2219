//! `mmqgen tune`: time candidate variants over chosen token counts on this GPU (through [`crate::measure::bench`], the
//! same parity-then-time path as `mmqgen bench`), pick the fastest bit-exact candidate per token count, and
//! write a selection config (`[[rule]]` tables, [`crate::select`]) whose header says where it came from.
//!
//! Every candidate is first compiled with NVRTC on all the CPU cores, and those that spill or do not fit in
//! shared memory are dropped before any GPU time ([`crate::measure::tune::compile_all`]); on a GPU, each survivor is then
//! proven bit-exact on a ragged shape in a fresh process (`--parity-shape`, docs/DESIGN.md D11) before the bench
//! times the rest. Besides the config, tune writes a ranked table of every candidate as JSON lines and markdown once
//! some candidate was timed (or wherever `--ranking` says). A `--variants` file with `[[sweep]]` tables tunes its
//! sweeps' points (or `--sweep NAME`); `--compile-only` runs the CPU half alone, without a GPU. With `--shape` given
//! for several (m, K), the config holds rules per (m, K) and, last, rules for any shape from the best geometric mean
//! over the (m, K).
//!
//! This module holds the arguments and the GPU part, [`run`]; what comes after the measurements is pure and lives
//! in [`crate::measure::tune::rules`] (winners, merged rules, the config's text, parsed back and checked).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{CliError, Loaded};
use crate::check::Shape;
use crate::check::{ParityCase, Status};
use crate::codegen::{Arch, VariantDescription};
use crate::compile::cache::CubinCache;
use crate::compile::isolated::Compiler;
use crate::formats::input::shown;
use crate::gpu::device::Gpu;
use crate::gpu::weights::Layout;
use crate::measure::bench::{default_variants, run_bench, BenchConfig, DEFAULT_REPEATS};
use crate::measure::tune::rules::{
    groups, measurements, one_line, tuned_config, winners, Measured, Provenance,
};
use crate::measure::tune::{self, Compiled, GpuOutcome, RankRow, Stage};
use crate::select::{arch_from_str, Config};

/// Token counts measured when no `--tokens` is given.
pub const DEFAULT_TOKENS: [usize; 7] = [1, 8, 32, 128, 512, 2048, 4096];

fn parse_positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 is not allowed here: use at least 1".to_string()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// `mmqgen tune [--variant NAME]... [--tokens N]... [--m M] [--k K] [--output FILE] [--repeats N]`
#[derive(Args, Clone, Debug)]
pub struct TuneArgs {
    /// A candidate variant, by declared or canonical name (repeat for several; default: every variant except
    /// the dp4a engine's).
    #[arg(long = "variant", value_name = "NAME")]
    pub variant: Vec<String>,

    /// A token count n to measure (repeat for several; default: 1, 8, 32, 128, 512, 2048, 4096).
    #[arg(long = "tokens", value_name = "N", value_parser = parse_positive)]
    pub tokens: Vec<usize>,

    /// Weight rows m of every measured shape.
    #[arg(long, default_value_t = 4096, value_parser = parse_positive)]
    pub m: usize,

    /// K of every measured shape (a multiple of 256).
    #[arg(long, default_value_t = 4096, value_parser = parse_positive)]
    pub k: usize,

    /// Where to write the tuned config.
    #[arg(long, value_name = "FILE", default_value = "mmqgen.tuned.toml")]
    pub output: PathBuf,

    /// Timed calls per candidate per shape.
    #[arg(long, default_value_t = DEFAULT_REPEATS, value_parser = parse_positive)]
    pub repeats: usize,

    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub gpu: usize,

    /// Keep compiled cubins in DIR between runs (default: a scratch folder for this run, so the compile stage's
    /// cubins serve the parity and timing stages).
    #[arg(long, value_name = "DIR")]
    pub cubin_cache: Option<PathBuf>,

    /// Tune the points of this sweep of a --variants file (repeat for several). When a --variants file declares
    /// sweeps and neither --variant nor --sweep is given, every sweep's points are tuned.
    #[arg(long = "sweep", value_name = "NAME")]
    pub sweep: Vec<String>,

    /// A shape m,n,k to measure (repeat for several), instead of --tokens with --m and --k.
    #[arg(long = "shape", value_name = "M,N,K", value_parser = parse_shape, conflicts_with_all = ["tokens", "m", "k"])]
    pub shape: Vec<Shape>,

    /// The ragged shape every candidate is proven bit-exact on (every output compared), before any timing.
    #[arg(long, value_name = "M,N,K", default_value = "1000,77,2816", value_parser = parse_shape)]
    pub parity_shape: Shape,

    /// Only the CPU half: compile every candidate for --arch, drop what spills or does not fit, write the
    /// ranking files; no GPU is needed and no config is written.
    #[arg(long)]
    pub compile_only: bool,

    /// The architecture of --compile-only (a GPU run uses the GPU's).
    #[arg(
        long,
        value_name = "ARCH",
        default_value = "sm_90",
        requires = "compile_only"
    )]
    pub arch: String,

    /// Compile threads (default: every CPU core).
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub jobs: Option<usize>,

    /// Where the ranked table goes: PREFIX.jsonl and PREFIX.md. Without it, the table is written beside --output
    /// (its path without the extension, plus `.ranking`) once some candidate was timed, and not at all by
    /// --compile-only.
    #[arg(long, value_name = "PREFIX")]
    pub ranking: Option<PathBuf>,
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    s.parse()
}

/// The candidates: the named variants (`--variant`), the named sweeps' points (`--sweep`), every sweep's points
/// when the files declare sweeps and neither is given, else every variant except the dp4a engine's. Each once.
fn candidates(args: &TuneArgs, loaded: &Loaded) -> Result<Vec<VariantDescription>, CliError> {
    let (all, sweeps) = (&loaded.all, &loaded.sweeps);
    let mut names: Vec<&str> = args.variant.iter().map(String::as_str).collect();
    for wanted in &args.sweep {
        let sweep = sweeps
            .iter()
            .find(|s| s.expansion.name == *wanted)
            .ok_or_else(|| {
                let known: Vec<&str> = sweeps.iter().map(|s| s.expansion.name.as_str()).collect();
                format!(
                    "no sweep named '{}' in the --variants files: {}",
                    shown(wanted),
                    if known.is_empty() {
                        "they declare none".to_string()
                    } else {
                        format!("they declare {}", known.join(", "))
                    }
                )
            })?;
        names.extend(sweep.candidates.iter().map(String::as_str));
    }
    if names.is_empty() && args.sweep.is_empty() && !sweeps.is_empty() {
        names.extend(
            sweeps
                .iter()
                .flat_map(|s| s.candidates.iter().map(String::as_str)),
        );
    }
    if names.is_empty() {
        if !args.sweep.is_empty() {
            return Err("the named sweeps have no valid point, so there is nothing to tune".into());
        }
        // The files declare sweeps and every point was refused: tuning the catalogue instead would answer
        // another question than the one asked.
        if !sweeps.is_empty() {
            let refused: usize = sweeps.iter().map(|s| s.expansion.refused.len()).sum();
            return Err(format!(
                "the --variants files' sweeps have no valid point ({refused} refused), so there \
                 is nothing to tune: `mmqgen list` shows each refusal's sentence"
            )
            .into());
        }
        return Ok(default_variants(all));
    }
    loaded.named(names)
}

/// The measured shapes: `--shape` as given (each once, in order), else `(m, n, k)` for each distinct n of
/// `--tokens` in ascending order, each checked like `--shape`.
fn shapes(args: &TuneArgs) -> Result<Vec<Shape>, CliError> {
    if !args.shape.is_empty() {
        let mut out: Vec<Shape> = Vec::new();
        for s in &args.shape {
            if !out.contains(s) {
                out.push(*s);
            }
        }
        return Ok(out);
    }
    let mut ns = if args.tokens.is_empty() {
        DEFAULT_TOKENS.to_vec()
    } else {
        args.tokens.clone()
    };
    ns.sort_unstable();
    ns.dedup();
    ns.iter()
        .map(|&n| {
            format!("{},{n},{}", args.m, args.k)
                .parse::<Shape>()
                .map_err(|e| e.into())
        })
        .collect()
}

fn check_output(path: &Path) -> Result<(), CliError> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = parent {
        if !dir.is_dir() {
            return Err(format!(
                "cannot write {}: the folder {} does not exist",
                path.display(),
                dir.display()
            )
            .into());
        }
    }
    Ok(())
}

/// PREFIX of the ranking files: `--ranking`, else the output without its extension plus `.ranking`.
fn ranking_prefix(args: &TuneArgs) -> PathBuf {
    args.ranking
        .clone()
        .unwrap_or_else(|| args.output.with_extension("ranking"))
}

/// Writes the ranking when it holds a timing or `--ranking` asks for it (a table of dashes, unasked, would only
/// litter the folder); returns the paths written.
fn ranking_if_wanted(
    args: &TuneArgs,
    rows: &[RankRow],
    shapes: &[Shape],
    title: &str,
) -> Result<Option<(PathBuf, PathBuf)>, CliError> {
    if args.ranking.is_none() && !rows.iter().any(|r| r.stage == Stage::Timed) {
        return Ok(None);
    }
    write_ranking(&ranking_prefix(args), rows, shapes, title).map(Some)
}

/// Refuses up front when NVRTC cannot compile: every candidate would be dropped with the same sentence.
fn require_nvrtc() -> Result<(), CliError> {
    let usable = crate::compile::nvrtc_version().and_then(|found| {
        if found.0 == crate::compile::REQUIRED_NVRTC_MAJOR {
            Ok(())
        } else {
            Err(crate::compile::CompileError::WrongNvrtcVersion { found })
        }
    });
    usable.map_err(|e| {
        format!("tune compiles every candidate with NVRTC first, and it cannot be used here: {e}")
            .into()
    })
}

fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Writes PREFIX.jsonl and PREFIX.md; returns their paths.
fn write_ranking(
    prefix: &Path,
    rows: &[RankRow],
    shapes: &[Shape],
    title: &str,
) -> Result<(PathBuf, PathBuf), CliError> {
    let jsonl = with_suffix(prefix, ".jsonl");
    let md = with_suffix(prefix, ".md");
    std::fs::write(&jsonl, tune::json_lines(rows, shapes))
        .map_err(|e| format!("cannot write {}: {e}", jsonl.display()))?;
    std::fs::write(&md, tune::markdown(rows, shapes, title))
        .map_err(|e| format!("cannot write {}: {e}", md.display()))?;
    Ok((jsonl, md))
}

/// A scratch cubin folder removed when dropped (when `--cubin-cache` is not given).
struct ScratchCache(Option<PathBuf>);

impl Drop for ScratchCache {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn cubin_dir(args: &TuneArgs) -> Result<(PathBuf, ScratchCache), CliError> {
    if let Some(dir) = &args.cubin_cache {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the cubin folder {}: {e}", dir.display()))?;
        return Ok((dir.clone(), ScratchCache(None)));
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("mmqgen-tune-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot create the cubin folder {}: {e}", dir.display()))?;
    Ok((dir.clone(), ScratchCache(Some(dir))))
}

/// The CPU half: every candidate compiled for `arch` on `--jobs` threads, with a line per candidate on stderr.
fn compile_stage(
    args: &TuneArgs,
    descs: &[VariantDescription],
    arch: Arch,
    cache_dir: &Path,
    compiler: &Compiler,
) -> Vec<Compiled> {
    let jobs = args.jobs.unwrap_or_else(tune::default_jobs);
    let t = Instant::now();
    eprintln!(
        "tune: compiling {} candidate(s) for {arch} on {jobs} thread(s)",
        descs.len()
    );
    let cache = CubinCache::new(cache_dir.to_path_buf());
    let compiled = tune::compile_all(descs, arch, Some(&cache), compiler, jobs, &|line: &str| {
        eprintln!("tune: {line}")
    });
    let kept = compiled.iter().filter(|c| c.result.is_ok()).count();
    eprintln!(
        "tune: compiled in {:.1} s: {kept} kept, {} dropped before any GPU time",
        t.elapsed().as_secs_f64(),
        compiled.len() - kept
    );
    compiled
}

pub fn run(args: &TuneArgs, loaded: &Loaded, files: &[PathBuf]) -> Result<ExitCode, CliError> {
    let all = &loaded.all;
    let descs = candidates(args, loaded)?;
    let shapes = shapes(args)?;
    // Each compile in a child process: a crash of NVRTC drops that candidate, not the run.
    let compiler = super::compiler()?;
    if args.compile_only {
        let arch = arch_from_str(&args.arch).ok_or_else(|| {
            format!(
                "unknown architecture '{}': mmqgen targets {}",
                shown(&args.arch),
                crate::codegen::arch::supported_list()
            )
        })?;
        // --compile-only writes nothing to --output: only an asked-for ranking needs its folder.
        if args.ranking.is_some() {
            check_output(&ranking_prefix(args))?;
        }
        require_nvrtc()?;
        let (cache_dir, _scratch) = cubin_dir(args)?;
        let compiled = compile_stage(args, &descs, arch, &cache_dir, &compiler);
        let rows = tune::rank(&compiled, &[], &shapes);
        let title = format!(
            "mmqgen tune --compile-only: {} candidate(s) for {arch}",
            descs.len()
        );
        let written = ranking_if_wanted(args, &rows, &shapes, &title)?;
        // Each drop was said once, with its reason, as it happened (above, on stderr).
        let kept = rows.iter().filter(|r| r.stage == Stage::Compiled).count();
        let dropped = rows.len() - kept;
        println!(
            "{kept} of {} candidate(s) compiled cleanly for {arch}, {dropped} dropped{}{}",
            rows.len(),
            if dropped > 0 {
                " (each with its reason above)"
            } else {
                ""
            },
            written.map_or(String::new(), |(jsonl, md)| format!(
                "; wrote {} and {}",
                jsonl.display(),
                md.display()
            ))
        );
        return Ok(ExitCode::SUCCESS);
    }
    check_output(&args.output)?;
    check_output(&ranking_prefix(args))?;
    let gpu = Gpu::open(args.gpu).map_err(|e| {
        format!("tune needs a GPU to prove and time the candidates, and none can be used here (--compile-only runs the CPU half alone): {e}")
    })?;
    require_nvrtc()?;
    let (cache_dir, _scratch) = cubin_dir(args)?;
    let info = gpu.info().clone();
    let arch = arch_from_str(&info.arch).ok_or_else(|| {
        format!(
            "{} ({}), so there is nothing to tune",
            crate::codegen::arch::unknown_gpu_sentence(info.compute_capability),
            info.name
        )
    })?;
    let started = Instant::now();
    let compiled = compile_stage(args, &descs, arch, &cache_dir, &compiler);

    // Parity on the ragged shape, each candidate in a fresh process (several at a time), before any timing.
    let mut prefix_args: Vec<std::ffi::OsString> = Vec::new();
    for path in files {
        prefix_args.push("--variants".into());
        prefix_args.push(path.clone().into_os_string());
    }
    prefix_args.push("parity".into());
    let child = super::parity::ChildCommand::current_exe(prefix_args)?;
    let survivors: Vec<&VariantDescription> = descs
        .iter()
        .zip(&compiled)
        .filter(|(_, c)| c.result.is_ok())
        .map(|(d, _)| d)
        .collect();
    let case = ParityCase::new(args.parity_shape, Layout::Padded, 1);
    let t = Instant::now();
    eprintln!(
        "tune: proving {} candidate(s) bit-exact on {} (padded layout), each in a fresh process",
        survivors.len(),
        args.parity_shape
    );
    let done = AtomicUsize::new(0);
    let total = survivors.len();
    let proofs: Vec<Result<(), String>> = parallel(&survivors, PARITY_PROCESSES, |desc| {
        let (row, line) = super::parity::prove_in_child(
            &child,
            desc,
            case.clone(),
            args.gpu,
            Some(&cache_dir),
            Duration::from_secs(300),
        );
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        eprintln!("tune: parity [{n}/{total}] {line}");
        if row.status == Status::Pass {
            Ok(())
        } else {
            Err(format!(
                "not bit-exact on {}: {}",
                args.parity_shape,
                one_line(&line)
            ))
        }
    });
    let proven: Vec<VariantDescription> = survivors
        .iter()
        .zip(&proofs)
        .filter(|(_, p)| p.is_ok())
        .map(|(d, _)| (*d).clone())
        .collect();
    eprintln!(
        "tune: {} of {total} proven in {:.1} s",
        proven.len(),
        t.elapsed().as_secs_f64()
    );

    let cfg = BenchConfig {
        shapes: shapes.clone(),
        repeats: args.repeats,
        cublas: false,
        cubin_cache: Some(cache_dir.clone()),
        // Tuning ranks candidates against each other: the read floor would only cost time.
        floor: crate::measure::bench::FloorMode::Off,
        ..BenchConfig::default()
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "tune: WARNING: this mmqgen is an unoptimized build; the CPU side runs about 10x slower (GPU times \
             are unaffected): use cargo build --release"
        );
    }
    eprintln!(
        "tune: timing {} candidate(s) x {} shape(s), {} timed calls each",
        proven.len(),
        cfg.shapes.len(),
        cfg.repeats
    );
    if proven.is_empty() {
        let rows = tune::rank(
            &compiled,
            &gpu_outcomes(&survivors, &proofs, &[], &shapes),
            &shapes,
        );
        ranking_if_wanted(args, &rows, &shapes, "mmqgen tune")?;
        return Err(
            "no candidate compiled cleanly and passed parity, so there is nothing to time".into(),
        );
    }
    let report = run_bench(&gpu, &proven, &cfg, &mut |line: &str| eprintln!("{line}"))?;
    let measured = measurements(&report, &proven);
    let prov = Provenance {
        gpu: report.info.gpu.clone(),
        arch,
        multiprocessors: report.info.multiprocessors,
        driver: report.info.driver_release.clone(),
        driver_cuda: report.info.driver_cuda.clone(),
        nvrtc: report.info.nvrtc.clone(),
        date: report.info.date.clone(),
        commit: report.info.commit.clone(),
        mk: groups(&measured).into_iter().map(|(mk, _)| mk).collect(),
        warmup: cfg.warmup,
        repeats: cfg.repeats,
        parity_samples: cfg.parity_samples,
        aborted: report.aborted.clone(),
    };
    let rows = tune::rank(
        &compiled,
        &gpu_outcomes(&survivors, &proofs, &measured, &shapes),
        &shapes,
    );
    let title = format!(
        "mmqgen tune: {} candidate(s) on an {} ({arch}), commit {}, {}",
        descs.len(),
        prov.gpu,
        prov.commit,
        prov.date
    );
    let written = ranking_if_wanted(args, &rows, &shapes, &title)?;
    let catalogue = &all[..loaded.catalogue_len];
    let tuned = tuned_config(&prov, &measured, catalogue, all)?;
    std::fs::write(&args.output, &tuned.text)
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;

    let mut incomplete = report.aborted.is_some();
    for m in &measured {
        for c in &m.candidates {
            if let Err(why) = &c.result {
                println!(
                    "{},{},{}: {} not selectable: {}",
                    m.m,
                    m.n,
                    m.k,
                    c.name,
                    one_line(why)
                );
            }
        }
        if !winners(std::slice::from_ref(m)).iter().any(|w| w.0 == m.n) {
            println!(
                "{},{},{}: no candidate passed parity, so this shape chose nothing",
                m.m, m.n, m.k
            );
            incomplete = true;
        }
    }
    for note in &tuned.notes {
        println!("note: {note}");
    }
    let config = Config::parse(&tuned.text, catalogue)?;
    for rule in &config.rules {
        println!("{}: {}", rule.label(), rule.summary());
    }
    println!(
        "wrote {}{} in {:.0} s",
        args.output.display(),
        written.map_or(String::new(), |(jsonl, md)| format!(
            ", {} and {}",
            jsonl.display(),
            md.display()
        )),
        started.elapsed().as_secs_f64()
    );
    Ok(if incomplete {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Parity processes run at once on the one GPU: enough to hide process start-up, few enough for its memory.
const PARITY_PROCESSES: usize = 4;

/// `f` over `items` on up to `threads` scoped threads, results in item order.
fn parallel<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<R>>> =
        items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1).min(items.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|s| s.into_inner().ok().flatten())
        .collect()
}

/// What the GPU half found per compiled candidate, for [`tune::rank`].
fn gpu_outcomes(
    survivors: &[&VariantDescription],
    proofs: &[Result<(), String>],
    measured: &[Measured],
    shapes: &[Shape],
) -> Vec<GpuOutcome> {
    survivors
        .iter()
        .zip(proofs)
        .map(|(d, p)| GpuOutcome {
            name: d.name.to_string(),
            parity: p.clone(),
            timings: shapes
                .iter()
                .map(|s| {
                    measured
                        .iter()
                        .find(|m| (m.m, m.n, m.k) == (s.m, s.n, s.k))
                        .and_then(|m| m.candidates.iter().find(|c| c.name == d.name))
                        .map_or_else(|| Err("not measured".to_string()), |c| c.result.clone())
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Result<TuneArgs, String> {
        crate::cli::parse_args::<TuneArgs>(std::iter::once("tune").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_arguments() {
        let a = parse(&[]).unwrap();
        assert!(a.variant.is_empty() && a.tokens.is_empty());
        assert_eq!((a.m, a.k, a.repeats), (4096, 4096, DEFAULT_REPEATS));
        assert_eq!(a.output, PathBuf::from("mmqgen.tuned.toml"));
        let s = shapes(&a).unwrap();
        assert_eq!(
            s.iter().map(|s| s.n).collect::<Vec<usize>>(),
            DEFAULT_TOKENS
        );
        assert!(s.iter().all(|s| s.m == 4096 && s.k == 4096));
        let a = parse(&[
            "--tokens", "64", "--tokens", "2", "--tokens", "64", "--k", "14336",
        ])
        .unwrap();
        let s = shapes(&a).unwrap();
        assert_eq!(
            s,
            vec![Shape::new(4096, 2, 14336), Shape::new(4096, 64, 14336)]
        );
        let a = parse(&["--k", "300"]).unwrap();
        assert!(shapes(&a).unwrap_err().to_string().contains("256"));
        assert!(parse(&["--tokens", "0"])
            .unwrap_err()
            .contains("at least 1"));
        assert!(parse(&["--repeats", "0"]).is_err());

        let all = crate::catalogue::all();
        let loaded = Loaded {
            all: all.clone(),
            catalogue_len: all.len(),
            sweeps: vec![],
        };
        assert_eq!(
            candidates(&parse(&[]).unwrap(), &loaded).unwrap(),
            default_variants(&all)
        );
        let a = parse(&["--variant", "r41", "--variant", "r41", "--variant", "r56"]).unwrap();
        let v = candidates(&a, &loaded).unwrap();
        assert_eq!(
            v.iter().map(|v| v.name.as_ref()).collect::<Vec<&str>>(),
            ["r41", "r56"]
        );
        let a = parse(&["--variant", "nope"]).unwrap();
        assert!(candidates(&a, &loaded).is_err());
    }
}
