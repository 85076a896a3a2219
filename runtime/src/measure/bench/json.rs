//! The run written for programs: one JSON object per contestant and shape ([`BenchRow`], serialized by
//! serde_json), each carrying the run's metadata so that a line stands on its own; where the read floor was
//! timed, a `read_floor` row and, on every row of the shape, the floor and the row's ratio to it.

use serde::{Deserialize, Deserializer, Serialize};

use super::anchors::{bf16_anchor_tflops, llamacpp_anchor_us};
use super::report::{BenchReport, Outcome, ShapeResult};
use super::stats::tflops;

/// One line of `mmqgen bench --json`. Keys that are always there but may be unknown are `Option<Option<_>>`
/// (outer `None`: the key is absent on this kind of row; `Some(None)`: written as `null`), so that a line read
/// back is the line written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    /// Always 1: marks the line as a bench row.
    pub mmqgen_bench: u32,
    /// `variant`, `cublas_bf16`, `cublas_f16`, `read_floor`, or `shape` (nothing was measured at the shape).
    pub kind: String,
    pub date: String,
    pub commit: String,
    pub gpu: String,
    pub arch: String,
    /// The kernel module's version.
    pub driver: String,
    pub driver_cuda: String,
    pub nvrtc: String,
    pub l2_bytes: usize,
    pub layout: String,
    pub warmup: usize,
    pub repeats: usize,
    pub seed: u64,
    pub cublas_out: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub buffer_sets: usize,
    pub rotation_bytes: usize,
    /// `--warm-weights`: one buffer set reused by every call (absent in rows written before the option).
    #[serde(default)]
    pub warm_weights: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// `timed`, `not_timed` or `not_measured`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p20_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p80_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_us: Option<f64>,
    /// Timed calls behind the statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tflops: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub x_cublas_bf16: Option<Option<f64>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub x_cublas_f16: Option<Option<f64>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub x_llamacpp_quoted: Option<Option<f64>>,
    /// Why the contestant was not timed, or why nothing was measured at the shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub llamacpp_quoted_us: Option<Option<f64>>,
    /// The weight bytes the contestant reads per call: the variant's device footprint, `m*K*2` for a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_bytes: Option<usize>,
    /// `weight_bytes` over the median time, TB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub weight_tb_s: Option<Option<f64>>,
    /// `weight_tb_s` as a percentage of the run's copy rate (`copy_tb_s`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub pct_of_copy: Option<Option<f64>>,
    /// The run's device-to-device copy rate: bytes the copy reads plus writes over its median time, TB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub copy_tb_s: Option<Option<f64>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub rel_error: Option<Option<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_bound: Option<usize>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub anchor_bf16_tflops: Option<Option<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspect: Option<bool>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub quantizer_median_us: Option<Option<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gguf_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantizer_p20_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantizer_p80_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity_passed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity_checked: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity_mismatches: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity_unwritten: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity_quant_mismatches: Option<usize>,
    /// The read floor's median at this shape (on every row of a shape where it was asked for; `null` when it
    /// could not be timed).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub read_floor_us: Option<Option<f64>>,
    /// `median_us / read_floor_us`: how many times the time of only reading the weights this call takes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub x_read_floor: Option<Option<f64>>,
    /// On the `read_floor` row: the fastest geometry (`256 threads x 2/SM`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_geometry: Option<String>,
}

/// A key that is present reads as `Some`, even when it is `null` (serde's default reads `null` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
    Option::<f64>::deserialize(d).map(Some)
}

/// `Some(v)` when `v` is finite, for keys that are written as `null` otherwise.
fn finite(v: Option<f64>) -> Option<Option<f64>> {
    Some(v.filter(|v| v.is_finite()))
}

impl BenchReport {
    /// One row per contestant and shape (kind `variant`, `cublas_bf16`, `cublas_f16`), or one `shape` row where
    /// nothing was measured.
    pub fn json_rows(&self) -> Vec<BenchRow> {
        let mut rows = Vec::new();
        for s in &self.shapes {
            let bf16_us = s.cublas_bf16_us();
            let f16_us = s.cublas_f16_us();
            let llama = llamacpp_anchor_us(s.shape);
            let contestant = |kind: &str, name: &str, total: &Outcome, weight_bytes: usize| {
                let mut r = self.row_head(kind, s);
                r.variant = Some(name.to_string());
                match total {
                    Outcome::Timed(st) => {
                        r.status = "timed".into();
                        r.median_us = Some(st.median);
                        r.p20_us = Some(st.p20);
                        r.p80_us = Some(st.p80);
                        r.min_us = Some(st.min);
                        r.max_us = Some(st.max);
                        r.samples = Some(st.n);
                        r.tflops = Some(tflops(s.shape, st.median));
                        r.x_cublas_bf16 = finite(bf16_us.map(|b| b / st.median));
                        r.x_cublas_f16 = finite(f16_us.map(|b| b / st.median));
                        r.x_llamacpp_quoted = finite(llama.map(|l| l / st.median));
                    }
                    Outcome::NotTimed(why) => {
                        r.status = "not_timed".into();
                        r.error = Some(why.clone());
                    }
                    Outcome::Refused(why) => {
                        r.status = "refused".into();
                        r.error = Some(why.clone());
                    }
                }
                r.llamacpp_quoted_us = finite(llama);
                let rate = self.weight_rate(weight_bytes, total);
                r.weight_bytes = Some(weight_bytes);
                r.weight_tb_s = finite(rate.map(|r| r.tb_s));
                r.pct_of_copy = finite(rate.and_then(|r| r.pct_of_copy));
                if s.read_floor.is_some() {
                    r.read_floor_us = finite(s.floor_us());
                    r.x_read_floor = finite(total.median().and_then(|us| s.x_floor(us)));
                }
                r
            };
            if let Some(b) = &s.cublas_bf16 {
                let mut r = contestant("cublas_bf16", &b.name, &b.total, s.dense_weight_bytes());
                r.rel_error = finite(b.rel_error);
                r.launch_bound = Some(b.launch_bound);
                r.anchor_bf16_tflops = finite(bf16_anchor_tflops(s.shape));
                r.suspect = s.baseline_check().map(|c| c.is_suspect());
                rows.push(r);
            }
            if let Some(b) = &s.cublas_f16 {
                let mut r = contestant("cublas_f16", &b.name, &b.total, s.dense_weight_bytes());
                r.rel_error = finite(b.rel_error);
                r.launch_bound = Some(b.launch_bound);
                rows.push(r);
            }
            for v in &s.variants {
                let mut r = contestant("variant", &v.name, &v.total, v.device_bytes);
                r.canonical = Some(v.canonical.clone());
                r.quantizer_median_us = finite(v.quantizer.median());
                r.launch_bound = Some(v.launch_bound);
                r.device_bytes = Some(v.device_bytes);
                r.gguf_bytes = Some(crate::gpu::weights::gguf_bytes(s.shape.m, s.shape.k));
                if let Some(q) = v.quantizer.stats() {
                    r.quantizer_p20_us = Some(q.p20);
                    r.quantizer_p80_us = Some(q.p80);
                }
                if let Some(p) = &v.parity {
                    r.parity_passed = Some(p.passed());
                    r.parity_checked = Some(p.checked);
                    r.parity_mismatches = Some(p.mismatches);
                    r.parity_unwritten = Some(p.unwritten);
                    r.parity_quant_mismatches = Some(p.quant_mismatches);
                }
                rows.push(r);
            }
            if let Some(f) = &s.read_floor {
                let total = match f.best() {
                    Some((_, st)) => Outcome::Timed(*st),
                    None => Outcome::NotTimed(f.failure().unwrap_or("not timed").to_string()),
                };
                let mut r = contestant("read_floor", "read floor", &total, f.bytes);
                // A reader does no multiply and has no counterpart to be compared with.
                (
                    r.tflops,
                    r.x_cublas_bf16,
                    r.x_cublas_f16,
                    r.x_llamacpp_quoted,
                ) = (None, None, None, None);
                r.floor_geometry = f.best().map(|(g, _)| g.to_string());
                r.launch_bound = Some(f.launch_bound);
                rows.push(r);
            }
            if s.variants.is_empty()
                && s.cublas_bf16.is_none()
                && s.cublas_f16.is_none()
                && s.read_floor.is_none()
            {
                let mut r = self.row_head("shape", s);
                r.status = "not_measured".into();
                r.error = Some(
                    s.error
                        .clone()
                        .unwrap_or_else(|| "nothing was measured".to_string()),
                );
                rows.push(r);
            }
        }
        rows
    }

    /// [`Self::json_rows`], one JSON object per line.
    pub fn json_lines(&self) -> Vec<String> {
        self.json_rows()
            .iter()
            .map(|r| {
                serde_json::to_string(r)
                    .expect("a bench row has only strings, numbers and booleans")
            })
            .collect()
    }

    /// The keys every row has: the run's metadata and the shape.
    fn row_head(&self, kind: &str, s: &ShapeResult) -> BenchRow {
        let i = &self.info;
        BenchRow {
            mmqgen_bench: 1,
            kind: kind.to_string(),
            date: i.date.clone(),
            commit: i.commit.clone(),
            gpu: i.gpu.clone(),
            arch: i.arch.clone(),
            driver: i.driver_release.clone(),
            driver_cuda: i.driver_cuda.clone(),
            nvrtc: i.nvrtc.clone(),
            l2_bytes: i.l2_bytes,
            layout: self.config.layout.keyword().to_string(),
            warmup: self.config.warmup,
            repeats: self.config.repeats,
            seed: self.config.seed,
            cublas_out: self.config.cublas_out.keyword().to_string(),
            m: s.shape.m,
            n: s.shape.n,
            k: s.shape.k,
            buffer_sets: s.buffer_sets,
            rotation_bytes: s.rotation_bytes,
            warm_weights: self.config.warm_weights,
            variant: None,
            canonical: None,
            status: String::new(),
            median_us: None,
            p20_us: None,
            p80_us: None,
            min_us: None,
            max_us: None,
            samples: None,
            tflops: None,
            x_cublas_bf16: None,
            x_cublas_f16: None,
            x_llamacpp_quoted: None,
            error: None,
            llamacpp_quoted_us: None,
            weight_bytes: None,
            weight_tb_s: None,
            pct_of_copy: None,
            copy_tb_s: finite(i.copy.as_ref().map(|c| c.moved_tb_s())),
            rel_error: None,
            launch_bound: None,
            anchor_bf16_tflops: None,
            suspect: None,
            quantizer_median_us: None,
            device_bytes: None,
            gguf_bytes: None,
            quantizer_p20_us: None,
            quantizer_p80_us: None,
            parity_passed: None,
            parity_checked: None,
            parity_mismatches: None,
            parity_unwritten: None,
            parity_quant_mismatches: None,
            read_floor_us: None,
            x_read_floor: None,
            floor_geometry: None,
        }
    }
}
