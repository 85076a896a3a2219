//! Per-contestant statistics: quantiles of the per-call times, and throughput.

use crate::check::Shape;

/// The `p` quantile (0..=1) of sorted samples, interpolating linearly between the closest ranks (numpy's
/// default): position `p * (len - 1)`.
///
/// # Panics
/// On an empty slice.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "a quantile of no samples");
    let last = sorted.len() - 1;
    let pos = p.clamp(0.0, 1.0) * last as f64;
    let lo = (pos.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Median, p20 and p80 (and the extremes) of one contestant's per-call times, microseconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Stats {
    pub n: usize,
    pub median: f64,
    pub p20: f64,
    pub p80: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    /// The statistics of `samples` (any order); `None` when there are none.
    pub fn from_samples(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        Some(Stats {
            n: s.len(),
            median: quantile_sorted(&s, 0.5),
            p20: quantile_sorted(&s, 0.2),
            p80: quantile_sorted(&s, 0.8),
            min: s[0],
            max: s[s.len() - 1],
        })
    }
}

/// Tera floating-point operations per second of a matmul of `shape` taking `us` microseconds (`2*m*n*K`).
pub fn tflops(shape: Shape, us: f64) -> f64 {
    2.0 * shape.m as f64 * shape.n as f64 * shape.k as f64 / (us * 1e-6) / 1e12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_on_known_vectors() {
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = Stats::from_samples(&ten).unwrap();
        assert_eq!(s.n, 10);
        assert!((s.median - 5.5).abs() < 1e-12, "{s:?}");
        // numpy.percentile(range(1, 11), 20) = 2.8, 80 -> 8.2.
        assert!((s.p20 - 2.8).abs() < 1e-12, "{s:?}");
        assert!((s.p80 - 8.2).abs() < 1e-12, "{s:?}");
        assert_eq!((s.min, s.max), (1.0, 10.0));

        // Order does not matter; an odd count has a middle element.
        let s = Stats::from_samples(&[30.0, 10.0, 20.0, 50.0, 40.0]).unwrap();
        assert_eq!(s.median, 30.0);
        assert!((s.p20 - 18.0).abs() < 1e-12, "{s:?}");
        assert!((s.p80 - 42.0).abs() < 1e-12, "{s:?}");

        let one = Stats::from_samples(&[7.0]).unwrap();
        assert_eq!((one.n, one.median, one.p20, one.p80), (1, 7.0, 7.0, 7.0));
        assert_eq!(Stats::from_samples(&[]), None);

        // An outlier moves the mean, not the median.
        let s = Stats::from_samples(&[100.0, 101.0, 99.0, 100.5, 5000.0]).unwrap();
        assert_eq!(s.median, 100.5);
        assert_eq!(quantile_sorted(&[1.0, 2.0], 0.0), 1.0);
        assert_eq!(quantile_sorted(&[1.0, 2.0], 1.0), 2.0);
    }

    #[test]
    fn tflops_counts_two_flops_per_multiply_add() {
        // 4096 x 512 x 14336 in 436 µs is llama.cpp's 137.8 TFLOPS (docs/DESIGN.md R4).
        let t = tflops(Shape::new(4096, 512, 14336), 436.0);
        assert!((t - 137.9).abs() < 0.1, "{t}");
    }
}
