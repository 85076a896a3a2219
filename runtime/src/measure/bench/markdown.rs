//! The run rendered for people: the legend, the markdown table (to paste into docs/PERF.md), the prefill
//! block and the A/B verdict text.

use std::fmt::Write as _;

use super::anchors::llamacpp_anchor_us;
use super::config::CublasOut;
use super::floor::{FloorMode, DECODE_MAX_N, FLOOR_GEOMETRIES};
use super::landing::{AbVerdict, LANDING_BAR};
use super::report::{AbReport, BenchReport, FloorResult, Outcome, PrefillSummary, WeightRate};
use super::stats::tflops;
use crate::check::Shape;

pub(super) fn fmt_us(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

pub(super) fn ratio(num: Option<f64>, den: Option<f64>) -> String {
    match (num, den) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "—".to_string(),
    }
}

pub(super) fn cell_or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".to_string())
}

/// Table cells must not contain `|` or newlines.
pub(super) fn table_text(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c == '\n' || c == '|' { ' ' } else { c })
        .collect();
    if one_line.chars().count() > 90 {
        let cut: String = one_line.chars().take(87).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

/// One row of the table.
pub(super) struct TableRow {
    pub(super) name: String,
    pub(super) outcome: Outcome,
    pub(super) quantizer: Option<Outcome>,
    /// The weights' bytes on the device.
    pub(super) device_bytes: usize,
}

/// `14.0 MiB (1.07x)`: bytes on the device and their ratio to the GGUF tensor's.
pub(super) fn footprint_cell(device_bytes: usize, shape: Shape) -> String {
    let gguf = crate::gpu::weights::gguf_bytes(shape.m, shape.k).max(1);
    format!(
        "{:.1} MiB ({:.2}x)",
        device_bytes as f64 / 1048576.0,
        device_bytes as f64 / gguf as f64
    )
}

impl BenchReport {
    /// The markdown paragraph that explains the table's columns.
    pub fn legend(&self) -> String {
        let out = match self.config.cublas_out {
            CublasOut::Input => "bf16/f16 out",
            CublasOut::F32 => "f32 out",
        };
        format!(
            "{} ({}, {} SMs), driver {} (CUDA {}), NVRTC {}, commit {}, {}. Weights in the {} layout; \
             {} warm-up and {} timed calls per contestant, interleaved, {} (L2 {} MiB, {}). Times are CUDA-event \
             medians (µs) of the whole call: activation quantizer + matmul (+ split-K combine); 'quantizer \
             alone' times that kernel by itself (— where the matmul quantizes itself, quantizer = fused). \
             TFLOPS count 2·m·n·K. 'x cuBLAS' = cuBLAS time / this time (above 1: faster than cuBLAS), cuBLAS via cublasGemmEx on the same blocks dequantized (each \
             block's d moved to 2^-12 so f16 cannot overflow), bf16 or f16 in, {out}, f32 compute, default \
             algorithm. llama.cpp µs are QUOTED from docs/DESIGN.md R4 \
             (measured 2026-11-29 on our H200, not in this run); 'x llama.cpp' = llama.cpp time / this time. \
             'weights TB/s' = the weight bytes the contestant reads (a variant's device footprint, m·K·2 for \
             cuBLAS) / its median time, and in brackets that as a share of this run's copy rate: {}. {}",
            self.info.gpu,
            self.info.arch,
            self.info.multiprocessors,
            self.info.driver_release,
            self.info.driver_cuda,
            self.info.nvrtc,
            self.info.commit,
            self.info.date,
            self.config.layout,
            self.config.warmup,
            self.config.repeats,
            if self.config.warm_weights {
                "all on one buffer set (inputs and output) per contestant, so that weights which fit stay in \
                 L2 from call to call, as in ggml's test-backend-ops (--warm-weights)"
            } else {
                "each on a buffer set (inputs and output) of its own so that every call reads cold weights"
            },
            self.info.l2_bytes >> 20,
            self.info.l2_source,
            match self.info.copy {
                Some(c) => format!(
                    "a {} MiB device-to-device copy at {:.2} TB/s (bytes read plus written / median time of {}, \
                     as docs/DESIGN.md R4 counts its 4.2 TB/s)",
                    c.bytes >> 20,
                    c.moved_tb_s(),
                    c.reps
                ),
                None => "not measured in this run".to_string(),
            },
            match self.config.floor {
                FloorMode::Off => "The read floor was not timed (--floor off).".to_string(),
                mode => format!(
                    "'read floor' is a kernel that only reads the matrix's bytes in this layout once (16-byte \
                     loads striding the grid; the fastest of {} geometries, each timed like a call on the same \
                     rotation of cold copies), timed at {}; 'x read floor' = this time / the floor's (1.15: 15% \
                     slower than only reading the weights).",
                    FLOOR_GEOMETRIES.len(),
                    match mode {
                        FloorMode::All => "every shape".to_string(),
                        _ => format!("decode shapes (n <= {DECODE_MAX_N})"),
                    }
                ),
            },
        )
    }

    /// `3.61 (86%)`: the contestant's weight bytes over its median time, TB/s, and that as a share of the run's
    /// copy rate (`—` where it was not timed, no share where the copy was not).
    fn bandwidth_cell(&self, weight_bytes: usize, outcome: &Outcome) -> String {
        match self.weight_rate(weight_bytes, outcome) {
            Some(WeightRate {
                tb_s,
                pct_of_copy: Some(pct),
            }) => format!("{tb_s:.2} ({pct:.0}%)"),
            Some(WeightRate { tb_s, .. }) => format!("{tb_s:.2}"),
            None => "—".to_string(),
        }
    }

    /// One row per shape for the variant a selection config picks there (`picks`: the shape and the pick's
    /// declared name, or why there is none): its median, and that against cuBLAS bf16, the quoted llama.cpp and
    /// the read floor (where it was timed).
    pub fn picks_table(&self, picks: &[(Shape, Result<String, String>)]) -> String {
        let mut t = String::from(
            "| m,n,k | the config's pick | median µs | x cuBLAS bf16 | llama.cpp µs (quoted) | x llama.cpp (quoted) | \
             read floor µs | x read floor |\n\
             |---|---|---:|---:|---:|---:|---:|---:|\n",
        );
        for (shape, pick) in picks {
            let llama = llamacpp_anchor_us(*shape);
            let measured = self.shapes.iter().find(|s| s.shape == *shape);
            let (name, median, bf16) = match pick {
                Err(why) => (format!("none: {}", table_text(why)), None, None),
                Ok(name) => {
                    let median = measured
                        .and_then(|s| s.variants.iter().find(|v| v.name == *name))
                        .and_then(|v| v.total.median());
                    (
                        name.clone(),
                        median,
                        measured.and_then(|s| s.cublas_bf16_us()),
                    )
                }
            };
            let floor = measured.and_then(|s| s.floor_us());
            let _ = writeln!(
                t,
                "| {shape} | {name} | {} | {} | {} | {} | {} | {} |",
                cell_or_dash(median.map(fmt_us)),
                ratio(bf16, median),
                cell_or_dash(llama.map(fmt_us)),
                ratio(llama, median),
                cell_or_dash(floor.map(fmt_us)),
                ratio(median, floor)
            );
        }
        t
    }

    /// The read floor's row of the table: its fastest geometry's median, the bytes it reads and their rate.
    fn floor_row(&self, shape: Shape, f: &FloorResult) -> String {
        let footprint = footprint_cell(f.bytes, shape);
        match f.best() {
            Some((g, st)) => {
                let bandwidth = self.bandwidth_cell(f.bytes, &Outcome::Timed(*st));
                format!(
                    "| {shape} | read floor ({g}) | {} | {}–{} | {} | — | — | — | — | — | — | {footprint} | \
                     {bandwidth} | 1.00 |\n",
                    fmt_us(st.median),
                    fmt_us(st.p20),
                    fmt_us(st.p80),
                    st.n,
                )
            }
            None => format!(
                "| {shape} | read floor | not timed: {} | — | — | — | — | — | — | — | — | {footprint} | — | — |\n",
                table_text(f.failure().unwrap_or("not timed"))
            ),
        }
    }

    /// The results as one markdown table, to paste into docs/PERF.md.
    pub fn markdown_table(&self) -> String {
        let mut t = String::new();
        t.push_str(
            "| m,n,k | variant | median µs | p20–p80 µs | n | TFLOPS | x cuBLAS bf16 | x cuBLAS f16 | \
             llama.cpp µs (quoted) | x llama.cpp (quoted) | quantizer alone µs | weights on the device (x GGUF) | \
             weights TB/s (% of copy) | x read floor |\n",
        );
        t.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in &self.shapes {
            let shape = s.shape;
            let bf16_us = s.cublas_bf16_us();
            let f16_us = s.cublas_f16_us();
            let llama = llamacpp_anchor_us(shape);
            let best = s.best_variant().map(|b| b.0.to_string());
            let mut rows: Vec<TableRow> = Vec::new();
            for b in [&s.cublas_bf16, &s.cublas_f16].into_iter().flatten() {
                let mut name = b.name.clone();
                if b.name.contains("bf16") && s.baseline_check().is_some_and(|c| c.is_suspect()) {
                    name.push_str(" **SUSPECT**");
                }
                rows.push(TableRow {
                    name,
                    outcome: b.total.clone(),
                    quantizer: None,
                    // Dense bf16 or f16 weights: two bytes each.
                    device_bytes: s.dense_weight_bytes(),
                });
            }
            for v in &s.variants {
                let mut name = v.name.clone();
                if best.as_deref() == Some(v.name.as_str()) {
                    name = format!("**{name}**");
                }
                rows.push(TableRow {
                    name,
                    outcome: v.total.clone(),
                    quantizer: Some(v.quantizer.clone()),
                    device_bytes: v.device_bytes,
                });
            }
            if rows.is_empty() {
                let why = s.error.as_deref().unwrap_or("nothing was measured");
                let _ = writeln!(
                    t,
                    "| {shape} | — | not measured: {} | — | — | — | — | — | {} | — | — | — | — | — |",
                    table_text(why),
                    cell_or_dash(llama.map(fmt_us))
                );
                continue;
            }
            if let Some(f) = &s.read_floor {
                t.push_str(&self.floor_row(shape, f));
            }
            for r in rows {
                let quant = match &r.quantizer {
                    Some(Outcome::Timed(q)) => fmt_us(q.median),
                    _ => "—".to_string(),
                };
                let footprint = footprint_cell(r.device_bytes, shape);
                let bandwidth = self.bandwidth_cell(r.device_bytes, &r.outcome);
                match &r.outcome {
                    Outcome::Timed(st) => {
                        let _ = writeln!(
                            t,
                            "| {shape} | {} | {} | {}–{} | {} | {:.1} | {} | {} | {} | {} | {quant} | {footprint} | {bandwidth} | {} |",
                            r.name,
                            fmt_us(st.median),
                            fmt_us(st.p20),
                            fmt_us(st.p80),
                            st.n,
                            tflops(shape, st.median),
                            ratio(bf16_us, Some(st.median)),
                            ratio(f16_us, Some(st.median)),
                            cell_or_dash(llama.map(fmt_us)),
                            ratio(llama, Some(st.median)),
                            ratio(Some(st.median), s.floor_us()),
                        );
                    }
                    Outcome::NotTimed(why) | Outcome::Refused(why) => {
                        let what = if matches!(r.outcome, Outcome::Refused(_)) {
                            "cannot take this shape"
                        } else {
                            "not timed"
                        };
                        let _ = writeln!(
                            t,
                            "| {shape} | {} | {what}: {} | — | — | — | — | — | {} | — | {quant} | {footprint} | — | — |",
                            r.name,
                            table_text(why),
                            cell_or_dash(llama.map(fmt_us)),
                        );
                    }
                }
            }
        }
        t
    }
}

impl PrefillSummary {
    /// A short markdown block.
    pub fn markdown(&self) -> String {
        let mut t = format!(
            "Llama-3-8B layer matmuls (q, k, v, o, gate, up, down) at {} tokens:\n\n\
             | matmul | m,n,k | variant | median µs | cuBLAS bf16 µs |\n|---|---|---|---:|---:|\n",
            self.tokens
        );
        for p in &self.matmuls {
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {} |",
                p.name,
                p.shape,
                p.variant.as_deref().unwrap_or("not timed"),
                cell_or_dash(p.us.map(fmt_us)),
                cell_or_dash(p.cublas_bf16_us.map(fmt_us))
            );
        }
        let _ = writeln!(
            t,
            "| **layer** | | | {} | {} |",
            cell_or_dash(self.layer_us.map(fmt_us)),
            cell_or_dash(self.cublas_layer_us.map(fmt_us))
        );
        let _ = writeln!(
            t,
            "\nTokens per second through one layer's matmuls: {} with the variants, {} with cuBLAS bf16 \
             ({}).",
            cell_or_dash(self.tokens_per_s().map(|v| format!("{v:.0}"))),
            cell_or_dash(self.cublas_tokens_per_s().map(|v| format!("{v:.0}"))),
            match (self.layer_us, self.cublas_layer_us) {
                (Some(a), Some(b)) => format!("variants at {:.2}x cuBLAS bf16", b / a),
                _ => "a matmul is missing a time, so no ratio".to_string(),
            }
        );
        t
    }
}

impl AbReport {
    /// The verdict, one line per shape and one overall.
    pub fn text(&self) -> String {
        let word = |v: &AbVerdict| if v.lands { "LANDS" } else { "does not land" };
        let mut t = format!(
            "A/B: A = {}, B = {}; B lands only if median(A) / median(B) - 1 >= +{:.1}% (interleaved, same \
             shapes and buffers)\n",
            self.a,
            self.b,
            LANDING_BAR * 100.0
        );
        for (shape, v) in &self.shapes {
            match v {
                Ok(v) => {
                    let _ = writeln!(
                        t,
                        "  {shape}: A {} µs, B {} µs: {:+.2}% -> {}",
                        fmt_us(v.a_us),
                        fmt_us(v.b_us),
                        v.gain * 100.0,
                        word(v)
                    );
                }
                Err(e) => {
                    let _ = writeln!(t, "  {shape}: no verdict: {e}");
                }
            }
        }
        match &self.overall {
            Some(v) => {
                let _ = writeln!(
                    t,
                    "  overall (sum of medians over {} shape(s)): A {} µs, B {} µs: {:+.2}% -> {}{}",
                    self.shapes.len() - self.missing,
                    fmt_us(v.a_us),
                    fmt_us(v.b_us),
                    v.gain * 100.0,
                    if v.lands {
                        "B LANDS"
                    } else {
                        "B does not land"
                    },
                    if self.missing > 0 {
                        format!(" ({} shape(s) without a verdict)", self.missing)
                    } else {
                        String::new()
                    }
                );
            }
            None => {
                let _ = writeln!(
                    t,
                    "  overall: no shape was timed for both, so B does not land"
                );
            }
        }
        t
    }
}
