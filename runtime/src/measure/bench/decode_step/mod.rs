//! `mmqgen bench --decode-step`: one Llama-3-8B decode step as engines run it (issue 54 target 2). The 224
//! q6_K matmuls of a step (32 layers x q 4096x4096, k and v 1024x4096, o 4096x4096, gate and up 14336x4096,
//! down 4096x14336, each on weights of its own: 5.73 GB raw, 6.11 GB padded, so none stays in L2) are
//! registered through the library ([`crate::Mmq`]), each call picked by the selection config, all on one
//! stream. The step is captured once into a CUDA graph after [`crate::Mmq::reserve`] and replayed; the same
//! calls are also launched directly. Both are timed like any bench call (spin kernel ahead, CUDA events
//! around, interleaved, medians), and a replay's outputs are compared bit for bit with the direct calls'.
//! Reported per token count: the step's time, tokens per second (tokens / step time), the weight bytes read per
//! step and their rate as a share of the device-to-device copy rate measured in the same run.
//!
//! `plan` is what a step is (tested on the host), `run` runs it on the GPU, `report` reads and renders it.

mod plan;
mod report;
mod run;

use std::fmt;

pub use plan::{
    device_need, distinct_shapes, gb, layout_bytes, output_floats, parse_tokens, step_calls,
    step_gguf_bytes, StepCall, DEFAULT_STEP_TOKENS, LLAMA3_8B_LAYERS, MAX_STEP_TOKENS,
    MEMORY_MARGIN,
};
pub use report::{BitCheck, DecodeStepReport, StepRate, StepResult};
pub use run::run_decode_step;

use super::{BenchError, DEFAULT_REPEATS, DEFAULT_SEED, DEFAULT_WARMUP};
use crate::gpu::device::DeviceError;
use crate::gpu::weights::Layout;
use crate::MmqError;

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeStepConfig {
    /// Token counts, one step each (a decode step of n tokens: n sequences, one token each).
    pub tokens: Vec<usize>,
    pub layout: Layout,
    pub warmup: usize,
    pub repeats: usize,
    /// Seed of the weights (each call's derived from it) and the activations.
    pub seed: u64,
    /// Layers of the step: [`LLAMA3_8B_LAYERS`] (fewer only to try the mode on a small GPU).
    pub layers: usize,
}

impl Default for DecodeStepConfig {
    fn default() -> Self {
        DecodeStepConfig {
            tokens: DEFAULT_STEP_TOKENS.to_vec(),
            layout: Layout::Padded,
            warmup: DEFAULT_WARMUP,
            repeats: DEFAULT_REPEATS,
            seed: DEFAULT_SEED,
            layers: LLAMA3_8B_LAYERS,
        }
    }
}

impl DecodeStepConfig {
    /// A sentence when the configuration cannot run.
    pub fn check(&self) -> Result<(), DecodeStepError> {
        let bad = |s: String| Err(DecodeStepError::Setup(s));
        if self.tokens.is_empty() {
            return bad("no token count was given: a decode step needs at least one".into());
        }
        if let Some(n) = self.tokens.iter().find(|&&n| n == 0 || n > MAX_STEP_TOKENS) {
            return bad(format!(
                "{n} tokens: a decode step takes 1 to {MAX_STEP_TOKENS} tokens"
            ));
        }
        if self.repeats == 0 {
            return bad("repeats = 0: at least one timed step is needed".into());
        }
        if self.layers == 0 {
            return bad("0 layers make no step".into());
        }
        Ok(())
    }
}

/// Why the decode step could not run. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum DecodeStepError {
    #[error(transparent)]
    Bench(#[from] BenchError),
    #[error(transparent)]
    Mmq(#[from] MmqError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The GPU cannot hold the step's distinct weights.
    #[error("{}", too_little_memory(gpu, *need, *weights, *free, *total))]
    TooLittleMemory {
        gpu: String,
        need: usize,
        weights: usize,
        free: usize,
        total: usize,
    },
    #[error("{0}")]
    Setup(String),
    #[error("{0}")]
    Run(String),
}

fn too_little_memory(gpu: &str, need: usize, weights: usize, free: usize, total: usize) -> String {
    format!(
        "the decode step needs {} of device memory ({} of weights, each matmul its own so that none stays in L2) \
         but the {gpu} has {} free of {}, so it was not run",
        gb(need),
        gb(weights),
        gb(free),
        gb(total)
    )
}

impl fmt::Display for DecodeStepConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tokens: Vec<String> = self.tokens.iter().map(usize::to_string).collect();
        write!(
            f,
            "{} layers, tokens {}, {} layout, {} warm-up + {} timed steps",
            self.layers,
            tokens.join(","),
            self.layout,
            self.warmup,
            self.repeats
        )
    }
}

#[cfg(test)]
mod tests;
