//! The CPU reference for mmqgen: what every generated q6_K x int8 kernel must reproduce bit for bit.
//!
//! docs/NUMERICS.md is the contract and this crate replays it operation by operation:
//! - [`mod@activations`]: the activation quantizer (NUMERICS.md 2);
//! - [`matmul`]: the exact integer sums and the float sequence of each numerics mode (NUMERICS.md 3-5);
//! - [`registration`]: the weight layouts and scale planes the runtime uploads (KERNELS.md), and the refusal of
//!   bad weights;
//! - [`accuracy`]: each mode's NMSE against an f64 product (docs/DESIGN.md D6);
//! - [`data`] and [`rng`]: the seeded inputs every test, the CLI and GPU parity share;
//! - [`digest`] and [`digest_case`]: a fingerprint of an output, and the fixed cases that the snapshot test
//!   `tests/tests/reference_digests.rs` and GPU parity both check.

pub mod accuracy;
pub mod activations;
pub mod data;
pub mod matmul;
pub mod registration;
pub mod rng;

pub use accuracy::{
    accuracy_markdown, accuracy_table, default_cap_nmse, f64_reference, mode_nmse, nmse,
    AccuracyRow, DEFAULT_ACTIVATION_NMSE_CAP, NMSE_GATE,
};
pub use activations::{
    quantize_activations, quantize_activations_12bit, quantize_activations_for,
    QuantizedActivations,
};
pub use data::{
    activations, outlier_channels, plant_rounding_ties, random_blocks, weights_q6k,
    ACTIVATION_STREAM, TIES_STREAM,
};
pub use matmul::{fold, reference_matmul, reference_output};
pub use registration::{
    check_weights, f32_per16_plane, fold_planes, int_plane, plane_rows, raw_to_padded,
    RegistrationError, PADDED_BLOCK_BYTES,
};
pub use rng::{derive_seed, SplitMix64};

use mmqgen_codegen::NumericsMode;

/// FNV-1a (64-bit) over the little-endian bytes of each value's bits, as 16 lowercase hex digits. Two outputs
/// have the same digest when (barring collisions) they are the same bits, `-0.0` and NaN payloads included.
pub fn digest(out: &[f32]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in out {
        for byte in v.to_bits().to_le_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The fixed digest cases shared by the snapshot test and GPU parity. Inputs, all from `seed`:
/// - weights: [`random_blocks`]`(m, k, seed)` (full-range random q6_K blocks, raw GGUF rows);
/// - activations: [`data::activations`]`(n, k, derive_seed(seed, ACTIVATION_STREAM), 4)` (standard normal, 4 outlier channels
///   per 4096 scaled by 20), quantized for the mode (`quantize_activations_for(x, n, k, mode)`).
///
/// Returns the digest of the reference output and the output itself (`[n][m]`). The snapshot test uses seed
/// [`DIGEST_SEED`].
pub fn digest_case(
    mode: NumericsMode,
    m: usize,
    n: usize,
    k: usize,
    seed: u64,
) -> (String, Vec<f32>) {
    let (raw, x) = digest_case_inputs(m, n, k, seed);
    let a = quantize_activations_for(&x, n, k, mode);
    let out = reference_matmul(&raw, m, n, k, &a, mode);
    (digest(&out), out)
}

/// The inputs of [`digest_case`]: raw q6_K weights and f32 activations `[n][k]` (before quantization), for GPU
/// parity to upload.
pub fn digest_case_inputs(m: usize, n: usize, k: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
    (
        random_blocks(m, k, seed),
        data::activations(n, k, derive_seed(seed, ACTIVATION_STREAM), 4),
    )
}

/// The seed of the digest snapshots (`tests/tests/reference_digests.rs`).
pub const DIGEST_SEED: u64 = 20_240_601;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_fnv1a_over_le_bits() {
        // FNV-1a 64 of no bytes is the offset basis; of the 4 bytes 00 00 80 3f (1.0f32) it is fixed.
        assert_eq!(digest(&[]), "cbf29ce484222325");
        assert_eq!(digest(&[1.0]), {
            let mut h: u64 = 0xcbf29ce484222325;
            for b in [0x00u8, 0x00, 0x80, 0x3f] {
                h = (h ^ b as u64).wrapping_mul(0x100000001b3);
            }
            format!("{h:016x}")
        });
        assert_ne!(digest(&[0.0]), digest(&[-0.0]));
    }

    #[test]
    fn digest_case_is_deterministic() {
        let (d1, o1) = digest_case(NumericsMode::IntPer32, 8, 2, 256, 5);
        let (d2, o2) = digest_case(NumericsMode::IntPer32, 8, 2, 256, 5);
        assert_eq!((d1, o1.len()), (d2, o2.len()));
    }
}
