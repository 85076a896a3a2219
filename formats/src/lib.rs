//! Weight formats for mmqgen: the q6_K block, a q6_K quantizer that reproduces ggml's reference quantizer byte
//! for byte, and a bounds-checked GGUF reader.
//!
//! Why this crate exists apart from the kernels: every kernel variant is checked bit for bit against a CPU
//! reference, and that check is only meaningful if the weights it runs on are the ones real models ship. So the
//! block format ([`q6k`]) and its dequantization follow ggml exactly, the quantizer ([`quantize`]) reproduces
//! ggml's `quantize_row_q6_K_ref` byte for byte (checked against ggml's own output in
//! `tests/ggml_fixtures.rs`), and real model files are read through [`gguf`], which treats the file as untrusted
//! input: every offset and size is checked, nothing panics, and every failure is one sentence.
//!
//! Nothing here touches a GPU; the crate depends only on `half` and `thiserror`.

pub mod gguf;
pub mod input;
pub mod q6k;
pub mod quantize;

pub use gguf::{
    GgmlType, GgufArray, GgufError, GgufFile, GgufValue, GgufValueType, Q6kTensor, TensorInfo,
};
pub use q6k::{dequantize_block, dequantize_rows, Q6kBlock, BLOCK_BYTES, BLOCK_WEIGHTS};
pub use quantize::{quantize_block, quantize_rows};

/// What can go wrong when converting between f32 weights and q6_K bytes.
///
/// Each message is one sentence that names the problem and what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FormatError {
    /// A byte buffer that should hold whole q6_K blocks does not.
    #[error(
        "the q6_K data is {len} bytes, which is not a whole number of blocks: a q6_K block is {BLOCK_BYTES} bytes"
    )]
    BlockBytes {
        /// Length of the buffer that was given.
        len: usize,
    },
    /// A weight buffer to quantize is not a whole number of 256-weight blocks.
    #[error(
        "there are {len} weights, which is not a whole number of q6_K blocks: the count must be a multiple of {BLOCK_WEIGHTS}"
    )]
    WeightCount {
        /// Number of weights that was given.
        len: usize,
    },
    /// A weight to quantize is NaN or infinite.
    #[error("weight {index} is {value}, but only finite weights can be quantized to q6_K")]
    NonFinite {
        /// Index of the first non-finite weight.
        index: usize,
        /// Its value (NaN, inf or -inf).
        value: f32,
    },
    /// Finite weights whose block needs a super-block scale beyond f16's largest finite value.
    #[error(
        "block {block} has weights of magnitude {amax:e}, too large for q6_K: its f16 scale d would overflow to infinity (weights must stay below about 2.68e8 in magnitude)"
    )]
    ScaleOverflow {
        /// Index of the block (256 weights each).
        block: usize,
        /// The largest magnitude in it.
        amax: f32,
    },
    /// Reading a GGUF file failed.
    #[error(transparent)]
    Gguf(#[from] GgufError),
}
