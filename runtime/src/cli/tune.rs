//! `mmqgen tune`: time candidate variants over chosen token counts on this GPU (through [`crate::bench`], the
//! same parity-then-time path as `mmqgen bench`), pick the fastest bit-exact candidate per token count, and
//! write a selection config (`[[rule]]` tables, [`crate::select`]) whose header says where it came from.
//!
//! The GPU part is [`run`]; everything after the measurements is pure ([`measurements`] aside, which only
//! reads a [`BenchReport`]): [`winners`] -> [`merge_rules`] -> [`render_config`] -> [`tuned_config`], which
//! parses the text back and refuses it when `config check` would find a problem.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::{find_variant, CliError};
use crate::bench::{
    default_variants, run_bench, BenchConfig, BenchReport, Outcome, DEFAULT_REPEATS,
};
use crate::codegen::{Arch, VariantDescription};
use crate::device::Gpu;
use crate::parity::Shape;
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

    /// Keep compiled cubins in DIR between runs.
    #[arg(long, value_name = "DIR")]
    pub cubin_cache: Option<PathBuf>,
}

/// One candidate at one token count: its median (µs), or why it cannot be chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub name: String,
    pub result: Result<f64, String>,
}

/// Every candidate at one token count.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub n: usize,
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
    pub m: usize,
    pub k: usize,
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

/// The config text: the provenance header (GPU, driver, NVRTC, date, commit, shapes, every candidate's
/// median per token count and every failure with its reason), then one `[[rule]]` per rule.
pub fn render_config(prov: &Provenance, measured: &[Measured], rules: &[TunedRule]) -> String {
    let mut ns: Vec<usize> = measured.iter().map(|m| m.n).collect();
    ns.sort_unstable();
    ns.dedup();
    let ns_text: Vec<String> = ns.iter().map(usize::to_string).collect();
    let won = winners(measured);
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
    s += &format!(
        "# Shapes: m x n x k = {} x n x {}, n = {}; {} warm-up and {} timed calls per candidate per shape (CUDA\n",
        prov.m,
        prov.k,
        ns_text.join(", "),
        prov.warmup,
        prov.repeats
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
    for n in &ns {
        let mut timed: Vec<(&str, f64)> = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        for m in measured.iter().filter(|m| m.n == *n) {
            for c in &m.candidates {
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
        s += &format!("#   n = {n}: {timed_text}\n");
        for f in failed {
            s += &format!("#     failed: {f}\n");
        }
    }
    s += "# Rules: the winner per n; consecutive n with the same winner share a rule, each boundary lies halfway\n";
    s +=
        "# between two measured n, the first rule starts at n = 1 and the last is open-ended.\n#\n";
    s += "# Format: [[rule]] tables, first match wins. arch = \"sm_80\" | \"sm_90\"; tokens (n), and optionally m\n";
    s += "# and k, as an integer (exactly), [min, max] (inclusive) or { min = .. } (open-ended); variant = a\n";
    s += "# declared or canonical name.\n";
    for r in rules {
        let tokens = match r.tokens.max {
            Some(max) => format!("[{}, {max}]", r.tokens.min),
            None => format!("{{ min = {} }}", r.tokens.min),
        };
        s += &format!(
            "\n[[rule]]\nname = \"{}\"\narch = \"{}\"\ntokens = {tokens}\nvariant = \"{}\"\n",
            r.name,
            prov.arch.keyword(),
            r.variant
        );
    }
    s
}

/// The tuned config for these measurements, parsed back with [`Config::parse`] against `catalogue` and
/// refused when no token count has a winner or `config check` finds a problem (gaps, dead rules).
pub fn tuned_config(
    prov: &Provenance,
    measured: &[Measured],
    catalogue: &[VariantDescription],
) -> Result<Tuned, CliError> {
    let won: Vec<(usize, String)> = winners(measured)
        .into_iter()
        .map(|(n, v, _)| (n, v))
        .collect();
    if won.is_empty() {
        return Err(
            "no candidate was built and passed parity at any measured token count, so there is nothing to select"
                .into(),
        );
    }
    let rules = merge_rules(prov.arch, &won);
    let text = render_config(prov, measured, &rules);
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
            n: shape.shape.n,
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

fn candidates(
    args: &TuneArgs,
    all: &[VariantDescription],
) -> Result<Vec<VariantDescription>, CliError> {
    if args.variant.is_empty() {
        return Ok(default_variants(all));
    }
    let mut chosen: Vec<VariantDescription> = Vec::new();
    for name in &args.variant {
        let v = find_variant(all, name)?;
        if !chosen.iter().any(|c| c.name == v.name) {
            chosen.push(v.clone());
        }
    }
    Ok(chosen)
}

/// The measured shapes, `(m, n, k)` for each distinct n in ascending order, each checked like `--shape`.
fn shapes(args: &TuneArgs) -> Result<Vec<Shape>, CliError> {
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

pub fn run(args: &TuneArgs, all: &[VariantDescription]) -> Result<ExitCode, CliError> {
    let descs = candidates(args, all)?;
    let shapes = shapes(args)?;
    check_output(&args.output)?;
    let gpu = Gpu::open(args.gpu).map_err(|e| {
        format!("tune needs a GPU to time the candidates, and none can be used here: {e}")
    })?;
    let info = gpu.info();
    let arch = arch_from_str(&info.arch).ok_or_else(|| {
        format!(
            "the GPU is {} ({}), an architecture mmqgen does not target, so there is nothing to tune",
            info.name, info.arch
        )
    })?;
    let cfg = BenchConfig {
        shapes,
        repeats: args.repeats,
        cublas: false,
        cubin_cache: args.cubin_cache.clone(),
        ..BenchConfig::default()
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "tune: WARNING: this mmqgen is an unoptimized build; the CPU side runs about 10x slower (GPU times \
             are unaffected): use cargo build --release"
        );
    }
    eprintln!(
        "tune: {} candidate(s) x {} shape(s) at m = {}, k = {}, {} timed calls each",
        descs.len(),
        cfg.shapes.len(),
        args.m,
        args.k,
        cfg.repeats
    );
    let report = run_bench(&gpu, &descs, &cfg, &mut |line: &str| eprintln!("{line}"))?;
    let measured = measurements(&report, &descs);
    let prov = Provenance {
        gpu: report.info.gpu.clone(),
        arch,
        multiprocessors: report.info.multiprocessors,
        driver: report.info.driver_release.clone(),
        driver_cuda: report.info.driver_cuda.clone(),
        nvrtc: report.info.nvrtc.clone(),
        date: report.info.date.clone(),
        commit: report.info.commit.clone(),
        m: args.m,
        k: args.k,
        warmup: cfg.warmup,
        repeats: cfg.repeats,
        parity_samples: cfg.parity_samples,
        aborted: report.aborted.clone(),
    };
    let tuned = tuned_config(&prov, &measured, all)?;
    std::fs::write(&args.output, &tuned.text)
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;

    let mut incomplete = report.aborted.is_some();
    for m in &measured {
        for c in &m.candidates {
            if let Err(why) = &c.result {
                println!("n = {}: {} not selectable: {}", m.n, c.name, one_line(why));
            }
        }
        if !winners(std::slice::from_ref(m)).iter().any(|w| w.0 == m.n) {
            println!(
                "n = {}: no candidate passed parity, so this n chose nothing",
                m.n
            );
            incomplete = true;
        }
    }
    for note in &tuned.notes {
        println!("note: {note}");
    }
    let config = Config::parse(&tuned.text, all)?;
    for rule in &config.rules {
        println!("{}: {}", rule.label(), rule.summary());
    }
    println!("wrote {}", args.output.display());
    Ok(if incomplete {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
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
            m: 4096,
            k: 4096,
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
                n: 1,
                candidates: vec![ok(&small, 18.8), ok(&wide, 51.9)],
            },
            Measured {
                n: 8,
                candidates: vec![ok(&small, 19.5), ok(&wide, 27.5)],
            },
            Measured {
                n: 32,
                candidates: vec![ok(&small, 28.2), ok(&wide, 42.6)],
            },
            Measured {
                n: 128,
                // The fastest candidate failed parity: it must not win.
                candidates: vec![
                    ok(&small, 60.0),
                    ok(&wide, 53.7),
                    bad("r41", "parity failed: 3 of 5120 sampled outputs differ"),
                ],
            },
            Measured {
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
            candidates(&parse(&[]).unwrap(), &all).unwrap(),
            default_variants(&all)
        );
        let a = parse(&["--variant", "r41", "--variant", "r41", "--variant", "r56"]).unwrap();
        let v = candidates(&a, &all).unwrap();
        assert_eq!(
            v.iter().map(|v| v.name.as_ref()).collect::<Vec<&str>>(),
            ["r41", "r56"]
        );
        let a = parse(&["--variant", "nope"]).unwrap();
        assert!(candidates(&a, &all).is_err());
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
                n: 64,
                candidates: vec![bad("r41", "parity failed"), bad("r56", "not built: boom")],
            },
        ];
        let w = winners(&measured);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].0, w[0].1.as_str()), (1, "prefolded_small_n"));
        let tuned = tuned_config(&prov(), &measured, &crate::catalogue::all()).unwrap();
        assert!(!tuned.text.contains("variant = \"r41\""));
        assert!(!tuned.text.contains("variant = \"r56\""));
        assert!(tuned
            .text
            .contains("#   n = 64: no candidate passed parity"));
        let all_failed = vec![Measured {
            n: 1,
            candidates: vec![bad("r41", "parity failed")],
        }];
        let e = tuned_config(&prov(), &all_failed, &crate::catalogue::all()).unwrap_err();
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
        let tuned = tuned_config(&prov(), &sample(), &all).unwrap();
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

    #[test]
    fn provenance_lines_are_present() {
        let mut p = prov();
        p.aborted = Some("a kernel fault\nat 4096,512,4096".into());
        let text = tuned_config(&p, &sample(), &crate::catalogue::all())
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
