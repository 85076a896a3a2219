//! GPU parity (docs/DESIGN.md D11): a variant's outputs, and the activations its quantizer wrote, must equal the
//! CPU reference bit for bit.
//!
//! One case is a variant, a weight layout, a shape (m, n, K) and a seed. The inputs are the reference's digest
//! case inputs (`digest_case_inputs`): full-range random q6_K blocks (`data::random_blocks`, every integer path
//! exercised) and activations with 4 outlier channels per 4096 (`data::activations`), with rounding ties for the
//! quantizer planted in one span of 256 per token (`data::plant_rounding_ties`: scales from 2^-110 to 2^60,
//! values on or beside half-integer multiples of them). Before the launch the output and the workspace are poisoned
//! ([`crate::gpu::workspace::POISON_BITS`], [`crate::gpu::workspace::POISON_Q`]), so an output the kernel never wrote shows even where it is not compared.
//! Small shapes (m * n <= [`FULL_COMPARE_LIMIT`]) compare every output with the reference; larger ones compare
//! a seeded sample of at least [`MIN_SAMPLED_OUTPUTS`] outputs (plus the first and last token and weight row in
//! full) with `reference_output`, and, when a variant already proven on the same inputs is supplied, every
//! output bitwise with its output. Comparisons are on `to_bits()`: bit-identical, not approximately equal.
//!
//! The weights may instead come from a q6_K tensor of a GGUF file ([`GgufWeights`], `mmqgen parity --gguf FILE
//! --tensor NAME`): m and K are the tensor's, the activations stay seeded (the same ones a seeded case of that
//! shape and seed gets), and the row records the file and the tensor.
//!
//! A case may name a deliberate mutant ([`mutants`]): the bug is planted in the variant's rendered source
//! before it is compiled, and the row records it, so that `mmqgen parity --mutants` can show parity catching it.
//!
//! The comparison logic works on host vectors ([`compare_all`], [`compare_sampled`], [`count_unwritten`],
//! [`compare_quantized`], [`sample_indices`]) so it is tested without a GPU.
//!
//! The pieces: [`case`] (what a case is, its inputs), [`gguf`] (weights from a GGUF tensor), [`compare`] (the
//! comparisons), [`row`] (the report row and its encodings), [`parity`] (a case run on the GPU), [`mutants`].

pub mod case;
pub mod compare;
pub mod gguf;
pub mod mutants;
pub mod parity;
pub mod row;

pub use case::{
    ParityCase, ParityInputs, Shape, DEFAULT_SHAPES, FULL_COMPARE_LIMIT, MIN_SAMPLED_OUTPUTS,
};
pub use compare::{
    compare_all, compare_quantized, compare_sampled, count_unwritten, sample_indices, sub_seed,
    Comparison, FirstBad, QuantComparison,
};
pub use gguf::{GgufTensorRef, GgufWeights, GgufWeightsError};
pub use parity::{run_case, run_case_with, CaseOutcome, ParityError, ProvenOutput};
pub use row::{json_string, ParityRow, Status, ROW_LINE_PREFIX};
