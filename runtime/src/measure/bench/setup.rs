//! What every timed run starts with: its stream, the spin kernel and the events of [`super::timer`], the
//! copy-rate yardstick of [`super::copy_rate`], and the provenance of [`super::provenance`], said on one line.

use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};

use super::copy_rate::{measure_copy_rate, COPY_BYTES, COPY_REPS};
use super::fail::BenchError;
use super::provenance::{commit, driver_release, utc_now, RunInfo};
use super::shapes::FALLBACK_L2_BYTES;
use super::timer::{Spinner, Timer};
use crate::compile::nvrtc_version;
use crate::gpu::device::{describe_driver_error, DeviceError, Gpu};

/// A run's timing kit and what it runs on.
pub(super) struct Start {
    pub(super) stream: Arc<CudaStream>,
    pub(super) spinner: Spinner,
    pub(super) timer: Timer,
    pub(super) info: RunInfo,
}

impl Start {
    /// A fresh stream, the calibrated spin, two events, the copy rate (a note through `progress` when it
    /// cannot be timed) and the provenance; `what` starts each progress line (`bench`, `decode step`).
    pub(super) fn new(
        gpu: &Gpu,
        what: &str,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Start, BenchError> {
        let info0 = gpu.info();
        let (l2_bytes, l2_source) = match gpu
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        {
            Ok(v) if v > 0 => (v as usize, "device attribute".to_string()),
            Ok(v) => (
                FALLBACK_L2_BYTES,
                format!("fallback: the device reported {v}"),
            ),
            Err(e) => (
                FALLBACK_L2_BYTES,
                format!(
                    "fallback: reading the attribute failed with {}",
                    describe_driver_error(e)
                ),
            ),
        };
        let stream = gpu
            .context()
            .new_stream()
            .map_err(|e| DeviceError::cuda(format!("creating the {what}'s stream"), e))?;
        progress(&format!(
            "{what}: compiling the spin kernel and calibrating it"
        ));
        let (spinner, first_spin_us) = Spinner::new(gpu, &stream)?;
        let timer = Timer::new(&stream)?;
        progress(&format!(
            "{what}: timing a {} MiB device-to-device copy ({COPY_REPS} times), the run's bandwidth yardstick",
            COPY_BYTES >> 20
        ));
        let copy = match measure_copy_rate(&stream, &timer, &spinner) {
            Ok(c) => Some(c),
            Err(e) => {
                progress(&format!("{what}: the copy rate was not measured: {e}"));
                None
            }
        };
        let info = RunInfo {
            gpu: info0.name.clone(),
            arch: info0.arch.clone(),
            multiprocessors: info0.multiprocessors,
            driver_cuda: format!("{}.{}", info0.driver_version.0, info0.driver_version.1),
            driver_release: driver_release(),
            nvrtc: match nvrtc_version() {
                Ok((a, b)) => format!("{a}.{b}"),
                Err(e) => format!("unknown ({e})"),
            },
            commit: commit(),
            date: utc_now(),
            l2_bytes,
            l2_source,
            spin_us: spinner.us,
            copy,
        };
        progress(&format!(
            "{what}: {} | L2 {} MiB ({}) | spin {} cycles, at least {:.0} µs at the top clock ({:.0} µs on the \
             first, cold run) | copy {} | NVRTC {} | driver {} | commit {}",
            info0.summary(),
            l2_bytes >> 20,
            info.l2_source,
            spinner.cycles,
            spinner.us,
            first_spin_us,
            info.copy.map_or("not measured".to_string(), |c| format!(
                "{:.2} TB/s read + written ({} MiB in {:.0} µs, median of {})",
                c.moved_tb_s(),
                c.bytes >> 20,
                c.median_us,
                c.reps
            )),
            info.nvrtc,
            info.driver_release,
            info.commit
        ));
        Ok(Start {
            stream,
            spinner,
            timer,
            info,
        })
    }
}
