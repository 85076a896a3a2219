//! Batch invariance through the library (issue 54, target 3; docs/DESIGN.md D16): with the embedded
//! batch-invariant selection (`Mmq::batch_invariant`, runtime/batch_invariant.toml), one token's output row has the
//! same bits when it is called alone (n = 1: an int12 ring), as row 37 of 129 tokens and as row 500 of 2048 (the
//! int12 warpgroup tiles), on raw and on padded registrations, and those bits are the CPU reference's. Without a GPU
//! it says so (and fails under MMQGEN_REQUIRE_GPU=1).

use mmqgen::codegen::NumericsMode;
use mmqgen::reference::{digest_case_inputs, quantize_activations_for, reference_matmul};
use mmqgen::{Layout, Mmq};

fn gpu_or_skip(test: &str) -> Option<Mmq> {
    match Mmq::batch_invariant(0) {
        Ok(mmq) => Some(mmq),
        Err(e) => {
            mmqgen::testing::skip_or_fail("MMQGEN_REQUIRE_GPU", test, &format!("no CUDA GPU: {e}"));
            None
        }
    }
}

/// The token's place in each call: (n, row).
const PLACES: [(usize, usize); 3] = [(1, 0), (129, 37), (2048, 500)];

#[test]
fn a_tokens_row_has_the_same_bits_at_every_batch_size() {
    let test = "a_tokens_row_has_the_same_bits_at_every_batch_size";
    let Some(mmq) = gpu_or_skip(test) else {
        return;
    };
    if mmq.arch() != mmqgen::Arch::Sm90 {
        mmqgen::testing::skip_or_fail(
            "MMQGEN_REQUIRE_GPU",
            test,
            &format!(
                "the batch-invariant selection has rules for sm_90 only; this GPU is {}",
                mmq.arch()
            ),
        );
        return;
    }
    // One token alone takes a ring (fused at K = 4096: 32 and 112 rows; K split in four at K = 14336).
    for (m, k) in [(4096, 4096), (14336, 4096), (4096, 14336)] {
        let (raw, x) = digest_case_inputs(m, 2048, k, 54);
        let token = x[500 * k..501 * k].to_vec();
        let acts = quantize_activations_for(&token, 1, k, NumericsMode::Int12Per256);
        let want = reference_matmul(&raw, m, 1, k, &acts, NumericsMode::Int12Per256);
        let stream = mmq.gpu().context().new_stream().expect("a stream");
        for layout in [Layout::Raw, Layout::Padded] {
            let matrix = mmq.register(&raw, m, k, layout).expect("registration");
            for (n, row) in PLACES {
                // The token at `row`, the others from the same seeded inputs.
                let mut batch = x[..n * k].to_vec();
                batch[row * k..(row + 1) * k].copy_from_slice(&token);
                let x_device = stream.clone_htod(&batch).unwrap();
                let mut out = stream.alloc_zeros::<f32>(n * m).unwrap();
                let desc = matrix
                    .matmul(&x_device, &mut out, n, &stream)
                    .expect("matmul");
                assert_eq!(
                    desc.mode,
                    NumericsMode::Int12Per256,
                    "{m} x {n} x {k}, {layout:?}: variant {}",
                    desc.name
                );
                let got = stream.clone_dtoh(&out).unwrap();
                let got = &got[row * m..(row + 1) * m];
                let differ: Vec<usize> = (0..m)
                    .filter(|&j| got[j].to_bits() != want[j].to_bits())
                    .collect();
                assert!(
                    differ.is_empty(),
                    "{m} x {n} x {k}, {layout:?}, variant {}: the token's row (row {row}) differs from its bits \
                     alone (the CPU reference's) at {} of {m} outputs, first at {:?}",
                    desc.name,
                    differ.len(),
                    &differ[..differ.len().min(8)]
                );
            }
        }
    }
}
