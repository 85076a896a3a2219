//! `mmqgen tune`: time candidate variants over chosen token counts on this GPU (through [`crate::measure::bench`], the
//! same parity-then-time path as `mmqgen bench`), pick the fastest bit-exact candidate per token count, and
//! write a selection config (`[[rule]]` tables, [`crate::select`]) whose header says where it came from.
//!
//! Every candidate is first compiled with NVRTC on all the CPU cores, and those that spill or do not fit in
//! shared memory are dropped before any GPU time ([`crate::measure::tune::compile_all`]); on a GPU, each survivor is then
//! proven bit-exact on a ragged shape in a fresh process (`--parity-shape`, DECISIONS.md 11) before the bench
//! times the rest. Besides the config, tune writes a ranked table of every candidate as JSON lines and markdown
//! (`--ranking`). A `--variants` file with `[[sweep]]` tables tunes its sweeps' points (or `--sweep NAME`);
//! `--compile-only` runs the CPU half alone, without a GPU. With `--shape` given for several (m, K), the config
//! holds rules per (m, K) and, last, rules for any shape from the best geometric mean over the (m, K).
//!
//! The GPU part is [`run`]; everything after the measurements is pure ([`measurements`] aside, which only
//! reads a [`BenchReport`]): [`winners`] -> [`merge_rules`] -> [`render_config`] -> [`tuned_config`], which
//! parses the text back and refuses it when `config check` would find a problem.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{find_variant, CliError, Loaded, LoadedSweep};
use crate::check::Shape;
use crate::check::{ParityCase, Status};
use crate::codegen::{Arch, VariantDescription};
use crate::compile::cache::CubinCache;
use crate::formats::input::shown;
use crate::gpu::device::Gpu;
use crate::gpu::weights::Layout;
use crate::measure::bench::{
    default_variants, run_bench, BenchConfig, BenchReport, Outcome, DEFAULT_REPEATS,
};
use crate::measure::tune::{self, Compiled, GpuOutcome, RankRow, Stage};
use crate::select::{arch_from_str, Bounds, Config};

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

    /// Where the ranked table goes: PREFIX.jsonl and PREFIX.md (default: the --output path without its
    /// extension, plus `.ranking`).
    #[arg(long, value_name = "PREFIX")]
    pub ranking: Option<PathBuf>,
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    s.parse()
}

/// One candidate at one token count: its median (µs), or why it cannot be chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub name: String,
    pub result: Result<f64, String>,
}

/// Every candidate at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub candidates: Vec<Candidate>,
}

/// What the measurements were taken on and with, for the header.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// `NVIDIA H200`.
    pub gpu: String,
    pub arch: Arch,
    pub multiprocessors: u32,
    /// `580.159.04`, or `unknown`.
    pub driver: String,
    /// The CUDA version the driver supports, `13.0`.
    pub driver_cuda: String,
    pub nvrtc: String,
    /// `2026-11-29T14:03:12Z`.
    pub date: String,
    pub commit: String,
    /// The measured (m, K), in order.
    pub mk: Vec<(usize, usize)>,
    pub warmup: usize,
    pub repeats: usize,
    pub parity_samples: usize,
    /// Why the run stopped early, when it did.
    pub aborted: Option<String>,
}

/// One rule of the tuned config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunedRule {
    pub name: String,
    pub tokens: Bounds,
    /// Only for this m and K (rules per (m, K) when several were measured).
    pub m: Option<usize>,
    pub k: Option<usize>,
    pub variant: String,
}

/// The tuned config's text and what `config check` says about it beyond problems (overlaps, numerics-mode
/// mixes), one sentence each.
#[derive(Clone, Debug)]
pub struct Tuned {
    pub text: String,
    pub notes: Vec<String>,
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<&str>>().join(" ")
}

/// The fastest candidate that was built and passed parity at each token count, `(n, variant, median)`, in
/// ascending n; a token count where none did is left out (the header says so). Ties go to the candidate
/// listed first.
pub fn winners(measured: &[Measured]) -> Vec<(usize, String, f64)> {
    let mut out: Vec<(usize, String, f64)> = measured
        .iter()
        .filter_map(|m| {
            m.candidates
                .iter()
                .filter_map(|c| match &c.result {
                    Ok(us) if us.is_finite() => Some((c.name.as_str(), *us)),
                    _ => None,
                })
                .fold(None::<(&str, f64)>, |best, (name, us)| match best {
                    Some((_, b)) if b <= us => best,
                    _ => Some((name, us)),
                })
                .map(|(name, us)| (m.n, name.to_string(), us))
        })
        .collect();
    out.sort_by_key(|w| w.0);
    out.dedup_by_key(|w| w.0);
    out
}

/// Rules for the winners (ascending n): consecutive token counts with the same winner share a rule; the
/// boundary between two measured counts a and b lies halfway (a rule ends at `(a + b) / 2`); the first rule
/// starts at 1 and the last is open-ended.
pub fn merge_rules(arch: Arch, winners: &[(usize, String)]) -> Vec<TunedRule> {
    let mut rules: Vec<TunedRule> = Vec::new();
    for (i, (n, variant)) in winners.iter().enumerate() {
        let max = winners
            .get(i + 1)
            .map(|(next, _)| ((*n as u64) + (*next as u64)) / 2);
        match rules.last_mut() {
            Some(last) if last.variant == *variant => last.tokens.max = max,
            _ => {
                let min = rules.last().and_then(|r| r.tokens.max).map_or(1, |m| m + 1);
                rules.push(TunedRule {
                    name: String::new(),
                    tokens: Bounds { min, max },
                    m: None,
                    k: None,
                    variant: variant.clone(),
                });
            }
        }
    }
    let arch_tag = arch.keyword().replace('_', "");
    for r in &mut rules {
        r.name = match r.tokens.max {
            Some(max) => format!("tuned-{arch_tag}-n{}-{max}", r.tokens.min),
            None => format!("tuned-{arch_tag}-n{}-up", r.tokens.min),
        };
    }
    rules
}

fn fmt_us(us: f64) -> String {
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

/// The measured (m, K) in first-seen order, and the measurements of each.
pub fn groups(measured: &[Measured]) -> Vec<((usize, usize), Vec<Measured>)> {
    let mut out: Vec<((usize, usize), Vec<Measured>)> = Vec::new();
    for m in measured {
        match out.iter_mut().find(|(mk, _)| *mk == (m.m, m.k)) {
            Some((_, list)) => list.push(m.clone()),
            None => out.push(((m.m, m.k), vec![m.clone()])),
        }
    }
    out
}

/// For each n measured at several (m, K): every candidate's geometric mean over those (m, K) of its median over
/// the best median there (1.0 = fastest at each), as a [`Measured`] with m = K = 0, so that [`winners`] picks the
/// best candidate for shapes no (m, K) rule covers. A candidate not timed at every (m, K) of an n is not eligible.
pub fn across_shapes(measured: &[Measured]) -> Vec<Measured> {
    let mut ns: Vec<usize> = measured.iter().map(|m| m.n).collect();
    ns.sort_unstable();
    ns.dedup();
    ns.iter()
        .map(|&n| {
            let at: Vec<&Measured> = measured.iter().filter(|m| m.n == n).collect();
            let best: Vec<Option<f64>> = at
                .iter()
                .map(|m| {
                    m.candidates
                        .iter()
                        .filter_map(|c| c.result.as_ref().ok().copied())
                        .filter(|us| us.is_finite() && *us > 0.0)
                        .min_by(f64::total_cmp)
                })
                .collect();
            let mut names: Vec<&str> = Vec::new();
            for m in &at {
                for c in &m.candidates {
                    if !names.contains(&c.name.as_str()) {
                        names.push(&c.name);
                    }
                }
            }
            let candidates = names
                .iter()
                .map(|name| {
                    let mut log_sum = 0.0;
                    for (m, best) in at.iter().zip(&best) {
                        let us = m
                            .candidates
                            .iter()
                            .find(|c| c.name == *name)
                            .and_then(|c| c.result.as_ref().ok().copied())
                            .filter(|us| us.is_finite() && *us > 0.0);
                        match (us, best) {
                            (Some(us), Some(b)) => log_sum += (us / b).ln(),
                            _ => {
                                return Candidate {
                                    name: name.to_string(),
                                    result: Err(format!("not timed at m = {}, k = {}", m.m, m.k)),
                                }
                            }
                        }
                    }
                    Candidate {
                        name: name.to_string(),
                        result: Ok((log_sum / at.len() as f64).exp()),
                    }
                })
                .collect();
            Measured {
                m: 0,
                n,
                k: 0,
                candidates,
            }
        })
        .collect()
}

/// The rules for `measured`: with one (m, K), the winners per n ([`merge_rules`]); with several, first rules
/// limited to each (m, K), then rules for any shape from [`across_shapes`].
pub fn tuned_rules(arch: Arch, measured: &[Measured]) -> Vec<TunedRule> {
    let names = |w: Vec<(usize, String, f64)>| -> Vec<(usize, String)> {
        w.into_iter().map(|(n, v, _)| (n, v)).collect()
    };
    let groups = groups(measured);
    if groups.len() <= 1 {
        return merge_rules(arch, &names(winners(measured)));
    }
    let mut rules = Vec::new();
    for ((m, k), list) in &groups {
        for mut r in merge_rules(arch, &names(winners(list))) {
            r.name = r.name.replacen("tuned-", &format!("tuned-m{m}-k{k}-"), 1);
            r.m = Some(*m);
            r.k = Some(*k);
            rules.push(r);
        }
    }
    rules.extend(merge_rules(arch, &names(winners(&across_shapes(measured)))));
    rules
}

/// The config text: the provenance header (GPU, driver, NVRTC, date, commit, shapes, every candidate's
/// median per shape and every failure with its reason), `[[variant]]` tables for `declare` (selected variants
/// the catalogue does not hold, such as sweep points), then one `[[rule]]` per rule.
pub fn render_config(
    prov: &Provenance,
    measured: &[Measured],
    rules: &[TunedRule],
    declare: &[VariantDescription],
) -> String {
    let groups = groups(measured);
    let several = groups.len() > 1;
    let mut s = String::new();
    s += "# mmqgen selection config written by `mmqgen tune`. Check it with `mmqgen config check FILE`; ask it\n";
    s += "# with `mmqgen explain --config FILE --arch .. --m .. --n .. --k ..`.\n#\n";
    s += &format!(
        "# Provenance: measured on an {} ({}, {} SMs), driver {} (CUDA {}), NVRTC {}, commit {}, {}.\n",
        prov.gpu,
        prov.arch,
        prov.multiprocessors,
        prov.driver,
        prov.driver_cuda,
        prov.nvrtc,
        prov.commit,
        prov.date
    );
    let ns_of = |list: &[Measured]| -> String {
        let mut ns: Vec<usize> = list.iter().map(|m| m.n).collect();
        ns.sort_unstable();
        ns.dedup();
        ns.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let shapes_text = match prov.mk.as_slice() {
        [(m, k)] => format!("m x n x k = {m} x n x {k}, n = {}", ns_of(measured)),
        _ => groups
            .iter()
            .map(|((m, k), list)| format!("m x n x k = {m} x n x {k}, n = {}", ns_of(list)))
            .collect::<Vec<_>>()
            .join("; "),
    };
    s += &format!(
        "# Shapes: {shapes_text}; {} warm-up and {} timed calls per candidate per shape (CUDA\n",
        prov.warmup, prov.repeats
    );
    s += &format!(
        "# events, rotated inputs). Each candidate first passed parity alone on poisoned output ({} sampled\n",
        prov.parity_samples
    );
    s += "# outputs and every quantized activation, bit for bit) before it was timed; one that failed to compile\n";
    s += "# or failed parity is listed with its reason and never selected.\n";
    if let Some(why) = &prov.aborted {
        s += &format!("# The run stopped early: {}\n", one_line(why));
    }
    s += "# Medians in us (activation quantization included), fastest first; * marks the winner:\n";
    for ((m, k), list) in &groups {
        let won = winners(list);
        let mut ns: Vec<usize> = list.iter().map(|m| m.n).collect();
        ns.sort_unstable();
        ns.dedup();
        for n in &ns {
            let mut timed: Vec<(&str, f64)> = Vec::new();
            let mut failed: Vec<String> = Vec::new();
            for meas in list.iter().filter(|meas| meas.n == *n) {
                for c in &meas.candidates {
                    match &c.result {
                        Ok(us) if us.is_finite() => timed.push((c.name.as_str(), *us)),
                        Ok(us) => failed.push(format!("{} (median {us} is not a time)", c.name)),
                        Err(why) => failed.push(format!("{} ({})", c.name, one_line(why))),
                    }
                }
            }
            timed.sort_by(|a, b| a.1.total_cmp(&b.1));
            let winner = won.iter().find(|w| w.0 == *n).map(|w| w.1.as_str());
            let cells: Vec<String> = timed
                .iter()
                .map(|(name, us)| {
                    let mark = if Some(*name) == winner { "*" } else { "" };
                    format!("{mark}{name} {}", fmt_us(*us))
                })
                .collect();
            let timed_text = if cells.is_empty() {
                "no candidate passed parity and was timed, so this n chose nothing".to_string()
            } else {
                cells.join(", ")
            };
            let at = if several {
                format!("m = {m}, k = {k}, n = {n}")
            } else {
                format!("n = {n}")
            };
            s += &format!("#   {at}: {timed_text}\n");
            for f in failed {
                s += &format!("#     failed: {f}\n");
            }
        }
    }
    if several {
        s += "# Across the (m, k), geometric mean of each candidate's median over the best there (1.000 = fastest\n";
        s += "# at every (m, k)); it chooses the rules for any other shape:\n";
        let across = across_shapes(measured);
        let won = winners(&across);
        for meas in &across {
            let mut timed: Vec<(&str, f64)> = meas
                .candidates
                .iter()
                .filter_map(|c| c.result.as_ref().ok().map(|x| (c.name.as_str(), *x)))
                .collect();
            timed.sort_by(|a, b| a.1.total_cmp(&b.1));
            let winner = won.iter().find(|w| w.0 == meas.n).map(|w| w.1.as_str());
            let cells: Vec<String> = timed
                .iter()
                .take(5)
                .map(|(name, x)| {
                    let mark = if Some(*name) == winner { "*" } else { "" };
                    format!("{mark}{name} {x:.3}")
                })
                .collect();
            s += &format!(
                "#   n = {}: {}{}\n",
                meas.n,
                cells.join(", "),
                if timed.len() > 5 {
                    format!(" and {} more", timed.len() - 5)
                } else {
                    String::new()
                }
            );
        }
    }
    s += "# Rules: the winner per n; consecutive n with the same winner share a rule, each boundary lies halfway\n";
    s +=
        "# between two measured n, the first rule starts at n = 1 and the last is open-ended.\n#\n";
    s += "# Format: [[rule]] tables, first match wins. arch = \"sm_80\" | \"sm_90\"; tokens (n), and optionally m\n";
    s += "# and k, as an integer (exactly), [min, max] (inclusive) or { min = .. } (open-ended); variant = a\n";
    s += "# declared or canonical name.\n";
    for d in declare {
        s += "\n";
        s += &crate::codegen::spec_file::variant_toml(d);
    }
    for r in rules {
        let tokens = match r.tokens.max {
            Some(max) => format!("[{}, {max}]", r.tokens.min),
            None => format!("{{ min = {} }}", r.tokens.min),
        };
        let limits = match (r.m, r.k) {
            (Some(m), Some(k)) => format!("m = {m}\nk = {k}\n"),
            _ => String::new(),
        };
        s += &format!(
            "\n[[rule]]\nname = \"{}\"\narch = \"{}\"\ntokens = {tokens}\n{limits}variant = \"{}\"\n",
            r.name,
            prov.arch.keyword(),
            r.variant
        );
    }
    s
}

/// The tuned config for these measurements, parsed back with [`Config::parse`] against `catalogue` and
/// refused when no shape has a winner or `config check` finds a problem (gaps, dead rules). A selected variant
/// that `catalogue` does not know but `extra` holds (a sweep point, a variant of a --variants file) is declared
/// in the config as a `[[variant]]` table, so that the config stands alone.
pub fn tuned_config(
    prov: &Provenance,
    measured: &[Measured],
    catalogue: &[VariantDescription],
    extra: &[VariantDescription],
) -> Result<Tuned, CliError> {
    if winners(measured).is_empty() {
        return Err(
            "no candidate was built and passed parity at any measured token count, so there is nothing to select"
                .into(),
        );
    }
    let rules = tuned_rules(prov.arch, measured);
    let mut declare: Vec<VariantDescription> = Vec::new();
    for r in &rules {
        if crate::catalogue::find(catalogue, &r.variant).is_some()
            || declare.iter().any(|d| d.name == r.variant)
        {
            continue;
        }
        if let Some(d) = crate::catalogue::find(extra, &r.variant) {
            declare.push(d.clone());
        }
    }
    let text = render_config(prov, measured, &rules, &declare);
    let config = Config::parse(&text, catalogue).map_err(|e| {
        format!("the tuned config does not parse back ({e}); this is a bug in mmqgen tune")
    })?;
    // The config is for this GPU's architecture only: the other architectures' gaps are true but expected
    // (they stay in the notes, and `config check` reports them).
    let findings = config.check();
    let own = |f: &&crate::select::Finding| !matches!(f, crate::select::Finding::Gap { arch, .. } if *arch != prov.arch);
    if let Some(problem) = findings.iter().filter(own).find(|f| f.is_problem()) {
        return Err(format!(
            "the tuned config fails its check ({problem}); this is a bug in mmqgen tune"
        )
        .into());
    }
    Ok(Tuned {
        text,
        notes: findings.iter().map(ToString::to_string).collect(),
    })
}

/// The candidates' results per measured token count, from a bench run over `(m, n, k)` shapes: a candidate
/// that was not built, not timed (parity failed, the parity run failed) or missing carries the reason.
pub fn measurements(report: &BenchReport, descs: &[VariantDescription]) -> Vec<Measured> {
    report
        .shapes
        .iter()
        .map(|shape| Measured {
            m: shape.shape.m,
            n: shape.shape.n,
            k: shape.shape.k,
            candidates: descs
                .iter()
                .map(|d| {
                    let name = d.name.to_string();
                    let build = report.builds.iter().find(|b| b.name == name);
                    let result = match (build.map(|b| &b.result), shape.variant(&name)) {
                        (Some(Err(e)), _) => Err(format!("not built: {e}")),
                        (_, Some(v)) => match &v.total {
                            Outcome::Timed(stats) => Ok(stats.median),
                            Outcome::NotTimed(why) => Err(why.clone()),
                        },
                        (_, None) => Err(match &shape.error {
                            Some(e) => format!("not measured: {e}"),
                            None => "not measured".to_string(),
                        }),
                    };
                    Candidate { name, result }
                })
                .collect(),
        })
        .collect()
}

/// The candidates: the named variants (`--variant`), the named sweeps' points (`--sweep`), every sweep's points
/// when the files declare sweeps and neither is given, else every variant except the dp4a engine's. Each once.
fn candidates(
    args: &TuneArgs,
    all: &[VariantDescription],
    sweeps: &[LoadedSweep],
) -> Result<Vec<VariantDescription>, CliError> {
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
        return Ok(default_variants(all));
    }
    let mut chosen: Vec<VariantDescription> = Vec::new();
    for name in names {
        let v = find_variant(all, name)?;
        if !chosen.iter().any(|c| c.name == v.name) {
            chosen.push(v.clone());
        }
    }
    Ok(chosen)
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
) -> Vec<Compiled> {
    let jobs = args.jobs.unwrap_or_else(tune::default_jobs);
    let t = Instant::now();
    eprintln!(
        "tune: compiling {} candidate(s) for {arch} on {jobs} thread(s)",
        descs.len()
    );
    let cache = CubinCache::new(cache_dir.to_path_buf());
    let compiled = tune::compile_all(descs, arch, Some(&cache), jobs, &|line: &str| {
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
    let descs = candidates(args, all, &loaded.sweeps)?;
    let shapes = shapes(args)?;
    check_output(&args.output)?;
    let prefix = ranking_prefix(args);
    check_output(&prefix)?;
    let (cache_dir, _scratch) = cubin_dir(args)?;
    if args.compile_only {
        let arch = arch_from_str(&args.arch).ok_or_else(|| {
            format!(
                "unknown architecture '{}': mmqgen targets sm_80 and sm_90",
                shown(&args.arch)
            )
        })?;
        let compiled = compile_stage(args, &descs, arch, &cache_dir);
        let rows = tune::rank(&compiled, &[], &shapes);
        let title = format!(
            "mmqgen tune --compile-only: {} candidate(s) for {arch}",
            descs.len()
        );
        let (jsonl, md) = write_ranking(&prefix, &rows, &shapes, &title)?;
        for r in rows.iter().filter(|r| r.stage == Stage::Compile) {
            println!(
                "dropped {}: {}",
                r.name,
                one_line(r.reason.as_deref().unwrap_or(""))
            );
        }
        let kept = rows.iter().filter(|r| r.stage == Stage::Compiled).count();
        println!(
            "{kept} of {} candidate(s) compiled cleanly for {arch}; wrote {} and {}",
            rows.len(),
            jsonl.display(),
            md.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let gpu = Gpu::open(args.gpu).map_err(|e| {
        format!("tune needs a GPU to prove and time the candidates, and none can be used here (--compile-only runs the CPU half alone): {e}")
    })?;
    let info = gpu.info().clone();
    let arch = arch_from_str(&info.arch).ok_or_else(|| {
        format!(
            "the GPU is {} ({}), an architecture mmqgen does not target, so there is nothing to tune",
            info.name, info.arch
        )
    })?;
    let started = Instant::now();
    let compiled = compile_stage(args, &descs, arch, &cache_dir);

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
        write_ranking(&prefix, &rows, &shapes, "mmqgen tune")?;
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
    let (jsonl, md) = write_ranking(&prefix, &rows, &shapes, &title)?;
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
        "wrote {}, {} and {} in {:.0} s",
        args.output.display(),
        jsonl.display(),
        md.display(),
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
    use crate::select::{Finding, CHECK_MAX_TOKENS};

    fn parse(argv: &[&str]) -> Result<TuneArgs, String> {
        crate::cli::parse_args::<TuneArgs>(std::iter::once("tune").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())
    }

    fn ok(name: &str, us: f64) -> Candidate {
        Candidate {
            name: name.to_string(),
            result: Ok(us),
        }
    }

    fn bad(name: &str, why: &str) -> Candidate {
        Candidate {
            name: name.to_string(),
            result: Err(why.to_string()),
        }
    }

    fn prov() -> Provenance {
        Provenance {
            gpu: "NVIDIA H200".into(),
            arch: Arch::Sm90,
            multiprocessors: 132,
            driver: "580.159.04".into(),
            driver_cuda: "13.0".into(),
            nvrtc: "13.0".into(),
            date: "2026-11-29T15:41:28Z".into(),
            commit: "5d67d6d".into(),
            mk: vec![(4096, 4096)],
            warmup: 3,
            repeats: 20,
            parity_samples: 1024,
            aborted: None,
        }
    }

    /// Two real sm_90 variants of the catalogue (so the text parses back).
    fn names() -> (String, String) {
        ("prefolded_small_n".into(), "prefolded_per256_wide_n".into())
    }

    fn sample() -> Vec<Measured> {
        let (small, wide) = names();
        vec![
            Measured {
                m: 4096,
                k: 4096,
                n: 1,
                candidates: vec![ok(&small, 18.8), ok(&wide, 51.9)],
            },
            Measured {
                m: 4096,
                k: 4096,
                n: 8,
                candidates: vec![ok(&small, 19.5), ok(&wide, 27.5)],
            },
            Measured {
                m: 4096,
                k: 4096,
                n: 32,
                candidates: vec![ok(&small, 28.2), ok(&wide, 42.6)],
            },
            Measured {
                m: 4096,
                k: 4096,
                n: 128,
                // The fastest candidate failed parity: it must not win.
                candidates: vec![
                    ok(&small, 60.0),
                    ok(&wide, 53.7),
                    bad("r41", "parity failed: 3 of 5120 sampled outputs differ"),
                ],
            },
            Measured {
                m: 4096,
                k: 4096,
                n: 512,
                candidates: vec![
                    ok(&small, 300.0),
                    ok(&wide, 107.0),
                    bad("r56", "not built: NVRTC failed:\nerror: x"),
                ],
            },
        ]
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
        assert_eq!(
            candidates(&parse(&[]).unwrap(), &all, &[]).unwrap(),
            default_variants(&all)
        );
        let a = parse(&["--variant", "r41", "--variant", "r41", "--variant", "r56"]).unwrap();
        let v = candidates(&a, &all, &[]).unwrap();
        assert_eq!(
            v.iter().map(|v| v.name.as_ref()).collect::<Vec<&str>>(),
            ["r41", "r56"]
        );
        let a = parse(&["--variant", "nope"]).unwrap();
        assert!(candidates(&a, &all, &[]).is_err());
    }

    #[test]
    fn winners_are_the_fastest_passing_candidate() {
        let (small, wide) = names();
        let w = winners(&sample());
        let got: Vec<(usize, &str)> = w.iter().map(|(n, v, _)| (*n, v.as_str())).collect();
        assert_eq!(
            got,
            [
                (1, small.as_str()),
                (8, &small),
                (32, &small),
                (128, &wide),
                (512, &wide)
            ]
        );
        assert_eq!(w[3].2, 53.7);
    }

    #[test]
    fn a_failed_candidate_is_never_selected() {
        // r41 fails everywhere (faster would not matter); x fails to build; a NaN median is not a time.
        let measured = vec![
            Measured {
                m: 4096,
                k: 4096,
                n: 1,
                candidates: vec![
                    bad("r41", "parity failed: 1 of 1024 sampled outputs differ"),
                    ok("prefolded_small_n", 20.0),
                    Candidate {
                        name: "r42".into(),
                        result: Ok(f64::NAN),
                    },
                ],
            },
            Measured {
                m: 4096,
                k: 4096,
                n: 64,
                candidates: vec![bad("r41", "parity failed"), bad("r56", "not built: boom")],
            },
        ];
        let w = winners(&measured);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].0, w[0].1.as_str()), (1, "prefolded_small_n"));
        let tuned = tuned_config(&prov(), &measured, &crate::catalogue::all(), &[]).unwrap();
        assert!(!tuned.text.contains("variant = \"r41\""));
        assert!(!tuned.text.contains("variant = \"r56\""));
        assert!(tuned
            .text
            .contains("#   n = 64: no candidate passed parity"));
        let all_failed = vec![Measured {
            m: 4096,
            k: 4096,
            n: 1,
            candidates: vec![bad("r41", "parity failed")],
        }];
        let e = tuned_config(&prov(), &all_failed, &crate::catalogue::all(), &[]).unwrap_err();
        assert!(e.to_string().contains("nothing to select"), "{e}");
    }

    #[test]
    fn ranges_merge_with_halfway_boundaries() {
        let w = |v: &[(usize, &str)]| -> Vec<(usize, String)> {
            v.iter().map(|(n, s)| (*n, s.to_string())).collect()
        };
        let rules = merge_rules(
            Arch::Sm90,
            &w(&[
                (1, "a"),
                (8, "a"),
                (32, "a"),
                (128, "b"),
                (512, "b"),
                (2048, "c"),
                (4096, "b"),
            ]),
        );
        let got: Vec<(Bounds, &str)> = rules
            .iter()
            .map(|r| (r.tokens, r.variant.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Bounds {
                        min: 1,
                        max: Some(80)
                    },
                    "a"
                ),
                (
                    Bounds {
                        min: 81,
                        max: Some(1280)
                    },
                    "b"
                ),
                (
                    Bounds {
                        min: 1281,
                        max: Some(3072)
                    },
                    "c"
                ),
                (
                    Bounds {
                        min: 3073,
                        max: None
                    },
                    "b"
                ),
            ]
        );
        assert_eq!(rules[0].name, "tuned-sm90-n1-80");
        assert_eq!(rules[3].name, "tuned-sm90-n3073-up");
        // One winner: one rule over every n, even when the smallest measured n is not 1.
        let one = merge_rules(Arch::Sm80, &w(&[(16, "a"), (64, "a")]));
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].tokens, Bounds::ANY);
        // Adjacent counts: 1 and 2 split at 1.
        let adj = merge_rules(Arch::Sm90, &w(&[(1, "a"), (2, "b")]));
        assert_eq!(
            adj[0].tokens,
            Bounds {
                min: 1,
                max: Some(1)
            }
        );
        assert_eq!(adj[1].tokens, Bounds { min: 2, max: None });
    }

    #[test]
    fn the_text_parses_back_without_gaps_and_selects_the_winners() {
        let (small, wide) = names();
        let all = crate::catalogue::all();
        let tuned = tuned_config(&prov(), &sample(), &all, &[]).unwrap();
        let config = Config::parse(&tuned.text, &all).unwrap();
        let findings = config.check();
        // Gaps only on the architecture the config was not tuned for.
        let own = |f: &&Finding| !matches!(f, Finding::Gap { arch, .. } if *arch != prov().arch);
        assert!(
            !findings.iter().filter(own).any(Finding::is_problem),
            "{findings:?}"
        );
        assert!(!findings
            .iter()
            .filter(own)
            .any(|f| matches!(f, Finding::Gap { .. })));
        assert_eq!(config.rules.len(), 2);
        for (n, want) in [
            (1, &small),
            (32, &small),
            (80, &small),
            (81, &wide),
            (512, &wide),
        ] {
            let got = config.select(Arch::Sm90, 4096, n, 4096).unwrap();
            assert_eq!(got.variant.name, want.as_str(), "n = {n}");
        }
        assert!(config
            .select(Arch::Sm90, 4096, CHECK_MAX_TOKENS, 4096)
            .is_ok());
    }

    /// Two (m, K): rules per (m, K) first, then rules for any shape from the geometric mean; a sweep point that
    /// wins is declared in the config as a `[[variant]]` table, so the config parses against the catalogue alone.
    #[test]
    fn several_shapes_give_rules_per_m_and_k_and_declare_sweep_points() {
        let spec = crate::codegen::spec_file::spec_from_toml_str(
            r#"
            [[sweep]]
            name = "rfx"
            engine = "mma_k32_regfold"
            mode = "int_per32"
            kdr = 8
            scale_fetch = "narrow"
            expand = "uint4"
            cp_async_activations = 16
            archs = ["sm_90"]
            nbj = 128
            warps_m = 4
            warps_n = 2
            tile_n = [64, 96]
            stages = 2
            "#,
        )
        .unwrap();
        let points = spec.sweeps[0].descriptions();
        assert_eq!(points.len(), 2, "{:?}", spec.sweeps[0]);
        let (p0, p1) = (points[0].name.to_string(), points[1].name.to_string());
        let (small, _) = names();
        let at = |m: usize, n: usize, k: usize, c: Vec<Candidate>| Measured {
            m,
            n,
            k,
            candidates: c,
        };
        let measured = vec![
            at(
                4096,
                512,
                4096,
                vec![ok(&p0, 100.0), ok(&p1, 110.0), ok(&small, 300.0)],
            ),
            at(
                4096,
                512,
                14336,
                vec![ok(&p0, 400.0), ok(&p1, 300.0), ok(&small, 900.0)],
            ),
            at(
                4096,
                2048,
                4096,
                vec![ok(&p0, 380.0), ok(&p1, 390.0), bad(&small, "parity failed")],
            ),
            at(
                4096,
                2048,
                14336,
                vec![ok(&p0, 1300.0), ok(&p1, 1400.0), ok(&small, 3000.0)],
            ),
        ];
        let mut p = prov();
        p.mk = vec![(4096, 4096), (4096, 14336)];
        let all = crate::catalogue::all();
        let tuned = tuned_config(&p, &measured, &all, &points).unwrap();
        let config = Config::parse(&tuned.text, &all).unwrap();
        assert_eq!(config.variants.len(), 2, "{}", tuned.text);
        for (m, n, k, want) in [
            (4096, 512, 4096, &p0),
            (4096, 512, 14336, &p1),
            (4096, 2048, 14336, &p0),
            // Not measured: the geometric mean over the (m, k) decides (p0: sqrt(1 * 4/3) at n = 512 vs p1's
            // sqrt(1.1 * 1)).
            (14336, 512, 4096, &p1),
            (14336, 4096, 4096, &p0),
        ] {
            let got = config.select(Arch::Sm90, m, n, k).unwrap();
            assert_eq!(
                got.variant.name,
                want.as_str(),
                "{m},{n},{k}:\n{}",
                tuned.text
            );
        }
        for want in [
            "m x n x k = 4096 x n x 4096, n = 512, 2048; m x n x k = 4096 x n x 14336, n = 512, 2048",
            "#   m = 4096, k = 14336, n = 512: *rfx_t96 300, rfx_t64 400, prefolded_small_n 900",
            "#     failed: prefolded_small_n (parity failed)",
            "name = \"tuned-m4096-k14336-sm90-n1-1280\"",
        ] {
            assert!(tuned.text.contains(want), "missing {want:?} in:\n{}", tuned.text);
        }
    }

    #[test]
    fn provenance_lines_are_present() {
        let mut p = prov();
        p.aborted = Some("a kernel fault\nat 4096,512,4096".into());
        let text = tuned_config(&p, &sample(), &crate::catalogue::all(), &[])
            .unwrap()
            .text;
        for want in [
            "NVIDIA H200 (sm_90, 132 SMs)",
            "driver 580.159.04 (CUDA 13.0)",
            "NVRTC 13.0",
            "commit 5d67d6d",
            "2026-11-29T15:41:28Z",
            "m x n x k = 4096 x n x 4096, n = 1, 8, 32, 128, 512",
            "#   n = 1: *prefolded_small_n 18.8, prefolded_per256_wide_n 51.9",
            "#   n = 128: *prefolded_per256_wide_n 53.7, prefolded_small_n 60.0",
            "#     failed: r41 (parity failed: 3 of 5120 sampled outputs differ)",
            "#     failed: r56 (not built: NVRTC failed: error: x)",
            "#   n = 512: *prefolded_per256_wide_n 107, prefolded_small_n 300",
            "# The run stopped early: a kernel fault at 4096,512,4096",
        ] {
            assert!(text.contains(want), "missing {want:?} in:\n{text}");
        }
        // Every line before the first rule is a comment.
        let head = text.split("[[rule]]").next().unwrap();
        assert!(
            head.lines().all(|l| l.is_empty() || l.starts_with('#')),
            "{head}"
        );
    }
}
