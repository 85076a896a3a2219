//! The pure half of `mmqgen tune`, after the measurements: [`measurements`] reads a bench report,
//! then [`winners`] -> [`merge_rules`] -> [`render_config`] -> [`tuned_config`], which parses the text back
//! and refuses it when `config check` would find a problem. Nothing here touches a GPU or the command line.

use crate::codegen::{Arch, VariantDescription};
use crate::measure::bench::{BenchReport, Outcome};
use crate::select::{Bounds, Config};

/// Why no config could be written from the measurements.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("no candidate was built and passed parity at any measured token count, so there is nothing to select")]
    NoWinner,
    #[error("the tuned config does not parse back ({0}); this is a bug in mmqgen tune")]
    DoesNotParse(String),
    #[error("the tuned config fails its check ({0}); this is a bug in mmqgen tune")]
    FailsCheck(String),
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

/// `s` on one line: runs of whitespace (newlines included) become one space.
pub fn one_line(s: &str) -> String {
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

/// Why a rule for any K cannot take a candidate whose shared memory grows with K.
pub const GROWS_WITH_K: &str =
    "its shared memory grows with K (engine stream_ring), so a rule for any K cannot take it";

/// `measured` as a rule for any K sees it: the candidates for which `grows_with_k` holds (engine `stream_ring`,
/// whose shared memory outgrows a block at some K) count as failed, with [`GROWS_WITH_K`].
pub fn for_any_k(measured: &[Measured], grows_with_k: &dyn Fn(&str) -> bool) -> Vec<Measured> {
    measured
        .iter()
        .map(|m| Measured {
            candidates: m
                .candidates
                .iter()
                .map(|c| Candidate {
                    name: c.name.clone(),
                    result: match &c.result {
                        Ok(_) if grows_with_k(&c.name) => Err(GROWS_WITH_K.to_string()),
                        other => other.clone(),
                    },
                })
                .collect(),
            ..m.clone()
        })
        .collect()
}

/// The rules for `measured`: with one (m, K), the winners per n ([`merge_rules`]), for any shape; with several,
/// first rules limited to each (m, K), then rules for any shape from [`across_shapes`]. A rule for any shape never
/// takes a candidate for which `grows_with_k` holds ([`for_any_k`]).
pub fn tuned_rules(
    arch: Arch,
    measured: &[Measured],
    grows_with_k: &dyn Fn(&str) -> bool,
) -> Vec<TunedRule> {
    let names = |w: Vec<(usize, String, f64)>| -> Vec<(usize, String)> {
        w.into_iter().map(|(n, v, _)| (n, v)).collect()
    };
    let groups = groups(measured);
    if groups.len() <= 1 {
        return merge_rules(arch, &names(winners(&for_any_k(measured, grows_with_k))));
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
    rules.extend(merge_rules(
        arch,
        &names(winners(&across_shapes(&for_any_k(measured, grows_with_k)))),
    ));
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
    grows_with_k: &dyn Fn(&str) -> bool,
) -> String {
    let several = groups(measured).len() > 1;
    // With one (m, K) the rules are for any shape: the listing shows what they chose among.
    let for_rules = if several {
        measured.to_vec()
    } else {
        for_any_k(measured, grows_with_k)
    };
    let groups = groups(&for_rules);
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
        let across = across_shapes(&for_any_k(measured, grows_with_k));
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
    s += &format!(
        "# Format: [[rule]] tables, first match wins. arch = one of {}; tokens (n), and optionally m\n",
        crate::codegen::arch::supported_list()
    );
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
) -> Result<Tuned, TuneError> {
    if winners(measured).is_empty() {
        return Err(TuneError::NoWinner);
    }
    // Rules for any shape cannot take a variant whose shared memory grows with K (`config check` would refuse).
    let grows_with_k = |name: &str| {
        crate::catalogue::find(catalogue, name)
            .or_else(|| crate::catalogue::find(extra, name))
            .is_some_and(|d| d.engine == crate::codegen::Engine::StreamRing)
    };
    let rules = tuned_rules(prov.arch, measured, &grows_with_k);
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
    let text = render_config(prov, measured, &rules, &declare, &grows_with_k);
    let config =
        Config::parse(&text, catalogue).map_err(|e| TuneError::DoesNotParse(e.to_string()))?;
    // The config is for this GPU's architecture only: the other architectures' gaps are true but expected
    // (they stay in the notes, and `config check` reports them).
    let findings = config.check();
    let own = |f: &&crate::select::Finding| !matches!(f, crate::select::Finding::Gap { arch, .. } if *arch != prov.arch);
    if let Some(problem) = findings.iter().filter(own).find(|f| f.is_problem()) {
        return Err(TuneError::FailsCheck(problem.to_string()));
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
                            Outcome::NotTimed(why) | Outcome::Refused(why) => Err(why.clone()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::weights::Layout;
    use crate::select::{Finding, CHECK_MAX_TOKENS};

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
    fn a_rule_for_any_k_passes_over_a_ring_winner() {
        // ring_t1 wins n = 1 at this (m, K), but a rule for any K cannot take it: its shared memory outgrows a
        // block at long K. The next fastest takes the rule, and the header says why the ring did not.
        let (small, _) = names();
        let mut measured = sample();
        measured[0].candidates.push(ok("ring_t1", 11.0));
        let all = crate::catalogue::all();
        let tuned = tuned_config(&prov(), &measured, &all, &[]).unwrap();
        let config = Config::parse(&tuned.text, &all).unwrap();
        assert_eq!(
            config
                .select(Arch::Sm90, Layout::Padded, 4096, 1, 4096)
                .unwrap()
                .variant
                .name,
            small.as_str()
        );
        assert!(
            tuned
                .text
                .contains(&format!("failed: ring_t1 ({GROWS_WITH_K})")),
            "{}",
            tuned.text
        );
        assert!(!tuned.text.contains("*ring_t1"));
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
            let got = config
                .select(Arch::Sm90, Layout::Padded, 4096, n, 4096)
                .unwrap();
            assert_eq!(got.variant.name, want.as_str(), "n = {n}");
        }
        assert!(config
            .select(Arch::Sm90, Layout::Padded, 4096, CHECK_MAX_TOKENS, 4096)
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
            let got = config.select(Arch::Sm90, Layout::Padded, m, n, k).unwrap();
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

    /// The config `tune` writes declares the sweep points it picked; read beside the sweep's own file (which
    /// declares the same points), it is accepted: the same description under the same name is no clash.
    #[test]
    fn a_tuned_config_reads_beside_the_sweep_it_came_from() {
        let spec = crate::codegen::spec_file::spec_from_toml_str(
            r#"
            [[sweep]]
            name = "rfy"
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
        let p0 = points[0].name.to_string();
        let (small, _) = names();
        let measured: Vec<Measured> = [1, 512]
            .into_iter()
            .map(|n| Measured {
                m: 4096,
                n,
                k: 4096,
                candidates: vec![ok(&p0, 10.0), ok(&small, 20.0)],
            })
            .collect();
        let catalogue = crate::catalogue::all();
        let tuned = tuned_config(&prov(), &measured, &catalogue, &points).unwrap();
        assert!(tuned.text.contains("[[variant]]"), "{}", tuned.text);
        let mut beside = catalogue.clone();
        beside.extend(points.iter().cloned());
        let config = Config::parse(&tuned.text, &beside).unwrap_or_else(|e| panic!("{e}"));
        let got = config
            .select(Arch::Sm90, Layout::Padded, 4096, 512, 4096)
            .unwrap();
        assert_eq!(got.variant.name, p0.as_str());
        // A different description under a taken name is still refused.
        let mut other = points[0].clone();
        other.stages = 3;
        let clash = format!(
            "{}[[rule]]\narch = \"sm_90\"\ntokens = {{ min = 1 }}\nvariant = \"{p0}\"\n",
            crate::codegen::spec_file::variant_toml(&other)
        );
        let e = Config::parse(&clash, &beside).unwrap_err().to_string();
        assert!(e.contains("already taken"), "{e}");
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
