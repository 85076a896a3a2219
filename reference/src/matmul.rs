//! The bit-exact reference matmul of each numerics mode, replaying NUMERICS.md 3-5 operation by operation.
//!
//! Every kernel variant of a mode must reproduce these bits, so nothing here is clever about floats: the exact
//! integer sums `I16`, `I32`, `I256` are computed in i32 (their bounds, NUMERICS.md 3, keep them exact), every
//! float operation is one of `f32::mul_add` (a single-rounding fma, `__fmaf_rn`), `*` (`__fmul_rn`), `+`
//! (`__fadd_rn`) and `i32 as f32` (round to nearest even, `__int2float_rn`), in the written order. K is cut into
//! segments of [`SEGMENT_SUPERBLOCKS`] super-blocks, each summed from +0.0, added left to right into `out = +0.0`.
//! Speed comes only from decoding each weight row once and from running tokens on two threads, neither of which
//! touches the order of float operations.

use crate::activations::QuantizedActivations;
use mmqgen_codegen::{NumericsMode, SEGMENT_SUPERBLOCKS};
use mmqgen_formats::q6k::{blocks, BLOCK_BYTES, BLOCK_WEIGHTS};

/// Weight rows decoded once: `w = q6 - 32` as `[rows][K]`, scales `[rows][K/16]`, `d` as `[rows][K/256]`, and
/// the `f32_per16` products `mul(d, sc)` as `[rows][K/16]`.
struct Decoded {
    k: usize,
    w: Vec<i8>,
    sc: Vec<i8>,
    d: Vec<f32>,
    dsc: Vec<f32>,
}

impl Decoded {
    fn new(raw_rows: &[u8], k: usize) -> Self {
        let nblocks = raw_rows.len() / BLOCK_BYTES;
        let mut dec = Decoded {
            k,
            w: Vec::with_capacity(nblocks * BLOCK_WEIGHTS),
            sc: Vec::with_capacity(nblocks * 16),
            d: Vec::with_capacity(nblocks),
            dsc: Vec::with_capacity(nblocks * 16),
        };
        for block in blocks(raw_rows).expect("whole blocks") {
            let (d, sc) = (block.d(), block.scales());
            dec.w.extend((0..BLOCK_WEIGHTS).map(|i| block.q6(i)));
            dec.sc.extend_from_slice(&sc);
            dec.d.push(d);
            dec.dsc.extend(sc.iter().map(|&s| d * f32::from(s)));
        }
        dec
    }

    /// The output of decoded row `j` against token `x` (quants `[K]`, or `[2K]` in planes; scales `[K/G]`).
    fn dot(&self, j: usize, xq: &[i8], xd: &[f32], mode: NumericsMode) -> f32 {
        let (k, nsb) = (self.k, self.k / BLOCK_WEIGHTS);
        let w = &self.w[j * k..][..k];
        let sc = &self.sc[j * k / 16..][..k / 16];
        let dsc = &self.dsc[j * k / 16..][..k / 16];
        let d = &self.d[j * nsb..][..nsb];
        let seg_blocks = SEGMENT_SUPERBLOCKS as usize;
        let mut out = 0.0f32;
        for seg_start in (0..nsb).step_by(seg_blocks) {
            let mut seg = 0.0f32;
            for b in seg_start..nsb.min(seg_start + seg_blocks) {
                let dw = d[b];
                if mode == NumericsMode::Int12Per256 {
                    let s = i12_sum(
                        &w[b * 256..][..256],
                        &sc[b * 16..][..16],
                        &xq[b * 512..][..512],
                    );
                    seg = (dw * xd[b]).mul_add(s as f32, seg);
                    continue;
                }
                let i16s = i16_sums(&w[b * 256..][..256], &xq[b * 256..][..256]);
                match mode {
                    NumericsMode::F32Per16 => {
                        for c in 0..8 {
                            let (dsc0, dsc1) = (dsc[b * 16 + 2 * c], dsc[b * 16 + 2 * c + 1]);
                            let v = dsc1.mul_add(i16s[2 * c + 1] as f32, dsc0 * i16s[2 * c] as f32);
                            seg = xd[b * 8 + c].mul_add(v, seg);
                        }
                    }
                    NumericsMode::IntPer32 => {
                        let mut acc = 0.0f32;
                        for c in 0..8 {
                            let i32c = i32_sum(&i16s, &sc[b * 16..][..16], c);
                            acc = xd[b * 8 + c].mul_add(i32c as f32, acc);
                        }
                        seg = dw.mul_add(acc, seg);
                    }
                    NumericsMode::IntPer256 => {
                        let i256: i32 =
                            (0..8).map(|c| i32_sum(&i16s, &sc[b * 16..][..16], c)).sum();
                        seg = (dw * xd[b]).mul_add(i256 as f32, seg);
                    }
                    NumericsMode::Int12Per256 => unreachable!("summed above"),
                }
            }
            out += seg;
        }
        out
    }
}

/// `I16[s]` for the 16 sub-blocks of one super-block (|I16| <= 32 * 127 * 16 < 2^16).
#[inline]
fn i16_sums(w: &[i8], x: &[i8]) -> [i32; 16] {
    let (w, x) = (w.as_chunks::<16>().0, x.as_chunks::<16>().0);
    std::array::from_fn(|s| {
        w[s].iter()
            .zip(&x[s])
            .map(|(&a, &b)| i32::from(a) * i32::from(b))
            .sum()
    })
}

/// `int12_per256`'s `S = sum sc[s] * sum_{i in s} w_i * v_i` over one super-block, `v = 64 vh + vl` from the
/// chunk-interleaved planes (`[8][vh 32 | vl 32]`). Exact in i32: `|S| <= 256 * 4096 * 2047 < 2^31`, and every
/// partial sum is bounded by the same.
#[inline]
fn i12_sum(w: &[i8], sc: &[i8], planes: &[i8]) -> i32 {
    (0..16)
        .map(|s| {
            let (c, half) = (s / 2, 16 * (s % 2));
            let (high, low) = (
                &planes[64 * c + half..][..16],
                &planes[64 * c + 32 + half..][..16],
            );
            let sub: i32 = w[16 * s..][..16]
                .iter()
                .zip(high.iter().zip(low))
                .map(|(&wi, (&vh, &vl))| i32::from(wi) * (64 * i32::from(vh) + i32::from(vl)))
                .sum();
            i32::from(sc[s]) * sub
        })
        .sum()
}

/// `I32[c] = sc[2c] * I16[2c] + sc[2c+1] * I16[2c+1]` (|I32| < 2^24).
#[inline]
fn i32_sum(i16s: &[i32; 16], sc: &[i8], c: usize) -> i32 {
    i32::from(sc[2 * c]) * i16s[2 * c] + i32::from(sc[2 * c + 1]) * i16s[2 * c + 1]
}

fn check_inputs(
    weights_raw: &[u8],
    m: usize,
    n: usize,
    k: usize,
    acts: &QuantizedActivations,
    mode: NumericsMode,
) {
    assert!(
        k.is_multiple_of(BLOCK_WEIGHTS),
        "K = {k} is not a multiple of 256"
    );
    assert_eq!(
        weights_raw.len(),
        m * (k / BLOCK_WEIGHTS) * BLOCK_BYTES,
        "the weights are not m = {m} rows of K = {k} in q6_K blocks"
    );
    let group = mode.activation_group() as usize;
    let planes = mode.activation_planes() as usize;
    assert_eq!(
        (acts.group, acts.planes),
        (group, planes),
        "{mode} needs activations quantized in groups of {group}, {planes} plane(s)"
    );
    assert_eq!(
        (acts.n, acts.k),
        (n, k),
        "the activations are not n = {n} tokens of K = {k}"
    );
    assert_eq!(
        (acts.q.len(), acts.d.len()),
        (n * k * planes, n * k / group),
        "inconsistent QuantizedActivations"
    );
}

/// One output of the reference matmul: weight row `row` against token `token` (for sampled parity at large
/// shapes; decodes only that row). Bit-identical to `reference_matmul(..)[token * m + row]`.
///
/// # Panics
/// On inconsistent shapes, `acts.group` not the mode's `G`, or `row >= m` / `token >= acts.n`.
pub fn reference_output(
    weights_raw: &[u8],
    m: usize,
    k: usize,
    acts: &QuantizedActivations,
    mode: NumericsMode,
    row: usize,
    token: usize,
) -> f32 {
    check_inputs(weights_raw, m, acts.n, k, acts, mode);
    assert!(
        row < m && token < acts.n,
        "output ({token}, {row}) is outside n = {} by m = {m}",
        acts.n
    );
    let row_bytes = k / BLOCK_WEIGHTS * BLOCK_BYTES;
    let dec = Decoded::new(&weights_raw[row * row_bytes..][..row_bytes], k);
    let (g, p) = (acts.group, acts.planes);
    dec.dot(
        0,
        &acts.q[token * k * p..][..k * p],
        &acts.d[token * k / g..][..k / g],
        mode,
    )
}

/// The reference matmul: f32 `[n][m]` row-major (leading dimension `m`), bit for bit what every variant of `mode`
/// must write. Weights are raw GGUF rows (`m` rows of `K / 256` blocks of 210 bytes); tokens run on two threads.
///
/// # Panics
/// On inconsistent shapes or `acts.group` not the mode's `G`.
pub fn reference_matmul(
    weights_raw: &[u8],
    m: usize,
    n: usize,
    k: usize,
    acts: &QuantizedActivations,
    mode: NumericsMode,
) -> Vec<f32> {
    check_inputs(weights_raw, m, n, k, acts, mode);
    let mut out = vec![0.0f32; n * m];
    if m == 0 || n == 0 {
        return out;
    }
    let dec = Decoded::new(weights_raw, k);
    let (g, p) = (acts.group, acts.planes);
    let run = |t0: usize, out: &mut [f32]| {
        for (dt, row) in out.chunks_exact_mut(m).enumerate() {
            let t = t0 + dt;
            let (xq, xd) = (&acts.q[t * k * p..][..k * p], &acts.d[t * k / g..][..k / g]);
            for (j, o) in row.iter_mut().enumerate() {
                *o = dec.dot(j, xq, xd, mode);
            }
        }
    };
    // Tokens 0..half on this thread, half..n on a second one; each output is computed whole by one thread.
    let half = n.div_ceil(2);
    let (first, second) = out.split_at_mut(half * m);
    if second.is_empty() {
        run(0, first);
    } else {
        std::thread::scope(|s| {
            s.spawn(|| run(half, second));
            run(0, first);
        });
    }
    out
}

/// The `mma_k32_fold` split of `v = sc * w` into two int8 planes: `h = (v + 32) >> 6`, `l = v - 64 h`, so that
/// `64 h + l == v` with `l` in -32..=31. Every `sc` in -128..=127 times `w` in -32..=31 fits (h in -62..=64).
///
/// # Panics
/// If `h` does not fit in i8 (`v` outside -8224..=8159).
pub fn fold(v: i32) -> (i8, i8) {
    let h = (v + 32) >> 6;
    let l = v - 64 * h;
    let h = i8::try_from(h).unwrap_or_else(|_| panic!("fold({v}): h = {h} does not fit in int8"));
    (h, l as i8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activations::{quantize_activations, quantize_activations_for};
    use crate::data::{activations, random_blocks};
    use mmqgen_formats::q6k::Q6kBlock;

    /// NUMERICS.md 3-5 written out element by element, straight from the blocks: no decoding ahead, no reuse.
    fn slow(
        raw: &[u8],
        m: usize,
        n: usize,
        k: usize,
        a: &QuantizedActivations,
        mode: NumericsMode,
    ) -> Vec<f32> {
        let nsb = k / 256;
        let g = mode.activation_group() as usize;
        let mut out = vec![f32::NAN; n * m];
        for t in 0..n {
            for j in 0..m {
                let blk = |b: usize| {
                    Q6kBlock::new(&raw[(j * nsb + b) * 210..(j * nsb + b + 1) * 210]).unwrap()
                };
                // 12-bit values are 64 vh + vl from the chunk's two planes ([K / 32][vh 32 | vl 32]).
                let x = |kk: usize| match mode {
                    NumericsMode::Int12Per256 => {
                        let at = t * 2 * k + 64 * (kk / 32) + kk % 32;
                        64 * a.q[at] as i32 + a.q[at + 32] as i32
                    }
                    _ => a.q[t * k + kk] as i32,
                };
                let i16_of = |b: usize, s: usize| -> i32 {
                    (0..16)
                        .map(|i| blk(b).q6(16 * s + i) as i32 * x(256 * b + 16 * s + i))
                        .sum()
                };
                let i32_of = |b: usize, c: usize| -> i32 {
                    blk(b).scale(2 * c) as i32 * i16_of(b, 2 * c)
                        + blk(b).scale(2 * c + 1) as i32 * i16_of(b, 2 * c + 1)
                };
                let mut o = 0.0f32;
                let nseg = nsb.div_ceil(4);
                for sgi in 0..nseg {
                    let mut seg = 0.0f32;
                    for b in 4 * sgi..(4 * sgi + 4).min(nsb) {
                        let dw = blk(b).d();
                        match mode {
                            NumericsMode::F32Per16 => {
                                for c in 0..8 {
                                    let dsc0 = dw * blk(b).scale(2 * c) as f32;
                                    let dsc1 = dw * blk(b).scale(2 * c + 1) as f32;
                                    let v = dsc1.mul_add(
                                        i16_of(b, 2 * c + 1) as f32,
                                        dsc0 * i16_of(b, 2 * c) as f32,
                                    );
                                    let da = a.d[t * (k / g) + (256 * b + 32 * c) / g];
                                    seg = da.mul_add(v, seg);
                                }
                            }
                            NumericsMode::IntPer32 => {
                                let mut acc = 0.0f32;
                                for c in 0..8 {
                                    let da = a.d[t * (k / g) + (256 * b + 32 * c) / g];
                                    acc = da.mul_add(i32_of(b, c) as f32, acc);
                                }
                                seg = dw.mul_add(acc, seg);
                            }
                            NumericsMode::IntPer256 | NumericsMode::Int12Per256 => {
                                let i256: i64 = (0..8).map(|c| i32_of(b, c) as i64).sum();
                                assert!(i256.abs() < 1 << 31);
                                let da = a.d[t * (k / g) + 256 * b / g];
                                seg = (dw * da).mul_add(i256 as i32 as f32, seg);
                            }
                        }
                    }
                    o += seg;
                }
                out[t * m + j] = o;
            }
        }
        out
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn every_mode_matches_the_slow_implementation() {
        for (m, n, k, seed) in [
            (1, 1, 256, 1),
            (5, 3, 256, 2),
            (7, 2, 1280, 3),
            (13, 5, 1280, 4),
            (3, 1, 2304, 5),
        ] {
            let raw = random_blocks(m, k, seed);
            let x = activations(n, k, seed + 100, 4);
            for mode in NumericsMode::ALL {
                let a = quantize_activations_for(&x, n, k, mode);
                let fast = reference_matmul(&raw, m, n, k, &a, mode);
                let want = slow(&raw, m, n, k, &a, mode);
                assert_eq!(bits(&fast), bits(&want), "{mode} m={m} n={n} K={k}");
                assert!(fast.iter().all(|v| v.is_finite()));
                for (t, j) in [(0, 0), (n - 1, m - 1), (n / 2, m / 2)] {
                    let one = reference_output(&raw, m, k, &a, mode, j, t);
                    assert_eq!(one.to_bits(), fast[t * m + j].to_bits());
                }
            }
        }
    }

    #[test]
    fn modes_differ_and_segments_matter() {
        // The three modes are different float sequences: on random blocks they must not agree everywhere.
        let (m, n, k) = (16, 3, 1280);
        let raw = random_blocks(m, k, 9);
        let x = activations(n, k, 10, 16);
        let out: Vec<Vec<f32>> = NumericsMode::ALL
            .iter()
            .map(|&mode| {
                reference_matmul(
                    &raw,
                    m,
                    n,
                    k,
                    &quantize_activations_for(&x, n, k, mode),
                    mode,
                )
            })
            .collect();
        assert_ne!(bits(&out[0]), bits(&out[1]));
        assert_ne!(bits(&out[1]), bits(&out[2]));
        // One flat sum over all 5 super-blocks (no segments) differs from the segmented order somewhere.
        let a = quantize_activations(&x, n, k, 32);
        let mut differs = false;
        for t in 0..n {
            for j in 0..m {
                let mut flat = 0.0f32;
                for b in 0..5 {
                    let blk = Q6kBlock::new(&raw[(j * 5 + b) * 210..][..210]).unwrap();
                    let mut acc = 0.0f32;
                    for c in 0..8 {
                        let i: i32 = (0..32)
                            .map(|i| {
                                blk.scale(2 * c + i / 16) as i32
                                    * blk.q6(32 * c + i) as i32
                                    * a.q[t * k + 256 * b + 32 * c + i] as i32
                            })
                            .sum();
                        acc = a.d[t * 40 + b * 8 + c].mul_add(i as f32, acc);
                    }
                    flat = blk.d().mul_add(acc, flat);
                }
                differs |= flat.to_bits() != out[1][t * m + j].to_bits();
            }
        }
        assert!(
            differs,
            "segmenting never changed a bit; the test data is too tame"
        );
    }

    #[test]
    fn zero_activation_groups_and_empty_shapes() {
        let (m, n, k) = (3, 2, 512);
        let raw = random_blocks(m, k, 1);
        let x = vec![0.0f32; n * k];
        for mode in NumericsMode::ALL {
            let a = quantize_activations_for(&x, n, k, mode);
            let out = reference_matmul(&raw, m, n, k, &a, mode);
            assert!(
                out.iter().all(|v| v.to_bits() == 0),
                "{mode}: +0.0 everywhere"
            );
            let a0 = quantize_activations_for(&[], 0, k, mode);
            assert!(reference_matmul(&raw, m, 0, k, &a0, mode).is_empty());
        }
    }

    #[test]
    #[should_panic(expected = "groups of 256")]
    fn wrong_group_is_refused() {
        let raw = random_blocks(1, 256, 1);
        let a = quantize_activations(&[1.0; 256], 1, 256, 32);
        reference_matmul(&raw, 1, 1, 256, &a, NumericsMode::IntPer256);
    }

    #[test]
    fn mul_add_is_a_single_rounding_fma() {
        // a * a = 1 + 2^-22 + 2^-46 exactly; a separate multiply drops the 2^-46, a fused one keeps it.
        let a = 1.0f32 + f32::EPSILON;
        assert_eq!(a.mul_add(a, -(a * a)), 2f32.powi(-46));
    }

    #[test]
    fn fold_identity_holds_for_every_scale_and_weight() {
        for sc in -128i32..=127 {
            for w in -32i32..=31 {
                let v = sc * w;
                let (h, l) = fold(v);
                assert_eq!(64 * h as i32 + l as i32, v, "sc={sc} w={w}");
                assert_eq!(
                    ((v + 32) >> 6, v - 64 * ((v + 32) >> 6)),
                    (h as i32, l as i32)
                );
                assert!((-32..=31).contains(&(l as i32)));
            }
        }
        assert_eq!(fold(4096), (64, 0));
        assert_eq!(fold(-3968), (-62, 0));
        assert_eq!(fold(8159), (127, 31));
        assert_eq!(fold(-8224), (-128, -32));
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn fold_out_of_range_panics() {
        fold(8160);
    }
}
