//! Bit-for-bit comparisons on host vectors (outputs against the reference or a proven variant, poison left
//! behind, quantized activations) and the seeded sample of outputs compared on large shapes.

use std::fmt;

use mmqgen_reference::activations::QuantizedActivations;

use crate::gpu::workspace::{POISON_BITS, POISON_Q};

/// splitmix64: the sampling stream and the sub-seeds (kept here so that a sample is a pure function of its
/// seed, whatever the reference crate's generator does).
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// An independent seed for sub-stream `stream` of `seed` (the sample draws from stream 3).
pub fn sub_seed(seed: u64, stream: u64) -> u64 {
    SplitMix64(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// The first output that differs: where, and both bit patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstBad {
    /// Index into `[n][m]`: `token * m + row`.
    pub index: usize,
    pub token: usize,
    pub row: usize,
    pub expected_bits: u32,
    pub got_bits: u32,
}

impl fmt::Display for FirstBad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let got = if self.got_bits == POISON_BITS {
            "never written".to_string()
        } else {
            format!("{:e}", f32::from_bits(self.got_bits))
        };
        write!(
            f,
            "token {} row {}: want {:#010x} ({:e}), got {:#010x} ({got})",
            self.token,
            self.row,
            self.expected_bits,
            f32::from_bits(self.expected_bits),
            self.got_bits
        )
    }
}

/// The result of comparing outputs bit for bit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub checked: usize,
    pub mismatches: usize,
    /// The mismatch of lowest index.
    pub first_bad: Option<FirstBad>,
}

impl Comparison {
    fn record(&mut self, index: usize, m: usize, expected: f32, got: f32) {
        self.checked += 1;
        if expected.to_bits() != got.to_bits() {
            self.mismatches += 1;
            if self.first_bad.is_none_or(|b| index < b.index) {
                self.first_bad = Some(FirstBad {
                    index,
                    token: index / m,
                    row: index % m,
                    expected_bits: expected.to_bits(),
                    got_bits: got.to_bits(),
                });
            }
        }
    }
}

/// Compares every output bit for bit (`got` and `expected` are `[n][m]`; a length difference counts every
/// missing or extra value as a mismatch).
pub fn compare_all(got: &[f32], expected: &[f32], m: usize) -> Comparison {
    let m = m.max(1);
    let mut c = Comparison::default();
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        c.record(i, m, e, g);
    }
    let (short, long) = (got.len().min(expected.len()), got.len().max(expected.len()));
    for i in short..long {
        let g = got.get(i).copied().unwrap_or(f32::from_bits(POISON_BITS));
        let e = expected
            .get(i)
            .copied()
            .unwrap_or(f32::from_bits(!POISON_BITS));
        c.record(i, m, e, g);
    }
    c
}

/// Compares the outputs at `indices` (into `[n][m]`) with `expected(token, row)`, bit for bit.
pub fn compare_sampled(
    got: &[f32],
    m: usize,
    indices: &[usize],
    mut expected: impl FnMut(usize, usize) -> f32,
) -> Comparison {
    let m = m.max(1);
    let mut c = Comparison::default();
    for &i in indices {
        let e = expected(i / m, i % m);
        let g = got.get(i).copied().unwrap_or(f32::from_bits(POISON_BITS));
        c.record(i, m, e, g);
    }
    c
}

/// How many outputs still hold the poison pattern (never written by the kernel), and the first one.
pub fn count_unwritten(got: &[f32]) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut first = None;
    for (i, v) in got.iter().enumerate() {
        if v.to_bits() == POISON_BITS {
            count += 1;
            first.get_or_insert(i);
        }
    }
    (count, first)
}

/// The outputs a sampled check compares: every output of the first and last token and of the first and last
/// weight row (where tile edges are), plus `count` more drawn uniformly with `seed`; sorted, distinct, and every
/// output when there are no more than that.
pub fn sample_indices(m: usize, n: usize, seed: u64, count: usize) -> Vec<usize> {
    let total = m * n;
    if m == 0 || n == 0 {
        return Vec::new();
    }
    let mut set = std::collections::BTreeSet::new();
    for t in [0, n - 1] {
        set.extend((0..m).map(|j| t * m + j));
    }
    for j in [0, m - 1] {
        set.extend((0..n).map(|t| t * m + j));
    }
    let target = (set.len() + count).min(total);
    if target == total {
        return (0..total).collect();
    }
    let mut rng = SplitMix64(sub_seed(seed, 3));
    while set.len() < target {
        set.insert((rng.next_u64() % total as u64) as usize);
    }
    set.into_iter().collect()
}

/// The result of comparing the GPU's quantized activations with the reference's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuantComparison {
    /// Quants plus scales compared.
    pub checked: usize,
    pub mismatches: usize,
    pub first_bad: Option<String>,
}

/// Compares quants (`q [n][K]`) and scales (`d [n][K/G]`, by bits) with the reference's.
pub fn compare_quantized(
    got: &QuantizedActivations,
    want: &QuantizedActivations,
) -> QuantComparison {
    let mut c = QuantComparison::default();
    if (got.n, got.k, got.group) != (want.n, want.k, want.group) {
        c.mismatches = 1;
        c.first_bad = Some(format!(
            "the GPU quantized n = {}, K = {} in groups of {} but the reference n = {}, K = {} in groups of {}",
            got.n, got.k, got.group, want.n, want.k, want.group
        ));
        return c;
    }
    let k = want.k.max(1);
    let groups = (want.k / want.group.max(1)).max(1);
    for (i, (&g, &w)) in got.q.iter().zip(&want.q).enumerate() {
        c.checked += 1;
        if g != w {
            c.mismatches += 1;
            c.first_bad.get_or_insert_with(|| {
                let poison = if g == POISON_Q {
                    " (never written)"
                } else {
                    ""
                };
                format!("q[token {}][{}]: want {w}, got {g}{poison}", i / k, i % k)
            });
        }
    }
    for (i, (&g, &w)) in got.d.iter().zip(&want.d).enumerate() {
        c.checked += 1;
        if g.to_bits() != w.to_bits() {
            c.mismatches += 1;
            let first = format!(
                "d[token {}][group {}]: want {:#010x} ({:e}), got {:#010x} ({:e})",
                i / groups,
                i % groups,
                w.to_bits(),
                w,
                g.to_bits(),
                g
            );
            // Quants are reported first; a scale only when no quant differed.
            c.first_bad.get_or_insert(first);
        }
    }
    let missing = got.q.len().abs_diff(want.q.len()) + got.d.len().abs_diff(want.d.len());
    if missing > 0 {
        c.mismatches += missing;
        c.first_bad
            .get_or_insert_with(|| "the GPU's quantized activations have the wrong length".into());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::case::MIN_SAMPLED_OUTPUTS;
    use mmqgen_reference::activations::quantize_activations;

    fn bits(v: u32) -> f32 {
        f32::from_bits(v)
    }

    #[test]
    fn sampling_is_deterministic_and_covers_the_edges() {
        let (m, n) = (4097, 513);
        let a = sample_indices(m, n, 7, MIN_SAMPLED_OUTPUTS);
        assert_eq!(a, sample_indices(m, n, 7, MIN_SAMPLED_OUTPUTS));
        assert_ne!(a, sample_indices(m, n, 8, MIN_SAMPLED_OUTPUTS));
        assert!(a.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        assert!(a.iter().all(|&i| i < m * n));
        let edges = 2 * m + 2 * n - 4;
        assert_eq!(a.len(), edges + MIN_SAMPLED_OUTPUTS);
        for j in 0..m {
            assert!(a.binary_search(&j).is_ok());
            assert!(a.binary_search(&((n - 1) * m + j)).is_ok());
        }
        for t in 0..n {
            assert!(a.binary_search(&(t * m)).is_ok());
            assert!(a.binary_search(&(t * m + m - 1)).is_ok());
        }
        // Enough random draws land in the interior.
        let interior = a
            .iter()
            .filter(|&&i| i / m != 0 && i / m != n - 1 && i % m != 0 && i % m != m - 1)
            .count();
        assert!(interior >= MIN_SAMPLED_OUTPUTS - 16, "{interior}");
        // Small totals give every output; one token or one row too.
        assert_eq!(sample_indices(3, 5, 1, 4096), (0..15).collect::<Vec<_>>());
        assert_eq!(sample_indices(100, 1, 1, 10).len(), 100);
        assert!(sample_indices(0, 5, 1, 10).is_empty());
    }

    #[test]
    fn bitwise_comparison_finds_the_first_bad_output() {
        let m = 4;
        let want: Vec<f32> = (0..12).map(|i| i as f32 * 0.5).collect();
        let mut got = want.clone();
        assert_eq!(
            compare_all(&got, &want, m),
            Comparison {
                checked: 12,
                mismatches: 0,
                first_bad: None
            }
        );
        // -0.0 vs +0.0 is a mismatch: bits, not values.
        got[0] = -0.0;
        got[9] = bits(POISON_BITS);
        got[6] = f32::from_bits(want[6].to_bits() + 1);
        let c = compare_all(&got, &want, m);
        assert_eq!((c.checked, c.mismatches), (12, 3));
        let b = c.first_bad.unwrap();
        assert_eq!((b.index, b.token, b.row), (0, 0, 0));
        assert_eq!((b.expected_bits, b.got_bits), (0, 0x8000_0000));
        // Sampled: only the indices asked for, in any order; the lowest bad index is reported.
        let c = compare_sampled(&got, m, &[9, 6, 1], |t, j| want[t * m + j]);
        assert_eq!((c.checked, c.mismatches), (3, 2));
        let b = c.first_bad.unwrap();
        assert_eq!((b.index, b.token, b.row), (6, 1, 2));
        assert_eq!(
            compare_sampled(&got, m, &[9], |t, j| want[t * m + j])
                .first_bad
                .unwrap()
                .to_string(),
            "token 2 row 1: want 0x40900000 (4.5e0), got 0xffc0dead (never written)"
        );
        // NaN payloads are compared by bits too.
        let c = compare_all(&[bits(0x7fc0_0000)], &[bits(0x7fc0_0001)], 1);
        assert_eq!(c.mismatches, 1);
        // A short output counts its missing values.
        assert_eq!(compare_all(&got[..10], &want, m).mismatches, 3 + 2);
    }

    #[test]
    fn poison_left_behind_is_counted_everywhere() {
        let mut got = vec![1.0f32; 1000];
        assert_eq!(count_unwritten(&got), (0, None));
        got[17] = bits(POISON_BITS);
        got[999] = bits(POISON_BITS);
        // A canonical NaN is written, not poison.
        got[5] = f32::NAN;
        assert_eq!(count_unwritten(&got), (2, Some(17)));
    }

    #[test]
    fn quantized_activations_are_compared_bit_for_bit() {
        let x: Vec<f32> = (0..2 * 512)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.1)
            .collect();
        let want = quantize_activations(&x, 2, 512, 32);
        let mut got = want.clone();
        assert_eq!(compare_quantized(&got, &want).mismatches, 0);
        assert_eq!(compare_quantized(&got, &want).checked, 2 * 512 + 2 * 16);
        got.q[515] = POISON_Q;
        got.d[17] = f32::from_bits(got.d[17].to_bits() ^ 1);
        let c = compare_quantized(&got, &want);
        assert_eq!(c.mismatches, 2);
        assert_eq!(
            c.first_bad.unwrap(),
            format!(
                "q[token 1][3]: want {}, got -128 (never written)",
                want.q[515]
            )
        );
        let mut got = want.clone();
        got.d[17] = -got.d[17];
        assert!(compare_quantized(&got, &want)
            .first_bad
            .unwrap()
            .starts_with("d[token 1][group 1]: want "));
        let other = quantize_activations(&x, 2, 512, 256);
        assert_eq!(compare_quantized(&other, &want).mismatches, 1);
    }
}
