//! The run written for programs: one JSON object per contestant and shape.

use std::fmt::Write as _;

use super::anchors::{bf16_anchor_tflops, llamacpp_anchor_us};
use super::report::{BenchReport, Outcome, ShapeResult};
use super::stats::tflops;
use crate::check::json_string;

impl BenchReport {
    /// One JSON object per line: one per contestant and shape (kind `variant`, `cublas_bf16`, `cublas_f16`),
    /// each with the run's metadata.
    pub fn json_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for s in &self.shapes {
            let bf16_us = s.cublas_bf16_us();
            let f16_us = s.cublas_f16_us();
            let llama = llamacpp_anchor_us(s.shape);
            let check = s.baseline_check();
            let mut push = |kind: &str,
                            name: &str,
                            canonical: Option<&str>,
                            total: &Outcome,
                            extra: &str| {
                let mut o = self.json_head(kind, s);
                let _ = write!(o, ",\"variant\":{}", json_string(name));
                if let Some(c) = canonical {
                    let _ = write!(o, ",\"canonical\":{}", json_string(c));
                }
                match total {
                    Outcome::Timed(st) => {
                        let _ = write!(
                            o,
                            ",\"status\":\"timed\",\"median_us\":{},\"p20_us\":{},\"p80_us\":{},\"min_us\":{},\
                             \"max_us\":{},\"n\":{},\"tflops\":{},\"x_cublas_bf16\":{},\"x_cublas_f16\":{},\
                             \"x_llamacpp_quoted\":{}",
                            json_num(Some(st.median)),
                            json_num(Some(st.p20)),
                            json_num(Some(st.p80)),
                            json_num(Some(st.min)),
                            json_num(Some(st.max)),
                            st.n,
                            json_num(Some(tflops(s.shape, st.median))),
                            json_num(bf16_us.map(|b| b / st.median)),
                            json_num(f16_us.map(|b| b / st.median)),
                            json_num(llama.map(|l| l / st.median)),
                        );
                    }
                    Outcome::NotTimed(why) => {
                        let _ = write!(
                            o,
                            ",\"status\":\"not_timed\",\"error\":{}",
                            json_string(why)
                        );
                    }
                }
                let _ = write!(o, ",\"llamacpp_quoted_us\":{}{extra}}}", json_num(llama));
                lines.push(o);
            };
            if let Some(b) = &s.cublas_bf16 {
                let mut extra = format!(
                    ",\"rel_error\":{},\"launch_bound\":{},\"anchor_bf16_tflops\":{}",
                    json_num(b.rel_error),
                    b.launch_bound,
                    json_num(bf16_anchor_tflops(s.shape))
                );
                if let Some(c) = check {
                    let _ = write!(extra, ",\"suspect\":{}", c.is_suspect());
                }
                push("cublas_bf16", &b.name, None, &b.total, &extra);
            }
            if let Some(b) = &s.cublas_f16 {
                let extra = format!(
                    ",\"rel_error\":{},\"launch_bound\":{}",
                    json_num(b.rel_error),
                    b.launch_bound
                );
                push("cublas_f16", &b.name, None, &b.total, &extra);
            }
            for v in &s.variants {
                let mut extra = format!(
                    ",\"quantizer_median_us\":{},\"launch_bound\":{},\"device_bytes\":{},\"gguf_bytes\":{}",
                    json_num(v.quantizer.median()),
                    v.launch_bound,
                    v.device_bytes,
                    crate::weights::gguf_bytes(s.shape.m, s.shape.k)
                );
                if let Some(q) = v.quantizer.stats() {
                    let _ = write!(
                        extra,
                        ",\"quantizer_p20_us\":{},\"quantizer_p80_us\":{}",
                        json_num(Some(q.p20)),
                        json_num(Some(q.p80))
                    );
                }
                if let Some(p) = &v.parity {
                    let _ = write!(
                        extra,
                        ",\"parity_passed\":{},\"parity_checked\":{},\"parity_mismatches\":{},\
                         \"parity_unwritten\":{},\"parity_quant_mismatches\":{}",
                        p.passed(),
                        p.checked,
                        p.mismatches,
                        p.unwritten,
                        p.quant_mismatches
                    );
                }
                push("variant", &v.name, Some(&v.canonical), &v.total, &extra);
            }
            if s.variants.is_empty() && s.cublas_bf16.is_none() && s.cublas_f16.is_none() {
                let mut o = self.json_head("shape", s);
                let _ = write!(
                    o,
                    ",\"status\":\"not_measured\",\"error\":{}}}",
                    json_string(s.error.as_deref().unwrap_or("nothing was measured"))
                );
                lines.push(o);
            }
        }
        lines
    }

    pub(super) fn json_head(&self, kind: &str, s: &ShapeResult) -> String {
        let i = &self.info;
        format!(
            "{{\"mmqgen_bench\":1,\"kind\":{},\"date\":{},\"commit\":{},\"gpu\":{},\"arch\":{},\
             \"driver\":{},\"driver_cuda\":{},\"nvrtc\":{},\"l2_bytes\":{},\"layout\":{},\"warmup\":{},\
             \"repeats\":{},\"seed\":{},\"cublas_out\":{},\"m\":{},\"n\":{},\"k\":{},\"buffer_sets\":{},\
             \"rotation_bytes\":{}",
            json_string(kind),
            json_string(&i.date),
            json_string(&i.commit),
            json_string(&i.gpu),
            json_string(&i.arch),
            json_string(&i.driver_release),
            json_string(&i.driver_cuda),
            json_string(&i.nvrtc),
            i.l2_bytes,
            json_string(self.config.layout.keyword()),
            self.config.warmup,
            self.config.repeats,
            self.config.seed,
            json_string(self.config.cublas_out.keyword()),
            s.shape.m,
            s.shape.n,
            s.shape.k,
            s.buffer_sets,
            s.rotation_bytes,
        )
    }
}

/// A JSON number, or `null` when absent or not finite.
pub fn json_num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".to_string(),
    }
}
