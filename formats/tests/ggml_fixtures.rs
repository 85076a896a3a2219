//! The quantizer and the dequantizer against ggml's own output (tests/fixtures/q6k-ggml-ref, a copy of ggml's output produced by ggml's
//! `quantize_row_q6_K_ref` and `dequantize_row_q6_K` built without fused multiply-adds): bytes and bits must be
//! identical. A missing fixture folder fails the test; it never skips.

use std::path::{Path, PathBuf};

use mmqgen_formats::q6k::{dequantize_rows, BLOCK_BYTES, BLOCK_WEIGHTS};
use mmqgen_formats::quantize::quantize_rows;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/q6k-ggml-ref");
const ROWS: usize = 172;

fn read(name: &str) -> Vec<u8> {
    let dir = Path::new(FIXTURES);
    assert!(
        dir.is_dir(),
        "the ggml q6_K fixtures are missing: expected the folder {} (formats/tests/fixtures/q6k-ggml-ref in the repo)",
        dir.display()
    );
    let path: PathBuf = dir.join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()))
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    assert_eq!(
        bytes.len() % 4,
        0,
        "an f32 fixture must be a multiple of 4 bytes"
    );
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn quantizer_is_byte_identical_to_ggml() {
    let input = f32s(&read("input.f32"));
    let want = read("ggml.q6k");
    assert_eq!(
        input.len(),
        ROWS * BLOCK_WEIGHTS,
        "input.f32 should hold {ROWS} rows of 256"
    );
    assert_eq!(
        want.len(),
        ROWS * BLOCK_BYTES,
        "ggml.q6k should hold {ROWS} blocks"
    );

    let got = quantize_rows(&input).expect("the fixture input is finite and whole blocks");
    assert_eq!(got.len(), want.len());
    let mismatched: Vec<usize> = (0..ROWS)
        .filter(|&r| {
            got[r * BLOCK_BYTES..(r + 1) * BLOCK_BYTES]
                != want[r * BLOCK_BYTES..(r + 1) * BLOCK_BYTES]
        })
        .collect();
    if let Some(&row) = mismatched.first() {
        let base = row * BLOCK_BYTES;
        let byte = (0..BLOCK_BYTES)
            .find(|&b| got[base + b] != want[base + b])
            .unwrap_or(0);
        let field = match byte {
            0..=127 => "ql",
            128..=191 => "qh",
            192..=207 => "scales",
            _ => "d",
        };
        panic!(
            "{} of {ROWS} rows differ from ggml; first: row {row}, byte {byte} ({field}): ours {:#04x}, ggml {:#04x}; rows: {:?}",
            mismatched.len(),
            got[base + byte],
            want[base + byte],
            mismatched
        );
    }
}

#[test]
fn dequantizer_is_bit_identical_to_ggml() {
    let blocks = read("ggml.q6k");
    let want = f32s(&read("ggml_dequant.f32"));
    let got = dequantize_rows(&blocks).expect("whole blocks");
    assert_eq!(
        got.len(),
        want.len(),
        "ggml_dequant.f32 should hold {ROWS} rows of 256"
    );
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!(
            "dequantization differs from ggml at row {}, weight {}: ours {:e} ({:#010x}), ggml {:e} ({:#010x})",
            i / BLOCK_WEIGHTS,
            i % BLOCK_WEIGHTS,
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits()
        );
    }
}

#[test]
fn quantizer_error_matches_the_fixture_readme() {
    // The README gives ggml's relative error per row group; ours must be the same (it is the same bytes), and
    // this catches a fixture swapped for other data.
    let input = f32s(&read("input.f32"));
    let deq = dequantize_rows(&quantize_rows(&input).expect("finite")).expect("whole blocks");
    let rel = |rows: std::ops::Range<usize>| {
        let r = rows.start * BLOCK_WEIGHTS..rows.end * BLOCK_WEIGHTS;
        let err: f64 = input[r.clone()]
            .iter()
            .zip(&deq[r.clone()])
            .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
            .sum();
        let norm: f64 = input[r].iter().map(|&a| f64::from(a).powi(2)).sum();
        err / norm
    };
    for (rows, want) in [(0..64, 3.15e-4), (64..128, 6.03e-4), (128..160, 1.02e-3)] {
        let got = rel(rows.clone());
        assert!(
            (got - want).abs() / want < 0.01,
            "rows {rows:?}: relative error {got:.3e}, README says {want:.2e}"
        );
    }
}
