//! `mmqgen bench`: variants timed against each other and against dense cuBLAS GEMMs in the same run, the way
//! the lent-GPU method asks (CUDA events, warm-up, median of many, rotated inputs, correct before timed).
//!
//! For each shape `(m, n, K)`:
//! 1. The seeded inputs (`digest_case_inputs`: `mmqgen parity`'s weights and activations, without the rounding ties
//!    parity plants) are
//!    registered once per variant with [`crate::gpu::weights::RegisteredWeights::register_for`] (so a new engine's planes come
//!    along), and every variant runs once through [`crate::gpu::launch::LoadedVariant::matmul`] on a poisoned output; a seeded
//!    sample of outputs ([`crate::check::compare::sample_indices`], at least 1024 plus the first and last token and row) is compared
//!    bit for bit with `reference_output`, every output must have been written, and the quantized activations
//!    must equal the reference's. A variant that fails is reported and not timed at that shape.
//! 2. The cuBLAS baselines get the same blocks dequantized on the CPU (`mmqgen_formats::dequantize_rows`,
//!    each block's `d` first moved to 2^-12 with its sign and mantissa kept, so that the full-range parity
//!    blocks give f16-safe values: [`dense_blocks`]), converted to bf16 and f16 with `half`, and the same
//!    activations converted likewise; one call is checked against an f64 CPU product of the converted values
//!    before the baseline is timed.
//! 3. Enough copies of every input and output ("buffer sets") are allocated that the sets one contestant
//!    cycles through hold more than three times the L2 (read from the device, 60 MiB when it cannot be read),
//!    at least [`MIN_BUFFER_SETS`]; consecutive timed calls use consecutive sets, so no call reads weights a
//!    previous call left in L2.
//! 4. Contestants (each variant's whole matmul, its activation quantizer alone, cuBLAS bf16, cuBLAS f16, and at
//!    decode shapes the read floor: a kernel that only reads the matrix's bytes, in a few geometries) run
//!    interleaved, A B C A B C, the starting contestant rotating each round: `warmup` rounds untimed, then
//!    `repeats` rounds timed. Each call is queued on a dedicated stream behind a short spin kernel (so the
//!    whole launch sequence is queued before the GPU reaches it and host launch cost stays out of the time),
//!    bracketed by two CUDA events, and waited for; a kernel fault surfaces right there with its contestant's
//!    name. Calls whose host enqueue took longer than the spin are counted (`launch_bound`): their time may
//!    include launch gaps.
//!
//! Reported per contestant: median, p20, p80 (linear interpolation between closest ranks) and n, TFLOPS at
//! `2*m*n*K`, the ratio to cuBLAS bf16 and f16 (`cuBLAS time / time`: above 1 is faster than cuBLAS), and the
//! llama.cpp q6_K time quoted from docs/DESIGN.md R4 with `llama.cpp time / time` (a quoted anchor, not
//! measured in this run). A cuBLAS bf16 figure more than 20% below the directly called bf16 anchor of docs/DESIGN.md R4
//! section 4 marks the baseline as suspect. Where the read floor was timed (its fastest geometry is the floor),
//! every variant's row gives its time over the floor's (`x read floor`: 1.15 is 15% slower than only reading the
//! weights), and so does the picks table.
//!
//! Everything that needs no GPU (statistics, anchors, the landing and suspect rules, the cuBLAS argument
//! mapping, buffer-set sizing, rendering) is a plain function, tested on the host.
//!
//! The pieces, along a profiler's seams: `config` (what to time), `shapes` (which shapes, how many buffer
//! sets), `stats`, `anchors` and `landing` (numbers and the rules on them), `provenance` (what the run
//! ran on), `timer` (spin kernel and events), `setup` (what every run starts with), `cublas` (the dense
//! baseline), `floor` (the read floor's kernel and buffers), `driver` (the run itself), `interleave` (the timed
//! rounds), `report` (the result model) rendered by `markdown` and `json`. `decode_step` is `--decode-step`: a
//! whole Llama-3-8B decode step through the library, captured in a CUDA graph and replayed.

mod anchors;
mod config;
mod copy_rate;
mod cublas;
pub mod decode_step;
mod driver;
mod fail;
mod floor;
mod interleave;
mod json;
mod landing;
mod markdown;
mod provenance;
mod report;
mod setup;
mod shapes;
mod stats;
mod threads;
mod timer;

#[cfg(test)]
mod tests;

pub use anchors::{
    bf16_anchor_tflops, check_bf16_baseline, llamacpp_anchor_us, BaselineCheck, BF16_DIRECT_TFLOPS,
    LLAMACPP_Q6K_US, SUSPECT_BELOW,
};
pub use config::{
    default_variants, BenchConfig, CublasOut, DEFAULT_PARITY_SAMPLES, DEFAULT_REPEATS,
    DEFAULT_SEED, DEFAULT_WARMUP,
};
pub use copy_rate::{tb_per_s, CopyRate, COPY_BYTES, COPY_REPS};
pub use cublas::{dense_blocks, GemmArgs, GemmOp, DENSE_D_EXPONENT};
pub use driver::run_bench;
pub use fail::BenchError;
pub use floor::{xor_words, FloorGeometry, FloorMode, DECODE_MAX_N, FLOOR_GEOMETRIES};
pub use json::BenchRow;
pub use landing::{ab_overall, ab_verdict, AbVerdict, LANDING_BAR};
pub use provenance::{
    commit, driver_release, parse_driver_release, utc_from_unix, utc_now, RunInfo,
};
pub use report::{
    AbReport, BaselineResult, BenchReport, BuildResult, FloorResult, Outcome, ParitySummary,
    PrefillMatmul, PrefillSummary, ShapeResult, VariantResult, WeightRate,
};
pub use shapes::{
    buffer_sets, dedup_shapes, default_shapes, prefill_shapes, FALLBACK_L2_BYTES, LLAMA3_8B_LAYER,
    MAX_BUFFER_SETS, MIN_BUFFER_SETS, PREFILL_TOKENS, ROTATION_L2_MULTIPLE,
};
pub use stats::{quantile_sorted, tflops, Stats};
pub use timer::SPIN_TARGET_US;
