//! Activation quantization, replaying NUMERICS.md 2 (the GPU quantizer kernel does the same operations).
//!
//! Per group of `G` values: `amax = max |x|`, `d = div(amax, 127)`, `q = clamp(rne(div(x, d)), -127, 127)`, and an
//! all-zero group gives `d = 0`, `q = 0`. Rust's `/` on f32 is the IEEE division `__fdiv_rn` is, and
//! `round_ties_even` is `rne`. The clamp is done on the rounded value converted to int32 the way CUDA's
//! `__float2int_rn` (PTX `cvt.rni.s32.f32`) converts: saturating, NaN to 0. That only matters when `d`
//! underflows to 0 for a tiny non-zero `amax` (below about 8.9e-44), where `0 / 0` is NaN and gives `q = 0`.

use mmqgen_codegen::NumericsMode;

/// Quantized activations: int8 `q [n][k]` (or, with two planes, `[n][k / 32][2][32]`) and f32
/// `d [n][k / group]`, both row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedActivations {
    /// int8 quants, `[n][k]`; under `int12_per256` each chunk of 32 values as its 32 `vh` then its 32 `vl`
    /// (`v = 64 vh + vl`), `[n][k / 32][2][32]`.
    pub q: Vec<i8>,
    /// f32 scales, `[n][k / group]`.
    pub d: Vec<f32>,
    /// Tokens.
    pub n: usize,
    /// Values per token.
    pub k: usize,
    /// Values per scale (`G`: 32 or 256 for the numerics modes).
    pub group: usize,
    /// int8 planes per value: 1, or 2 for `int12_per256`.
    pub planes: usize,
}

/// Quantizes for `mode` (NUMERICS.md 2): int8 in groups of the mode's `G`, or under `int12_per256` 12-bit
/// values per 256 in two planes ([`quantize_activations_12bit`]).
///
/// # Panics
/// As [`quantize_activations`].
pub fn quantize_activations_for(
    x: &[f32],
    n: usize,
    k: usize,
    mode: NumericsMode,
) -> QuantizedActivations {
    match mode {
        NumericsMode::Int12Per256 => quantize_activations_12bit(x, n, k),
        _ => quantize_activations(x, n, k, mode.activation_group() as usize),
    }
}

/// `int12_per256` (NUMERICS.md 2): per 256 values `d = div(amax, 2047)`, `v = clamp(rne(div(x, d)), -2047, 2047)`,
/// stored as `vl = ((v + 32) & 63) - 32` and `vh = (v - vl) / 64`, each chunk of 32 values as its 32 `vh` then
/// its 32 `vl`.
///
/// # Panics
/// If `k` is not a multiple of 256 or `x.len() != n * k`.
pub fn quantize_activations_12bit(x: &[f32], n: usize, k: usize) -> QuantizedActivations {
    check_shape(x, n, k, 256);
    let mut q = vec![0i8; 2 * n * k];
    let mut d = vec![0.0f32; n * k / 256];
    let mut wide = [0i32; 256];
    for ((xg, qg), dg) in x.chunks_exact(256).zip(q.chunks_exact_mut(512)).zip(&mut d) {
        (*dg, _) = quantize_group(xg, 2047, &mut wide);
        for (values, planes) in wide.chunks_exact(32).zip(qg.chunks_exact_mut(64)) {
            let (high, low) = planes.split_at_mut(32);
            for ((&v, h), l) in values.iter().zip(high).zip(low) {
                (*h, *l) = split_12bit(v);
            }
        }
    }
    QuantizedActivations {
        q,
        d,
        n,
        k,
        group: 256,
        planes: 2,
    }
}

/// `v = 64 vh + vl` with `vl` in -32..=31 and `vh` in -32..=32, for `v` in -2047..=2047.
pub fn split_12bit(v: i32) -> (i8, i8) {
    let vl = ((v + 32) & 63) - 32;
    ((((v - vl) >> 6) as i8), vl as i8)
}

fn check_shape(x: &[f32], n: usize, k: usize, group: usize) {
    assert!(
        group > 0 && k.is_multiple_of(group),
        "K = {k} is not a multiple of the group {group}"
    );
    assert_eq!(
        x.len(),
        n * k,
        "{} activations given for n = {n}, K = {k}",
        x.len()
    );
}

/// Quantizes `n` tokens of `k` f32 activations (`x` row-major `[n][k]`) in groups of `group` values, exactly as
/// NUMERICS.md 2. Non-finite inputs give unspecified (but deterministic) output.
///
/// # Panics
/// If `group` is 0, `k` is not a multiple of `group`, or `x.len() != n * k`.
pub fn quantize_activations(x: &[f32], n: usize, k: usize, group: usize) -> QuantizedActivations {
    check_shape(x, n, k, group);
    let mut q = vec![0i8; n * k];
    let mut d = vec![0.0f32; n * k / group];
    let mut values = vec![0i32; group];
    for ((xg, qg), dg) in x
        .chunks_exact(group)
        .zip(q.chunks_exact_mut(group))
        .zip(&mut d)
    {
        (*dg, _) = quantize_group(xg, 127, &mut values);
        for (qi, &v) in qg.iter_mut().zip(&values) {
            *qi = v as i8; // |v| <= 127
        }
    }
    QuantizedActivations {
        q,
        d,
        n,
        k,
        group,
        planes: 1,
    }
}

/// Quantizes one group into `q` with `d = div(amax, limit)` (127, or 2047 for the 12-bit mode); returns
/// `(d, amax)`.
fn quantize_group(x: &[f32], limit: i32, q: &mut [i32]) -> (f32, f32) {
    let amax = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if amax == 0.0 {
        q.fill(0);
        return (0.0, amax);
    }
    let d = amax / limit as f32;
    for (qi, &xi) in q.iter_mut().zip(x) {
        *qi = quantize_value(xi, d, limit);
    }
    (d, amax)
}

/// `clamp(rne(div(x, d)), -limit, limit)` through a saturating, NaN-to-0 conversion to int32 (`__float2int_rn`).
fn quantize_value(x: f32, d: f32, limit: i32) -> i32 {
    // `as i32` saturates and maps NaN to 0, exactly as cvt.rni.s32.f32.
    ((x / d).round_ties_even() as i32).clamp(-limit, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_zero_group_gives_zero_scale_and_quants() {
        let mut x = vec![0.0f32; 64];
        x[33] = -0.0;
        x[40] = 3.0;
        let a = quantize_activations(&x, 1, 64, 32);
        assert_eq!(a.d[0].to_bits(), 0.0f32.to_bits());
        assert!(a.q[..32].iter().all(|&q| q == 0));
        assert_eq!(a.d[1], 3.0 / 127.0);
        assert_eq!(a.q[40], 127);
        assert_eq!(a.q[33], 0);
    }

    #[test]
    fn ties_round_to_even() {
        // amax = 127 gives d = 1 exactly, so x / d = x.
        let mut x = vec![0.0f32; 32];
        let cases = [
            (127.0, 127),
            (0.5, 0),
            (1.5, 2),
            (2.5, 2),
            (-0.5, 0),
            (-1.5, -2),
            (-2.5, -2),
            (3.5, 4),
            (126.5, 126),
        ];
        for (i, (v, _)) in cases.iter().enumerate() {
            x[i] = *v;
        }
        let a = quantize_activations(&x, 1, 32, 32);
        assert_eq!(a.d[0], 1.0);
        for (i, (v, want)) in cases.iter().enumerate() {
            assert_eq!(a.q[i], *want, "x = {v}");
        }
    }

    #[test]
    fn quotients_are_ieee_divisions_and_clamped() {
        // amax = 1: d = 1/127 rounded; 1 / d is 127.00000x, which rne takes to 127 and the clamp keeps.
        let d = 1.0f32 / 127.0;
        assert!(1.0f32 / d >= 127.0);
        let x: Vec<f32> = (0..256)
            .map(|i| {
                if i == 7 {
                    -1.0
                } else {
                    (i as f32 * 0.37).sin()
                }
            })
            .collect();
        let a = quantize_activations(&x, 1, 256, 256);
        assert_eq!(a.d[0], d);
        assert_eq!(a.q[7], -127);
        for (i, &xi) in x.iter().enumerate() {
            assert_eq!(
                a.q[i] as f32,
                (xi / d).round_ties_even().clamp(-127.0, 127.0),
                "index {i}"
            );
        }
        // A tie made by the division itself: x / d lands exactly on k + 0.5 only through IEEE division.
        let x = [254.0f32, 1.0, 3.0, 5.0];
        let mut q = [0i32; 4];
        let (d, _) = quantize_group(&x, 127, &mut q);
        assert_eq!(d, 2.0);
        assert_eq!(q, [127, 0, 2, 2]);
    }

    #[test]
    fn tiny_amax_underflowing_d_is_deterministic() {
        // amax = 2^-149: d = 2^-149 / 127 = 0, so x / d is +-inf (clamped) or NaN (0).
        let tiny = f32::from_bits(1);
        let mut x = [0.0f32; 32];
        x[0] = tiny;
        x[1] = -tiny;
        let a = quantize_activations(&x, 1, 32, 32);
        assert_eq!(a.d[0], 0.0);
        assert_eq!((a.q[0], a.q[1], a.q[2]), (127, -127, 0));
    }

    #[test]
    fn layout_is_token_major() {
        let x: Vec<f32> = (0..3 * 512)
            .map(|i| (i as f32 * 0.1).cos() * (1 + i / 512) as f32)
            .collect();
        let a = quantize_activations(&x, 3, 512, 32);
        assert_eq!((a.q.len(), a.d.len()), (3 * 512, 3 * 16));
        for t in 0..3 {
            for g in 0..16 {
                let xs = &x[t * 512 + g * 32..][..32];
                let amax = xs.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                assert_eq!(a.d[t * 16 + g], amax / 127.0);
            }
        }
    }
}
