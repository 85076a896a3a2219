//! The run's own bandwidth yardstick: a device-to-device copy, timed once per run like any contestant, so
//! that each contestant's weight bandwidth can be read as a share of what this GPU moves today.
//!
//! The rate counts the bytes the copy moves, read plus written (twice its size), over its median time: the way
//! docs/DESIGN.md R4 counts its "device-to-device copy 4.2 TB/s (read + write)", and issue 12's 11.5 µs for 48 MB.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::fail::{fail_text, Fail};
use super::stats::Stats;
use super::timer::{Spinner, Timer};

/// Bytes copied per call: far beyond any L2, so the copy runs at HBM speed.
pub const COPY_BYTES: usize = 512 << 20;
/// Timed copies (after one untimed).
pub const COPY_REPS: usize = 5;

/// A timed device-to-device copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CopyRate {
    /// Bytes per copy: read once and written once.
    pub bytes: usize,
    /// Median time of one copy, µs.
    pub median_us: f64,
    pub reps: usize,
}

impl CopyRate {
    /// Bytes read plus written per second, TB/s.
    pub fn moved_tb_s(&self) -> f64 {
        tb_per_s(2 * self.bytes, self.median_us)
    }
}

/// `bytes` moved in `us` microseconds, in TB/s (10^12 bytes per second).
pub fn tb_per_s(bytes: usize, us: f64) -> f64 {
    bytes as f64 / (us * 1e-6) / 1e12
}

/// Times [`COPY_REPS`] copies of [`COPY_BYTES`] between two fresh buffers (one untimed first); a sentence
/// when the buffers cannot be had or a copy fails.
pub(super) fn measure_copy_rate(
    stream: &Arc<CudaStream>,
    timer: &Timer,
    spinner: &Spinner,
) -> Result<CopyRate, String> {
    let run = || -> Result<CopyRate, Fail> {
        let alloc = |what: &str| {
            stream.alloc_zeros::<u8>(COPY_BYTES).map_err(|e| {
                Fail::driver(
                    &format!("allocating the copy's {what} ({} MiB)", COPY_BYTES >> 20),
                    e,
                )
            })
        };
        let src = alloc("source")?;
        let mut dst = alloc("destination")?;
        let mut samples = Vec::with_capacity(COPY_REPS);
        for rep in 0..=COPY_REPS {
            let (us, _) = timer.time(stream, spinner, || {
                stream
                    .memcpy_dtod(&src, &mut dst)
                    .map_err(|e| Fail::driver("copying device to device", e))
            })?;
            if rep > 0 {
                samples.push(us);
            }
        }
        let st = Stats::from_samples(&samples).expect("COPY_REPS > 0");
        Ok(CopyRate {
            bytes: COPY_BYTES,
            median_us: st.median,
            reps: st.n,
        })
    };
    run().map_err(fail_text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_rate_counts_the_bytes_read_and_written() {
        // 512 MiB copied in 256 µs moves 1 GiB: 4.19 TB/s, docs/DESIGN.md R4's HBM copy (read + write).
        let c = CopyRate {
            bytes: 512 << 20,
            median_us: 256.0,
            reps: 5,
        };
        assert!((c.moved_tb_s() - 4.194).abs() < 1e-3, "{}", c.moved_tb_s());
        assert!((tb_per_s(1_000_000, 1.0) - 1.0).abs() < 1e-12);
    }
}
