// Not part of the build: copy to reference/examples/ and run `cargo run --release -p mmqgen-reference --example multiples_estimate`.
//! Session 22 estimate (docs/PERF.md log 42): the activation-side NMSE of per-32 scales restricted to integer
//! multiples m[c] in 1..=M of one scale D per group of G (D = the group's largest per-32 step / M, m[c] the
//! smallest multiple at least the chunk's own step), against plain per-32 and per-64, in f64 (no kernel rounding).
use mmqgen_reference::accuracy::f64_reference;
use mmqgen_reference::data::{activations, weights_q6k, ACTIVATION_STREAM};
use mmqgen_reference::rng::derive_seed;

fn quantize(x: &[f32], group: usize, multiples: Option<(usize, u32)>) -> Vec<f64> {
    let mut out = vec![0.0f64; x.len()];
    for (g, xs) in x.chunks(group).enumerate() {
        let steps: Vec<f64> = xs
            .chunks(32)
            .map(|c| c.iter().fold(0.0f64, |a, &v| a.max(f64::from(v).abs())) / 127.0)
            .collect();
        let chunk_steps: Vec<f64> = match multiples {
            None => steps.clone(),
            Some((_, most)) => {
                let largest = steps.iter().cloned().fold(0.0, f64::max);
                let base = largest / f64::from(most);
                steps
                    .iter()
                    .map(|&s| if base == 0.0 { 0.0 } else { base * (s / base).ceil().clamp(1.0, f64::from(most)) })
                    .collect()
            }
        };
        for (c, xc) in xs.chunks(32).enumerate() {
            let d = chunk_steps[c];
            for (i, &v) in xc.iter().enumerate() {
                let q = if d == 0.0 { 0.0 } else { (f64::from(v) / d).round().clamp(-127.0, 127.0) };
                out[g * group + c * 32 + i] = q * d;
            }
        }
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
        let per = |g: usize| nmse(&x.chunks(k).flat_map(|row| quantize(row, g, None).into_iter().map(|v| v / 1.0)).collect::<Vec<_>>());
        let p32 = per(32);
        print!("{outliers} outliers/4096: per-32 {p32:.3e}");
        // per-64 as one step per 64 values
        let p64 = nmse(&x.chunks(k).flat_map(|row| quantize(row, 64, Some((64, 1)))).collect::<Vec<_>>());
        print!(", per-64 {p64:.3e}");
        for (g, most) in [(256, 15), (256, 7), (256, 31), (64, 15), (128, 15)] {
            let e = nmse(&x.chunks(k).flat_map(|row| quantize(row, g, Some((g, most)))).collect::<Vec<_>>());
            print!(", m<={most} per {g}: {e:.3e} ({:.2}x)", e / p32);
        }
        println!();
    }
}
