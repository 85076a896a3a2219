// Not part of the build: copy to reference/examples/ and run `cargo run --release -p mmqgen-reference --example wide_estimate`.
//! Session 23 estimate (docs/PERF.md log 43): the activation-side NMSE of one scale per 256 values with wider
//! integers, `d = amax / L`, `v = rne(x / d)` clamped to +-L (L = 127 is int_per256; L = 511, 1023, 2047 the 10-,
//! 11- and 12-bit forms that two int8 planes `v = 64 vh + vl` carry), against per-32 int8, in f64.
use mmqgen_reference::accuracy::f64_reference;
use mmqgen_reference::data::{activations, weights_q6k, ACTIVATION_STREAM};
use mmqgen_reference::rng::derive_seed;

fn quantize(x: &[f32], group: usize, largest: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for xs in x.chunks(group) {
        let d = xs.iter().fold(0.0f64, |a, &v| a.max(f64::from(v).abs())) / largest;
        out.extend(xs.iter().map(|&v| {
            if d == 0.0 {
                0.0
            } else {
                (f64::from(v) / d).round_ties_even().clamp(-largest, largest) * d
            }
        }));
    }
    out
}

fn main() {
    let (m, n, k, seed) = (256, 64, 4096, 7);
    let raw = weights_q6k(m, k, seed);
    let w = mmqgen_formats::dequantize_rows(&raw).unwrap();
    for outliers in [4, 16] {
        let x = activations(n, k, derive_seed(seed, ACTIVATION_STREAM), outliers);
        let reference = f64_reference(&raw, m, n, k, &x);
        let nmse = |xq: &[f64]| {
            let (mut e, mut r2) = (0.0, 0.0);
            for t in 0..n {
                for j in 0..m {
                    let v: f64 = (0..k).map(|i| f64::from(w[j * k + i]) * xq[t * k + i]).sum();
                    let r = reference[t * m + j];
                    e += (v - r) * (v - r);
                    r2 += r * r;
                }
            }
            e / r2
        };
        let p32 = nmse(&quantize(&x, 32, 127.0));
        print!("{outliers} outliers/4096: per-32 int8 {p32:.3e}");
        for largest in [127.0, 511.0, 1023.0, 2047.0] {
            let e = nmse(&quantize(&x, 256, largest));
            print!(", per-256 +-{largest}: {e:.3e} ({:.3}x)", e / p32);
        }
        println!();
    }
}
