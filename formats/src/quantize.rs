//! A q6_K quantizer that reproduces ggml's reference quantizer (`quantize_row_q6_K_ref`) byte for byte.
//!
//! Why byte for byte: the project's accuracy numbers and parity tests run on weights quantized here, and they are
//! only comparable with llama.cpp's if the blocks are the ones ggml would write for the same f32 input. The
//! algorithm is ggml's (per 16 weights a least-squares scale search weighted by `x^2`, then one f16 super-block
//! scale and int8 sub-block scales, then a requantization of every weight against the rounded scales); what makes
//! it bit-exact is doing the same f32 operations in the same order. Rust never contracts `a * b + c` into a fused
//! multiply-add, rounding to integers uses ggml's add-a-magic-constant trick (round half to even, and the same
//! result as ggml even outside the trick's valid range), and f32 to f16 rounds to nearest even via `half`.
//! `tests/ggml_fixtures.rs` checks this against blocks written by ggml itself.

use crate::q6k::{BLOCK_BYTES, BLOCK_WEIGHTS, D_OFFSET, QH_OFFSET, QL_OFFSET, SCALES_OFFSET};
use crate::FormatError;
use half::f16;

/// Below this absolute maximum a group counts as all zero (ggml's `GROUP_MAX_EPS`).
const GROUP_MAX_EPS: f32 = 1e-15;

/// The largest magnitude q6_K can hold: f16's largest finite `d` (65504) times 128 (the largest int8 scale
/// step) times 32 (the largest quant), about 2.68e8.
pub const MAX_WEIGHT: f32 = 65504.0 * 128.0 * 32.0;

/// Weights per sub-block, each with its own int8 scale.
const SUB: usize = 16;

/// Half the 6-bit range: quants are stored as `l + 32` with `l` in `-32..=31`.
const NMAX: i32 = 32;

/// Rounds to the nearest integer, ties to even, the way ggml does: adding 1.5 * 2^23 leaves the integer in the
/// low mantissa bits. Exact for `|v| <= 4194303`; outside that it returns the same (meaningless) value ggml's
/// version does, which the callers clamp.
fn nearest_int(v: f32) -> i32 {
    let shifted = v + 12_582_912.0;
    (shifted.to_bits() & 0x007f_ffff) as i32 - 0x0040_0000
}

/// ggml's `make_qx_quants` for 16 values, `nmax = 32`, `rmse_type = 1` and no importance weights, as
/// `quantize_row_q6_K_ref` calls it: picks the scale `s` minimising `sum x^2 (x - s l)^2` over 19 candidate
/// inverse scales around `-32 / max` (max = the value of largest magnitude, sign kept), and writes the quants
/// `l + 32` into `levels`. Returns the scale (0 for an all-zero group).
fn make_qx_quants(x: &[f32; SUB], levels: &mut [u8; SUB]) -> f32 {
    let mut max = 0.0f32;
    let mut amax = 0.0f32;
    for &v in x {
        let av = v.abs();
        if av > amax {
            amax = av;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        levels.fill(0);
        return 0.0;
    }
    let quant = |iscale: f32, v: f32| nearest_int(iscale * v).clamp(-NMAX, NMAX - 1);

    // Start from the plain scale, keeping its quants and the least-squares scale for them.
    let iscale = -(NMAX as f32) / max;
    let mut sumlx = 0.0f32;
    let mut suml2 = 0.0f32;
    for (&v, level) in x.iter().zip(levels.iter_mut()) {
        let l = quant(iscale, v);
        *level = (l + NMAX) as u8;
        let w = v * v;
        let lf = l as f32;
        sumlx += w * v * lf;
        suml2 += w * lf * lf;
    }
    let mut scale = if suml2 != 0.0 { sumlx / suml2 } else { 0.0 };
    let mut best = scale * sumlx;

    // Try inverse scales -(32 + 0.1 is) / max, is = -9..9 except 0; keep one only if it strictly improves
    // sumlx^2 / suml2 (the weighted error drop).
    for is in (-9..=9).filter(|&is| is != 0) {
        let iscale = -(NMAX as f32 + 0.1f32 * is as f32) / max;
        let mut sumlx = 0.0f32;
        let mut suml2 = 0.0f32;
        for &v in x {
            let lf = quant(iscale, v) as f32;
            let w = v * v;
            sumlx += w * v * lf;
            suml2 += w * lf * lf;
        }
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            for (&v, level) in x.iter().zip(levels.iter_mut()) {
                *level = (quant(iscale, v) + NMAX) as u8;
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    scale
}

/// Quantizes 256 weights into one q6_K block exactly as ggml's `quantize_row_q6_K_ref` does.
///
/// Non-finite inputs do not panic but give meaningless blocks; [`quantize_rows`] refuses them.
pub fn quantize_block(x: &[f32; BLOCK_WEIGHTS]) -> [u8; BLOCK_BYTES] {
    let mut levels = [0u8; BLOCK_WEIGHTS];
    let mut scales = [0.0f32; BLOCK_WEIGHTS / SUB];
    let mut max_scale = 0.0f32;
    let mut max_abs_scale = 0.0f32;
    for (ib, (group, group_levels)) in x
        .as_chunks::<SUB>()
        .0
        .iter()
        .zip(levels.as_chunks_mut::<SUB>().0)
        .enumerate()
    {
        let scale = make_qx_quants(group, group_levels);
        scales[ib] = scale;
        let abs_scale = scale.abs();
        if abs_scale > max_abs_scale {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }

    let mut block = [0u8; BLOCK_BYTES];
    if max_abs_scale < GROUP_MAX_EPS {
        // An all-zero block: every byte zero, d = +0.
        return block;
    }

    // One f16 super-block scale; the sub-block scales become int8 relative to it.
    let iscale = -128.0f32 / max_scale;
    let d = f16::from_f32(1.0 / iscale);
    block[D_OFFSET..D_OFFSET + 2].copy_from_slice(&d.to_bits().to_le_bytes());
    let mut int_scales = [0i8; BLOCK_WEIGHTS / SUB];
    for (sc, &scale) in int_scales.iter_mut().zip(&scales) {
        // Stored through a C int -> int8_t conversion: keep the low byte, as ggml's compilers do.
        *sc = nearest_int(iscale * scale).min(127) as i8;
    }
    for (i, &sc) in int_scales.iter().enumerate() {
        block[SCALES_OFFSET + i] = sc as u8;
    }

    // Requantize every weight against the rounded scales; a sub-block whose scale rounded to 0 keeps the quants
    // from the search (they dequantize to 0 either way, but the bytes must match).
    let d = d.to_f32();
    for (j, &sc) in int_scales.iter().enumerate() {
        let dj = d * f32::from(sc);
        if dj == 0.0 {
            continue;
        }
        for ii in 0..SUB {
            let l = nearest_int(x[SUB * j + ii] / dj).clamp(-NMAX, NMAX - 1);
            levels[SUB * j + ii] = (l + NMAX) as u8;
        }
    }

    // Pack: per half of 128 weights, quarter q of 32 goes to the low (q < 2) or high nibble of ql[l + 32 (q & 1)]
    // and to bits 2q..2q+1 of qh[l].
    for half in 0..2 {
        let base = 128 * half;
        let ql = QL_OFFSET + 64 * half;
        let qh = QH_OFFSET + 32 * half;
        for l in 0..32 {
            let q = |quarter: usize| levels[base + 32 * quarter + l];
            block[ql + l] = (q(0) & 0xF) | ((q(2) & 0xF) << 4);
            block[ql + l + 32] = (q(1) & 0xF) | ((q(3) & 0xF) << 4);
            block[qh + l] =
                (q(0) >> 4) | ((q(1) >> 4) << 2) | ((q(2) >> 4) << 4) | ((q(3) >> 4) << 6);
        }
    }
    block
}

/// Quantizes f32 weights (any number of rows, each a whole number of 256-weight blocks, laid end to end) into
/// q6_K blocks, byte-identical to ggml's `quantize_row_q6_K_ref`.
///
/// Fails if the length is not a multiple of 256, on the first NaN or infinite weight (naming its index), or on
/// the first block whose weights are too large for q6_K's f16 scale (naming the block).
pub fn quantize_rows(weights: &[f32]) -> Result<Vec<u8>, FormatError> {
    let (blocks, rest) = weights.as_chunks::<BLOCK_WEIGHTS>();
    if !rest.is_empty() {
        return Err(FormatError::WeightCount { len: weights.len() });
    }
    if let Some(index) = weights.iter().position(|w| !w.is_finite()) {
        return Err(FormatError::NonFinite {
            index,
            value: weights[index],
        });
    }
    let mut out = Vec::with_capacity(blocks.len() * BLOCK_BYTES);
    for (index, block) in blocks.iter().enumerate() {
        let bytes = quantize_block(block);
        // Finite weights can still need a super-block scale past f16's range (|w| above about 2.68e8): ggml
        // would write d = inf, which dequantizes to NaN; refuse instead.
        // Far larger weights (|w| above about 1.8e19, whose squares overflow f32) even lose their scales in
        // the search and would come out as an all-zero block: refuse those by their magnitude.
        let d = f16::from_le_bytes([bytes[D_OFFSET], bytes[D_OFFSET + 1]]);
        let amax = block.iter().fold(0.0f32, |m, w| m.max(w.abs()));
        if !d.is_finite() || amax > MAX_WEIGHT {
            return Err(FormatError::ScaleOverflow { block: index, amax });
        }
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::q6k::{dequantize_rows, Q6kBlock};

    #[test]
    fn nearest_int_rounds_half_to_even() {
        let cases = [
            (0.5, 0),
            (1.5, 2),
            (2.5, 2),
            (-0.5, 0),
            (-1.5, -2),
            (3.49, 3),
            (-31.6, -32),
            (4194303.0, 4194303),
        ];
        for (v, want) in cases {
            assert_eq!(nearest_int(v), want, "nearest_int({v})");
        }
    }

    #[test]
    fn nearest_int_out_of_range_matches_the_bit_trick() {
        // Far outside the valid range the result is what the C trick yields; callers clamp it.
        assert_eq!(nearest_int(f32::INFINITY), -0x0040_0000);
        assert_eq!(nearest_int(1e30), {
            let bits = (1e30f32 + 12_582_912.0).to_bits();
            (bits & 0x007f_ffff) as i32 - 0x0040_0000
        });
    }

    #[test]
    fn rejects_bad_lengths_and_non_finite_weights() {
        assert_eq!(
            quantize_rows(&[0.0; 255]),
            Err(FormatError::WeightCount { len: 255 })
        );
        let mut w = vec![0.1f32; 512];
        w[300] = f32::NAN;
        w[400] = f32::INFINITY;
        match quantize_rows(&w) {
            Err(FormatError::NonFinite { index: 300, value }) => assert!(value.is_nan()),
            other => panic!("expected a NaN at 300, got {other:?}"),
        }
        w[300] = 0.0;
        let err = quantize_rows(&w).unwrap_err();
        assert_eq!(
            err,
            FormatError::NonFinite {
                index: 400,
                value: f32::INFINITY
            }
        );
        assert_eq!(
            err.to_string(),
            "weight 400 is inf, but only finite weights can be quantized to q6_K"
        );
        assert_eq!(quantize_rows(&[]), Ok(vec![]));
    }

    #[test]
    fn zero_block_is_all_zero_bytes() {
        assert_eq!(quantize_block(&[0.0; 256]), [0u8; BLOCK_BYTES]);
        assert_eq!(quantize_block(&[1e-20; 256]), [0u8; BLOCK_BYTES]);
    }

    #[test]
    fn round_trip_error_is_small_and_extremes_survive() {
        let x: [f32; 256] =
            std::array::from_fn(|i| ((i as f32) * 0.37).sin() * (1.0 + (i % 16) as f32));
        let block = quantize_block(&x);
        let y = dequantize_rows(&block).unwrap();
        let err: f32 = x.iter().zip(&y).map(|(a, b)| (a - b) * (a - b)).sum();
        let norm: f32 = x.iter().map(|a| a * a).sum();
        assert!(err / norm < 1e-3, "relative error {}", err / norm);
        let v = Q6kBlock::from_array(&block);
        assert!(v.d().is_finite() && v.d() != 0.0);
        // Huge and tiny finite values never panic.
        let _ = quantize_block(&std::array::from_fn(|i| {
            if i % 2 == 0 {
                f32::MAX
            } else {
                -f32::MAX
            }
        }));
        let _ = quantize_block(&std::array::from_fn(|i| f32::from_bits(i as u32 + 1)));
    }
}
