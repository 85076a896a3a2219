//! The run itself: build every variant, then per shape prove each one bit-exact, prepare the baselines and
//! the buffer sets, and time the contestants interleaved.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaSlice, CudaStream};
use mmqgen_codegen::{canonical_name, NumericsMode, Quantizer, VariantDescription};
use mmqgen_reference::activations::{quantize_activations_for, QuantizedActivations};
use mmqgen_reference::digest_case_inputs;
use mmqgen_reference::matmul::reference_output;
use mmqgen_reference::registration::raw_to_padded;

use super::config::{BenchConfig, CublasOut};
use super::cublas::{
    check_dense, convert, dense_weights, Cublas, Dense, DenseDevice, DenseHost, GemmArgs,
};
use super::fail::{classify_weights, fail_text, panic_text, BenchError, Fail, WeightsErrorKind};
use super::floor::{FloorBuffers, Reader, FLOOR_GEOMETRIES};
use super::interleave::{time_interleaved, Contestant};
use super::markdown::fmt_us;
use super::report::{
    BaselineResult, BenchReport, BuildResult, FloorResult, Outcome, ParitySummary, ShapeResult,
    VariantResult,
};
use super::setup::Start;
use super::shapes::buffer_sets;
use super::stats::tflops;
use super::threads::parallel_map;
use super::timer::{Spinner, Timer};
use crate::check::{compare_quantized, compare_sampled, count_unwritten, sample_indices, Shape};
use crate::compile::build::build_variant;
use crate::gpu::device::Gpu;
use crate::gpu::launch::LoadedVariant;
use crate::gpu::weights::Layout;
use crate::gpu::weights::RegisteredWeights;
use crate::gpu::workspace::{poison_f32, read_prefix, Workspace};

/// One built variant.
pub(super) struct Built {
    pub(super) desc: VariantDescription,
    pub(super) variant: LoadedVariant,
}

/// The host side of one shape's inputs.
struct HostInputs {
    pub(super) raw: Vec<u8>,
    pub(super) x: Vec<f32>,
    /// Per numerics mode present: the reference quantization and the expected sampled outputs.
    pub(super) modes: Vec<(NumericsMode, QuantizedActivations, Vec<f32>)>,
    pub(super) indices: Vec<usize>,
}

/// What the whole run shares.
pub(super) struct RunCtx<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) stream: Arc<CudaStream>,
    pub(super) built: Vec<Built>,
    pub(super) spinner: Spinner,
    pub(super) timer: Timer,
    pub(super) cublas: Option<Cublas>,
    /// The read-floor kernel, when some shape times the floor.
    pub(super) reader: Option<Reader>,
    pub(super) cfg: &'a BenchConfig,
    pub(super) l2_bytes: usize,
}

/// Times `descs` on `gpu` as `cfg` says; `progress` gets a line now and then (for stderr).
pub fn run_bench(
    gpu: &Gpu,
    descs: &[VariantDescription],
    cfg: &BenchConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport, BenchError> {
    if cfg.repeats == 0 {
        return Err(BenchError::Setup(
            "repeats = 0: at least one timed call per contestant is needed".into(),
        ));
    }
    let mut floor_note = None;
    let started = Instant::now();
    let Start {
        stream,
        spinner,
        timer,
        info,
    } = Start::new(gpu, "bench", progress)?;
    let l2_bytes = info.l2_bytes;
    let reader = if cfg.shapes.iter().any(|&s| cfg.floor.applies(s)) {
        progress("bench: compiling the read-floor kernel");
        match Reader::new(gpu) {
            Ok(r) => Some(r),
            Err(e) => {
                progress(&format!("bench: {e}"));
                floor_note = Some(format!("the read floor was not timed: {e}"));
                None
            }
        }
    } else {
        None
    };

    let (cublas, cublas_note) = if cfg.cublas {
        match Cublas::open(&stream, cfg.cublas_out) {
            Ok(c) => (Some(c), None),
            Err(e) => {
                progress(&format!("bench: {e}"));
                (None, Some(e))
            }
        }
    } else {
        (
            None,
            Some("cuBLAS baselines not measured: --no-cublas was given".to_string()),
        )
    };

    // Build (render, compile, load) every variant, several at a time.
    let t = Instant::now();
    progress(&format!("bench: building {} variant(s)", descs.len()));
    let outcomes = parallel_map(descs, |desc| {
        if let Err(e) = gpu.check_variant_arch(desc) {
            return Err(format!("skipped: {e}"));
        }
        match catch_unwind(AssertUnwindSafe(|| {
            build_variant(gpu, desc, cfg.cubin_cache.as_deref())
        })) {
            Ok(Ok(built)) => Ok(built),
            Ok(Err(e)) => Err(e.to_string()),
            Err(p) => Err(format!("building panicked: {}", panic_text(p))),
        }
    });
    let mut builds = Vec::new();
    let mut built = Vec::new();
    for (desc, outcome) in descs.iter().zip(outcomes) {
        let canonical = canonical_name(desc);
        match outcome {
            Ok((variant, info)) => {
                builds.push(BuildResult {
                    name: desc.name.to_string(),
                    canonical,
                    result: Ok(info),
                });
                built.push(Built {
                    desc: desc.clone(),
                    variant,
                });
            }
            Err(e) => {
                progress(&format!("bench: variant '{}' not built: {e}", desc.name));
                builds.push(BuildResult {
                    name: desc.name.to_string(),
                    canonical,
                    result: Err(e),
                });
            }
        }
    }
    progress(&format!(
        "bench: built {} of {} variant(s) in {:.1} s ({} from the cubin cache)",
        built.len(),
        descs.len(),
        t.elapsed().as_secs_f64(),
        builds
            .iter()
            .filter(|b| b.result.as_ref().is_ok_and(|i| i.from_cache))
            .count()
    ));

    let rc = RunCtx {
        gpu,
        stream,
        built,
        spinner,
        timer,
        cublas,
        reader,
        cfg,
        l2_bytes,
    };
    let mut report = BenchReport {
        info,
        config: cfg.clone(),
        builds,
        cublas_note,
        floor_note,
        shapes: Vec::new(),
        aborted: None,
    };
    let total = cfg.shapes.len();
    for (i, &shape) in cfg.shapes.iter().enumerate() {
        let label = format!("bench: shape {}/{total} ({shape})", i + 1);
        let t = Instant::now();
        let mut result = ShapeResult::empty(shape);
        match run_shape(&rc, shape, &mut result, &label, progress) {
            Ok(()) => {}
            Err(Fail::Local(e)) => result.error = Some(e),
            Err(Fail::Fatal(e)) => {
                let why = format!(
                    "a kernel fault at {shape} left the CUDA context unusable, so no later shape was measured: \
                     {e}"
                );
                progress(&format!("{label}: {why}"));
                result.error = Some(e);
                result.wall_s = t.elapsed().as_secs_f64();
                report.shapes.push(result);
                report.aborted = Some(why);
                // The context is gone: dropping device objects would only record more errors.
                std::mem::forget(rc);
                return Ok(report);
            }
        }
        result.wall_s = t.elapsed().as_secs_f64();
        progress(&format!(
            "{label}: done in {:.1} s (run {:.0} s so far){}",
            result.wall_s,
            started.elapsed().as_secs_f64(),
            result
                .best_variant()
                .map(|(n, us)| format!(
                    "; best {n} {} µs = {:.0} TFLOPS{}",
                    fmt_us(us),
                    tflops(shape, us),
                    result
                        .cublas_bf16_us()
                        .map(|b| format!(", {:.2}x cuBLAS bf16", b / us))
                        .unwrap_or_default()
                ))
                .unwrap_or_default()
        ));
        if let Some(check) = result.baseline_check() {
            if check.is_suspect() {
                progress(&format!("bench: {}", check.sentence(shape)));
            }
        }
        report.shapes.push(result);
    }
    Ok(report)
}

/// The inputs of `shape`, the reference quantization per mode and the expected sampled outputs.
fn host_inputs(rc: &RunCtx, shape: Shape) -> HostInputs {
    let Shape { m, n, k } = shape;
    let (raw, x) = digest_case_inputs(m, n, k, rc.cfg.seed);
    let indices = sample_indices(m, n, rc.cfg.seed, rc.cfg.parity_samples);
    let mut modes: Vec<NumericsMode> = Vec::new();
    for b in &rc.built {
        if !modes.contains(&b.desc.mode) {
            modes.push(b.desc.mode);
        }
    }
    let modes = modes
        .into_iter()
        .map(|mode| {
            let acts = quantize_activations_for(&x, n, k, mode);
            let expected = parallel_map(&indices, |&i| {
                reference_output(&raw, m, k, &acts, mode, i % m, i / m)
            });
            (mode, acts, expected)
        })
        .collect();
    HostInputs {
        raw,
        x,
        modes,
        indices,
    }
}

fn alloc<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &str,
) -> Result<CudaSlice<T>, Fail> {
    stream.alloc_zeros::<T>(len).map_err(|e| {
        Fail::driver(
            &format!(
                "allocating {what} ({} MiB)",
                (len * std::mem::size_of::<T>()) >> 20
            ),
            e,
        )
    })
}

/// The parity check of one built variant at `shape` on set 0.
#[allow(clippy::too_many_arguments)]
fn check_parity(
    rc: &RunCtx,
    b: &Built,
    shape: Shape,
    host: &HostInputs,
    weights: &RegisteredWeights,
    x: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    ws: &mut Workspace,
) -> Result<ParitySummary, Fail> {
    let Shape { m, n, .. } = shape;
    let stream = &rc.stream;
    poison_f32(stream, out, "the output").map_err(Fail::device)?;
    b.variant
        .matmul(weights, x, out, n, stream, ws)
        .map_err(|e| Fail::launch(e).context("queueing the parity run"))?;
    stream
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the parity run", e))?;
    let got = read_prefix(stream, out, m * n, "output")
        .map_err(|e| Fail::launch(e).context("reading the parity output back"))?;
    let acts = ws
        .read_quantized(stream)
        .map_err(|e| Fail::launch(e).context("reading the quantized activations back"))?;
    let (_, want_acts, expected) = host
        .modes
        .iter()
        .find(|(mode, _, _)| *mode == b.desc.mode)
        .expect("every built variant's mode has a reference");
    let c = compare_sampled(&got, m, &host.indices, |t, j| {
        let pos = host
            .indices
            .binary_search(&(t * m + j))
            .expect("compare_sampled asks only for the sampled indices");
        expected[pos]
    });
    let q = compare_quantized(&acts, want_acts);
    let (unwritten, first_unwritten) = count_unwritten(&got);
    let first_bad = c
        .first_bad
        .map(|f| f.to_string())
        .or(q.first_bad)
        .or_else(|| {
            first_unwritten.map(|i| format!("token {} row {} never written", i / m, i % m))
        });
    Ok(ParitySummary {
        checked: c.checked,
        mismatches: c.mismatches,
        unwritten,
        quant_checked: q.checked,
        quant_mismatches: q.mismatches,
        first_bad,
    })
}

/// Everything at one shape, in order: inputs and references, set 0 with each variant's weights, the parity
/// gate, the dense baselines, the remaining buffer sets, the interleaved timing, the results.
fn run_shape(
    rc: &RunCtx,
    shape: Shape,
    result: &mut ShapeResult,
    label: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<(), Fail> {
    let Shape { m, n, k } = shape;
    crate::gpu::launch::check_shape(m, n, k)
        .map_err(|e| Fail::Local(format!("the shape cannot be run: {e}")))?;
    let t = Instant::now();
    let host = host_inputs(rc, shape);
    progress(&format!(
        "{label}: inputs and {} reference sample(s) of {} outputs ready in {:.1} s",
        host.modes.len(),
        host.indices.len(),
        t.elapsed().as_secs_f64()
    ));
    let mut bufs = first_set(rc, shape, &host)?;
    let passing = parity_gate(rc, shape, &host, &mut bufs, label, progress)?;
    let mut dense = match &rc.cublas {
        Some(cublas) => dense_baselines(rc, cublas, shape, &host, result, label, progress)?,
        None => Vec::new(),
    };
    let mut floor = floor_first_set(rc, shape, &host, result, label, progress)?;
    let floor_bytes = floor.as_ref().map(|f| f.sets[0].len());
    let Some(smallest) = smallest_set_bytes(shape, &bufs, &passing, &dense, floor_bytes) else {
        finish_shape(result, bufs.results, dense);
        return Err(Fail::Local(
            "no variant passed parity and no baseline is left to time".to_string(),
        ));
    };
    let sets = if rc.cfg.warm_weights {
        1
    } else {
        buffer_sets(rc.l2_bytes, smallest)
    };
    result.buffer_sets = sets;
    result.rotation_bytes = sets * smallest;
    let t = Instant::now();
    more_sets(rc, shape, &host, sets, &passing, &mut bufs, &mut dense)?;
    if let Some(f) = floor.as_mut() {
        f.grow(&rc.stream, sets)?;
    }
    progress(&format!(
        "{label}: {sets} buffer sets ({} MiB for the smallest contestant, L2 {} MiB) ready in {:.1} s",
        (sets * smallest) >> 20,
        rc.l2_bytes >> 20,
        t.elapsed().as_secs_f64()
    ));
    let mut contestants: Vec<Contestant> = Vec::new();
    for (j, d) in dense.iter().enumerate() {
        if d.ready {
            contestants.push(Contestant::Cublas(j));
        }
    }
    for &i in &passing {
        contestants.push(Contestant::Total(i));
        // A variant that quantizes inside its matmul runs no quantizer kernel in its call.
        if rc.built[i].desc.quantizer == Quantizer::Separate {
            contestants.push(Contestant::Quantizer(i));
        }
    }
    if floor.is_some() {
        contestants.extend((0..FLOOR_GEOMETRIES.len()).map(Contestant::Floor));
    }
    let timings = time_interleaved(
        rc,
        shape,
        sets,
        &contestants,
        &mut bufs,
        &mut dense,
        floor.as_mut(),
        label,
        progress,
    )?;
    let launch_bounds: Vec<usize> = timings.iter().map(|t| t.launch_bound).collect();
    for (con, timing) in contestants.iter().zip(timings) {
        match *con {
            Contestant::Total(i) => {
                bufs.results[i].total = timing.outcome;
                bufs.results[i].launch_bound = timing.launch_bound;
            }
            Contestant::Quantizer(i) => bufs.results[i].quantizer = timing.outcome,
            Contestant::Cublas(j) => {
                dense[j].result.total = timing.outcome;
                dense[j].result.launch_bound = timing.launch_bound;
            }
            Contestant::Floor(g) => {
                if let Some(f) = result.read_floor.as_mut() {
                    f.geometries[g].1 = timing.outcome;
                }
            }
        }
    }
    if let Some(f) = result.read_floor.as_mut() {
        // The best geometry is known once all are timed: the floor's launch-bound count is its.
        let best = f.best().map(|(g, _)| g);
        f.launch_bound = contestants
            .iter()
            .zip(&launch_bounds)
            .find(|(c, _)| matches!(c, Contestant::Floor(g) if Some(FLOOR_GEOMETRIES[*g]) == best))
            .map_or(0, |(_, &n)| n);
    }
    rc.stream
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the stream", e))?;
    finish_shape(result, bufs.results, dense);
    Ok(())
}

/// The variants' side of one shape: per buffer set the activations and an output; per variant its weights
/// (one registration per set), its workspace (none when it cannot run) and its result so far.
pub(super) struct VariantBuffers {
    pub(super) xs: Vec<CudaSlice<f32>>,
    pub(super) outs: Vec<CudaSlice<f32>>,
    pub(super) weights: Vec<Vec<RegisteredWeights>>,
    pub(super) workspaces: Vec<Option<Workspace>>,
    pub(super) results: Vec<VariantResult>,
}

/// Set 0: the activations, an output, and each variant's weights (registered on several threads) and
/// workspace. A variant whose weights or workspace fail is kept with its reason and not run.
fn first_set(rc: &RunCtx, shape: Shape, host: &HostInputs) -> Result<VariantBuffers, Fail> {
    let Shape { m, n, k } = shape;
    let stream = &rc.stream;
    let layout = rc.cfg.layout;
    let mut bufs = VariantBuffers {
        xs: vec![stream
            .clone_htod(&host.x)
            .map_err(|e| Fail::driver("uploading the activations", e))?],
        outs: vec![alloc::<f32>(stream, m * n, "the output")?],
        weights: Vec::new(),
        workspaces: Vec::new(),
        results: Vec::new(),
    };
    let regs = parallel_map(&rc.built, |b| {
        RegisteredWeights::register_for(rc.gpu, &host.raw, m, k, layout, &b.desc)
    });
    for (b, reg) in rc.built.iter().zip(regs) {
        let mut r = VariantResult {
            name: b.desc.name.to_string(),
            canonical: b.variant.canonical().to_string(),
            parity: None,
            total: Outcome::NotTimed("not run".into()),
            quantizer: Outcome::NotTimed("not timed".into()),
            launch_bound: 0,
            device_bytes: crate::gpu::weights::device_footprint([&b.desc], m, k, layout),
        };
        let ws = match reg {
            Err(e) => {
                let f = Fail::Local(format!("registering the weights failed: {e}"));
                if let WeightsErrorKind::Fatal(s) = classify_weights(&e) {
                    return Err(Fail::Fatal(s));
                }
                r.total = Outcome::NotTimed(fail_text(f));
                bufs.weights.push(Vec::new());
                None
            }
            Ok(w) => {
                bufs.weights.push(vec![w]);
                match Workspace::for_description(stream, &b.desc, m, n, k) {
                    Ok(ws) => Some(ws),
                    Err(e) => {
                        let f = Fail::launch(e).context("allocating the workspace");
                        if let Fail::Fatal(s) = f {
                            return Err(Fail::Fatal(s));
                        }
                        r.total = Outcome::NotTimed(fail_text(f));
                        None
                    }
                }
            }
        };
        bufs.workspaces.push(ws);
        bufs.results.push(r);
    }
    rc.gpu
        .context()
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the uploads", e))?;
    Ok(bufs)
}

/// Runs every variant that has a workspace once on set 0 and compares it with the reference; returns the
/// indices of those that passed (only they are timed). The others carry the failure as their outcome.
fn parity_gate(
    rc: &RunCtx,
    shape: Shape,
    host: &HostInputs,
    bufs: &mut VariantBuffers,
    label: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<usize>, Fail> {
    let mut passing: Vec<usize> = Vec::new();
    for (i, b) in rc.built.iter().enumerate() {
        let Some(ws) = bufs.workspaces[i].as_mut() else {
            continue;
        };
        // A shape over the variant's limits is the launcher's refusal, not a failure: it is reported, not run.
        if let Err(e) = b.variant.call_shared_bytes(shape.k) {
            bufs.results[i].total = Outcome::Refused(e.to_string());
            continue;
        }
        let checked = check_parity(
            rc,
            b,
            shape,
            host,
            &bufs.weights[i][0],
            &bufs.xs[0],
            &mut bufs.outs[0],
            ws,
        );
        let r = &mut bufs.results[i];
        match checked {
            Ok(p) => {
                if p.passed() {
                    passing.push(i);
                } else {
                    r.total = Outcome::NotTimed(p.failure_sentence());
                    progress(&format!(
                        "{label}: variant '{}' {}",
                        b.desc.name,
                        p.failure_sentence()
                    ));
                }
                r.parity = Some(p);
            }
            Err(Fail::Fatal(e)) => {
                return Err(Fail::Fatal(format!(
                    "variant '{}' during its parity run: {e}",
                    b.desc.name
                )))
            }
            Err(Fail::Local(e)) => {
                r.total = Outcome::NotTimed(format!("the parity run failed: {e}"));
            }
        }
    }
    progress(&format!(
        "{label}: parity passed for {} of {} variant(s) ({} sampled outputs each, plus every quantized \
         activation)",
        passing.len(),
        rc.built.len(),
        host.indices.len()
    ));
    Ok(passing)
}

/// The bf16 and f16 baselines on set 0: dequantized, converted, uploaded and checked against the CPU. One
/// that fails before it is uploaded goes straight into `result`; the rest are returned (`ready` when checked).
fn dense_baselines(
    rc: &RunCtx,
    cublas: &Cublas,
    shape: Shape,
    host: &HostInputs,
    result: &mut ShapeResult,
    label: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<DenseDevice>, Fail> {
    let Shape { m, n, k } = shape;
    let stream = &rc.stream;
    let args = GemmArgs::for_linear(m, n, k).map_err(Fail::Local)?;
    args.check().map_err(Fail::Local)?;
    let t = Instant::now();
    let dense_w = dense_weights(&host.raw, shape);
    let mut dense: Vec<DenseDevice> = Vec::new();
    for kind in [Dense::Bf16, Dense::F16] {
        let mut base = BaselineResult {
            name: kind.name().to_string(),
            total: Outcome::NotTimed("not timed".into()),
            rel_error: None,
            launch_bound: 0,
        };
        let h = match &dense_w {
            Ok(w) => DenseHost {
                dense: kind,
                w: convert(w, kind),
                x: convert(&host.x, kind),
            },
            Err(e) => {
                base.total = Outcome::NotTimed(e.clone());
                set_baseline(result, kind, base);
                continue;
            }
        };
        let uploaded = (|| -> Result<DenseDevice, Fail> {
            Ok(DenseDevice {
                dense: kind,
                w: vec![stream
                    .clone_htod(&h.w)
                    .map_err(|e| Fail::driver("uploading the dense weights", e))?],
                x: vec![stream
                    .clone_htod(&h.x)
                    .map_err(|e| Fail::driver("uploading the dense activations", e))?],
                out: vec![alloc::<u8>(
                    stream,
                    m * n * cublas.out_bytes(),
                    "the cuBLAS output",
                )?],
                result: base.clone(),
                ready: false,
            })
        })();
        let mut dev = match uploaded {
            Ok(dev) => dev,
            Err(Fail::Fatal(e)) => return Err(Fail::Fatal(format!("{}: {e}", kind.name()))),
            Err(Fail::Local(e)) => {
                base.total = Outcome::NotTimed(e);
                set_baseline(result, kind, base);
                continue;
            }
        };
        // Tolerances of METHOD.md: 16-bit outputs round to ~4e-3; an f32 output to far under 1e-3.
        let tolerance = match cublas.out {
            CublasOut::Input => 1e-2,
            CublasOut::F32 => 1e-3,
        };
        match check_dense(stream, rc.cfg.seed, cublas, &h, &mut dev, shape, args) {
            Ok(err) if err <= tolerance => {
                dev.result.rel_error = Some(err);
                dev.ready = true;
            }
            Ok(err) => {
                dev.result.rel_error = Some(err);
                dev.result.total = Outcome::NotTimed(format!(
                    "its output differs from the CPU product by {err:.2e} (relative, sampled), more than \
                     {tolerance:.0e}: the argument mapping or the library is wrong"
                ));
            }
            Err(Fail::Fatal(e)) => return Err(Fail::Fatal(format!("{}: {e}", kind.name()))),
            Err(Fail::Local(e)) => dev.result.total = Outcome::NotTimed(e),
        }
        dense.push(dev);
    }
    let errors: Vec<String> = dense
        .iter()
        .map(|d| match d.result.rel_error {
            Some(e) => format!("{} {e:.1e}", d.dense.name()),
            None => format!("{} failed", d.dense.name()),
        })
        .collect();
    progress(&format!(
        "{label}: cuBLAS inputs dequantized, converted, uploaded and checked against the CPU in {:.1} s \
         (relative error: {})",
        t.elapsed().as_secs_f64(),
        errors.join(", ")
    ));
    Ok(dense)
}

fn set_baseline(result: &mut ShapeResult, kind: Dense, base: BaselineResult) {
    match kind {
        Dense::Bf16 => result.cublas_bf16 = Some(base),
        Dense::F16 => result.cublas_f16 = Some(base),
    }
}

/// The read floor's set 0 where the run times it: the matrix's bytes in the run's layout, uploaded, and every
/// geometry checked to read them all. `result.read_floor` gets the geometries (untimed so far); a floor that
/// cannot run there carries the reason and gets no buffers.
fn floor_first_set(
    rc: &RunCtx,
    shape: Shape,
    host: &HostInputs,
    result: &mut ShapeResult,
    label: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<FloorBuffers>, Fail> {
    let Some(reader) = rc.reader.as_ref().filter(|_| rc.cfg.floor.applies(shape)) else {
        return Ok(None);
    };
    let bytes = match rc.cfg.layout {
        Layout::Raw => host.raw.clone(),
        Layout::Padded => raw_to_padded(&host.raw, shape.m, shape.k),
    };
    let mut floor = FloorResult {
        bytes: bytes.len(),
        geometries: FLOOR_GEOMETRIES
            .iter()
            .map(|&g| (g, Outcome::NotTimed("not timed".into())))
            .collect(),
        launch_bound: 0,
    };
    let checked = FloorBuffers::new(&rc.stream, reader, &bytes)
        .and_then(|mut f| f.check(&rc.stream, reader).map(|()| f));
    let buffers = match checked {
        Ok(f) => Some(f),
        Err(Fail::Fatal(e)) => return Err(Fail::Fatal(format!("the read floor: {e}"))),
        Err(Fail::Local(e)) => {
            progress(&format!("{label}: the read floor is not timed: {e}"));
            for (_, o) in &mut floor.geometries {
                *o = Outcome::NotTimed(e.clone());
            }
            None
        }
    };
    result.read_floor = Some(floor);
    Ok(buffers)
}

/// The bytes of one buffer set of the contestant with the smallest one (inputs, output and weights), over the
/// variants that passed, the baselines that are ready and the read floor; `None` when there is nothing to time.
fn smallest_set_bytes(
    shape: Shape,
    bufs: &VariantBuffers,
    passing: &[usize],
    dense: &[DenseDevice],
    floor_bytes: Option<usize>,
) -> Option<usize> {
    let Shape { m, n, k } = shape;
    let io_bytes = (n * k + n * m) * 4;
    let variants = passing
        .iter()
        .map(|&i| bufs.weights[i][0].device_bytes() + io_bytes);
    let baselines = dense
        .iter()
        .filter(|d| d.ready)
        .map(|d| (d.w[0].len() + d.x[0].len()) * 2 + d.out[0].len());
    variants.chain(baselines).chain(floor_bytes).min()
}

/// Sets 1..`sets`: copies of set 0's activations and dense inputs, fresh outputs, and a registration of each
/// passing variant's weights per set (on several threads).
fn more_sets(
    rc: &RunCtx,
    shape: Shape,
    host: &HostInputs,
    sets: usize,
    passing: &[usize],
    bufs: &mut VariantBuffers,
    dense: &mut [DenseDevice],
) -> Result<(), Fail> {
    let Shape { m, n, k } = shape;
    let stream = &rc.stream;
    for s in 1..sets {
        bufs.xs.push(
            stream
                .clone_dtod(&bufs.xs[0])
                .map_err(|e| Fail::driver(&format!("copying the activations (set {s})"), e))?,
        );
        bufs.outs.push(alloc::<f32>(stream, m * n, "an output")?);
    }
    for d in dense.iter_mut().filter(|d| d.ready) {
        for s in 1..sets {
            let what = |w: &str| format!("copying the {} {w} (set {s})", d.dense.name());
            let w = stream
                .clone_dtod(&d.w[0])
                .map_err(|e| Fail::driver(&what("weights"), e))?;
            let x = stream
                .clone_dtod(&d.x[0])
                .map_err(|e| Fail::driver(&what("activations"), e))?;
            let o = alloc::<u8>(stream, d.out[0].len(), "a cuBLAS output")?;
            d.w.push(w);
            d.x.push(x);
            d.out.push(o);
        }
    }
    let jobs: Vec<(usize, usize)> = passing
        .iter()
        .flat_map(|&i| (1..sets).map(move |s| (i, s)))
        .collect();
    let regs = parallel_map(&jobs, |&(i, _)| {
        RegisteredWeights::register_for(rc.gpu, &host.raw, m, k, rc.cfg.layout, &rc.built[i].desc)
    });
    for (&(i, s), reg) in jobs.iter().zip(regs) {
        match reg {
            Ok(w) => bufs.weights[i].push(w),
            Err(e) => {
                if let WeightsErrorKind::Fatal(f) = classify_weights(&e) {
                    return Err(Fail::Fatal(f));
                }
                return Err(Fail::Local(format!(
                    "registering weight set {s} of '{}' failed: {e}",
                    rc.built[i].desc.name
                )));
            }
        }
    }
    rc.gpu
        .context()
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the buffer sets", e))
}

fn finish_shape(result: &mut ShapeResult, variants: Vec<VariantResult>, dense: Vec<DenseDevice>) {
    result.variants = variants;
    for d in dense {
        set_baseline(result, d.dense, d.result);
    }
}
