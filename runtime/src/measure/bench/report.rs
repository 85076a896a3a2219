//! The result model of a run (per shape, per contestant), and what is read off it: the notes a reader must
//! not miss, the prefill layer, the A/B verdicts.

use super::anchors::{bf16_anchor_tflops, check_bf16_baseline, BaselineCheck};
use super::config::BenchConfig;
use super::copy_rate::tb_per_s;
use super::floor::FloorGeometry;
use super::landing::{ab_overall, ab_verdict, AbVerdict};
use super::provenance::RunInfo;
use super::shapes::{LLAMA3_8B_LAYER, ROTATION_L2_MULTIPLE};
use super::stats::{tflops, Stats};
use crate::check::Shape;
use crate::compile::build::BuildInfo;

/// A contestant's timing: its statistics, why it was not timed, or the launcher's sentence on why the variant
/// cannot take this shape (not a failure of the run: `bench --picks` times every pick at every shape, and a ring
/// variant picked for short K cannot take a long one).
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Timed(Stats),
    NotTimed(String),
    Refused(String),
}

impl Outcome {
    pub fn stats(&self) -> Option<&Stats> {
        match self {
            Outcome::Timed(s) => Some(s),
            Outcome::NotTimed(_) | Outcome::Refused(_) => None,
        }
    }

    pub fn median(&self) -> Option<f64> {
        self.stats().map(|s| s.median)
    }
}

/// The pre-timing parity check of one variant at one shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParitySummary {
    /// Outputs compared bit for bit with `reference_output`.
    pub checked: usize,
    pub mismatches: usize,
    /// Outputs still holding the poison (never written), over the whole output.
    pub unwritten: usize,
    /// Quantized activations (quants plus scales) compared with the reference quantizer's.
    pub quant_checked: usize,
    pub quant_mismatches: usize,
    /// The first difference, in words.
    pub first_bad: Option<String>,
}

impl ParitySummary {
    pub fn passed(&self) -> bool {
        self.checked > 0
            && self.mismatches == 0
            && self.unwritten == 0
            && self.quant_mismatches == 0
    }

    /// `parity failed: 3 of 5120 sampled outputs differ (token 0 row 5: ...)`.
    pub fn failure_sentence(&self) -> String {
        let mut parts = Vec::new();
        if self.mismatches > 0 {
            parts.push(format!(
                "{} of {} sampled outputs differ from the CPU reference",
                self.mismatches, self.checked
            ));
        }
        if self.unwritten > 0 {
            parts.push(format!("{} outputs were never written", self.unwritten));
        }
        if self.quant_mismatches > 0 {
            parts.push(format!(
                "{} of {} quantized activations differ from the reference quantizer's",
                self.quant_mismatches, self.quant_checked
            ));
        }
        if self.checked == 0 {
            parts.push("no output was compared".to_string());
        }
        let first = self
            .first_bad
            .as_deref()
            .map(|f| format!(" (first: {f})"))
            .unwrap_or_default();
        format!("parity failed: {}{first}", parts.join("; "))
    }
}

/// One variant at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantResult {
    pub name: String,
    pub canonical: String,
    /// `None` when the check could not run (the reason is in `total`).
    pub parity: Option<ParitySummary>,
    /// Quantizer + matmul (+ combine): what [`crate::gpu::launch::LoadedVariant::matmul`] queues.
    pub total: Outcome,
    /// The variant's activation quantizer alone.
    pub quantizer: Outcome,
    /// Timed calls (whole matmul) whose host enqueue outlasted the spin kernel.
    pub launch_bound: usize,
    /// What the variant's weights cost on the device at this shape: the layout plus the planes it reads.
    pub device_bytes: usize,
}

/// One cuBLAS baseline at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineResult {
    /// `cuBLAS bf16` or `cuBLAS f16`.
    pub name: String,
    pub total: Outcome,
    /// `|out - ref| / |ref|` over the checked sample, against an f64 CPU product of the converted inputs.
    pub rel_error: Option<f64>,
    pub launch_bound: usize,
}

/// The read floor at one shape: a kernel that only reads the matrix's bytes in the run's layout, each geometry
/// timed like a call.
#[derive(Clone, Debug, PartialEq)]
pub struct FloorResult {
    /// Bytes read per call.
    pub bytes: usize,
    /// Every geometry tried and its timing (all `NotTimed` with the reason when the reader could not run).
    pub geometries: Vec<(FloorGeometry, Outcome)>,
    /// Timed calls of the best geometry whose host enqueue outlasted the spin kernel.
    pub launch_bound: usize,
}

impl FloorResult {
    /// The geometry with the smallest median: the floor.
    pub fn best(&self) -> Option<(FloorGeometry, &Stats)> {
        self.geometries
            .iter()
            .filter_map(|(g, o)| o.stats().map(|s| (*g, s)))
            .min_by(|a, b| a.1.median.total_cmp(&b.1.median))
    }

    /// Why no geometry was timed, when none was.
    pub fn failure(&self) -> Option<&str> {
        if self.best().is_some() {
            return None;
        }
        self.geometries
            .iter()
            .find_map(|(_, o)| match o {
                Outcome::NotTimed(why) | Outcome::Refused(why) => Some(why.as_str()),
                Outcome::Timed(_) => None,
            })
            .or(Some("no geometry was tried"))
    }
}

/// Everything measured at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeResult {
    pub shape: Shape,
    pub buffer_sets: usize,
    /// Bytes the contestant with the smallest sets cycles through (all its sets together).
    pub rotation_bytes: usize,
    pub variants: Vec<VariantResult>,
    pub cublas_bf16: Option<BaselineResult>,
    pub cublas_f16: Option<BaselineResult>,
    /// The read floor, where the run timed it (decode shapes by default).
    pub read_floor: Option<FloorResult>,
    /// Why the shape (or part of it) could not be measured.
    pub error: Option<String>,
    pub wall_s: f64,
}

impl ShapeResult {
    pub(super) fn empty(shape: Shape) -> ShapeResult {
        ShapeResult {
            shape,
            buffer_sets: 0,
            rotation_bytes: 0,
            variants: Vec::new(),
            cublas_bf16: None,
            cublas_f16: None,
            read_floor: None,
            error: None,
            wall_s: 0.0,
        }
    }

    pub fn cublas_bf16_us(&self) -> Option<f64> {
        self.cublas_bf16.as_ref().and_then(|b| b.total.median())
    }

    pub fn cublas_f16_us(&self) -> Option<f64> {
        self.cublas_f16.as_ref().and_then(|b| b.total.median())
    }

    /// The suspect-baseline rule on this shape's cuBLAS bf16 median, when it was timed.
    pub fn baseline_check(&self) -> Option<BaselineCheck> {
        self.cublas_bf16_us()
            .map(|us| check_bf16_baseline(self.shape, tflops(self.shape, us)))
    }

    /// The read floor's median (its best geometry's), when it was timed here.
    pub fn floor_us(&self) -> Option<f64> {
        self.read_floor
            .as_ref()
            .and_then(|f| f.best().map(|(_, s)| s.median))
    }

    /// `us` over the read floor: how many times the time of only reading the weights a call takes.
    pub fn x_floor(&self, us: f64) -> Option<f64> {
        self.floor_us().filter(|&f| f > 0.0).map(|f| us / f)
    }

    /// The variant with the smallest median time.
    pub fn best_variant(&self) -> Option<(&str, f64)> {
        self.variants
            .iter()
            .filter_map(|v| v.total.median().map(|t| (v.name.as_str(), t)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The weight bytes a dense baseline reads: bf16 or f16, two bytes per weight.
    pub fn dense_weight_bytes(&self) -> usize {
        2 * self.shape.m * self.shape.k
    }

    pub fn variant(&self, name: &str) -> Option<&VariantResult> {
        self.variants
            .iter()
            .find(|v| v.name == name || v.canonical == name)
    }
}

/// How one variant was built.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildResult {
    pub name: String,
    pub canonical: String,
    /// The build, or why it failed or was skipped.
    pub result: Result<BuildInfo, String>,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    pub info: RunInfo,
    pub config: BenchConfig,
    pub builds: Vec<BuildResult>,
    /// Why the cuBLAS baselines are missing, when they are.
    pub cublas_note: Option<String>,
    /// Why the read floor is missing where it was asked for, when the reader could not be built.
    pub floor_note: Option<String>,
    pub shapes: Vec<ShapeResult>,
    /// Set when a kernel fault left the CUDA context unusable and the run stopped early.
    pub aborted: Option<String>,
}

/// A contestant's weight bandwidth: the weight bytes it reads per call over its median time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightRate {
    pub tb_s: f64,
    /// `tb_s` as a percentage of the run's copy rate, when the copy was timed.
    pub pct_of_copy: Option<f64>,
}

impl BenchReport {
    /// The weight bandwidth of a contestant reading `weight_bytes` per call, when it was timed.
    pub fn weight_rate(&self, weight_bytes: usize, total: &Outcome) -> Option<WeightRate> {
        let tb_s = tb_per_s(weight_bytes, total.median()?);
        let copy = self.info.copy.map(|c| c.moved_tb_s());
        Some(WeightRate {
            tb_s,
            pct_of_copy: copy.filter(|&c| c > 0.0).map(|c| 100.0 * tb_s / c),
        })
    }

    /// Everything a reader must not miss, one sentence each: failed builds, parity failures, suspect or
    /// unanchored baselines, rotations the set cap left under three L2s, launch-bound calls, the abort.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(a) = &self.aborted {
            notes.push(format!("RUN STOPPED EARLY: {a}"));
        }
        for b in &self.builds {
            if let Err(e) = &b.result {
                notes.push(format!("variant '{}' was not built: {e}", b.name));
            }
        }
        if let Some(c) = &self.cublas_note {
            notes.push(c.clone());
        }
        if let Some(f) = &self.floor_note {
            notes.push(f.clone());
        }
        for s in &self.shapes {
            if let Some(e) = &s.error {
                notes.push(format!("{}: {e}", s.shape));
            }
            if let Some(check) = s.baseline_check() {
                if check.is_suspect() {
                    notes.push(check.sentence(s.shape));
                }
            }
            for b in [&s.cublas_bf16, &s.cublas_f16].into_iter().flatten() {
                if let Outcome::NotTimed(why) = &b.total {
                    notes.push(format!("{} at {}: not timed: {why}", b.name, s.shape));
                }
                if b.launch_bound > 0 {
                    notes.push(launch_bound_note(&b.name, s.shape, b.launch_bound));
                }
            }
            if let Some(f) = &s.read_floor {
                if let Some(why) = f.failure() {
                    notes.push(format!("the read floor at {}: not timed: {why}", s.shape));
                }
                if f.launch_bound > 0 {
                    notes.push(launch_bound_note("the read floor", s.shape, f.launch_bound));
                }
            }
            for v in &s.variants {
                match &v.total {
                    Outcome::NotTimed(why) => notes.push(format!(
                        "variant '{}' at {}: not timed: {why}",
                        v.name, s.shape
                    )),
                    Outcome::Refused(why) => notes.push(format!(
                        "variant '{}' at {}: cannot take this shape: {why}",
                        v.name, s.shape
                    )),
                    Outcome::Timed(_) => {}
                }
                if v.launch_bound > 0 {
                    notes.push(launch_bound_note(&v.name, s.shape, v.launch_bound));
                }
            }
            let l2x3 = ROTATION_L2_MULTIPLE * self.info.l2_bytes;
            if !self.config.warm_weights && s.buffer_sets > 0 && s.rotation_bytes <= l2x3 {
                notes.push(format!(
                    "{}: the {} buffer sets hold {} MiB, not more than {} x L2 ({} MiB), so some calls may \
                     read warm inputs",
                    s.shape,
                    s.buffer_sets,
                    s.rotation_bytes >> 20,
                    ROTATION_L2_MULTIPLE,
                    l2x3 >> 20
                ));
            }
        }
        let unanchored: Vec<String> = self
            .shapes
            .iter()
            .filter(|s| s.cublas_bf16_us().is_some() && bf16_anchor_tflops(s.shape).is_none())
            .map(|s| s.shape.to_string())
            .collect();
        if !unanchored.is_empty() {
            notes.push(format!(
                "docs/DESIGN.md R4 has no directly called bf16 figure for {}, so the cuBLAS baseline is not \
                 checked there",
                unanchored.join(", ")
            ));
        }
        notes
    }

    /// The Llama-3-8B layer at `tokens` tokens: each matmul's best timed variant (or `only`, when given),
    /// the sum of medians, and tokens per second; the same for cuBLAS bf16.
    pub fn prefill(&self, tokens: usize, only: Option<&str>) -> PrefillSummary {
        let mut matmuls = Vec::new();
        for (name, m, k) in LLAMA3_8B_LAYER {
            let shape = Shape::new(m, tokens, k);
            let result = self.shapes.iter().find(|s| s.shape == shape);
            let chosen = result.and_then(|s| match only {
                Some(v) => s
                    .variant(v)
                    .and_then(|r| r.total.median().map(|t| (r.name.clone(), t))),
                None => s.best_variant().map(|(n, t)| (n.to_string(), t)),
            });
            matmuls.push(PrefillMatmul {
                name,
                shape,
                variant: chosen.as_ref().map(|c| c.0.clone()),
                us: chosen.map(|c| c.1),
                cublas_bf16_us: result.and_then(|s| s.cublas_bf16_us()),
            });
        }
        let sum = |f: &dyn Fn(&PrefillMatmul) -> Option<f64>| -> Option<f64> {
            matmuls.iter().map(f).sum::<Option<f64>>()
        };
        let layer_us = sum(&|p| p.us);
        let cublas_layer_us = sum(&|p| p.cublas_bf16_us);
        PrefillSummary {
            tokens,
            layer_us,
            cublas_layer_us,
            matmuls,
        }
    }

    /// Whether the run is clean: every chosen variant built and timed at every shape it can take (a launcher's
    /// refusal of a shape is reported, not failed), the read floor timed wherever it was asked for, every shape
    /// run, and nothing stopped the run.
    pub fn is_clean(&self) -> bool {
        self.aborted.is_none()
            && self.floor_note.is_none()
            && self.builds.iter().all(|b| b.result.is_ok())
            && self.shapes.iter().all(|s| {
                s.error.is_none()
                    && s.read_floor.as_ref().is_none_or(|f| f.best().is_some())
                    && s.variants
                        .iter()
                        .all(|v| !matches!(v.total, Outcome::NotTimed(_)))
            })
    }

    /// The A/B verdicts of `b` against `a` at every shape both were timed, and overall.
    pub fn ab(&self, a: &str, b: &str) -> AbReport {
        let mut shapes = Vec::new();
        for s in &self.shapes {
            let ta = s.variant(a).map(|v| v.total.clone());
            let tb = s.variant(b).map(|v| v.total.clone());
            let verdict = match (&ta, &tb) {
                (Some(Outcome::Timed(x)), Some(Outcome::Timed(y))) => {
                    Ok(ab_verdict(x.median, y.median))
                }
                (_, Some(Outcome::NotTimed(why) | Outcome::Refused(why))) => {
                    Err(format!("B was not timed: {why}"))
                }
                (Some(Outcome::NotTimed(why) | Outcome::Refused(why)), _) => {
                    Err(format!("A was not timed: {why}"))
                }
                _ => Err(s
                    .error
                    .clone()
                    .unwrap_or_else(|| "A or B was not run".to_string())),
            };
            shapes.push((s.shape, verdict));
        }
        let pairs: Vec<(f64, f64)> = shapes
            .iter()
            .filter_map(|(_, v)| v.as_ref().ok().map(|v| (v.a_us, v.b_us)))
            .collect();
        let missing = shapes.iter().filter(|(_, v)| v.is_err()).count();
        let overall = ab_overall(&pairs).map(|mut v| {
            if missing > 0 {
                v.lands = false;
            }
            v
        });
        AbReport {
            a: a.to_string(),
            b: b.to_string(),
            shapes,
            overall,
            missing,
        }
    }
}

pub(super) fn launch_bound_note(name: &str, shape: Shape, count: usize) -> String {
    format!(
        "{name} at {shape}: {count} timed call(s) took longer to queue than the spin kernel ahead of them lasts, \
         so their time may include launch gaps"
    )
}

/// One matmul of the prefill layer.
#[derive(Clone, Debug, PartialEq)]
pub struct PrefillMatmul {
    pub name: &'static str,
    pub shape: Shape,
    pub variant: Option<String>,
    pub us: Option<f64>,
    pub cublas_bf16_us: Option<f64>,
}

/// A Llama-3-8B layer's matmuls at one prompt length.
#[derive(Clone, Debug, PartialEq)]
pub struct PrefillSummary {
    pub tokens: usize,
    pub matmuls: Vec<PrefillMatmul>,
    /// Sum of the chosen variants' medians, when every matmul has one.
    pub layer_us: Option<f64>,
    pub cublas_layer_us: Option<f64>,
}

impl PrefillSummary {
    /// Tokens per second through the layer's matmuls.
    pub fn tokens_per_s(&self) -> Option<f64> {
        self.layer_us.map(|us| self.tokens as f64 / (us * 1e-6))
    }

    pub fn cublas_tokens_per_s(&self) -> Option<f64> {
        self.cublas_layer_us
            .map(|us| self.tokens as f64 / (us * 1e-6))
    }
}

/// The A/B verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct AbReport {
    pub a: String,
    pub b: String,
    pub shapes: Vec<(Shape, Result<AbVerdict, String>)>,
    /// On the sums of medians over the shapes where both were timed; never lands when a shape is missing.
    pub overall: Option<AbVerdict>,
    /// Shapes without a verdict.
    pub missing: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_summaries_say_what_failed() {
        let ok = ParitySummary {
            checked: 10,
            quant_checked: 4,
            ..Default::default()
        };
        assert!(ok.passed());
        let bad = ParitySummary {
            mismatches: 2,
            unwritten: 1,
            first_bad: Some("token 0 row 1: want 0x1, got 0x2".into()),
            ..ok.clone()
        };
        assert!(!bad.passed());
        assert_eq!(
            bad.failure_sentence(),
            "parity failed: 2 of 10 sampled outputs differ from the CPU reference; 1 outputs were never \
             written (first: token 0 row 1: want 0x1, got 0x2)"
        );
        assert!(
            !ParitySummary::default().passed(),
            "nothing compared is no pass"
        );
    }
}
