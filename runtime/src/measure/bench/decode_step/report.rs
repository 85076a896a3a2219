//! The decode step's results and how they read: per token count the graph replay's and the direct calls' step
//! time, tokens per second, the weights' rate against the run's copy, whether the replay gave the direct calls'
//! bits, and each shape's pick; rendered as markdown for people and JSON lines (serde_json) for programs.

use std::fmt::Write as _;

use serde::Serialize;

use super::plan::gb;
use crate::gpu::weights::Layout;
use crate::measure::bench::{tb_per_s, Outcome, RunInfo, Stats};

/// How the replay's outputs compared with the direct calls'.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitCheck {
    /// Outputs compared (every output of every call).
    pub compared: usize,
    pub mismatches: usize,
    /// The first difference, in words.
    pub first_bad: Option<String>,
}

impl BitCheck {
    pub fn identical(&self) -> bool {
        self.compared > 0 && self.mismatches == 0
    }
}

/// One token count's step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepResult {
    pub tokens: usize,
    /// The captured graph replayed, one replay a sample.
    pub graph: Outcome,
    /// The same calls launched directly, one step a sample.
    pub direct: Outcome,
    /// Median host time to enqueue the direct calls of one step, µs.
    pub direct_enqueue_us: Option<f64>,
    /// Timed direct steps whose enqueue outlasted the spin kernel ahead of them (their time holds launch gaps).
    pub direct_launch_bound: usize,
    /// Timed replays whose enqueue outlasted the spin.
    pub graph_launch_bound: usize,
    /// Kernel nodes of the captured graph.
    pub graph_nodes: Option<usize>,
    pub bits: Option<BitCheck>,
    /// Per distinct shape: (matmuls, m, K, the pick's declared name).
    pub picks: Vec<(String, usize, usize, String)>,
    /// Why this token count was not (fully) measured.
    pub error: Option<String>,
}

/// The whole decode-step run.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeStepReport {
    pub info: RunInfo,
    pub layout: Layout,
    /// Where the picks came from (`the embedded default`, a file).
    pub config: String,
    pub layers: usize,
    pub calls: usize,
    /// Device bytes the step's calls read: every registration's layout bytes and planes.
    pub weight_bytes: usize,
    pub gguf_bytes: usize,
    pub warmup: usize,
    pub repeats: usize,
    pub steps: Vec<StepResult>,
    /// Set when a fault left the CUDA context unusable and the run stopped early.
    pub aborted: Option<String>,
}

/// A step's figures read off its median.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRate {
    pub us: f64,
    pub tokens_per_s: f64,
    /// Weight bytes over the step's time.
    pub weight_tb_s: f64,
    /// That as a percentage of the run's copy rate (read plus written, as bench counts it).
    pub pct_of_copy: Option<f64>,
}

impl DecodeStepReport {
    /// The rate of a step that took `outcome` at `tokens` tokens.
    pub fn rate(&self, tokens: usize, outcome: &Outcome) -> Option<StepRate> {
        let us = outcome.median().filter(|&us| us > 0.0)?;
        let weight_tb_s = tb_per_s(self.weight_bytes, us);
        Some(StepRate {
            us,
            tokens_per_s: tokens as f64 / (us * 1e-6),
            weight_tb_s,
            pct_of_copy: self
                .info
                .copy
                .map(|c| c.moved_tb_s())
                .filter(|&c| c > 0.0)
                .map(|c| 100.0 * weight_tb_s / c),
        })
    }

    /// Whether every token count was measured and every replay gave the direct calls' bits.
    pub fn is_clean(&self) -> bool {
        self.aborted.is_none()
            && !self.steps.is_empty()
            && self.steps.iter().all(|s| {
                s.error.is_none()
                    && s.bits.as_ref().is_some_and(BitCheck::identical)
                    && s.graph.median().is_some()
                    && s.direct.median().is_some()
            })
    }

    /// The markdown block: what was run, the table of steps, the picks.
    pub fn markdown(&self) -> String {
        let i = &self.info;
        let mut t = format!(
            "Decode step: Llama-3-8B's {} q6_K matmuls ({} layers x q, k, v, o, gate, up, down), each on weights of \
             its own ({} on the device in the {} layout, {} as GGUF), picks of {}, on one stream. {} ({}, {} SMs), \
             driver {} (CUDA {}), NVRTC {}, commit {}, {}. 'graph' replays one CUDA graph captured from the calls \
             once; 'direct' launches them one by one; each timed like a bench call (spin kernel ahead, CUDA events \
             around), {} warm-up and {} timed steps interleaved, medians. tokens/s = tokens / step time. 'weights \
             TB/s' = the step's weight bytes / its time, and its share of this run's copy rate: {}.\n\n",
            self.calls,
            self.layers,
            gb(self.weight_bytes),
            self.layout,
            gb(self.gguf_bytes),
            self.config,
            i.gpu,
            i.arch,
            i.multiprocessors,
            i.driver_release,
            i.driver_cuda,
            i.nvrtc,
            i.commit,
            i.date,
            self.warmup,
            self.repeats,
            match i.copy {
                Some(c) => format!(
                    "a {} MiB device-to-device copy at {:.2} TB/s (read plus written)",
                    c.bytes >> 20,
                    c.moved_tb_s()
                ),
                None => "not measured in this run".to_string(),
            }
        );
        t.push_str(
            "| tokens | graph step µs (p20–p80) | tokens/s | weights TB/s (% of copy) | direct step µs (p20–p80) | \
             direct tokens/s | direct TB/s (% of copy) | replay = direct bits |\n\
             |---:|---:|---:|---:|---:|---:|---:|---|\n",
        );
        for s in &self.steps {
            let graph = self.rate(s.tokens, &s.graph);
            let direct = self.rate(s.tokens, &s.direct);
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                s.tokens,
                time_cell(&s.graph),
                tokens_cell(graph),
                rate_cell(graph),
                time_cell(&s.direct),
                tokens_cell(direct),
                rate_cell(direct),
                bits_cell(s.bits.as_ref()),
            );
        }
        let shapes: Vec<&(String, usize, usize, String)> = self
            .steps
            .first()
            .map(|s| s.picks.iter().collect())
            .unwrap_or_default();
        if !shapes.is_empty() {
            t.push_str("\nThe picks:\n\n| tokens |");
            for (names, m, k, _) in &shapes {
                let _ = write!(t, " {names} ({m} x {k}) |");
            }
            t.push_str("\n|---:|");
            t.push_str(&"---|".repeat(shapes.len()));
            t.push('\n');
            for s in &self.steps {
                let _ = write!(t, "| {} |", s.tokens);
                for (_, _, _, pick) in &s.picks {
                    let _ = write!(t, " `{pick}` |");
                }
                t.push('\n');
            }
        }
        let notes = self.notes();
        if !notes.is_empty() {
            t.push('\n');
            for n in notes {
                let _ = writeln!(t, "- {n}");
            }
        }
        t
    }

    /// Sentences a reader must not miss: errors, differing bits, launch-bound steps, the abort.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(a) = &self.aborted {
            notes.push(format!("RUN STOPPED EARLY: {a}"));
        }
        for s in &self.steps {
            if let Some(e) = &s.error {
                notes.push(format!("{} token(s): {e}", s.tokens));
            }
            if let Some(b) = s.bits.as_ref().filter(|b| !b.identical()) {
                notes.push(format!(
                    "{} token(s): the graph replay's outputs differ from the direct calls' at {} of {}{}",
                    s.tokens,
                    b.mismatches,
                    b.compared,
                    b.first_bad
                        .as_deref()
                        .map(|f| format!(" (first: {f})"))
                        .unwrap_or_default()
                ));
            }
            if s.direct_launch_bound > 0 {
                notes.push(format!(
                    "{} token(s): {} direct step(s) took longer to enqueue ({} µs, median) than the spin ahead \
                     of them lasts, so their time holds launch gaps: what an engine that launches each call \
                     sees",
                    s.tokens,
                    s.direct_launch_bound,
                    s.direct_enqueue_us.map_or("—".into(), |u| format!("{u:.0}"))
                ));
            }
            if s.graph_launch_bound > 0 {
                notes.push(format!(
                    "{} token(s): {} graph replay(s) took longer to enqueue than the spin ahead of them lasts",
                    s.tokens, s.graph_launch_bound
                ));
            }
        }
        notes
    }

    /// One JSON object per token count.
    pub fn json_lines(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|s| {
                serde_json::to_string(&self.row(s))
                    .expect("a decode-step row has only strings, numbers and booleans")
            })
            .collect()
    }

    fn row(&self, s: &StepResult) -> StepRow {
        let i = &self.info;
        let graph = self.rate(s.tokens, &s.graph);
        let direct = self.rate(s.tokens, &s.direct);
        StepRow {
            mmqgen_bench: 1,
            kind: "decode_step",
            date: i.date.clone(),
            commit: i.commit.clone(),
            gpu: i.gpu.clone(),
            arch: i.arch.clone(),
            driver: i.driver_release.clone(),
            driver_cuda: i.driver_cuda.clone(),
            nvrtc: i.nvrtc.clone(),
            layout: self.layout.keyword(),
            config: self.config.clone(),
            layers: self.layers,
            calls: self.calls,
            tokens: s.tokens,
            weight_bytes: self.weight_bytes,
            gguf_bytes: self.gguf_bytes,
            warmup: self.warmup,
            repeats: self.repeats,
            graph: s.graph.stats().copied(),
            direct: s.direct.stats().copied(),
            tokens_per_s: graph.map(|r| r.tokens_per_s),
            weight_tb_s: graph.map(|r| r.weight_tb_s),
            pct_of_copy: graph.and_then(|r| r.pct_of_copy),
            direct_tokens_per_s: direct.map(|r| r.tokens_per_s),
            direct_pct_of_copy: direct.and_then(|r| r.pct_of_copy),
            copy_tb_s: i.copy.map(|c| c.moved_tb_s()),
            direct_enqueue_us: s.direct_enqueue_us,
            direct_launch_bound: s.direct_launch_bound,
            graph_launch_bound: s.graph_launch_bound,
            graph_nodes: s.graph_nodes,
            bits_identical: s.bits.as_ref().map(BitCheck::identical),
            outputs_compared: s.bits.as_ref().map(|b| b.compared),
            output_mismatches: s.bits.as_ref().map(|b| b.mismatches),
            picks: s
                .picks
                .iter()
                .map(|(names, m, k, variant)| PickRow {
                    matmuls: names.clone(),
                    m: *m,
                    k: *k,
                    variant: variant.clone(),
                })
                .collect(),
            error: s.error.clone().or_else(|| self.aborted.clone()),
        }
    }
}

fn time_cell(o: &Outcome) -> String {
    match o {
        Outcome::Timed(s) => format!("{:.0} ({:.0}–{:.0})", s.median, s.p20, s.p80),
        Outcome::NotTimed(_) | Outcome::Refused(_) => "not timed".to_string(),
    }
}

fn tokens_cell(r: Option<StepRate>) -> String {
    r.map_or("—".into(), |r| format!("{:.0}", r.tokens_per_s))
}

fn rate_cell(r: Option<StepRate>) -> String {
    match r {
        Some(StepRate {
            weight_tb_s,
            pct_of_copy: Some(p),
            ..
        }) => format!("{weight_tb_s:.2} ({p:.0}%)"),
        Some(r) => format!("{:.2}", r.weight_tb_s),
        None => "—".into(),
    }
}

fn bits_cell(b: Option<&BitCheck>) -> String {
    match b {
        Some(b) if b.identical() => format!("yes ({} outputs)", b.compared),
        Some(b) => format!("**NO**: {} of {} differ", b.mismatches, b.compared),
        None => "not compared".into(),
    }
}

/// One JSON line of `bench --decode-step --json`.
#[derive(Serialize)]
struct StepRow {
    mmqgen_bench: u32,
    kind: &'static str,
    date: String,
    commit: String,
    gpu: String,
    arch: String,
    driver: String,
    driver_cuda: String,
    nvrtc: String,
    layout: &'static str,
    config: String,
    layers: usize,
    calls: usize,
    tokens: usize,
    weight_bytes: usize,
    gguf_bytes: usize,
    warmup: usize,
    repeats: usize,
    /// The graph replay's statistics (µs).
    graph: Option<Stats>,
    /// The direct calls' statistics (µs).
    direct: Option<Stats>,
    tokens_per_s: Option<f64>,
    weight_tb_s: Option<f64>,
    pct_of_copy: Option<f64>,
    direct_tokens_per_s: Option<f64>,
    direct_pct_of_copy: Option<f64>,
    copy_tb_s: Option<f64>,
    direct_enqueue_us: Option<f64>,
    direct_launch_bound: usize,
    graph_launch_bound: usize,
    graph_nodes: Option<usize>,
    bits_identical: Option<bool>,
    outputs_compared: Option<usize>,
    output_mismatches: Option<usize>,
    picks: Vec<PickRow>,
    error: Option<String>,
}

#[derive(Serialize)]
struct PickRow {
    matmuls: String,
    m: usize,
    k: usize,
    variant: String,
}
