//! What `bench` times and how: the configuration, its defaults, and the variants timed when none are named.

use std::fmt;
use std::path::PathBuf;

use mmqgen_codegen::{Engine, VariantDescription};

use super::floor::FloorMode;
use super::shapes::default_shapes;
use crate::check::Shape;
use crate::gpu::weights::Layout;

/// Untimed rounds before the timed ones.
pub const DEFAULT_WARMUP: usize = 3;
/// Timed rounds: samples per contestant per shape.
pub const DEFAULT_REPEATS: usize = 20;
/// Outputs drawn at random for the pre-timing parity check (plus the first and last token and row).
pub const DEFAULT_PARITY_SAMPLES: usize = 1024;
/// Seed of the bench inputs (the parity inputs of `mmqgen parity --seed 1`).
pub const DEFAULT_SEED: u64 = 1;

/// The element type of the cuBLAS baselines' output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CublasOut {
    /// The input type: bf16 out for the bf16 GEMM, f16 for the f16 one (what the docs/DESIGN.md R4 figures measured).
    Input,
    /// f32, like the variants' output.
    F32,
}

impl CublasOut {
    pub fn keyword(self) -> &'static str {
        match self {
            CublasOut::Input => "input",
            CublasOut::F32 => "f32",
        }
    }
}

/// What to time and how.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchConfig {
    pub shapes: Vec<Shape>,
    pub warmup: usize,
    pub repeats: usize,
    /// The layout the variants' weights are registered in.
    pub layout: Layout,
    pub seed: u64,
    /// Time the cuBLAS bf16 and f16 baselines.
    pub cublas: bool,
    pub cublas_out: CublasOut,
    /// Outputs drawn at random for the parity check (at least 1024).
    pub parity_samples: usize,
    /// Where compiled cubins are kept between runs.
    pub cubin_cache: Option<PathBuf>,
    /// One buffer set per contestant, reused by every call, so that weights which fit stay in L2 (as in ggml's
    /// `test-backend-ops perf`, which reuses its tensors); by default each call reads cold weights.
    pub warm_weights: bool,
    /// Where the read floor is timed beside the variants (docs/PERF.md, "The read floor").
    pub floor: FloorMode,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            shapes: default_shapes(),
            warmup: DEFAULT_WARMUP,
            repeats: DEFAULT_REPEATS,
            layout: Layout::Padded,
            seed: DEFAULT_SEED,
            cublas: true,
            cublas_out: CublasOut::Input,
            parity_samples: DEFAULT_PARITY_SAMPLES,
            cubin_cache: None,
            warm_weights: false,
            floor: FloorMode::Decode,
        }
    }
}

impl fmt::Display for CublasOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// The variants `bench` times when none are named: every variant except the dp4a engine's (the walking
/// skeleton and its small-n arm, far slower; `--all` adds them); every variant when that leaves none.
pub fn default_variants(all: &[VariantDescription]) -> Vec<VariantDescription> {
    let chosen: Vec<VariantDescription> = all
        .iter()
        .filter(|v| v.engine != Engine::Dp4a)
        .cloned()
        .collect();
    if chosen.is_empty() {
        all.to_vec()
    } else {
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_variants_leave_out_dp4a() {
        let all = crate::catalogue::all();
        let d = default_variants(&all);
        assert!(!d.is_empty());
        assert!(d.iter().all(|v| v.engine != Engine::Dp4a));
        assert!(d.len() < all.len());
        let only_dp4a: Vec<_> = all
            .iter()
            .filter(|v| v.engine == Engine::Dp4a)
            .cloned()
            .collect();
        assert_eq!(default_variants(&only_dp4a), only_dp4a);
    }
}
