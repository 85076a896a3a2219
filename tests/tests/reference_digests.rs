//! Digests of the CPU reference on fixed seeded cases, one snapshot per numerics mode and shape.
//!
//! The reference is the contract every kernel is checked against, so an unintended change to its bits (an
//! operation reordered, a rounding changed, a seed stream moved) must show up as a snapshot diff. GPU parity
//! checks the same cases: `mmqgen_reference::digest_case(mode, m, n, k, DIGEST_SEED)` builds the inputs
//! (`random_blocks(m, k, seed)` weights, `activations(n, k, derive_seed(seed, 1), 4)`, quantized with the
//! mode's group) and returns the digest these snapshots record.

use mmqgen::codegen::NumericsMode;
use mmqgen_reference::{digest_case, DIGEST_SEED};

/// (m, n, K): one super-block and one token; then three segments, the last one short, at odd m and n.
const SHAPES: [(usize, usize, usize); 2] = [(64, 1, 256), (100, 7, 2816)];

#[test]
fn reference_digests() {
    for mode in NumericsMode::ALL {
        for (m, n, k) in SHAPES {
            let (digest, out) = digest_case(mode, m, n, k, DIGEST_SEED);
            assert_eq!(out.len(), m * n);
            let snapshot = format!(
                "digest: {digest}\nout[0]: {:?}\nout[last]: {:?}\nout[mid]: {:?}\n",
                out[0],
                out[out.len() - 1],
                out[out.len() / 2],
            );
            insta::assert_snapshot!(format!("{}_m{m}_n{n}_k{k}", mode.keyword()), snapshot);
        }
    }
}
