//! The decode step on the GPU, through the library as an engine calls it: every matrix registered with
//! [`Mmq::register`], the stream's workspace sized once with [`Mmq::reserve`], each call a
//! [`Q6kMatrix::matmul`] picked by the config; the step captured once into a CUDA graph and replayed, and the
//! same calls launched directly, both timed like bench calls and their outputs compared bit for bit.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaGraph, CudaSlice, CudaStream};
use mmqgen_reference::{activations, derive_seed, random_blocks};

use super::plan::{
    device_need, distinct_shapes, gb, step_calls, step_gguf_bytes, StepCall, MEMORY_MARGIN,
};
use super::report::{BitCheck, DecodeStepReport, StepResult};
use super::{DecodeStepConfig, DecodeStepError};
use crate::compile::cache::CubinCache;
use crate::compile::variant::compile_variant;
use crate::gpu::device::DeviceError;
use crate::gpu::weights::device_footprint;
use crate::gpu::workspace::{poison_f32, read_prefix};
use crate::measure::bench::fail::Fail;
use crate::measure::bench::setup::Start;
use crate::measure::bench::threads::{parallel_map, worker_threads};
use crate::measure::bench::timer::{Spinner, Timer};
use crate::measure::bench::{Outcome, Stats};
use crate::{Mmq, MmqError, Q6kMatrix, VariantDescription};

/// Activation outliers per 4096 channels (the parity inputs' figure).
const OUTLIERS: usize = 4;

/// What one token count's timing shares.
struct Step<'a> {
    stream: &'a Arc<CudaStream>,
    spinner: &'a Spinner,
    timer: &'a Timer,
    calls: &'a [StepCall],
    matrices: &'a [Q6kMatrix<'a>],
    /// One activation buffer per distinct K, `(K, [max tokens][K])`.
    xs: &'a [(usize, CudaSlice<f32>)],
}

fn mmq_fail(e: MmqError) -> Fail {
    match e {
        MmqError::Launch(l) => Fail::launch(l),
        MmqError::Device(d) => Fail::device(d),
        other => Fail::Local(other.to_string()),
    }
}

/// Runs the decode step at every token count of `cfg` on `mmq`'s GPU; `config` names where the picks come
/// from. Refused with one sentence when the GPU has too little free memory for the step's distinct weights.
pub fn run_decode_step(
    mmq: &Mmq,
    config: &str,
    cfg: &DecodeStepConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<DecodeStepReport, DecodeStepError> {
    cfg.check()?;
    let gpu = mmq.gpu();
    let Start {
        stream,
        spinner,
        timer,
        info,
    } = Start::new(gpu, "decode step", progress)?;
    let calls = step_calls(cfg.layers);
    let max_n = cfg.tokens.iter().copied().max().unwrap_or(1);
    let (max_m, max_k) = calls
        .iter()
        .fold((0, 0), |(m, k), c| (m.max(c.m), k.max(c.k)));
    mmq.reserve(&stream, max_m, max_n, max_k)?;
    // The copy rate's buffers are freed in stream order: let that happen before asking what is free.
    stream
        .synchronize()
        .map_err(|e| DeviceError::cuda("waiting for the decode step's stream", e))?;

    // Distinct weights for every call: check that they fit before allocating any.
    let variants_for = |c: &StepCall| {
        mmq.config()
            .variants_for(mmq.arch(), cfg.layout, c.m as u64, c.k as u64)
    };
    let weights: usize = calls
        .iter()
        .map(|c| device_footprint(variants_for(c), c.m, c.k, cfg.layout))
        .sum();
    let need = device_need(&calls, weights, max_n) + MEMORY_MARGIN;
    let (free, total) = gpu
        .context()
        .mem_get_info()
        .map_err(|e| DeviceError::cuda("asking the GPU how much memory is free", e))?;
    if free < need {
        return Err(DecodeStepError::TooLittleMemory {
            gpu: info.gpu.clone(),
            need,
            weights,
            free,
            total,
        });
    }

    precompile(mmq, &calls, cfg, progress)?;
    let t = Instant::now();
    let matrices = register(mmq, &calls, cfg, progress)?;
    let weight_bytes: usize = matrices.iter().map(Q6kMatrix::device_bytes).sum();
    progress(&format!(
        "decode step: {} matrices registered in the {} layout, {} on the device, in {:.1} s",
        matrices.len(),
        cfg.layout,
        gb(weight_bytes),
        t.elapsed().as_secs_f64()
    ));
    let mut ks: Vec<usize> = calls.iter().map(|c| c.k).collect();
    ks.sort_unstable();
    ks.dedup();
    let xs = ks
        .iter()
        .map(|&k| {
            let x = activations(max_n, k, derive_seed(cfg.seed, k as u64), OUTLIERS);
            stream
                .clone_htod(&x)
                .map(|d| (k, d))
                .map_err(|e| DeviceError::cuda("uploading the activations", e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let alloc_outputs = || {
        calls
            .iter()
            .map(|c| stream.alloc_zeros::<f32>(max_n * c.m))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| DeviceError::cuda("allocating the step's outputs", e))
    };
    let mut direct_outs = alloc_outputs()?;
    let mut graph_outs = alloc_outputs()?;

    let step = Step {
        stream: &stream,
        spinner: &spinner,
        timer: &timer,
        calls: &calls,
        matrices: &matrices,
        xs: &xs,
    };
    let mut report = DecodeStepReport {
        info,
        layout: cfg.layout,
        config: config.to_string(),
        layers: cfg.layers,
        calls: calls.len(),
        weight_bytes,
        gguf_bytes: step_gguf_bytes(&calls),
        warmup: cfg.warmup,
        repeats: cfg.repeats,
        steps: Vec::new(),
        aborted: None,
    };
    for &n in &cfg.tokens {
        let t = Instant::now();
        let mut result = StepResult {
            tokens: n,
            graph: Outcome::NotTimed("not run".into()),
            direct: Outcome::NotTimed("not run".into()),
            direct_enqueue_us: None,
            direct_launch_bound: 0,
            graph_launch_bound: 0,
            graph_nodes: None,
            bits: None,
            picks: Vec::new(),
            error: None,
        };
        match step.run(n, cfg, &mut direct_outs, &mut graph_outs, &mut result) {
            Ok(()) => {}
            Err(Fail::Local(e)) => result.error = Some(e),
            Err(Fail::Fatal(e)) => {
                let why = format!(
                    "a fault at {n} token(s) left the CUDA context unusable, so nothing later was measured: {e}"
                );
                progress(&format!("decode step: {why}"));
                result.error = Some(e);
                report.steps.push(result);
                report.aborted = Some(why);
                // The context is gone: dropping device objects would only record more errors.
                std::mem::forget((
                    direct_outs,
                    graph_outs,
                    xs,
                    matrices,
                    timer,
                    spinner,
                    stream,
                ));
                return Ok(report);
            }
        }
        let rate = report.rate(n, &result.graph);
        progress(&format!(
            "decode step: {n} token(s) done in {:.1} s: graph {} µs a step{}, direct {} µs",
            t.elapsed().as_secs_f64(),
            result
                .graph
                .median()
                .map_or("—".into(), |u| format!("{u:.0}")),
            rate.map_or(String::new(), |r| format!(
                " ({:.0} tokens/s{})",
                r.tokens_per_s,
                r.pct_of_copy
                    .map_or(String::new(), |p| format!(", {p:.0}% of the copy rate"))
            )),
            result
                .direct
                .median()
                .map_or("—".into(), |u| format!("{u:.0}")),
        ));
        report.steps.push(result);
    }
    Ok(report)
}

/// Compiles (or finds in the cubin cache) every variant the step will pick, several at a time, so that the
/// first calls load them instead of compiling them one after another.
fn precompile(
    mmq: &Mmq,
    calls: &[StepCall],
    cfg: &DecodeStepConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<(), DecodeStepError> {
    let mut picks: Vec<VariantDescription> = Vec::new();
    for &n in &cfg.tokens {
        for (m, k, _) in distinct_shapes(calls) {
            let desc = mmq.select(cfg.layout, m, n, k)?;
            if !picks.iter().any(|p| p.name == desc.name) {
                picks.push(desc);
            }
        }
    }
    let Ok(cache) = CubinCache::from_env() else {
        return Ok(()); // Mmq::new has the same cache: it would have failed first.
    };
    let t = Instant::now();
    progress(&format!(
        "decode step: compiling the {} pick(s) ({} at a time, through the cubin cache {})",
        picks.len(),
        worker_threads().min(picks.len()),
        cache.dir().display()
    ));
    let compiled = parallel_map(&picks, |desc| {
        compile_variant(desc, mmq.arch(), Some(&cache))
    });
    for (desc, c) in picks.iter().zip(compiled) {
        c.map_err(|e| DecodeStepError::Run(format!("compiling '{}' failed: {e}", desc.name)))?;
    }
    progress(&format!(
        "decode step: picks compiled in {:.1} s",
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Every call's weights: random valid q6_K blocks of its own seed (generated several at a time), registered
/// through [`Mmq::register`] in the run's layout.
fn register<'m>(
    mmq: &'m Mmq,
    calls: &[StepCall],
    cfg: &DecodeStepConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Q6kMatrix<'m>>, DecodeStepError> {
    let indexed: Vec<(usize, StepCall)> = calls.iter().copied().enumerate().collect();
    let mut matrices = Vec::with_capacity(calls.len());
    // A layer's worth of matrices at a time, each generated and registered (checked, padded, fingerprinted,
    // uploaded) on a thread of its own.
    for chunk in indexed.chunks(4 * worker_threads()) {
        let registered = parallel_map(chunk, |(i, c)| {
            let raw = random_blocks(c.m, c.k, derive_seed(cfg.seed, *i as u64));
            mmq.register(&raw, c.m, c.k, cfg.layout)
        });
        for r in registered {
            matrices.push(r?);
        }
        progress(&format!(
            "decode step: {} of {} matrices registered",
            matrices.len(),
            calls.len()
        ));
    }
    Ok(matrices)
}

impl Step<'_> {
    fn x(&self, k: usize) -> &CudaSlice<f32> {
        &self
            .xs
            .iter()
            .find(|(xk, _)| *xk == k)
            .expect("an activation buffer per K of the step")
            .1
    }

    /// Queues the step's calls at `n` tokens into `outs`, one a call; the variant of each.
    fn enqueue(
        &self,
        n: usize,
        outs: &mut [CudaSlice<f32>],
    ) -> Result<Vec<VariantDescription>, Fail> {
        let mut picked = Vec::with_capacity(self.calls.len());
        for ((c, w), out) in self.calls.iter().zip(self.matrices).zip(outs.iter_mut()) {
            let desc = w
                .matmul(self.x(c.k), out, n, self.stream)
                .map_err(|e| mmq_fail(e).context(&format!("layer {} {}", c.layer, c.name)))?;
            picked.push(desc);
        }
        Ok(picked)
    }

    /// One token count: a direct step (the picks), the capture, a replay compared bit for bit with the direct
    /// outputs, then the direct step and the replay timed in turn.
    fn run(
        &self,
        n: usize,
        cfg: &DecodeStepConfig,
        direct_outs: &mut [CudaSlice<f32>],
        graph_outs: &mut [CudaSlice<f32>],
        result: &mut StepResult,
    ) -> Result<(), Fail> {
        let stream = self.stream;
        let picked = self.enqueue(n, direct_outs)?;
        stream
            .synchronize()
            .map_err(|e| Fail::driver("waiting for the first direct step", e))?;
        result.picks = distinct_shapes(self.calls)
            .into_iter()
            .map(|(m, k, names)| {
                let i = self
                    .calls
                    .iter()
                    .position(|c| (c.m, c.k) == (m, k))
                    .expect("a distinct shape is a call's");
                (names, m, k, picked[i].name.to_string())
            })
            .collect();

        for out in graph_outs.iter_mut() {
            poison_f32(stream, out, "the graph's outputs").map_err(Fail::device)?;
        }
        let graph = self.capture(n, graph_outs)?;
        result.graph_nodes = graph_nodes(&graph);
        graph
            .upload()
            .map_err(|e| Fail::driver("uploading the graph", e))?;
        graph
            .launch()
            .map_err(|e| Fail::driver("replaying the graph", e))?;
        result.bits = Some(self.compare(n, direct_outs, graph_outs)?);

        // Timed: the direct step and the replay in turn, the first of the two alternating.
        let (mut direct, mut replay, mut enqueue) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..cfg.warmup + cfg.repeats {
            for which in [round % 2, 1 - round % 2] {
                let (us, enqueue_us) = if which == 0 {
                    self.timer.time(stream, self.spinner, || {
                        self.enqueue(n, direct_outs).map(|_| ())
                    })?
                } else {
                    self.timer.time(stream, self.spinner, || {
                        graph
                            .launch()
                            .map_err(|e| Fail::driver("replaying the graph", e))
                    })?
                };
                if round < cfg.warmup {
                    continue;
                }
                let launch_bound = usize::from(enqueue_us > self.spinner.us);
                if which == 0 {
                    direct.push(us);
                    enqueue.push(enqueue_us);
                    result.direct_launch_bound += launch_bound;
                } else {
                    replay.push(us);
                    result.graph_launch_bound += launch_bound;
                }
            }
        }
        let outcome = |samples: &[f64]| {
            Stats::from_samples(samples)
                .map_or(Outcome::NotTimed("no timed step".into()), Outcome::Timed)
        };
        result.direct = outcome(&direct);
        result.graph = outcome(&replay);
        result.direct_enqueue_us = Stats::from_samples(&enqueue).map(|s| s.median);
        Ok(())
    }

    /// The step captured on the stream into one graph (capture always ended, even when a call is refused).
    fn capture(&self, n: usize, outs: &mut [CudaSlice<f32>]) -> Result<CudaGraph, Fail> {
        let stream = self.stream;
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| Fail::driver("beginning the graph capture", e))?;
        let queued = self.enqueue(n, outs);
        let ended = stream.end_capture(CUgraphInstantiate_flags(0));
        queued.map_err(|e| e.context("capturing the step"))?;
        ended
            .map_err(|e| Fail::driver("ending the capture and instantiating the graph", e))?
            .ok_or_else(|| Fail::Local("the capture recorded nothing".to_string()))
    }

    /// Every output of every call at `n` tokens, replay against direct, bit for bit.
    fn compare(
        &self,
        n: usize,
        direct: &[CudaSlice<f32>],
        replay: &[CudaSlice<f32>],
    ) -> Result<BitCheck, Fail> {
        let mut check = BitCheck {
            compared: 0,
            mismatches: 0,
            first_bad: None,
        };
        for ((c, a), b) in self.calls.iter().zip(direct).zip(replay) {
            let len = n * c.m;
            let read = |buf, what| {
                read_prefix(self.stream, buf, len, what)
                    .map_err(|e| Fail::launch(e).context("reading the outputs back"))
            };
            let (a, b) = (read(a, "direct output")?, read(b, "replayed output")?);
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                if x.to_bits() != y.to_bits() {
                    check.mismatches += 1;
                    check.first_bad.get_or_insert_with(|| {
                        format!(
                            "layer {} {} token {} row {}: direct {:#010x}, replay {:#010x}",
                            c.layer,
                            c.name,
                            i / c.m,
                            i % c.m,
                            x.to_bits(),
                            y.to_bits()
                        )
                    });
                }
            }
            check.compared += len;
        }
        Ok(check)
    }
}

/// The graph's node count (kernels and whatever else the calls queued), when the driver says.
fn graph_nodes(graph: &CudaGraph) -> Option<usize> {
    let mut count = 0usize;
    // SAFETY: a live graph; a null node array asks only for the count.
    let status =
        unsafe { sys::cuGraphGetNodes(graph.cu_graph(), std::ptr::null_mut(), &mut count) };
    (status == sys::CUresult::CUDA_SUCCESS).then_some(count)
}
