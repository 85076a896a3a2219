//! Prints the accuracy table of NUMERICS.md 6 (m=256, n=64, K=4096, seed 7) and times the reference matmul.
//!
//! `cargo run -p mmqgen-reference --release --example accuracy`

use mmqgen_codegen::NumericsMode;
use mmqgen_reference::{
    accuracy_markdown, accuracy_table, activations, quantize_activations_for, random_blocks,
    reference_matmul,
};
use std::time::Instant;

fn main() {
    let start = Instant::now();
    let rows = accuracy_table(256, 64, 4096, 7);
    print!("{}", accuracy_markdown(&rows));
    for r in &rows {
        println!(
            "{}: nmse_4 = {:e}, nmse_16 = {:e}, passes_gate = {}",
            r.mode, r.nmse_4, r.nmse_16, r.passes_gate
        );
    }
    println!("table: {:.3} s", start.elapsed().as_secs_f64());

    let (m, n, k) = (1000, 77, 2816);
    let raw = random_blocks(m, k, 1);
    let x = activations(n, k, 2, 4);
    for mode in NumericsMode::ALL {
        let a = quantize_activations_for(&x, n, k, mode);
        let start = Instant::now();
        let out = reference_matmul(&raw, m, n, k, &a, mode);
        println!(
            "{mode}: m={m} n={n} K={k} in {:.3} s ({})",
            start.elapsed().as_secs_f64(),
            out.len()
        );
    }
}
