//! The timing primitive: a spin kernel queued ahead of each call so the host's launch cost stays out of the
//! time, and two CUDA events around the call.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{
    sys, CudaEvent, CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::fail::{fail_text, BenchError, Fail};
use crate::compile::compile_cubin;
use crate::gpu::device::{DeviceError, Gpu};

/// How long the spin kernel ahead of each timed call keeps the GPU busy while the host queues the call.
pub const SPIN_TARGET_US: f64 = 200.0;

pub(super) const SPIN_KERNEL: &str = "mmqgen_bench_spin";
pub(super) const SPIN_SOURCE: &str = r#"
extern "C" __global__ void mmqgen_bench_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"#;

/// The spin kernel queued ahead of each timed call.
pub(super) struct Spinner {
    pub(super) _module: Arc<CudaModule>,
    pub(super) func: CudaFunction,
    pub(super) cycles: i64,
    pub(super) us: f64,
}

impl Spinner {
    /// The spin kernel, and how long one spin took just now (µs; at whatever clock the GPU was at).
    pub(super) fn new(gpu: &Gpu, stream: &Arc<CudaStream>) -> Result<(Spinner, f64), BenchError> {
        let compiled = compile_cubin(SPIN_SOURCE, "mmqgen_bench_spin.cu", gpu.arch(), false)
            .map_err(|e| {
                BenchError::Setup(format!("compiling the bench's spin kernel failed: {e}"))
            })?;
        let ctx = gpu.context().clone();
        let module = ctx
            .load_module(Ptx::from_binary(compiled.cubin))
            .map_err(|e| DeviceError::cuda("loading the bench's spin kernel", e))?;
        let func = module
            .load_function(SPIN_KERNEL)
            .map_err(|e| DeviceError::cuda("finding the bench's spin kernel", e))?;
        // Cycles for SPIN_TARGET_US at the GPU's top clock (10% over), so that the spin lasts at least that long
        // at any clock; calibrating on an idle GPU (345 MHz seen on our H200) would make it far too short once
        // the clocks rise.
        let clock_khz = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
            .ok()
            .filter(|&v| v > 0)
            .map_or(2_000_000.0, f64::from);
        let spinner = Spinner {
            _module: module,
            func,
            cycles: ((SPIN_TARGET_US * clock_khz / 1000.0 * 1.1).ceil() as i64).max(10_000),
            us: SPIN_TARGET_US,
        };
        // One spin, timed, so that a kernel that cannot run fails here with a sentence (and for the log).
        let ev = || {
            stream
                .context()
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| DeviceError::cuda("creating a timing event", e))
        };
        let (start, stop) = (ev()?, ev()?);
        start
            .record(stream)
            .map_err(|e| DeviceError::cuda("recording a timing event", e))?;
        spinner
            .launch(stream)
            .map_err(|e| BenchError::Setup(fail_text(e)))?;
        stop.record(stream)
            .map_err(|e| DeviceError::cuda("recording a timing event", e))?;
        let ms = start
            .elapsed_ms(&stop)
            .map_err(|e| DeviceError::cuda("running the bench's spin kernel", e))?;
        Ok((spinner, ms as f64 * 1e3))
    }

    pub(super) fn launch(&self, stream: &Arc<CudaStream>) -> Result<(), Fail> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&self.func);
        b.arg(&self.cycles);
        // SAFETY: the kernel takes one `long long` by value and touches no memory.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(|e| Fail::driver("launching the bench's spin kernel", e))
    }
}

/// Two timing events, reused for every call.
pub(super) struct Timer {
    pub(super) start: CudaEvent,
    pub(super) stop: CudaEvent,
}

impl Timer {
    pub(super) fn new(stream: &Arc<CudaStream>) -> Result<Timer, DeviceError> {
        let ev = || {
            stream
                .context()
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| DeviceError::cuda("creating a timing event", e))
        };
        Ok(Timer {
            start: ev()?,
            stop: ev()?,
        })
    }

    /// Queues the spin, the start event, `work`, the stop event; waits; returns (µs on the GPU, µs the host
    /// took to queue the start event, the work and the stop event).
    pub(super) fn time(
        &self,
        stream: &Arc<CudaStream>,
        spinner: &Spinner,
        work: impl FnOnce() -> Result<(), Fail>,
    ) -> Result<(f64, f64), Fail> {
        spinner.launch(stream)?;
        let queued = Instant::now();
        self.start
            .record(stream)
            .map_err(|e| Fail::driver("recording the start event", e))?;
        work()?;
        self.stop
            .record(stream)
            .map_err(|e| Fail::driver("recording the stop event", e))?;
        let enqueue_us = queued.elapsed().as_secs_f64() * 1e6;
        self.stop
            .synchronize()
            .map_err(|e| Fail::driver("waiting for the timed call", e))?;
        let ms = self
            .start
            .elapsed_ms(&self.stop)
            .map_err(|e| Fail::driver("reading the event timer", e))?;
        Ok((ms as f64 * 1e3, enqueue_us))
    }
}
