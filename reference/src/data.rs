//! Seeded inputs: realistic data for the accuracy gate and full-range random blocks for bit-exact parity.
//!
//! Two kinds of input answer two different questions. Accuracy (docs/DESIGN.md D6) needs data that looks like a
//! model's: normal(0, 0.02) weights quantized by the ggml-faithful quantizer, and standard-normal activations
//! with a few outlier channels. Parity needs the opposite: every `q6 - 32`, every int8 scale (including -128) and
//! a wide spread of `d`, so that every integer and float path of a kernel is exercised; [`random_blocks`] draws
//! the block bytes directly. Everything is a pure function of its seed ([`crate::rng`]).

use crate::rng::SplitMix64;
use half::f16;
use mmqgen_formats::q6k::{BLOCK_BYTES, BLOCK_WEIGHTS, D_OFFSET, SCALES_OFFSET};

/// Activation channels are scaled by this factor when they are outlier channels.
pub const OUTLIER_SCALE: f32 = 20.0;

/// The sub-stream of a case's seed its activations are drawn from: `derive_seed(seed, ACTIVATION_STREAM)` (the
/// weights use the seed itself). Used by the accuracy table and the digest cases.
pub const ACTIVATION_STREAM: u64 = 1;

/// Standard deviation of the realistic weights before quantization.
pub const WEIGHT_STD: f64 = 0.02;

/// Realistic q6_K weights: `m * k` values drawn normal(0, 0.02) (f64 Box-Muller, rounded once to f32), row-major,
/// quantized by `mmqgen_formats::quantize_rows` (byte-identical to ggml). Returns raw GGUF rows of 210-byte blocks.
///
/// # Panics
/// If `k` is not a multiple of 256.
pub fn weights_q6k(m: usize, k: usize, seed: u64) -> Vec<u8> {
    assert!(
        k.is_multiple_of(BLOCK_WEIGHTS),
        "K = {k} is not a multiple of {BLOCK_WEIGHTS}"
    );
    let mut rng = SplitMix64::new(seed);
    let w: Vec<f32> = (0..m * k)
        .map(|_| (rng.normal_f64() * WEIGHT_STD) as f32)
        .collect();
    mmqgen_formats::quantize_rows(&w)
        .expect("normal draws are finite and the length is whole blocks")
}

/// The outlier channels within every window of 4096: `count` channels, one in each of `count` equal strides
/// (`stride = 4096 / count`), at a deterministic offset inside its stride that moves from stride to stride, so
/// that for `count <= 16` each outlier sits in a different group of 256 and at a different place in its group.
/// For 4: channels 512, 1667, 2822, 3977.
///
/// # Panics
/// If `count > 4096`.
pub fn outlier_channels(count: usize) -> Vec<usize> {
    assert!(count <= 4096, "{count} outlier channels do not fit in 4096");
    if count == 0 {
        return Vec::new();
    }
    let stride = 4096 / count;
    (0..count)
        .map(|i| i * stride + (stride / 2 + 131 * i) % stride)
        .collect()
}

/// Realistic activations: `n` tokens of `k` standard-normal f32 values (row-major `[n][k]`, drawn in that order),
/// in which channel `c` is multiplied by [`OUTLIER_SCALE`] when `c % 4096` is one of
/// [`outlier_channels`]`(outliers_per_4096)`.
pub fn activations(n: usize, k: usize, seed: u64, outliers_per_4096: usize) -> Vec<f32> {
    let mut is_outlier = vec![false; 4096];
    for c in outlier_channels(outliers_per_4096) {
        is_outlier[c] = true;
    }
    let mut rng = SplitMix64::new(seed);
    (0..n * k)
        .map(|i| {
            let x = rng.normal();
            if is_outlier[(i % k) % 4096] {
                x * OUTLIER_SCALE
            } else {
                x
            }
        })
        .collect()
}

/// The sub-stream of a parity case's seed that places its rounding ties: `derive_seed(seed, TIES_STREAM)`
/// ([`plant_rounding_ties`]).
pub const TIES_STREAM: u64 = 2;

/// The exponents `e` of the scales near `2^e` that [`plant_rounding_ties`] draws: low enough to reach below the
/// generated quantizer's reciprocal path (a scale under 2^-90 is divided by as written, NUMERICS.md 2), high
/// enough to cover most of it, and far enough from f32's top that no parity output overflows.
pub const TIE_SCALE_EXPONENTS: std::ops::RangeInclusive<i32> = -110..=60;

/// Plants rounding ties for the activation quantizer (NUMERICS.md 2) in `x` (`[n][k]`): in token `t`, the 256
/// values of span `t % (k / 256)` are replaced. Every 32-value chunk of the span holds one value `+-A` (at a
/// random place), so its per-32 scale is `div(A, 127)` and the span's per-256 scale `div(A, 2047)`, with `A` a
/// random mantissa times `2^(e + 7)`, `e` drawn from [`TIE_SCALE_EXPONENTS`]. Every other value lies within two
/// ulps of `(j + 1/2)` times one of the two scales (alternately; `j` random, so that the value stays below `A`):
/// `x / d` sits on or beside a rounding tie, where a quotient one ulp off changes the integer. One span in four
/// has one chunk of zeros instead (per-32 `amax = 0`).
///
/// # Panics
/// If `x.len() != n * k` or `k` is not a multiple of 256.
pub fn plant_rounding_ties(x: &mut [f32], n: usize, k: usize, seed: u64) {
    assert!(
        k.is_multiple_of(BLOCK_WEIGHTS) && x.len() == n * k,
        "plant_rounding_ties needs [n][k] activations with k a multiple of 256"
    );
    let spans = k / BLOCK_WEIGHTS;
    let mut rng = SplitMix64::new(seed);
    let exponents = TIE_SCALE_EXPONENTS;
    let exponent_count = (exponents.end() - exponents.start() + 1) as u64;
    for t in 0..n {
        let first = t * k + (t % spans) * BLOCK_WEIGHTS;
        let span = &mut x[first..first + BLOCK_WEIGHTS];
        let e = exponents.start() + rng.below(exponent_count) as i32;
        let biased = u32::try_from(e + 7 + 127).expect("the exponents keep A normal");
        let amax = f32::from_bits((biased << 23) | (rng.next_u32() >> 9));
        let scales = [(amax / 127.0, 127i64), (amax / 2047.0, 2047i64)];
        let zero_chunk = (rng.below(4) == 0).then(|| rng.below(8) as usize);
        for (c, chunk) in span.chunks_exact_mut(32).enumerate() {
            if zero_chunk == Some(c) {
                chunk.fill(0.0);
                continue;
            }
            let amax_at = rng.below(32) as usize;
            for (i, v) in chunk.iter_mut().enumerate() {
                let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
                if i == amax_at {
                    *v = sign * amax;
                    continue;
                }
                let (scale, limit) = scales[i % 2];
                let j = rng.below(2 * limit as u64) as i64 - limit;
                // f32 times (j + 1/2) is exact in f64; rounded once to f32, then moved by -2..=2 ulps.
                let tie = (f64::from(scale) * (j as f64 + 0.5)) as f32;
                let nudge = rng.below(5) as i64 - 2;
                *v = f32::from_bits((i64::from(tie.to_bits()) + nudge) as u32);
            }
        }
    }
}

/// Full-range random q6_K blocks for parity: `m` rows of `k / 256` blocks whose `ql`, `qh` and `scales` bytes are
/// uniformly random (every `q6 - 32` in -32..=31 and every scale in -128..=127 occurs), and whose `d` is always
/// finite: 1 block in 32 takes a special value (+0, -0, the smallest and largest subnormal, +-65504), 1 in 32 any
/// finite f16, and the rest a random sign and mantissa with exponent 2^-5..2^2 (so that blocks contribute
/// comparably and a wrong order of additions shows).
///
/// # Panics
/// If `k` is not a multiple of 256.
pub fn random_blocks(m: usize, k: usize, seed: u64) -> Vec<u8> {
    assert!(
        k.is_multiple_of(BLOCK_WEIGHTS),
        "K = {k} is not a multiple of {BLOCK_WEIGHTS}"
    );
    const SPECIAL: [u16; 6] = [0x0000, 0x8000, 0x0001, 0x03FF, 0x7BFF, 0xFBFF];
    let mut rng = SplitMix64::new(seed);
    let nblocks = m * (k / BLOCK_WEIGHTS);
    let mut out = vec![0u8; nblocks * BLOCK_BYTES];
    for block in out.chunks_exact_mut(BLOCK_BYTES) {
        for chunk in block[..D_OFFSET].chunks_mut(8) {
            let bits = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bits[..chunk.len()]);
        }
        debug_assert_eq!(SCALES_OFFSET + 16, D_OFFSET);
        let bits = rng.next_u64();
        let sign = ((bits >> 10) & 1) as u16;
        let mantissa = (bits & 0x3FF) as u16;
        let d = match (bits >> 32) % 32 {
            0 => SPECIAL[((bits >> 40) % SPECIAL.len() as u64) as usize],
            1 => (sign << 15) | ((((bits >> 40) % 31) as u16) << 10) | mantissa,
            _ => (sign << 15) | ((10 + ((bits >> 40) % 8) as u16) << 10) | mantissa,
        };
        debug_assert!(f16::from_bits(d).is_finite());
        block[D_OFFSET..].copy_from_slice(&d.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmqgen_formats::q6k::blocks;

    #[test]
    fn random_blocks_cover_every_integer_and_keep_d_finite() {
        let raw = random_blocks(16, 4096, 11);
        let mut seen_w = [false; 64];
        let mut seen_sc = [false; 256];
        let mut specials = 0;
        for b in blocks(&raw).unwrap() {
            assert!(b.d().is_finite());
            for k in 0..256 {
                seen_w[(b.q6(k) + 32) as usize] = true;
            }
            for s in b.scales() {
                seen_sc[(s as i32 + 128) as usize] = true;
            }
            specials += usize::from(b.d() == 0.0 || b.d().abs() == 65504.0 || b.d().abs() < 6.2e-5);
        }
        assert!(seen_w.iter().all(|&s| s), "some q6 - 32 never drawn");
        assert!(seen_sc.iter().all(|&s| s), "some scale never drawn");
        assert!(specials > 0, "no special d in 256 blocks");
        assert_eq!(raw, random_blocks(16, 4096, 11));
        assert_ne!(raw, random_blocks(16, 4096, 12));
    }

    #[test]
    fn outliers_are_spread_and_scaled() {
        assert_eq!(outlier_channels(4), vec![512, 1667, 2822, 3977]);
        assert_eq!(outlier_channels(0), Vec::<usize>::new());
        let c16 = outlier_channels(16);
        let mut groups: Vec<usize> = c16.iter().map(|c| c / 256).collect();
        groups.dedup();
        assert_eq!(groups.len(), 16, "one outlier per group of 256");
        let plain = activations(2, 8192, 5, 0);
        let x = activations(2, 8192, 5, 4);
        for (i, (&a, &b)) in plain.iter().zip(&x).enumerate() {
            let outlier = outlier_channels(4).contains(&((i % 8192) % 4096));
            assert_eq!(b, if outlier { a * 20.0 } else { a }, "index {i}");
        }
    }

    #[test]
    fn rounding_ties_sit_on_half_integers_of_both_scales() {
        let (n, k) = (40, 512);
        let mut x = activations(n, k, 3, 4);
        let before = x.clone();
        plant_rounding_ties(&mut x, n, k, 7);
        let (mut near_ties, mut low_scales, mut zero_chunks) = (0, 0, 0);
        for t in 0..n {
            let span = t % 2;
            for s in 0..2 {
                let range = t * k + s * 256..t * k + s * 256 + 256;
                if s != span {
                    assert_eq!(
                        x[range.clone()],
                        before[range],
                        "token {t}: only span {span} changes"
                    );
                    continue;
                }
                let values = &x[range];
                let amax = values.iter().fold(0f32, |a, v| a.max(v.abs()));
                assert!(amax.is_normal());
                low_scales += usize::from(amax / 127.0 < 2f32.powi(-90));
                for (c, chunk) in values.chunks_exact(32).enumerate() {
                    let chunk_max = chunk.iter().fold(0f32, |a, v| a.max(v.abs()));
                    if chunk_max == 0.0 {
                        zero_chunks += 1;
                        continue;
                    }
                    assert_eq!(
                        chunk_max, amax,
                        "token {t} chunk {c}: every chunk holds amax"
                    );
                    for (i, &v) in chunk.iter().enumerate() {
                        let d = if i % 2 == 0 {
                            amax / 127.0
                        } else {
                            amax / 2047.0
                        };
                        let q = f64::from(v) / f64::from(d);
                        near_ties += usize::from(
                            v.abs() != amax
                                && (q - q.floor() - 0.5).abs() < 1e-6 * q.abs().max(1.0),
                        );
                    }
                }
            }
        }
        assert!(near_ties > n * 200, "{near_ties} values near a tie");
        assert!(
            low_scales > 0 && low_scales < n,
            "{low_scales} spans below 2^-90"
        );
        assert!(zero_chunks > 0, "no zero chunk");
        let mut again = before.clone();
        plant_rounding_ties(&mut again, n, k, 7);
        assert_eq!(again, x);
    }

    #[test]
    fn realistic_weights_are_q6k_rows() {
        let raw = weights_q6k(3, 512, 1);
        assert_eq!(raw.len(), 3 * 2 * BLOCK_BYTES);
        let w = mmqgen_formats::dequantize_rows(&raw).unwrap();
        let rms = (w.iter().map(|v| (v * v) as f64).sum::<f64>() / w.len() as f64).sqrt();
        assert!((rms - 0.02).abs() < 0.003, "rms {rms}");
    }
}
