//! The CPU half of `mmqgen tune` over many candidates (issue 15): compile every candidate with NVRTC on all
//! the CPU cores, drop those that spill or do not fit in shared memory before any GPU time ([`compile_all`]),
//! and, once the GPU half has proven and timed the rest, rank them ([`rank`]) and write the ranking as JSON
//! lines ([`json_lines`]) and markdown ([`markdown`]). Nothing here touches a GPU.

pub mod rules;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::check::Shape;
use crate::codegen::{canonical_name, Arch, VariantDescription};
use crate::compile::cache::CubinCache;
use crate::compile::inspect::inspect_with;
use crate::compile::isolated::Compiler;

/// What NVRTC and ptxas said about a candidate that compiled cleanly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileStats {
    /// Registers per thread, the most over the entry points.
    pub registers: u32,
    /// Shared memory per block the layout asks for, bytes.
    pub shared_bytes: u32,
    pub compile_ms: u64,
    pub from_cache: bool,
}

/// One candidate after the compile stage: its figures, or the one sentence that dropped it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub name: String,
    pub canonical: String,
    pub result: Result<CompileStats, String>,
}

/// Threads for the compile stage when none is asked for: every core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Judges one candidate for `arch`: not declared for it, does not render or compile (a crash of the compiler
/// included, when `compiler` runs it in a child process), spills or has a stack frame without declaring
/// `allow_spills`, or needs more shared memory than a block may have are each a sentence.
pub fn compile_one(
    desc: &VariantDescription,
    arch: Arch,
    cache: Option<&CubinCache>,
    compiler: &Compiler,
) -> Result<CompileStats, String> {
    if !desc.archs.contains(arch) {
        return Err(format!(
            "declared for {}, not {arch}, so it is not compiled for this GPU",
            desc.archs
        ));
    }
    let start = Instant::now();
    let report = inspect_with(desc, arch, false, cache, compiler).map_err(|e| {
        format!(
            "did not compile: {}",
            crate::formats::input::escaped(&e.to_string())
        )
    })?;
    let limit = arch.max_shared_bytes_per_block();
    if report.rendered.shared_bytes > limit {
        return Err(format!(
            "needs {} bytes of shared memory per block, more than the {limit} {arch} allows",
            report.rendered.shared_bytes
        ));
    }
    for entry in &report.entries {
        let r = &entry.resources;
        // A variant that declares `allow_spills` is timed like any other: its spills are its author's choice.
        if !desc.allow_spills
            && (r.spill_stores_bytes > 0 || r.spill_loads_bytes > 0 || r.stack_frame_bytes > 0)
        {
            return Err(format!(
                "spills on {arch} ({} bytes of stack frame, {}/{} bytes of spill stores/loads per thread in {}), \
                 so it is dropped before any GPU time",
                r.stack_frame_bytes, r.spill_stores_bytes, r.spill_loads_bytes, entry.kernel
            ));
        }
    }
    if let Some(problem) = report.problems().into_iter().next() {
        return Err(problem);
    }
    Ok(CompileStats {
        registers: report
            .entries
            .iter()
            .map(|e| e.resources.registers)
            .max()
            .unwrap_or(0),
        shared_bytes: report.rendered.shared_bytes,
        compile_ms: start.elapsed().as_millis() as u64,
        from_cache: report
            .cache
            .is_some_and(|c| c == crate::compile::cache::CacheOutcome::Hit),
    })
}

/// [`compile_one`] over `descs` on `jobs` scoped threads (results in `descs`' order), telling `progress` one
/// line per candidate as it finishes (`[12/140] rf_t64_s2: 168 registers, 45056 B shared, 3.1 s`).
pub fn compile_all(
    descs: &[VariantDescription],
    arch: Arch,
    cache: Option<&CubinCache>,
    compiler: &Compiler,
    jobs: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<Compiled> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Compiled>>> = Mutex::new(vec![None; descs.len()]);
    let total = descs.len();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(desc) = descs.get(i) else { break };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compile_one(desc, arch, cache, compiler)
        }))
        .unwrap_or_else(|_| Err("compiling panicked".to_string()));
        let line = match &result {
            Ok(s) => format!(
                "{} registers, {} B shared, {:.1} s{}",
                s.registers,
                s.shared_bytes,
                s.compile_ms as f64 / 1e3,
                if s.from_cache { " (cached)" } else { "" }
            ),
            Err(why) => format!("dropped: {why}"),
        };
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(&format!("compile [{n}/{total}] {}: {line}", desc.name));
        let compiled = Compiled {
            name: desc.name.to_string(),
            canonical: canonical_name(desc),
            result,
        };
        if let Ok(mut all) = results.lock() {
            all[i] = Some(compiled);
        }
    };
    let threads = jobs.max(1).min(total.max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(work);
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .zip(descs)
        .map(|(c, d)| {
            c.unwrap_or_else(|| Compiled {
                name: d.name.to_string(),
                canonical: canonical_name(d),
                result: Err("the compile thread stopped before this candidate".to_string()),
            })
        })
        .collect()
}

/// The stage a candidate reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Dropped by the compile stage (did not compile, spills, too much shared memory, wrong architecture).
    Compile,
    /// Compiled, but not bit-exact on the ragged shape (or its parity process failed).
    Parity,
    /// Proven, but not timed on every shape (a bench-side parity failure, a fault, a missing shape).
    Timing,
    /// Compiled, not yet proven or timed (`--compile-only`).
    Compiled,
    /// Timed on every shape.
    Timed,
}

impl Stage {
    pub fn keyword(self) -> &'static str {
        match self {
            Stage::Compile => "dropped at compile",
            Stage::Parity => "dropped at parity",
            Stage::Timing => "not timed everywhere",
            Stage::Compiled => "compiled",
            Stage::Timed => "timed",
        }
    }
}

/// One candidate's row of the ranked table.
#[derive(Clone, Debug, PartialEq)]
pub struct RankRow {
    /// 1 for the best; `None` for candidates not timed on every shape.
    pub rank: Option<usize>,
    pub name: String,
    pub canonical: String,
    pub stage: Stage,
    /// Why the candidate stopped short of `Timed`.
    pub reason: Option<String>,
    pub compile: Option<CompileStats>,
    /// The geometric mean over the shapes of its median over the best median at that shape (1.0 = fastest
    /// everywhere); only for candidates timed on every shape.
    pub score: Option<f64>,
    /// Median µs per shape, in the order of the shapes given to [`rank`].
    pub medians: Vec<Option<f64>>,
}

/// What the GPU half found for one candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuOutcome {
    pub name: String,
    /// `Err(sentence)` when the ragged-shape parity failed.
    pub parity: Result<(), String>,
    /// Per shape (same order as the shapes): the median µs, or why not.
    pub timings: Vec<Result<f64, String>>,
}

/// The ranked table: timed candidates by score (ties by name), then the rest by how far they got.
pub fn rank(compiled: &[Compiled], gpu: &[GpuOutcome], shapes: &[Shape]) -> Vec<RankRow> {
    let best: Vec<Option<f64>> = (0..shapes.len())
        .map(|s| {
            gpu.iter()
                .filter(|g| g.parity.is_ok())
                .filter_map(|g| g.timings.get(s).and_then(|t| t.as_ref().ok()).copied())
                .filter(|us| us.is_finite() && *us > 0.0)
                .min_by(f64::total_cmp)
        })
        .collect();
    let mut rows: Vec<RankRow> = compiled
        .iter()
        .map(|c| {
            let mut row = RankRow {
                rank: None,
                name: c.name.clone(),
                canonical: c.canonical.clone(),
                stage: Stage::Compile,
                reason: None,
                compile: c.result.as_ref().ok().cloned(),
                score: None,
                medians: vec![None; shapes.len()],
            };
            if let Err(why) = &c.result {
                row.reason = Some(why.clone());
                return row;
            }
            let Some(g) = gpu.iter().find(|g| g.name == c.name) else {
                row.stage = Stage::Compiled;
                return row;
            };
            if let Err(why) = &g.parity {
                row.stage = Stage::Parity;
                row.reason = Some(why.clone());
                return row;
            }
            let mut log_sum = 0.0;
            let mut missing = None;
            for (s, shape) in shapes.iter().enumerate() {
                match (g.timings.get(s), best[s]) {
                    (Some(Ok(us)), Some(b)) if us.is_finite() && *us > 0.0 => {
                        row.medians[s] = Some(*us);
                        log_sum += (us / b).ln();
                    }
                    (Some(Err(why)), _) => {
                        missing.get_or_insert_with(|| format!("at {shape}: {why}"));
                    }
                    _ => {
                        missing.get_or_insert_with(|| format!("at {shape}: not timed"));
                    }
                }
            }
            match missing {
                Some(why) => {
                    row.stage = Stage::Timing;
                    row.reason = Some(why);
                }
                None => {
                    row.stage = Stage::Timed;
                    row.score = Some((log_sum / shapes.len().max(1) as f64).exp());
                }
            }
            row
        })
        .collect();
    let order = |r: &RankRow| match r.stage {
        Stage::Timed => 0,
        Stage::Compiled => 1,
        Stage::Timing => 2,
        Stage::Parity => 3,
        Stage::Compile => 4,
    };
    rows.sort_by(|a, b| {
        order(a)
            .cmp(&order(b))
            .then(
                a.score
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&b.score.unwrap_or(f64::INFINITY)),
            )
            .then(a.name.cmp(&b.name))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        if r.stage == Stage::Timed {
            r.rank = Some(i + 1);
        }
    }
    rows
}

/// One JSON object per row (serde_json, so names and sentences are escaped properly).
pub fn json_lines(rows: &[RankRow], shapes: &[Shape]) -> String {
    let mut out = String::new();
    for r in rows {
        let medians: serde_json::Map<String, serde_json::Value> = shapes
            .iter()
            .zip(&r.medians)
            .map(|(s, m)| (s.to_string(), serde_json::json!(m)))
            .collect();
        let value = serde_json::json!({
            "rank": r.rank,
            "variant": r.name,
            "canonical": r.canonical,
            "stage": r.stage.keyword(),
            "reason": r.reason,
            "registers": r.compile.as_ref().map(|c| c.registers),
            "shared_bytes": r.compile.as_ref().map(|c| c.shared_bytes),
            "score": r.score,
            "median_us": medians,
        });
        out += &value.to_string();
        out.push('\n');
    }
    out
}

fn cell(text: &str) -> String {
    crate::formats::input::escaped(text).replace('|', "\\|")
}

/// The ranked table in markdown: timed candidates with their score and median per shape, then one line per
/// candidate that stopped short, with its stage and sentence.
pub fn markdown(rows: &[RankRow], shapes: &[Shape], title: &str) -> String {
    let mut s = format!("# {}\n\n", cell(title));
    let timed = rows.iter().filter(|r| r.stage == Stage::Timed).count();
    let compiled = rows.iter().filter(|r| r.stage == Stage::Compiled).count();
    let dropped = rows.len() - timed - compiled;
    s += &format!(
        "{} candidate(s): {timed} timed on every shape, {compiled} compiled and not timed, {dropped} dropped.\n\n",
        rows.len()
    );
    s += "Score: geometric mean over the shapes of the median over the best median at that shape (1.000 = the \
          fastest everywhere). Medians in µs.\n\n";
    s += "| rank | variant | score | regs | smem B |";
    for shape in shapes {
        s += &format!(" {shape} |");
    }
    s += "\n|---:|---|---:|---:|---:|";
    s += &"---:|".repeat(shapes.len());
    s += "\n";
    for r in rows
        .iter()
        .filter(|r| matches!(r.stage, Stage::Timed | Stage::Compiled))
    {
        let (regs, smem) = r.compile.as_ref().map_or(("-".into(), "-".into()), |c| {
            (c.registers.to_string(), c.shared_bytes.to_string())
        });
        s += &format!(
            "| {} | {} | {} | {regs} | {smem} |",
            r.rank.map_or("-".into(), |k| k.to_string()),
            cell(&r.name),
            r.score.map_or("-".into(), |x| format!("{x:.3}"))
        );
        for m in &r.medians {
            s += &format!(" {} |", m.map_or("-".into(), |us| format!("{us:.1}")));
        }
        s += "\n";
    }
    let stopped: Vec<&RankRow> = rows
        .iter()
        .filter(|r| !matches!(r.stage, Stage::Timed | Stage::Compiled))
        .collect();
    if !stopped.is_empty() {
        s += "\n| variant | stage | why |\n|---|---|---|\n";
        for r in stopped {
            s += &format!(
                "| {} | {} | {} |\n",
                cell(&r.name),
                r.stage.keyword(),
                cell(r.reason.as_deref().unwrap_or(""))
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(regs: u32) -> CompileStats {
        CompileStats {
            registers: regs,
            shared_bytes: 1024,
            compile_ms: 10,
            from_cache: false,
        }
    }

    fn compiled(name: &str, ok: bool) -> Compiled {
        Compiled {
            name: name.into(),
            canonical: format!("q6k_{name}"),
            result: if ok {
                Ok(stats(100))
            } else {
                Err("spills on sm_90 (8 bytes of stack frame)".into())
            },
        }
    }

    fn shapes() -> Vec<Shape> {
        vec![Shape::new(4096, 512, 4096), Shape::new(4096, 2048, 14336)]
    }

    /// The compile stage on real NVRTC, in parallel: a clean variant passes with its figures; a spilling one,
    /// one with too much shared memory for sm_80 and one not declared for the architecture are dropped with a
    /// sentence each.
    #[test]
    fn the_compile_stage_drops_before_any_gpu_time() {
        if !crate::testing::nvrtc_or_skip("the_compile_stage_drops_before_any_gpu_time") {
            return;
        }
        let all = crate::catalogue::all();
        let clean = crate::catalogue::find(&all, "r41").unwrap().clone();
        let mut not_here = clean.clone();
        not_here.name = "only_sm80".into();
        not_here.archs = crate::codegen::ArchSet::EMPTY.with(Arch::Sm80);
        let descs = vec![clean.clone(), not_here];
        let lines = Mutex::new(Vec::new());
        let out = compile_all(
            &descs,
            Arch::Sm90,
            None,
            &Compiler::InProcess,
            2,
            &|l: &str| lines.lock().unwrap().push(l.to_string()),
        );
        assert_eq!(out.len(), 2);
        let stats = out[0].result.as_ref().expect("r41 compiles cleanly");
        assert!(stats.registers > 0 && stats.shared_bytes > 0, "{stats:?}");
        assert_eq!(out[0].canonical, canonical_name(&clean));
        let why = out[1].result.as_ref().unwrap_err();
        assert!(why.contains("not sm_90"), "{why}");
        let lines = lines.into_inner().unwrap();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("[2/2]")), "{lines:?}");
    }

    /// A variant that declares `allow_spills` is kept when it spills (the default's own pick from 513 tokens,
    /// `wgmma_i12_128x96_tail_producer`, does); the same kernel without the declaration is dropped.
    #[test]
    fn a_variant_that_allows_spills_is_not_dropped_for_them() {
        if !crate::testing::nvrtc_or_skip("a_variant_that_allows_spills_is_not_dropped_for_them") {
            return;
        }
        let all = crate::catalogue::all();
        let spills = crate::catalogue::find(&all, "wgmma_i12_128x96_tail_producer")
            .unwrap()
            .clone();
        assert!(spills.allow_spills);
        let kept = compile_one(&spills, Arch::Sm90, None, &Compiler::InProcess);
        assert!(kept.is_ok(), "{kept:?}");
        let mut strict = spills;
        strict.allow_spills = false;
        let why = compile_one(&strict, Arch::Sm90, None, &Compiler::InProcess).unwrap_err();
        assert!(why.starts_with("spills on sm_90"), "{why}");
    }

    #[test]
    fn ranking_orders_by_geometric_mean_and_lists_every_drop() {
        let c = vec![
            compiled("a", true),
            compiled("b", true),
            compiled("c", true),
            compiled("d", false),
            compiled("e", true),
            compiled("f", true),
        ];
        let g = vec![
            GpuOutcome {
                name: "a".into(),
                parity: Ok(()),
                timings: vec![Ok(100.0), Ok(400.0)],
            },
            GpuOutcome {
                name: "b".into(),
                parity: Ok(()),
                timings: vec![Ok(90.0), Ok(420.0)],
            },
            GpuOutcome {
                name: "c".into(),
                parity: Err("parity failed: 3 outputs differ".into()),
                timings: vec![],
            },
            GpuOutcome {
                name: "e".into(),
                parity: Ok(()),
                timings: vec![Ok(80.0), Err("a kernel fault".into())],
            },
        ];
        let rows = rank(&c, &g, &shapes());
        let got: Vec<(&str, Stage, Option<usize>)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.stage, r.rank))
            .collect();
        assert_eq!(
            got,
            [
                ("b", Stage::Timed, Some(1)),
                ("a", Stage::Timed, Some(2)),
                ("f", Stage::Compiled, None),
                ("e", Stage::Timing, None),
                ("c", Stage::Parity, None),
                ("d", Stage::Compile, None),
            ]
        );
        // e was the fastest at the first shape, but failed parity nowhere: it still sets the best there.
        let b = rows[0].score.unwrap();
        assert!((b - ((90.0f64 / 80.0) * (420.0 / 400.0)).sqrt()).abs() < 1e-12);
        assert_eq!(
            rows[3].reason.as_deref(),
            Some("at 4096,2048,14336: a kernel fault")
        );

        let json = json_lines(&rows, &shapes());
        assert_eq!(json.lines().count(), 6);
        for line in json.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v["variant"].is_string() && v["stage"].is_string(), "{line}");
        }
        let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
        assert_eq!(first["rank"], 1);
        assert_eq!(first["median_us"]["4096,512,4096"], 90.0);

        let md = markdown(&rows, &shapes(), "sweep rf on NVIDIA H200");
        assert!(md.contains("| 1 | b | 1.0"), "{md}");
        assert!(
            md.contains("| d | dropped at compile | spills on sm_90"),
            "{md}"
        );
        assert!(
            md.contains("| c | dropped at parity | parity failed"),
            "{md}"
        );
        assert!(md.contains(
            "6 candidate(s): 2 timed on every shape, 1 compiled and not timed, 3 dropped."
        ));
    }
}
