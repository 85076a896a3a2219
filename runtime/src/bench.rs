//! `mmqgen bench`: variants timed against each other and against dense cuBLAS GEMMs in the same run, the way
//! the lent-GPU method asks (CUDA events, warm-up, median of many, rotated inputs, correct before timed).
//!
//! For each shape `(m, n, K)`:
//! 1. The seeded parity inputs (`digest_case_inputs`, the same weights and activations `mmqgen parity` uses) are
//!    registered once per variant with [`RegisteredWeights::register_for`] (so a new engine's planes come
//!    along), and every variant runs once through [`LoadedVariant::matmul`] on a poisoned output; a seeded
//!    sample of outputs ([`sample_indices`], at least 1024 plus the first and last token and row) is compared
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
//! 4. Contestants (each variant's whole matmul, its activation quantizer alone, cuBLAS bf16, cuBLAS f16) run
//!    interleaved, A B C A B C, the starting contestant rotating each round: `warmup` rounds untimed, then
//!    `repeats` rounds timed. Each call is queued on a dedicated stream behind a short spin kernel (so the
//!    whole launch sequence is queued before the GPU reaches it and host launch cost stays out of the time),
//!    bracketed by two CUDA events, and waited for; a kernel fault surfaces right there with its contestant's
//!    name. Calls whose host enqueue took longer than the spin are counted (`launch_bound`): their time may
//!    include launch gaps.
//!
//! Reported per contestant: median, p20, p80 (linear interpolation between closest ranks) and n, TFLOPS at
//! `2*m*n*K`, the ratio to cuBLAS bf16 and f16 (`cuBLAS time / time`: above 1 is faster than cuBLAS), and the
//! llama.cpp q6_K time quoted from ANCHORS.md section 4 with `llama.cpp time / time` (a quoted anchor, not
//! measured in this run). A cuBLAS bf16 figure more than 20% below the directly called bf16 anchor of ANCHORS.md
//! section 4 marks the baseline as suspect.
//!
//! Everything that needs no GPU (statistics, anchors, the landing and suspect rules, the cuBLAS argument
//! mapping, buffer-set sizing, rendering) is a plain function, tested on the host.

use std::ffi::c_void;
use std::fmt::{self, Write as _};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::result::DriverError;
use cudarc::driver::{
    sys, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use half::{bf16, f16};
use mmqgen_codegen::{canonical_name, Engine, NumericsMode, VariantDescription};
use mmqgen_reference::activations::{quantize_activations, QuantizedActivations};
use mmqgen_reference::digest_case_inputs;
use mmqgen_reference::matmul::reference_output;

use crate::compile::{compile_cubin, nvrtc_version};
use crate::device::{describe_driver_error, is_sticky_kernel_fault, DeviceError, Gpu};
use crate::launch::{
    build_variant, poison_f32, read_prefix, BuildInfo, LaunchError, LoadedVariant, Workspace,
};
use crate::parity::{
    compare_quantized, compare_sampled, count_unwritten, json_string, sample_indices, sub_seed,
    Shape,
};
use crate::weights::{Layout, RegisteredWeights};

/// Untimed rounds before the timed ones.
pub const DEFAULT_WARMUP: usize = 3;
/// Timed rounds: samples per contestant per shape.
pub const DEFAULT_REPEATS: usize = 20;
/// The seed's landing bar: B replaces A only if A's median time over B's is at least 1.015.
pub const LANDING_BAR: f64 = 0.015;
/// A cuBLAS bf16 figure more than this fraction below ANCHORS.md's directly called bf16 figure is suspect.
pub const SUSPECT_BELOW: f64 = 0.20;
/// The L2 size used when the device attribute cannot be read (the H200's 60 MB, counted as MiB).
pub const FALLBACK_L2_BYTES: usize = 60 << 20;
/// The buffer sets one contestant cycles through must hold more than this many L2s.
pub const ROTATION_L2_MULTIPLE: usize = 3;
/// At least this many buffer sets, however large one set is.
pub const MIN_BUFFER_SETS: usize = 3;
/// At most this many buffer sets (tiny shapes would otherwise need hundreds; the report says when the cap
/// leaves the rotation under three L2s).
pub const MAX_BUFFER_SETS: usize = 64;
/// Outputs drawn at random for the pre-timing parity check (plus the first and last token and row).
pub const DEFAULT_PARITY_SAMPLES: usize = 1024;
/// Seed of the bench inputs (the parity inputs of `mmqgen parity --seed 1`).
pub const DEFAULT_SEED: u64 = 1;
/// The dense baselines dequantize the parity blocks with each block's `d` moved to this binary exponent
/// (sign and mantissa kept): the full-range parity blocks have `d` up to 65504 and subnormal, which would
/// overflow f16 outputs; with it every weight lies within +-8 and every output fits f16. Values do not change a
/// GEMM's speed (zeros would; there are none to speak of).
pub const DENSE_D_EXPONENT: i32 = -12;
/// How long the spin kernel ahead of each timed call keeps the GPU busy while the host queues the call.
pub const SPIN_TARGET_US: f64 = 200.0;

// ---------------------------------------------------------------------------------------------------------
// Statistics.

/// The `p` quantile (0..=1) of sorted samples, interpolating linearly between the closest ranks (numpy's
/// default): position `p * (len - 1)`.
///
/// # Panics
/// On an empty slice.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "a quantile of no samples");
    let last = sorted.len() - 1;
    let pos = p.clamp(0.0, 1.0) * last as f64;
    let lo = (pos.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Median, p20 and p80 (and the extremes) of one contestant's per-call times, microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub median: f64,
    pub p20: f64,
    pub p80: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    /// The statistics of `samples` (any order); `None` when there are none.
    pub fn from_samples(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        Some(Stats {
            n: s.len(),
            median: quantile_sorted(&s, 0.5),
            p20: quantile_sorted(&s, 0.2),
            p80: quantile_sorted(&s, 0.8),
            min: s[0],
            max: s[s.len() - 1],
        })
    }
}

/// Tera floating-point operations per second of a matmul of `shape` taking `us` microseconds (`2*m*n*K`).
pub fn tflops(shape: Shape, us: f64) -> f64 {
    2.0 * shape.m as f64 * shape.n as f64 * shape.k as f64 / (us * 1e-6) / 1e12
}

// ---------------------------------------------------------------------------------------------------------
// Anchors (ANCHORS.md section 4, measured on our H200 on 2026-11-29; quoted, not measured here).

/// llama.cpp's q6_K MMQ time (µs) by `(m, n, K)`: ANCHORS.md section 4, first table (includes its activation
/// quantization).
pub const LLAMACPP_Q6K_US: [((usize, usize, usize), f64); 9] = [
    ((4096, 512, 4096), 128.0),
    ((4096, 512, 14336), 436.0),
    ((14336, 512, 4096), 463.0),
    ((4096, 2048, 4096), 500.0),
    ((4096, 2048, 14336), 1712.0),
    ((14336, 2048, 4096), 1667.0),
    ((4096, 4096, 4096), 1015.0),
    ((4096, 4096, 14336), 3362.0),
    ((14336, 4096, 4096), 3357.0),
];

/// A directly called bf16 GEMM (PyTorch on cuBLAS/cuBLASLt 13, bf16 in and out), TFLOPS by `(m, n, K)`:
/// ANCHORS.md section 4, second table.
pub const BF16_DIRECT_TFLOPS: [((usize, usize, usize), f64); 8] = [
    ((4096, 512, 4096), 435.0),
    ((4096, 512, 14336), 659.0),
    ((14336, 512, 4096), 582.0),
    ((4096, 2048, 14336), 795.0),
    ((14336, 2048, 4096), 750.0),
    ((4096, 4096, 14336), 807.0),
    ((14336, 4096, 4096), 745.0),
    ((8192, 8192, 8192), 729.0),
];

fn lookup(table: &[((usize, usize, usize), f64)], shape: Shape) -> Option<f64> {
    table
        .iter()
        .find(|(s, _)| *s == (shape.m, shape.n, shape.k))
        .map(|&(_, v)| v)
}

/// llama.cpp's q6_K time for `shape` (µs), where ANCHORS.md has one.
pub fn llamacpp_anchor_us(shape: Shape) -> Option<f64> {
    lookup(&LLAMACPP_Q6K_US, shape)
}

/// The directly called bf16 GEMM figure for `shape` (TFLOPS), where ANCHORS.md has one.
pub fn bf16_anchor_tflops(shape: Shape) -> Option<f64> {
    lookup(&BF16_DIRECT_TFLOPS, shape)
}

/// Whether this run's cuBLAS bf16 figure is believable next to ANCHORS.md's directly called one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaselineCheck {
    /// ANCHORS.md has no directly called bf16 figure for the shape.
    NoAnchor,
    /// Within [`SUSPECT_BELOW`] of the anchor (or above it).
    Consistent { measured: f64, anchor: f64 },
    /// More than [`SUSPECT_BELOW`] below the anchor: the baseline (or the GPU's state) is suspect.
    Suspect { measured: f64, anchor: f64 },
}

/// The suspect-baseline rule: a cuBLAS bf16 figure (TFLOPS) more than 20% below the anchor is suspect.
pub fn check_bf16_baseline(shape: Shape, measured_tflops: f64) -> BaselineCheck {
    match bf16_anchor_tflops(shape) {
        None => BaselineCheck::NoAnchor,
        Some(anchor) => {
            if measured_tflops.is_finite() && measured_tflops >= anchor * (1.0 - SUSPECT_BELOW) {
                BaselineCheck::Consistent {
                    measured: measured_tflops,
                    anchor,
                }
            } else {
                BaselineCheck::Suspect {
                    measured: measured_tflops,
                    anchor,
                }
            }
        }
    }
}

impl BaselineCheck {
    pub fn is_suspect(&self) -> bool {
        matches!(self, BaselineCheck::Suspect { .. })
    }

    /// One sentence about the check at `shape`.
    pub fn sentence(&self, shape: Shape) -> String {
        match *self {
            BaselineCheck::NoAnchor => format!(
                "cuBLAS bf16 at {shape}: ANCHORS.md section 4 has no directly called bf16 figure for this \
                 shape, so the baseline is not checked"
            ),
            BaselineCheck::Consistent { measured, anchor } => format!(
                "cuBLAS bf16 at {shape}: {measured:.0} TFLOPS against the directly called {anchor:.0} of \
                 ANCHORS.md section 4 ({:+.0}%)",
                (measured / anchor - 1.0) * 100.0
            ),
            BaselineCheck::Suspect { measured, anchor } => format!(
                "SUSPECT BASELINE: cuBLAS bf16 at {shape} reached {measured:.0} TFLOPS, more than {:.0}% below \
                 the {anchor:.0} TFLOPS a directly called bf16 GEMM reached on our H200 (ANCHORS.md section 4); \
                 every 'x cuBLAS' ratio at this shape flatters the variants until this is explained (GPU \
                 clocks, another process, a wrong cuBLAS, a mis-set argument)",
                SUSPECT_BELOW * 100.0
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// The A/B landing rule.

/// The seed's verdict on replacing A by B: B lands only if `median(A) / median(B) - 1 >= 1.5%`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbVerdict {
    pub a_us: f64,
    pub b_us: f64,
    /// `a_us / b_us - 1`: B's throughput gain over A.
    pub gain: f64,
    pub lands: bool,
}

/// The landing rule on two median times (µs). Exactly +1.5% lands.
pub fn ab_verdict(a_us: f64, b_us: f64) -> AbVerdict {
    let gain = a_us / b_us - 1.0;
    AbVerdict {
        a_us,
        b_us,
        gain,
        lands: gain.is_finite() && gain >= LANDING_BAR - 1e-12,
    }
}

/// The overall verdict over several shapes, weighting each shape by its time as a whole-prefill wall clock
/// does: the rule applied to the sums of A's and B's medians. `None` without pairs.
pub fn ab_overall(pairs: &[(f64, f64)]) -> Option<AbVerdict> {
    if pairs.is_empty() {
        return None;
    }
    let a: f64 = pairs.iter().map(|p| p.0).sum();
    let b: f64 = pairs.iter().map(|p| p.1).sum();
    Some(ab_verdict(a, b))
}

// ---------------------------------------------------------------------------------------------------------
// The cuBLAS argument mapping.

/// cuBLAS's `op()` on an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemmOp {
    /// `CUBLAS_OP_N`.
    N,
    /// `CUBLAS_OP_T`.
    T,
}

/// The arguments of a column-major `C(m x n) = op(A)(m x k) * op(B)(k x n)` cuBLAS call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmArgs {
    pub transa: GemmOp,
    pub transb: GemmOp,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub lda: i32,
    pub ldb: i32,
    pub ldc: i32,
}

impl GemmArgs {
    /// `out[n][m] = x[n][K] * W^T` with `W` `[m][K]` row-major, `x` `[n][K]` row-major and `out` `[n][m]`
    /// row-major, in cuBLAS's column-major terms:
    /// - `W` row-major `[m][K]` is a column-major `K x m` matrix with leading dimension `K`; `op(A) = T`
    ///   makes it the `m x K` left operand (`lda = K`);
    /// - `x` row-major `[n][K]` is a column-major `K x n` matrix, already the `K x n` right operand
    ///   (`op(B) = N`, `ldb = K`);
    /// - the column-major `m x n` result with `ldc = m` puts `C(i, j)` at `i + j*m`, which is `out[j][i]`.
    pub fn for_linear(rows: usize, tokens: usize, k: usize) -> Result<GemmArgs, String> {
        let int = |what: &str, v: usize| {
            i32::try_from(v)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("{what} = {v} is not a dimension cuBLAS takes (1..=2^31-1)"))
        };
        Ok(GemmArgs {
            transa: GemmOp::T,
            transb: GemmOp::N,
            m: int("m", rows)?,
            n: int("n", tokens)?,
            k: int("K", k)?,
            lda: int("K", k)?,
            ldb: int("K", k)?,
            ldc: int("m", rows)?,
        })
    }

    /// cuBLAS's own argument rules (`lda >= max(1, op(A) == N ? m : k)`, `ldb >= max(1, op(B) == N ? k : n)`,
    /// `ldc >= max(1, m)`), so that a wrong mapping is refused on the host instead of by
    /// `CUBLAS_STATUS_INVALID_VALUE`.
    pub fn check(&self) -> Result<(), String> {
        if self.m <= 0 || self.n <= 0 || self.k <= 0 {
            return Err(format!(
                "m, n, k = {}, {}, {} must all be positive",
                self.m, self.n, self.k
            ));
        }
        let need_a = if self.transa == GemmOp::N {
            self.m
        } else {
            self.k
        };
        let need_b = if self.transb == GemmOp::N {
            self.k
        } else {
            self.n
        };
        if self.lda < need_a {
            return Err(format!("lda = {} is below {need_a}", self.lda));
        }
        if self.ldb < need_b {
            return Err(format!("ldb = {} is below {need_b}", self.ldb));
        }
        if self.ldc < self.m {
            return Err(format!("ldc = {} is below m = {}", self.ldc, self.m));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------------------
// Shapes and rotation.

/// The issue's default shapes, by token count: `n` in {1, 8, 32, 128} at m = K = 4096, then every
/// `m` in {4096, 14336}, `n` in {512, 2048, 4096}, `K` in {4096, 14336}.
pub fn default_shapes() -> Vec<Shape> {
    let mut shapes: Vec<Shape> = [1, 8, 32, 128]
        .into_iter()
        .map(|n| Shape::new(4096, n, 4096))
        .collect();
    for n in [512, 2048, 4096] {
        for m in [4096, 14336] {
            for k in [4096, 14336] {
                shapes.push(Shape::new(m, n, k));
            }
        }
    }
    shapes
}

/// One Llama-3-8B layer's matmuls as `(name, m, K)`: q, k, v, o, gate, up, down.
pub const LLAMA3_8B_LAYER: [(&str, usize, usize); 7] = [
    ("q", 4096, 4096),
    ("k", 1024, 4096),
    ("v", 1024, 4096),
    ("o", 4096, 4096),
    ("gate", 14336, 4096),
    ("up", 14336, 4096),
    ("down", 4096, 14336),
];

/// Prompt lengths `--prefill` reports.
pub const PREFILL_TOKENS: [usize; 2] = [512, 2048];

/// The distinct shapes `--prefill` needs.
pub fn prefill_shapes() -> Vec<Shape> {
    let mut shapes = Vec::new();
    for n in PREFILL_TOKENS {
        for (_, m, k) in LLAMA3_8B_LAYER {
            shapes.push(Shape::new(m, n, k));
        }
    }
    dedup_shapes(shapes)
}

/// `shapes` without repeats, first occurrence kept.
pub fn dedup_shapes(shapes: Vec<Shape>) -> Vec<Shape> {
    let mut seen = std::collections::HashSet::new();
    shapes.into_iter().filter(|s| seen.insert(*s)).collect()
}

/// How many buffer sets make the sets of the contestant with the smallest set (`smallest_set_bytes`) hold
/// more than [`ROTATION_L2_MULTIPLE`] L2s: at least [`MIN_BUFFER_SETS`], at most [`MAX_BUFFER_SETS`].
pub fn buffer_sets(l2_bytes: usize, smallest_set_bytes: usize) -> usize {
    let need = ROTATION_L2_MULTIPLE * l2_bytes + 1;
    need.div_ceil(smallest_set_bytes.max(1))
        .clamp(MIN_BUFFER_SETS, MAX_BUFFER_SETS)
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

// ---------------------------------------------------------------------------------------------------------
// Run metadata.

/// The current time as `2026-11-29T14:03:12Z`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    utc_from_unix(secs)
}

/// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
pub fn utc_from_unix(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The NVIDIA kernel module's version (`580.159.04`) from the text of `/proc/driver/nvidia/version`.
pub fn parse_driver_release(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    first
        .split_whitespace()
        .find(|t| {
            let parts: Vec<&str> = t.split('.').collect();
            parts.len() >= 2
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// The driver release, or `unknown`.
pub fn driver_release() -> String {
    std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| parse_driver_release(&t))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The commit being measured: `$MMQGEN_COMMIT` when set (binaries carried to a GPU machine run inside a copy
/// of the tree whose `.git` may be older than the build), else `git rev-parse HEAD` (with `+dirty` when
/// tracked files differ), else `unknown`.
pub fn commit() -> String {
    if let Ok(c) = std::env::var("MMQGEN_COMMIT") {
        if !c.trim().is_empty() {
            return c.trim().to_string();
        }
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(head) = git(&["rev-parse", "HEAD"]).filter(|h| !h.is_empty()) {
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        return if dirty { format!("{head}+dirty") } else { head };
    }
    "unknown".to_string()
}

/// What the run was measured on and with.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub gpu: String,
    pub arch: String,
    pub multiprocessors: u32,
    /// The CUDA version the driver supports, `13.0`.
    pub driver_cuda: String,
    /// The kernel module's version, `580.159.04`, or `unknown`.
    pub driver_release: String,
    /// `13.0`, or why it is unknown.
    pub nvrtc: String,
    pub commit: String,
    pub date: String,
    pub l2_bytes: usize,
    /// `device attribute` or `fallback (...)`.
    pub l2_source: String,
    /// How long the spin kernel ahead of each timed call lasts at least (at the top clock), µs.
    pub spin_us: f64,
}

// ---------------------------------------------------------------------------------------------------------
// Configuration and results.

/// The element type of the cuBLAS baselines' output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CublasOut {
    /// The input type: bf16 out for the bf16 GEMM, f16 for the f16 one (what the ANCHORS.md figures measured).
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
        }
    }
}

/// A contestant's timing: its statistics, or why it was not timed.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Timed(Stats),
    NotTimed(String),
}

impl Outcome {
    pub fn stats(&self) -> Option<&Stats> {
        match self {
            Outcome::Timed(s) => Some(s),
            Outcome::NotTimed(_) => None,
        }
    }

    pub fn median(&self) -> Option<f64> {
        self.stats().map(|s| s.median)
    }
}

/// The pre-timing parity check of one variant at one shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParitySummary {
    /// Outputs compared bit for bit with `reference_output`.
    pub checked: usize,
    pub mismatches: usize,
    /// Outputs still holding the poison (never written), over the whole output.
    pub unwritten: usize,
    /// Quantized activations (quants plus scales) compared with the reference quantizer's.
    pub quant_checked: usize,
    pub quant_mismatches: usize,
    /// The first difference, in words.
    pub first_bad: Option<String>,
}

impl ParitySummary {
    pub fn passed(&self) -> bool {
        self.checked > 0
            && self.mismatches == 0
            && self.unwritten == 0
            && self.quant_mismatches == 0
    }

    /// `parity failed: 3 of 5120 sampled outputs differ (token 0 row 5: ...)`.
    pub fn failure_sentence(&self) -> String {
        let mut parts = Vec::new();
        if self.mismatches > 0 {
            parts.push(format!(
                "{} of {} sampled outputs differ from the CPU reference",
                self.mismatches, self.checked
            ));
        }
        if self.unwritten > 0 {
            parts.push(format!("{} outputs were never written", self.unwritten));
        }
        if self.quant_mismatches > 0 {
            parts.push(format!(
                "{} of {} quantized activations differ from the reference quantizer's",
                self.quant_mismatches, self.quant_checked
            ));
        }
        if self.checked == 0 {
            parts.push("no output was compared".to_string());
        }
        let first = self
            .first_bad
            .as_deref()
            .map(|f| format!(" (first: {f})"))
            .unwrap_or_default();
        format!("parity failed: {}{first}", parts.join("; "))
    }
}

/// One variant at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantResult {
    pub name: String,
    pub canonical: String,
    /// `None` when the check could not run (the reason is in `total`).
    pub parity: Option<ParitySummary>,
    /// Quantizer + matmul (+ combine): what [`LoadedVariant::matmul`] queues.
    pub total: Outcome,
    /// The variant's activation quantizer alone.
    pub quantizer: Outcome,
    /// Timed calls (whole matmul) whose host enqueue outlasted the spin kernel.
    pub launch_bound: usize,
    /// What the variant's weights cost on the device at this shape: the layout plus the planes it reads.
    pub device_bytes: usize,
}

/// One cuBLAS baseline at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineResult {
    /// `cuBLAS bf16` or `cuBLAS f16`.
    pub name: String,
    pub total: Outcome,
    /// `|out - ref| / |ref|` over the checked sample, against an f64 CPU product of the converted inputs.
    pub rel_error: Option<f64>,
    pub launch_bound: usize,
}

/// Everything measured at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeResult {
    pub shape: Shape,
    pub buffer_sets: usize,
    /// Bytes the contestant with the smallest sets cycles through (all its sets together).
    pub rotation_bytes: usize,
    pub variants: Vec<VariantResult>,
    pub cublas_bf16: Option<BaselineResult>,
    pub cublas_f16: Option<BaselineResult>,
    /// Why the shape (or part of it) could not be measured.
    pub error: Option<String>,
    pub wall_s: f64,
}

impl ShapeResult {
    fn empty(shape: Shape) -> ShapeResult {
        ShapeResult {
            shape,
            buffer_sets: 0,
            rotation_bytes: 0,
            variants: Vec::new(),
            cublas_bf16: None,
            cublas_f16: None,
            error: None,
            wall_s: 0.0,
        }
    }

    pub fn cublas_bf16_us(&self) -> Option<f64> {
        self.cublas_bf16.as_ref().and_then(|b| b.total.median())
    }

    pub fn cublas_f16_us(&self) -> Option<f64> {
        self.cublas_f16.as_ref().and_then(|b| b.total.median())
    }

    /// The suspect-baseline rule on this shape's cuBLAS bf16 median, when it was timed.
    pub fn baseline_check(&self) -> Option<BaselineCheck> {
        self.cublas_bf16_us()
            .map(|us| check_bf16_baseline(self.shape, tflops(self.shape, us)))
    }

    /// The variant with the smallest median time.
    pub fn best_variant(&self) -> Option<(&str, f64)> {
        self.variants
            .iter()
            .filter_map(|v| v.total.median().map(|t| (v.name.as_str(), t)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    pub fn variant(&self, name: &str) -> Option<&VariantResult> {
        self.variants
            .iter()
            .find(|v| v.name == name || v.canonical == name)
    }
}

/// How one variant was built.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildResult {
    pub name: String,
    pub canonical: String,
    /// The build, or why it failed or was skipped.
    pub result: Result<BuildInfo, String>,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    pub info: RunInfo,
    pub config: BenchConfig,
    pub builds: Vec<BuildResult>,
    /// Why the cuBLAS baselines are missing, when they are.
    pub cublas_note: Option<String>,
    pub shapes: Vec<ShapeResult>,
    /// Set when a kernel fault left the CUDA context unusable and the run stopped early.
    pub aborted: Option<String>,
}

/// Why a run could not start. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("{0}")]
    Setup(String),
}

// ---------------------------------------------------------------------------------------------------------
// Rendering.

fn fmt_us(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn ratio(num: Option<f64>, den: Option<f64>) -> String {
    match (num, den) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "—".to_string(),
    }
}

fn cell_or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".to_string())
}

/// Table cells must not contain `|` or newlines.
fn table_text(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c == '\n' || c == '|' { ' ' } else { c })
        .collect();
    if one_line.chars().count() > 90 {
        let cut: String = one_line.chars().take(87).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

/// One row of the table.
struct TableRow {
    name: String,
    outcome: Outcome,
    quantizer: Option<Outcome>,
    /// The weights' bytes on the device.
    device_bytes: usize,
}

/// `14.0 MiB (1.07x)`: bytes on the device and their ratio to the GGUF tensor's.
fn footprint_cell(device_bytes: usize, shape: Shape) -> String {
    let gguf = crate::weights::gguf_bytes(shape.m, shape.k).max(1);
    format!(
        "{:.1} MiB ({:.2}x)",
        device_bytes as f64 / 1048576.0,
        device_bytes as f64 / gguf as f64
    )
}

impl BenchReport {
    /// The markdown paragraph that explains the table's columns.
    pub fn legend(&self) -> String {
        let out = match self.config.cublas_out {
            CublasOut::Input => "bf16/f16 out",
            CublasOut::F32 => "f32 out",
        };
        format!(
            "{} ({}, {} SMs), driver {} (CUDA {}), NVRTC {}, commit {}, {}. Weights in the {} layout; \
             {} warm-up and {} timed calls per contestant, interleaved, each on a buffer set (inputs and \
             output) of its own so that every call reads cold weights (L2 {} MiB, {}). Times are CUDA-event \
             medians (µs) of the whole call: activation quantizer + matmul (+ split-K combine); 'quantizer \
             alone' times that kernel by itself. TFLOPS count 2·m·n·K. 'x cuBLAS' = cuBLAS time / this time \
             (above 1: faster than cuBLAS), cuBLAS via cublasGemmEx on the same blocks dequantized (each \
             block's d moved to 2^-12 so f16 cannot overflow), bf16 or f16 in, {out}, f32 compute, default \
             algorithm. llama.cpp µs are QUOTED from ANCHORS.md section 4 \
             (measured 2026-11-29 on our H200, not in this run); 'x llama.cpp' = llama.cpp time / this time.",
            self.info.gpu,
            self.info.arch,
            self.info.multiprocessors,
            self.info.driver_release,
            self.info.driver_cuda,
            self.info.nvrtc,
            self.info.commit,
            self.info.date,
            self.config.layout,
            self.config.warmup,
            self.config.repeats,
            self.info.l2_bytes >> 20,
            self.info.l2_source,
        )
    }

    /// The results as one markdown table, to paste into docs/PERF.md.
    pub fn markdown_table(&self) -> String {
        let mut t = String::new();
        t.push_str(
            "| m,n,k | variant | median µs | p20–p80 µs | n | TFLOPS | x cuBLAS bf16 | x cuBLAS f16 | \
             llama.cpp µs (quoted) | x llama.cpp (quoted) | quantizer alone µs | weights on the device (x GGUF) |\n",
        );
        t.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in &self.shapes {
            let shape = s.shape;
            let bf16_us = s.cublas_bf16_us();
            let f16_us = s.cublas_f16_us();
            let llama = llamacpp_anchor_us(shape);
            let best = s.best_variant().map(|b| b.0.to_string());
            let mut rows: Vec<TableRow> = Vec::new();
            for b in [&s.cublas_bf16, &s.cublas_f16].into_iter().flatten() {
                let mut name = b.name.clone();
                if b.name.contains("bf16") && s.baseline_check().is_some_and(|c| c.is_suspect()) {
                    name.push_str(" **SUSPECT**");
                }
                rows.push(TableRow {
                    name,
                    outcome: b.total.clone(),
                    quantizer: None,
                    // Dense bf16 or f16 weights: two bytes each.
                    device_bytes: 2 * shape.m * shape.k,
                });
            }
            for v in &s.variants {
                let mut name = v.name.clone();
                if best.as_deref() == Some(v.name.as_str()) {
                    name = format!("**{name}**");
                }
                rows.push(TableRow {
                    name,
                    outcome: v.total.clone(),
                    quantizer: Some(v.quantizer.clone()),
                    device_bytes: v.device_bytes,
                });
            }
            if rows.is_empty() {
                let why = s.error.as_deref().unwrap_or("nothing was measured");
                let _ = writeln!(
                    t,
                    "| {shape} | — | not measured: {} | — | — | — | — | — | {} | — | — | — |",
                    table_text(why),
                    cell_or_dash(llama.map(fmt_us))
                );
                continue;
            }
            for r in rows {
                let quant = match &r.quantizer {
                    Some(Outcome::Timed(q)) => fmt_us(q.median),
                    _ => "—".to_string(),
                };
                let footprint = footprint_cell(r.device_bytes, shape);
                match &r.outcome {
                    Outcome::Timed(st) => {
                        let _ = writeln!(
                            t,
                            "| {shape} | {} | {} | {}–{} | {} | {:.1} | {} | {} | {} | {} | {quant} | {footprint} |",
                            r.name,
                            fmt_us(st.median),
                            fmt_us(st.p20),
                            fmt_us(st.p80),
                            st.n,
                            tflops(shape, st.median),
                            ratio(bf16_us, Some(st.median)),
                            ratio(f16_us, Some(st.median)),
                            cell_or_dash(llama.map(fmt_us)),
                            ratio(llama, Some(st.median)),
                        );
                    }
                    Outcome::NotTimed(why) => {
                        let _ = writeln!(
                            t,
                            "| {shape} | {} | not timed: {} | — | — | — | — | — | {} | — | {quant} | {footprint} |",
                            r.name,
                            table_text(why),
                            cell_or_dash(llama.map(fmt_us)),
                        );
                    }
                }
            }
        }
        t
    }

    /// Everything a reader must not miss, one sentence each: failed builds, parity failures, suspect or
    /// unanchored baselines, rotations the set cap left under three L2s, launch-bound calls, the abort.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(a) = &self.aborted {
            notes.push(format!("RUN STOPPED EARLY: {a}"));
        }
        for b in &self.builds {
            if let Err(e) = &b.result {
                notes.push(format!("variant '{}' was not built: {e}", b.name));
            }
        }
        if let Some(c) = &self.cublas_note {
            notes.push(c.clone());
        }
        for s in &self.shapes {
            if let Some(e) = &s.error {
                notes.push(format!("{}: {e}", s.shape));
            }
            if let Some(check) = s.baseline_check() {
                if check.is_suspect() {
                    notes.push(check.sentence(s.shape));
                }
            }
            for b in [&s.cublas_bf16, &s.cublas_f16].into_iter().flatten() {
                if let Outcome::NotTimed(why) = &b.total {
                    notes.push(format!("{} at {}: not timed: {why}", b.name, s.shape));
                }
                if b.launch_bound > 0 {
                    notes.push(launch_bound_note(&b.name, s.shape, b.launch_bound));
                }
            }
            for v in &s.variants {
                if let Outcome::NotTimed(why) = &v.total {
                    notes.push(format!(
                        "variant '{}' at {}: not timed: {why}",
                        v.name, s.shape
                    ));
                }
                if v.launch_bound > 0 {
                    notes.push(launch_bound_note(&v.name, s.shape, v.launch_bound));
                }
            }
            let l2x3 = ROTATION_L2_MULTIPLE * self.info.l2_bytes;
            if s.buffer_sets > 0 && s.rotation_bytes <= l2x3 {
                notes.push(format!(
                    "{}: the {} buffer sets hold {} MiB, not more than {} x L2 ({} MiB), so some calls may \
                     read warm inputs",
                    s.shape,
                    s.buffer_sets,
                    s.rotation_bytes >> 20,
                    ROTATION_L2_MULTIPLE,
                    l2x3 >> 20
                ));
            }
        }
        let unanchored: Vec<String> = self
            .shapes
            .iter()
            .filter(|s| s.cublas_bf16_us().is_some() && bf16_anchor_tflops(s.shape).is_none())
            .map(|s| s.shape.to_string())
            .collect();
        if !unanchored.is_empty() {
            notes.push(format!(
                "ANCHORS.md section 4 has no directly called bf16 figure for {}, so the cuBLAS baseline is not \
                 checked there",
                unanchored.join(", ")
            ));
        }
        notes
    }

    /// The Llama-3-8B layer at `tokens` tokens: each matmul's best timed variant (or `only`, when given),
    /// the sum of medians, and tokens per second; the same for cuBLAS bf16.
    pub fn prefill(&self, tokens: usize, only: Option<&str>) -> PrefillSummary {
        let mut matmuls = Vec::new();
        for (name, m, k) in LLAMA3_8B_LAYER {
            let shape = Shape::new(m, tokens, k);
            let result = self.shapes.iter().find(|s| s.shape == shape);
            let chosen = result.and_then(|s| match only {
                Some(v) => s
                    .variant(v)
                    .and_then(|r| r.total.median().map(|t| (r.name.clone(), t))),
                None => s.best_variant().map(|(n, t)| (n.to_string(), t)),
            });
            matmuls.push(PrefillMatmul {
                name,
                shape,
                variant: chosen.as_ref().map(|c| c.0.clone()),
                us: chosen.map(|c| c.1),
                cublas_bf16_us: result.and_then(|s| s.cublas_bf16_us()),
            });
        }
        let sum = |f: &dyn Fn(&PrefillMatmul) -> Option<f64>| -> Option<f64> {
            matmuls.iter().map(f).sum::<Option<f64>>()
        };
        let layer_us = sum(&|p| p.us);
        let cublas_layer_us = sum(&|p| p.cublas_bf16_us);
        PrefillSummary {
            tokens,
            layer_us,
            cublas_layer_us,
            matmuls,
        }
    }

    /// The A/B verdicts of `b` against `a` at every shape both were timed, and overall.
    pub fn ab(&self, a: &str, b: &str) -> AbReport {
        let mut shapes = Vec::new();
        for s in &self.shapes {
            let ta = s.variant(a).map(|v| v.total.clone());
            let tb = s.variant(b).map(|v| v.total.clone());
            let verdict = match (&ta, &tb) {
                (Some(Outcome::Timed(x)), Some(Outcome::Timed(y))) => {
                    Ok(ab_verdict(x.median, y.median))
                }
                (_, Some(Outcome::NotTimed(why))) => Err(format!("B was not timed: {why}")),
                (Some(Outcome::NotTimed(why)), _) => Err(format!("A was not timed: {why}")),
                _ => Err(s
                    .error
                    .clone()
                    .unwrap_or_else(|| "A or B was not run".to_string())),
            };
            shapes.push((s.shape, verdict));
        }
        let pairs: Vec<(f64, f64)> = shapes
            .iter()
            .filter_map(|(_, v)| v.as_ref().ok().map(|v| (v.a_us, v.b_us)))
            .collect();
        let missing = shapes.iter().filter(|(_, v)| v.is_err()).count();
        let overall = ab_overall(&pairs).map(|mut v| {
            if missing > 0 {
                v.lands = false;
            }
            v
        });
        AbReport {
            a: a.to_string(),
            b: b.to_string(),
            shapes,
            overall,
            missing,
        }
    }

    /// One JSON object per line: one per contestant and shape (kind `variant`, `cublas_bf16`, `cublas_f16`),
    /// each with the run's metadata.
    pub fn json_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for s in &self.shapes {
            let bf16_us = s.cublas_bf16_us();
            let f16_us = s.cublas_f16_us();
            let llama = llamacpp_anchor_us(s.shape);
            let check = s.baseline_check();
            let mut push = |kind: &str,
                            name: &str,
                            canonical: Option<&str>,
                            total: &Outcome,
                            extra: &str| {
                let mut o = self.json_head(kind, s);
                let _ = write!(o, ",\"variant\":{}", json_string(name));
                if let Some(c) = canonical {
                    let _ = write!(o, ",\"canonical\":{}", json_string(c));
                }
                match total {
                    Outcome::Timed(st) => {
                        let _ = write!(
                            o,
                            ",\"status\":\"timed\",\"median_us\":{},\"p20_us\":{},\"p80_us\":{},\"min_us\":{},\
                             \"max_us\":{},\"n\":{},\"tflops\":{},\"x_cublas_bf16\":{},\"x_cublas_f16\":{},\
                             \"x_llamacpp_quoted\":{}",
                            json_num(Some(st.median)),
                            json_num(Some(st.p20)),
                            json_num(Some(st.p80)),
                            json_num(Some(st.min)),
                            json_num(Some(st.max)),
                            st.n,
                            json_num(Some(tflops(s.shape, st.median))),
                            json_num(bf16_us.map(|b| b / st.median)),
                            json_num(f16_us.map(|b| b / st.median)),
                            json_num(llama.map(|l| l / st.median)),
                        );
                    }
                    Outcome::NotTimed(why) => {
                        let _ = write!(
                            o,
                            ",\"status\":\"not_timed\",\"error\":{}",
                            json_string(why)
                        );
                    }
                }
                let _ = write!(o, ",\"llamacpp_quoted_us\":{}{extra}}}", json_num(llama));
                lines.push(o);
            };
            if let Some(b) = &s.cublas_bf16 {
                let mut extra = format!(
                    ",\"rel_error\":{},\"launch_bound\":{},\"anchor_bf16_tflops\":{}",
                    json_num(b.rel_error),
                    b.launch_bound,
                    json_num(bf16_anchor_tflops(s.shape))
                );
                if let Some(c) = check {
                    let _ = write!(extra, ",\"suspect\":{}", c.is_suspect());
                }
                push("cublas_bf16", &b.name, None, &b.total, &extra);
            }
            if let Some(b) = &s.cublas_f16 {
                let extra = format!(
                    ",\"rel_error\":{},\"launch_bound\":{}",
                    json_num(b.rel_error),
                    b.launch_bound
                );
                push("cublas_f16", &b.name, None, &b.total, &extra);
            }
            for v in &s.variants {
                let mut extra = format!(
                    ",\"quantizer_median_us\":{},\"launch_bound\":{},\"device_bytes\":{},\"gguf_bytes\":{}",
                    json_num(v.quantizer.median()),
                    v.launch_bound,
                    v.device_bytes,
                    crate::weights::gguf_bytes(s.shape.m, s.shape.k)
                );
                if let Some(q) = v.quantizer.stats() {
                    let _ = write!(
                        extra,
                        ",\"quantizer_p20_us\":{},\"quantizer_p80_us\":{}",
                        json_num(Some(q.p20)),
                        json_num(Some(q.p80))
                    );
                }
                if let Some(p) = &v.parity {
                    let _ = write!(
                        extra,
                        ",\"parity_passed\":{},\"parity_checked\":{},\"parity_mismatches\":{},\
                         \"parity_unwritten\":{},\"parity_quant_mismatches\":{}",
                        p.passed(),
                        p.checked,
                        p.mismatches,
                        p.unwritten,
                        p.quant_mismatches
                    );
                }
                push("variant", &v.name, Some(&v.canonical), &v.total, &extra);
            }
            if s.variants.is_empty() && s.cublas_bf16.is_none() && s.cublas_f16.is_none() {
                let mut o = self.json_head("shape", s);
                let _ = write!(
                    o,
                    ",\"status\":\"not_measured\",\"error\":{}}}",
                    json_string(s.error.as_deref().unwrap_or("nothing was measured"))
                );
                lines.push(o);
            }
        }
        lines
    }

    fn json_head(&self, kind: &str, s: &ShapeResult) -> String {
        let i = &self.info;
        format!(
            "{{\"mmqgen_bench\":1,\"kind\":{},\"date\":{},\"commit\":{},\"gpu\":{},\"arch\":{},\
             \"driver\":{},\"driver_cuda\":{},\"nvrtc\":{},\"l2_bytes\":{},\"layout\":{},\"warmup\":{},\
             \"repeats\":{},\"seed\":{},\"cublas_out\":{},\"m\":{},\"n\":{},\"k\":{},\"buffer_sets\":{},\
             \"rotation_bytes\":{}",
            json_string(kind),
            json_string(&i.date),
            json_string(&i.commit),
            json_string(&i.gpu),
            json_string(&i.arch),
            json_string(&i.driver_release),
            json_string(&i.driver_cuda),
            json_string(&i.nvrtc),
            i.l2_bytes,
            json_string(self.config.layout.keyword()),
            self.config.warmup,
            self.config.repeats,
            self.config.seed,
            json_string(self.config.cublas_out.keyword()),
            s.shape.m,
            s.shape.n,
            s.shape.k,
            s.buffer_sets,
            s.rotation_bytes,
        )
    }
}

fn launch_bound_note(name: &str, shape: Shape, count: usize) -> String {
    format!(
        "{name} at {shape}: {count} timed call(s) took longer to queue than the spin kernel ahead of them lasts, \
         so their time may include launch gaps"
    )
}

/// A JSON number, or `null` when absent or not finite.
pub fn json_num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".to_string(),
    }
}

/// One matmul of the prefill layer.
#[derive(Clone, Debug, PartialEq)]
pub struct PrefillMatmul {
    pub name: &'static str,
    pub shape: Shape,
    pub variant: Option<String>,
    pub us: Option<f64>,
    pub cublas_bf16_us: Option<f64>,
}

/// A Llama-3-8B layer's matmuls at one prompt length.
#[derive(Clone, Debug, PartialEq)]
pub struct PrefillSummary {
    pub tokens: usize,
    pub matmuls: Vec<PrefillMatmul>,
    /// Sum of the chosen variants' medians, when every matmul has one.
    pub layer_us: Option<f64>,
    pub cublas_layer_us: Option<f64>,
}

impl PrefillSummary {
    /// Tokens per second through the layer's matmuls.
    pub fn tokens_per_s(&self) -> Option<f64> {
        self.layer_us.map(|us| self.tokens as f64 / (us * 1e-6))
    }

    pub fn cublas_tokens_per_s(&self) -> Option<f64> {
        self.cublas_layer_us
            .map(|us| self.tokens as f64 / (us * 1e-6))
    }

    /// A short markdown block.
    pub fn markdown(&self) -> String {
        let mut t = format!(
            "Llama-3-8B layer matmuls (q, k, v, o, gate, up, down) at {} tokens:\n\n\
             | matmul | m,n,k | variant | median µs | cuBLAS bf16 µs |\n|---|---|---|---:|---:|\n",
            self.tokens
        );
        for p in &self.matmuls {
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {} |",
                p.name,
                p.shape,
                p.variant.as_deref().unwrap_or("not timed"),
                cell_or_dash(p.us.map(fmt_us)),
                cell_or_dash(p.cublas_bf16_us.map(fmt_us))
            );
        }
        let _ = writeln!(
            t,
            "| **layer** | | | {} | {} |",
            cell_or_dash(self.layer_us.map(fmt_us)),
            cell_or_dash(self.cublas_layer_us.map(fmt_us))
        );
        let _ = writeln!(
            t,
            "\nTokens per second through one layer's matmuls: {} with the variants, {} with cuBLAS bf16 \
             ({}).",
            cell_or_dash(self.tokens_per_s().map(|v| format!("{v:.0}"))),
            cell_or_dash(self.cublas_tokens_per_s().map(|v| format!("{v:.0}"))),
            match (self.layer_us, self.cublas_layer_us) {
                (Some(a), Some(b)) => format!("variants at {:.2}x cuBLAS bf16", b / a),
                _ => "a matmul is missing a time, so no ratio".to_string(),
            }
        );
        t
    }
}

/// The A/B verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct AbReport {
    pub a: String,
    pub b: String,
    pub shapes: Vec<(Shape, Result<AbVerdict, String>)>,
    /// On the sums of medians over the shapes where both were timed; never lands when a shape is missing.
    pub overall: Option<AbVerdict>,
    /// Shapes without a verdict.
    pub missing: usize,
}

impl AbReport {
    /// The verdict, one line per shape and one overall.
    pub fn text(&self) -> String {
        let word = |v: &AbVerdict| if v.lands { "LANDS" } else { "does not land" };
        let mut t = format!(
            "A/B: A = {}, B = {}; B lands only if median(A) / median(B) - 1 >= +{:.1}% (interleaved, same \
             shapes and buffers)\n",
            self.a,
            self.b,
            LANDING_BAR * 100.0
        );
        for (shape, v) in &self.shapes {
            match v {
                Ok(v) => {
                    let _ = writeln!(
                        t,
                        "  {shape}: A {} µs, B {} µs: {:+.2}% -> {}",
                        fmt_us(v.a_us),
                        fmt_us(v.b_us),
                        v.gain * 100.0,
                        word(v)
                    );
                }
                Err(e) => {
                    let _ = writeln!(t, "  {shape}: no verdict: {e}");
                }
            }
        }
        match &self.overall {
            Some(v) => {
                let _ = writeln!(
                    t,
                    "  overall (sum of medians over {} shape(s)): A {} µs, B {} µs: {:+.2}% -> {}{}",
                    self.shapes.len() - self.missing,
                    fmt_us(v.a_us),
                    fmt_us(v.b_us),
                    v.gain * 100.0,
                    if v.lands {
                        "B LANDS"
                    } else {
                        "B does not land"
                    },
                    if self.missing > 0 {
                        format!(" ({} shape(s) without a verdict)", self.missing)
                    } else {
                        String::new()
                    }
                );
            }
            None => {
                let _ = writeln!(
                    t,
                    "  overall: no shape was timed for both, so B does not land"
                );
            }
        }
        t
    }
}

// ---------------------------------------------------------------------------------------------------------
// The GPU side.

const SPIN_KERNEL: &str = "mmqgen_bench_spin";
const SPIN_SOURCE: &str = r#"
extern "C" __global__ void mmqgen_bench_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"#;

/// Whether a driver error left the context unusable.
fn sticky(e: Option<DriverError>) -> bool {
    e.is_some_and(is_sticky_kernel_fault)
}

/// A failure while running something on the GPU: `Fatal` when the context is gone.
#[derive(Debug)]
enum Fail {
    Local(String),
    Fatal(String),
}

impl Fail {
    fn device(e: DeviceError) -> Fail {
        if sticky(e.driver_error()) {
            Fail::Fatal(e.to_string())
        } else {
            Fail::Local(e.to_string())
        }
    }

    fn launch(e: LaunchError) -> Fail {
        if sticky(e.driver_error()) {
            Fail::Fatal(e.to_string())
        } else {
            Fail::Local(e.to_string())
        }
    }

    fn driver(what: &str, e: DriverError) -> Fail {
        Fail::device(DeviceError::cuda(what, e))
    }

    fn context(self, what: &str) -> Fail {
        match self {
            Fail::Local(s) => Fail::Local(format!("{what}: {s}")),
            Fail::Fatal(s) => Fail::Fatal(format!("{what}: {s}")),
        }
    }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// Threads for host-side work (input generation, references, registration, compilation).
fn worker_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 16)
}

/// `f` over `items` on [`worker_threads`] threads, results in item order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = worker_threads().min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let f = &f;
    let mut parts: Vec<Vec<(usize, R)>> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= items.len() {
                            break;
                        }
                        out.push((i, f(&items[i])));
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            parts.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
    });
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every item was mapped"))
        .collect()
}

/// Row ranges of about `rows / threads` rows, for splitting host work.
fn row_chunks(rows: usize) -> Vec<(usize, usize)> {
    let per = rows.div_ceil(worker_threads() * 4).max(1);
    (0..rows)
        .step_by(per)
        .map(|r| (r, (r + per).min(rows)))
        .collect()
}

/// The spin kernel queued ahead of each timed call.
struct Spinner {
    _module: Arc<CudaModule>,
    func: CudaFunction,
    cycles: i64,
    us: f64,
}

impl Spinner {
    /// The spin kernel, and how long one spin took just now (µs; at whatever clock the GPU was at).
    fn new(gpu: &Gpu, stream: &Arc<CudaStream>) -> Result<(Spinner, f64), BenchError> {
        let compiled = compile_cubin(SPIN_SOURCE, "mmqgen_bench_spin.cu", gpu.arch(), false)
            .map_err(|e| {
                BenchError::Setup(format!("compiling the bench's spin kernel failed: {e}"))
            })?;
        let ctx = gpu.context().clone();
        let module = ctx
            .load_module(Ptx::from_binary(compiled.cubin))
            .map_err(|e| DeviceError::cuda("loading the bench's spin kernel", e))?;
        let func = module
            .load_function(SPIN_KERNEL)
            .map_err(|e| DeviceError::cuda("finding the bench's spin kernel", e))?;
        // Cycles for SPIN_TARGET_US at the GPU's top clock (10% over), so that the spin lasts at least that long
        // at any clock; calibrating on an idle GPU (345 MHz seen on our H200) would make it far too short once
        // the clocks rise.
        let clock_khz = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
            .ok()
            .filter(|&v| v > 0)
            .map_or(2_000_000.0, f64::from);
        let spinner = Spinner {
            _module: module,
            func,
            cycles: ((SPIN_TARGET_US * clock_khz / 1000.0 * 1.1).ceil() as i64).max(10_000),
            us: SPIN_TARGET_US,
        };
        // One spin, timed, so that a kernel that cannot run fails here with a sentence (and for the log).
        let ev = || {
            stream
                .context()
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| DeviceError::cuda("creating a timing event", e))
        };
        let (start, stop) = (ev()?, ev()?);
        start
            .record(stream)
            .map_err(|e| DeviceError::cuda("recording a timing event", e))?;
        spinner
            .launch(stream)
            .map_err(|e| BenchError::Setup(fail_text(e)))?;
        stop.record(stream)
            .map_err(|e| DeviceError::cuda("recording a timing event", e))?;
        let ms = start
            .elapsed_ms(&stop)
            .map_err(|e| DeviceError::cuda("running the bench's spin kernel", e))?;
        Ok((spinner, ms as f64 * 1e3))
    }

    fn launch(&self, stream: &Arc<CudaStream>) -> Result<(), Fail> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&self.func);
        b.arg(&self.cycles);
        // SAFETY: the kernel takes one `long long` by value and touches no memory.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(|e| Fail::driver("launching the bench's spin kernel", e))
    }
}

/// Two timing events, reused for every call.
struct Timer {
    start: CudaEvent,
    stop: CudaEvent,
}

impl Timer {
    fn new(stream: &Arc<CudaStream>) -> Result<Timer, DeviceError> {
        let ev = || {
            stream
                .context()
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| DeviceError::cuda("creating a timing event", e))
        };
        Ok(Timer {
            start: ev()?,
            stop: ev()?,
        })
    }

    /// Queues the spin, the start event, `work`, the stop event; waits; returns (µs on the GPU, µs the host
    /// took to queue the start event, the work and the stop event).
    fn time(
        &self,
        stream: &Arc<CudaStream>,
        spinner: &Spinner,
        work: impl FnOnce() -> Result<(), Fail>,
    ) -> Result<(f64, f64), Fail> {
        spinner.launch(stream)?;
        let queued = Instant::now();
        self.start
            .record(stream)
            .map_err(|e| Fail::driver("recording the start event", e))?;
        work()?;
        self.stop
            .record(stream)
            .map_err(|e| Fail::driver("recording the stop event", e))?;
        let enqueue_us = queued.elapsed().as_secs_f64() * 1e6;
        self.stop
            .synchronize()
            .map_err(|e| Fail::driver("waiting for the timed call", e))?;
        let ms = self
            .start
            .elapsed_ms(&self.stop)
            .map_err(|e| Fail::driver("reading the event timer", e))?;
        Ok((ms as f64 * 1e3, enqueue_us))
    }
}

/// The dense element types of the baselines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dense {
    Bf16,
    F16,
}

impl Dense {
    fn name(self) -> &'static str {
        match self {
            Dense::Bf16 => "cuBLAS bf16",
            Dense::F16 => "cuBLAS f16",
        }
    }

    fn data_type(self) -> cudarc::cublas::sys::cudaDataType {
        match self {
            Dense::Bf16 => cudarc::cublas::sys::cudaDataType::CUDA_R_16BF,
            Dense::F16 => cudarc::cublas::sys::cudaDataType::CUDA_R_16F,
        }
    }

    fn bits(self, v: f32) -> u16 {
        match self {
            Dense::Bf16 => bf16::from_f32(v).to_bits(),
            Dense::F16 => f16::from_f32(v.clamp(-65504.0, 65504.0)).to_bits(),
        }
    }

    fn value(self, bits: u16) -> f64 {
        match self {
            Dense::Bf16 => bf16::from_bits(bits).to_f64(),
            Dense::F16 => f16::from_bits(bits).to_f64(),
        }
    }
}

/// A cuBLAS handle on the bench's stream.
struct Cublas {
    blas: cudarc::cublas::CudaBlas,
    out: CublasOut,
}

fn guard_cublas<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(format!(
            "the cuBLAS bindings panicked while {what}: {}",
            panic_text(p)
        )),
    }
}

impl Cublas {
    /// The handle, or a sentence saying why there is none (no library on the loader path, say).
    fn open(stream: &Arc<CudaStream>, out: CublasOut) -> Result<Cublas, String> {
        // SAFETY: only tries dlopen on cudarc's candidate names (libcublas.so.13 among them).
        let present =
            catch_unwind(|| unsafe { cudarc::cublas::sys::is_culib_present() }).unwrap_or(false);
        if !present {
            return Err(
                "cuBLAS baselines not measured: libcublas.so.13 could not be loaded (add the folder holding \
                 libcublas.so.13 and libcublasLt.so.13 to LD_LIBRARY_PATH)"
                    .to_string(),
            );
        }
        guard_cublas("creating a handle", || {
            cudarc::cublas::CudaBlas::new(stream.clone())
                .map(|blas| Cublas { blas, out })
                .map_err(|e| {
                    format!("cuBLAS baselines not measured: cublasCreate failed with {e:?}")
                })
        })
    }

    fn out_type(&self, dense: Dense) -> cudarc::cublas::sys::cudaDataType {
        match self.out {
            CublasOut::Input => dense.data_type(),
            CublasOut::F32 => cudarc::cublas::sys::cudaDataType::CUDA_R_32F,
        }
    }

    fn out_bytes(&self) -> usize {
        match self.out {
            CublasOut::Input => 2,
            CublasOut::F32 => 4,
        }
    }

    /// Queues `out[n][m] = x[n][K] * W^T`.
    fn gemm(
        &self,
        stream: &Arc<CudaStream>,
        dense: Dense,
        args: GemmArgs,
        w: &CudaSlice<u16>,
        x: &CudaSlice<u16>,
        out: &mut CudaSlice<u8>,
    ) -> Result<(), Fail> {
        use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t};
        let op = |o: GemmOp| match o {
            GemmOp::N => cublasOperation_t::CUBLAS_OP_N,
            GemmOp::T => cublasOperation_t::CUBLAS_OP_T,
        };
        let alpha = 1.0f32;
        let beta = 0.0f32;
        let out_type = self.out_type(dense);
        let result = guard_cublas("calling cublasGemmEx", || {
            let (a, _ra) = w.device_ptr(stream);
            let (b, _rb) = x.device_ptr(stream);
            let (c, _rc) = out.device_ptr_mut(stream);
            // SAFETY: `a` holds m*K, `b` n*K 16-bit values and `c` n*m outputs of `out_type` (the caller
            // allocated them for these arguments, which `GemmArgs::check` accepted); alpha and beta are host
            // f32, as CUBLAS_COMPUTE_32F with the default pointer mode requires.
            unsafe {
                cudarc::cublas::result::gemm_ex(
                    *self.blas.handle(),
                    op(args.transa),
                    op(args.transb),
                    args.m,
                    args.n,
                    args.k,
                    &alpha as *const f32 as *const c_void,
                    a as *const c_void,
                    dense.data_type(),
                    args.lda,
                    b as *const c_void,
                    dense.data_type(),
                    args.ldb,
                    &beta as *const f32 as *const c_void,
                    c as *mut c_void,
                    out_type,
                    args.ldc,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
                )
            }
            .map_err(|e| {
                format!(
                    "cublasGemmEx ({}, m = {}, n = {}, k = {}) failed with {e:?}",
                    dense.name(),
                    args.m,
                    args.n,
                    args.k
                )
            })
        });
        result.map_err(Fail::Local)
    }
}

/// One built variant.
struct Built {
    desc: VariantDescription,
    variant: LoadedVariant,
}

/// The host side of one shape's inputs.
struct HostInputs {
    raw: Vec<u8>,
    x: Vec<f32>,
    /// Per numerics mode present: the reference quantization and the expected sampled outputs.
    modes: Vec<(NumericsMode, QuantizedActivations, Vec<f32>)>,
    indices: Vec<usize>,
}

/// The dense inputs of the baselines, as 16-bit patterns.
struct DenseHost {
    dense: Dense,
    w: Vec<u16>,
    x: Vec<u16>,
}

/// The device buffers of one dense baseline, per set.
struct DenseDevice {
    dense: Dense,
    w: Vec<CudaSlice<u16>>,
    x: Vec<CudaSlice<u16>>,
    out: Vec<CudaSlice<u8>>,
    result: BaselineResult,
    /// Its output matched the CPU product: it is timed.
    ready: bool,
}

/// The contestants of a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contestant {
    Total(usize),
    Quantizer(usize),
    Cublas(usize),
}

/// What the whole run shares.
struct RunCtx<'a> {
    gpu: &'a Gpu,
    stream: Arc<CudaStream>,
    built: Vec<Built>,
    spinner: Spinner,
    timer: Timer,
    cublas: Option<Cublas>,
    cfg: &'a BenchConfig,
    l2_bytes: usize,
}

/// Times `descs` on `gpu` as `cfg` says; `progress` gets a line now and then (for stderr).
pub fn run_bench(
    gpu: &Gpu,
    descs: &[VariantDescription],
    cfg: &BenchConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport, BenchError> {
    if cfg.repeats == 0 {
        return Err(BenchError::Setup(
            "repeats = 0: at least one timed call per contestant is needed".into(),
        ));
    }
    let started = Instant::now();
    let info0 = gpu.info();
    let (l2_bytes, l2_source) = match gpu
        .context()
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
    {
        Ok(v) if v > 0 => (v as usize, "device attribute".to_string()),
        Ok(v) => (
            FALLBACK_L2_BYTES,
            format!("fallback: the device reported {v}"),
        ),
        Err(e) => (
            FALLBACK_L2_BYTES,
            format!(
                "fallback: reading the attribute failed with {}",
                describe_driver_error(e)
            ),
        ),
    };
    let stream = gpu
        .context()
        .new_stream()
        .map_err(|e| DeviceError::cuda("creating the bench's stream", e))?;
    progress("bench: compiling the spin kernel and calibrating it");
    let (spinner, first_spin_us) = Spinner::new(gpu, &stream)?;
    let timer = Timer::new(&stream)?;
    let info = RunInfo {
        gpu: info0.name.clone(),
        arch: info0.arch.clone(),
        multiprocessors: info0.multiprocessors,
        driver_cuda: format!("{}.{}", info0.driver_version.0, info0.driver_version.1),
        driver_release: driver_release(),
        nvrtc: match nvrtc_version() {
            Ok((a, b)) => format!("{a}.{b}"),
            Err(e) => format!("unknown ({e})"),
        },
        commit: commit(),
        date: utc_now(),
        l2_bytes,
        l2_source,
        spin_us: spinner.us,
    };
    progress(&format!(
        "bench: {} | L2 {} MiB ({}) | spin {} cycles, at least {:.0} µs at the top clock ({:.0} µs on the \
         first, cold run) | NVRTC {} | driver {} | commit {}",
        info0.summary(),
        l2_bytes >> 20,
        info.l2_source,
        spinner.cycles,
        spinner.us,
        first_spin_us,
        info.nvrtc,
        info.driver_release,
        info.commit
    ));

    let (cublas, cublas_note) = if cfg.cublas {
        match Cublas::open(&stream, cfg.cublas_out) {
            Ok(c) => (Some(c), None),
            Err(e) => {
                progress(&format!("bench: {e}"));
                (None, Some(e))
            }
        }
    } else {
        (
            None,
            Some("cuBLAS baselines not measured: --no-cublas was given".to_string()),
        )
    };

    // Build (render, compile, load) every variant, several at a time.
    let t = Instant::now();
    progress(&format!("bench: building {} variant(s)", descs.len()));
    let outcomes = parallel_map(descs, |desc| {
        if let Err(e) = gpu.check_variant_arch(desc) {
            return Err(format!("skipped: {e}"));
        }
        match catch_unwind(AssertUnwindSafe(|| {
            build_variant(gpu, desc, cfg.cubin_cache.as_deref())
        })) {
            Ok(Ok(built)) => Ok(built),
            Ok(Err(e)) => Err(e.to_string()),
            Err(p) => Err(format!("building panicked: {}", panic_text(p))),
        }
    });
    let mut builds = Vec::new();
    let mut built = Vec::new();
    for (desc, outcome) in descs.iter().zip(outcomes) {
        let canonical = canonical_name(desc);
        match outcome {
            Ok((variant, info)) => {
                builds.push(BuildResult {
                    name: desc.name.to_string(),
                    canonical,
                    result: Ok(info),
                });
                built.push(Built {
                    desc: desc.clone(),
                    variant,
                });
            }
            Err(e) => {
                progress(&format!("bench: variant '{}' not built: {e}", desc.name));
                builds.push(BuildResult {
                    name: desc.name.to_string(),
                    canonical,
                    result: Err(e),
                });
            }
        }
    }
    progress(&format!(
        "bench: built {} of {} variant(s) in {:.1} s ({} from the cubin cache)",
        built.len(),
        descs.len(),
        t.elapsed().as_secs_f64(),
        builds
            .iter()
            .filter(|b| b.result.as_ref().is_ok_and(|i| i.from_cache))
            .count()
    ));

    let rc = RunCtx {
        gpu,
        stream,
        built,
        spinner,
        timer,
        cublas,
        cfg,
        l2_bytes,
    };
    let mut report = BenchReport {
        info,
        config: cfg.clone(),
        builds,
        cublas_note,
        shapes: Vec::new(),
        aborted: None,
    };
    let total = cfg.shapes.len();
    for (i, &shape) in cfg.shapes.iter().enumerate() {
        let label = format!("bench: shape {}/{total} ({shape})", i + 1);
        let t = Instant::now();
        let mut result = ShapeResult::empty(shape);
        match run_shape(&rc, shape, &mut result, &label, progress) {
            Ok(()) => {}
            Err(Fail::Local(e)) => result.error = Some(e),
            Err(Fail::Fatal(e)) => {
                let why = format!(
                    "a kernel fault at {shape} left the CUDA context unusable, so no later shape was measured: \
                     {e}"
                );
                progress(&format!("{label}: {why}"));
                result.error = Some(e);
                result.wall_s = t.elapsed().as_secs_f64();
                report.shapes.push(result);
                report.aborted = Some(why);
                // The context is gone: dropping device objects would only record more errors.
                std::mem::forget(rc);
                return Ok(report);
            }
        }
        result.wall_s = t.elapsed().as_secs_f64();
        progress(&format!(
            "{label}: done in {:.1} s (run {:.0} s so far){}",
            result.wall_s,
            started.elapsed().as_secs_f64(),
            result
                .best_variant()
                .map(|(n, us)| format!(
                    "; best {n} {} µs = {:.0} TFLOPS{}",
                    fmt_us(us),
                    tflops(shape, us),
                    result
                        .cublas_bf16_us()
                        .map(|b| format!(", {:.2}x cuBLAS bf16", b / us))
                        .unwrap_or_default()
                ))
                .unwrap_or_default()
        ));
        if let Some(check) = result.baseline_check() {
            if check.is_suspect() {
                progress(&format!("bench: {}", check.sentence(shape)));
            }
        }
        report.shapes.push(result);
    }
    Ok(report)
}

/// The inputs of `shape`, the reference quantization per mode and the expected sampled outputs.
fn host_inputs(rc: &RunCtx, shape: Shape) -> HostInputs {
    let Shape { m, n, k } = shape;
    let (raw, x) = digest_case_inputs(m, n, k, rc.cfg.seed);
    let indices = sample_indices(m, n, rc.cfg.seed, rc.cfg.parity_samples);
    let mut modes: Vec<NumericsMode> = Vec::new();
    for b in &rc.built {
        if !modes.contains(&b.desc.mode) {
            modes.push(b.desc.mode);
        }
    }
    let modes = modes
        .into_iter()
        .map(|mode| {
            let acts = quantize_activations(&x, n, k, mode.activation_group() as usize);
            let expected = parallel_map(&indices, |&i| {
                reference_output(&raw, m, k, &acts, mode, i % m, i / m)
            });
            (mode, acts, expected)
        })
        .collect();
    HostInputs {
        raw,
        x,
        modes,
        indices,
    }
}

/// The blocks the dense baselines dequantize: `raw` with every block's `d` (an f16) moved to the binary
/// exponent [`DENSE_D_EXPONENT`], its sign and mantissa kept (a zero `d` stays zero).
pub fn dense_blocks(raw: &[u8]) -> Vec<u8> {
    use mmqgen_formats::q6k::{BLOCK_BYTES, D_OFFSET};
    let biased = (15 + DENSE_D_EXPONENT) as u16;
    let mut out = raw.to_vec();
    for block in out.chunks_exact_mut(BLOCK_BYTES) {
        let bits = u16::from_le_bytes([block[D_OFFSET], block[D_OFFSET + 1]]);
        if bits & 0x7FFF != 0 {
            let d = (bits & 0x83FF) | (biased << 10);
            block[D_OFFSET..D_OFFSET + 2].copy_from_slice(&d.to_le_bytes());
        }
    }
    out
}

/// The dense weights `[m][K]`: [`dense_blocks`] dequantized on the CPU by `mmqgen_formats::dequantize_rows`.
fn dense_weights(raw: &[u8], shape: Shape) -> Result<Vec<f32>, String> {
    let Shape { m, k, .. } = shape;
    let row_bytes = k / 256 * mmqgen_formats::BLOCK_BYTES;
    let parts = parallel_map(&row_chunks(m), |&(r0, r1)| {
        mmqgen_formats::dequantize_rows(&dense_blocks(&raw[r0 * row_bytes..r1 * row_bytes]))
            .map_err(|e| format!("dequantizing the weights for the dense baselines failed: {e}"))
    });
    let mut w = Vec::with_capacity(m * k);
    for p in parts {
        w.extend(p?);
    }
    Ok(w)
}

/// `values` as 16-bit patterns of `dense`, converted on several threads.
fn convert(values: &[f32], dense: Dense) -> Vec<u16> {
    let chunk = values.len().div_ceil(worker_threads() * 4).max(1);
    let ranges: Vec<(usize, usize)> = (0..values.len())
        .step_by(chunk)
        .map(|i| (i, (i + chunk).min(values.len())))
        .collect();
    parallel_map(&ranges, |&(a, b)| {
        values[a..b]
            .iter()
            .map(|&v| dense.bits(v))
            .collect::<Vec<u16>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

fn alloc<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    len: usize,
    what: &str,
) -> Result<CudaSlice<T>, Fail> {
    stream.alloc_zeros::<T>(len).map_err(|e| {
        Fail::driver(
            &format!(
                "allocating {what} ({} MiB)",
                (len * std::mem::size_of::<T>()) >> 20
            ),
            e,
        )
    })
}

/// The parity check of one built variant at `shape` on set 0.
#[allow(clippy::too_many_arguments)]
fn check_parity(
    rc: &RunCtx,
    b: &Built,
    shape: Shape,
    host: &HostInputs,
    weights: &RegisteredWeights,
    x: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    ws: &mut Workspace,
) -> Result<ParitySummary, Fail> {
    let Shape { m, n, .. } = shape;
    let stream = &rc.stream;
    poison_f32(stream, out, "the output").map_err(Fail::device)?;
    b.variant
        .matmul(weights, x, out, n, stream, ws)
        .map_err(|e| Fail::launch(e).context("queueing the parity run"))?;
    stream
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the parity run", e))?;
    let got = read_prefix(stream, out, m * n, "output")
        .map_err(|e| Fail::launch(e).context("reading the parity output back"))?;
    let acts = ws
        .read_quantized(stream)
        .map_err(|e| Fail::launch(e).context("reading the quantized activations back"))?;
    let (_, want_acts, expected) = host
        .modes
        .iter()
        .find(|(mode, _, _)| *mode == b.desc.mode)
        .expect("every built variant's mode has a reference");
    let c = compare_sampled(&got, m, &host.indices, |t, j| {
        let pos = host
            .indices
            .binary_search(&(t * m + j))
            .expect("compare_sampled asks only for the sampled indices");
        expected[pos]
    });
    let q = compare_quantized(&acts, want_acts);
    let (unwritten, first_unwritten) = count_unwritten(&got);
    let first_bad = c
        .first_bad
        .map(|f| f.to_string())
        .or(q.first_bad)
        .or_else(|| {
            first_unwritten.map(|i| format!("token {} row {} never written", i / m, i % m))
        });
    Ok(ParitySummary {
        checked: c.checked,
        mismatches: c.mismatches,
        unwritten,
        quant_checked: q.checked,
        quant_mismatches: q.mismatches,
        first_bad,
    })
}

/// Sampled `|out - ref| / |ref|` of one baseline call on set 0 against an f64 CPU product of the same
/// converted inputs; `Err` when the call fails.
fn check_dense(
    rc: &RunCtx,
    cublas: &Cublas,
    host: &DenseHost,
    dev: &mut DenseDevice,
    shape: Shape,
    args: GemmArgs,
) -> Result<f64, Fail> {
    let Shape { m, n, k } = shape;
    let stream = &rc.stream;
    // Poison: all ones is NaN in bf16, f16 and f32.
    let poison = vec![0xFFu8; dev.out[0].len()];
    stream
        .memcpy_htod(&poison, &mut dev.out[0])
        .map_err(|e| Fail::driver("poisoning the cuBLAS output", e))?;
    cublas.gemm(
        stream,
        dev.dense,
        args,
        &dev.w[0],
        &dev.x[0],
        &mut dev.out[0],
    )?;
    stream
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the cuBLAS check", e))?;
    let bytes = read_prefix(stream, &dev.out[0], dev.out[0].len(), "cuBLAS output")
        .map_err(|e| Fail::launch(e).context("reading the cuBLAS output back"))?;
    let got = |i: usize| -> f64 {
        match cublas.out {
            CublasOut::F32 => {
                f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes")) as f64
            }
            CublasOut::Input => dev
                .dense
                .value(u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]])),
        }
    };
    let total = m * n;
    let mut idx: Vec<usize> = (0..512u64)
        .map(|i| (sub_seed(rc.cfg.seed, 1000 + i) % total as u64) as usize)
        .collect();
    idx.extend([0, m - 1, (n - 1) * m, total - 1]);
    idx.sort_unstable();
    idx.dedup();
    let refs = parallel_map(&idx, |&i| {
        let (t, r) = (i / m, i % m);
        (0..k)
            .map(|l| host.dense.value(host.x[t * k + l]) * host.dense.value(host.w[r * k + l]))
            .sum::<f64>()
    });
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (&i, &want) in idx.iter().zip(&refs) {
        let g = got(i);
        if !g.is_finite() {
            return Err(Fail::Local(format!(
                "{} wrote a non-finite output at token {} row {} (want {want:e}): the argument mapping or the \
                 library is wrong",
                dev.dense.name(),
                i / m,
                i % m
            )));
        }
        num += (g - want) * (g - want);
        den += want * want;
    }
    Ok(if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    })
}

/// Everything at one shape.
fn run_shape(
    rc: &RunCtx,
    shape: Shape,
    result: &mut ShapeResult,
    label: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<(), Fail> {
    let Shape { m, n, k } = shape;
    crate::launch::check_shape(m, n, k)
        .map_err(|e| Fail::Local(format!("the shape cannot be run: {e}")))?;
    let stream = &rc.stream;
    let cfg = rc.cfg;
    let t = Instant::now();
    let host = host_inputs(rc, shape);
    progress(&format!(
        "{label}: inputs and {} reference sample(s) of {} outputs ready in {:.1} s",
        host.modes.len(),
        host.indices.len(),
        t.elapsed().as_secs_f64()
    ));

    // Set 0: the activations, an output, each variant's weights and workspace.
    let mut xs: Vec<CudaSlice<f32>> = vec![stream
        .clone_htod(&host.x)
        .map_err(|e| Fail::driver("uploading the activations", e))?];
    let mut outs: Vec<CudaSlice<f32>> = vec![alloc::<f32>(stream, m * n, "the output")?];
    let regs = parallel_map(&rc.built, |b| {
        RegisteredWeights::register_for(rc.gpu, &host.raw, m, k, cfg.layout, &b.desc)
    });
    let mut weights: Vec<Vec<RegisteredWeights>> = Vec::new();
    let mut workspaces: Vec<Option<Workspace>> = Vec::new();
    let mut results: Vec<VariantResult> = Vec::new();
    for (b, reg) in rc.built.iter().zip(regs) {
        let mut r = VariantResult {
            name: b.desc.name.to_string(),
            canonical: b.variant.canonical().to_string(),
            parity: None,
            total: Outcome::NotTimed("not run".into()),
            quantizer: Outcome::NotTimed("not timed".into()),
            launch_bound: 0,
            device_bytes: crate::weights::device_footprint([&b.desc], m, k, cfg.layout),
        };
        let ws = match reg {
            Err(e) => {
                let f = Fail::Local(format!("registering the weights failed: {e}"));
                if let WeightsErrorKind::Fatal(s) = classify_weights(&e) {
                    return Err(Fail::Fatal(s));
                }
                r.total = Outcome::NotTimed(fail_text(f));
                weights.push(Vec::new());
                None
            }
            Ok(w) => {
                weights.push(vec![w]);
                match Workspace::for_description(stream, &b.desc, m, n, k) {
                    Ok(ws) => Some(ws),
                    Err(e) => {
                        let f = Fail::launch(e).context("allocating the workspace");
                        if let Fail::Fatal(s) = f {
                            return Err(Fail::Fatal(s));
                        }
                        r.total = Outcome::NotTimed(fail_text(f));
                        None
                    }
                }
            }
        };
        workspaces.push(ws);
        results.push(r);
    }
    rc.gpu
        .context()
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the uploads", e))?;

    // Parity on set 0.
    let mut passing: Vec<usize> = Vec::new();
    for (i, b) in rc.built.iter().enumerate() {
        let Some(ws) = workspaces[i].as_mut() else {
            continue;
        };
        match check_parity(
            rc,
            b,
            shape,
            &host,
            &weights[i][0],
            &xs[0],
            &mut outs[0],
            ws,
        ) {
            Ok(p) => {
                if p.passed() {
                    passing.push(i);
                } else {
                    results[i].total = Outcome::NotTimed(p.failure_sentence());
                    progress(&format!(
                        "{label}: variant '{}' {}",
                        b.desc.name,
                        p.failure_sentence()
                    ));
                }
                results[i].parity = Some(p);
            }
            Err(Fail::Fatal(e)) => {
                return Err(Fail::Fatal(format!(
                    "variant '{}' during its parity run: {e}",
                    b.desc.name
                )))
            }
            Err(Fail::Local(e)) => {
                results[i].total = Outcome::NotTimed(format!("the parity run failed: {e}"));
            }
        }
    }
    progress(&format!(
        "{label}: parity passed for {} of {} variant(s) ({} sampled outputs each, plus every quantized \
         activation)",
        passing.len(),
        rc.built.len(),
        host.indices.len()
    ));

    // The dense baselines.
    let mut dense: Vec<DenseDevice> = Vec::new();
    if let Some(cublas) = &rc.cublas {
        let args = GemmArgs::for_linear(m, n, k).map_err(Fail::Local)?;
        args.check().map_err(Fail::Local)?;
        let t = Instant::now();
        let dense_w = dense_weights(&host.raw, shape);
        for kind in [Dense::Bf16, Dense::F16] {
            let mut base = BaselineResult {
                name: kind.name().to_string(),
                total: Outcome::NotTimed("not timed".into()),
                rel_error: None,
                launch_bound: 0,
            };
            let h = match &dense_w {
                Ok(w) => DenseHost {
                    dense: kind,
                    w: convert(w, kind),
                    x: convert(&host.x, kind),
                },
                Err(e) => {
                    base.total = Outcome::NotTimed(e.clone());
                    if kind == Dense::Bf16 {
                        result.cublas_bf16 = Some(base);
                    } else {
                        result.cublas_f16 = Some(base);
                    }
                    continue;
                }
            };
            let uploaded = (|| -> Result<DenseDevice, Fail> {
                Ok(DenseDevice {
                    dense: kind,
                    w: vec![stream
                        .clone_htod(&h.w)
                        .map_err(|e| Fail::driver("uploading the dense weights", e))?],
                    x: vec![stream
                        .clone_htod(&h.x)
                        .map_err(|e| Fail::driver("uploading the dense activations", e))?],
                    out: vec![alloc::<u8>(
                        stream,
                        m * n * cublas.out_bytes(),
                        "the cuBLAS output",
                    )?],
                    result: base.clone(),
                    ready: false,
                })
            })();
            let mut dev = match uploaded {
                Ok(dev) => dev,
                Err(Fail::Fatal(e)) => return Err(Fail::Fatal(format!("{}: {e}", kind.name()))),
                Err(Fail::Local(e)) => {
                    base.total = Outcome::NotTimed(e);
                    if kind == Dense::Bf16 {
                        result.cublas_bf16 = Some(base);
                    } else {
                        result.cublas_f16 = Some(base);
                    }
                    continue;
                }
            };
            // Tolerances of METHOD.md: 16-bit outputs round to ~4e-3; an f32 output to far under 1e-3.
            let tolerance = match cublas.out {
                CublasOut::Input => 1e-2,
                CublasOut::F32 => 1e-3,
            };
            match check_dense(rc, cublas, &h, &mut dev, shape, args) {
                Ok(err) if err <= tolerance => {
                    dev.result.rel_error = Some(err);
                    dev.ready = true;
                }
                Ok(err) => {
                    dev.result.rel_error = Some(err);
                    dev.result.total = Outcome::NotTimed(format!(
                        "its output differs from the CPU product by {err:.2e} (relative, sampled), more than \
                         {tolerance:.0e}: the argument mapping or the library is wrong"
                    ));
                }
                Err(Fail::Fatal(e)) => return Err(Fail::Fatal(format!("{}: {e}", kind.name()))),
                Err(Fail::Local(e)) => dev.result.total = Outcome::NotTimed(e),
            }
            dense.push(dev);
        }
        let errors: Vec<String> = dense
            .iter()
            .map(|d| match d.result.rel_error {
                Some(e) => format!("{} {e:.1e}", d.dense.name()),
                None => format!("{} failed", d.dense.name()),
            })
            .collect();
        progress(&format!(
            "{label}: cuBLAS inputs dequantized, converted, uploaded and checked against the CPU in {:.1} s \
             (relative error: {})",
            t.elapsed().as_secs_f64(),
            errors.join(", ")
        ));
    }

    // Buffer sets: enough that the contestant with the smallest set cycles through more than 3 L2s.
    let io_bytes = (n * k + n * m) * 4;
    let mut smallest = usize::MAX;
    for &i in &passing {
        smallest = smallest.min(weights[i][0].device_bytes() + io_bytes);
    }
    let dense_set_bytes = |d: &DenseDevice| (d.w[0].len() + d.x[0].len()) * 2 + d.out[0].len();
    for d in dense.iter().filter(|d| d.ready) {
        smallest = smallest.min(dense_set_bytes(d));
    }
    if smallest == usize::MAX {
        finish_shape(result, results, dense);
        return Err(Fail::Local(
            "no variant passed parity and no baseline is left to time".to_string(),
        ));
    }
    let sets = buffer_sets(rc.l2_bytes, smallest);
    result.buffer_sets = sets;
    result.rotation_bytes = sets * smallest;
    let t = Instant::now();
    for s in 1..sets {
        xs.push(
            stream
                .clone_dtod(&xs[0])
                .map_err(|e| Fail::driver(&format!("copying the activations (set {s})"), e))?,
        );
        outs.push(alloc::<f32>(stream, m * n, "an output")?);
    }
    for d in dense.iter_mut().filter(|d| d.ready) {
        for s in 1..sets {
            let what = |w: &str| format!("copying the {} {w} (set {s})", d.dense.name());
            let w = stream
                .clone_dtod(&d.w[0])
                .map_err(|e| Fail::driver(&what("weights"), e))?;
            let x = stream
                .clone_dtod(&d.x[0])
                .map_err(|e| Fail::driver(&what("activations"), e))?;
            let o = alloc::<u8>(stream, d.out[0].len(), "a cuBLAS output")?;
            d.w.push(w);
            d.x.push(x);
            d.out.push(o);
        }
    }
    let jobs: Vec<(usize, usize)> = passing
        .iter()
        .flat_map(|&i| (1..sets).map(move |s| (i, s)))
        .collect();
    let regs = parallel_map(&jobs, |&(i, _)| {
        RegisteredWeights::register_for(rc.gpu, &host.raw, m, k, cfg.layout, &rc.built[i].desc)
    });
    for (&(i, s), reg) in jobs.iter().zip(regs) {
        match reg {
            Ok(w) => weights[i].push(w),
            Err(e) => {
                if let WeightsErrorKind::Fatal(f) = classify_weights(&e) {
                    return Err(Fail::Fatal(f));
                }
                return Err(Fail::Local(format!(
                    "registering weight set {s} of '{}' failed: {e}",
                    rc.built[i].desc.name
                )));
            }
        }
    }
    rc.gpu
        .context()
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the buffer sets", e))?;
    progress(&format!(
        "{label}: {sets} buffer sets ({} MiB for the smallest contestant, L2 {} MiB) ready in {:.1} s",
        (sets * smallest) >> 20,
        rc.l2_bytes >> 20,
        t.elapsed().as_secs_f64()
    ));

    // The contestants, interleaved.
    let mut contestants: Vec<Contestant> = Vec::new();
    for (j, d) in dense.iter().enumerate() {
        if d.ready {
            contestants.push(Contestant::Cublas(j));
        }
    }
    for &i in &passing {
        contestants.push(Contestant::Total(i));
        contestants.push(Contestant::Quantizer(i));
    }
    let gemm_args = GemmArgs::for_linear(m, n, k).map_err(Fail::Local)?;
    let count = contestants.len();
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(cfg.repeats); count];
    let mut failed: Vec<Option<String>> = vec![None; count];
    let mut launch_bound = vec![0usize; count];
    let rounds = cfg.warmup + cfg.repeats;
    // Each contestant walks through all its sets in turn (starting at a different one from its neighbours), so
    // its own previous calls are always more than 3 L2s of traffic ago, whatever the others do.
    let mut calls = vec![0usize; count];
    let t = Instant::now();
    let mut last_note = Instant::now();
    for round in 0..rounds {
        for j in 0..count {
            let c = (j + round) % count;
            if failed[c].is_some() {
                continue;
            }
            let s = (calls[c] + c) % sets;
            calls[c] += 1;
            let timed = match contestants[c] {
                Contestant::Total(i) => {
                    let ws = workspaces[i]
                        .as_mut()
                        .expect("passing variants have a workspace");
                    let (b, w, x, out) = (&rc.built[i], &weights[i][s], &xs[s], &mut outs[s]);
                    rc.timer.time(stream, &rc.spinner, || {
                        b.variant
                            .matmul(w, x, out, n, stream, ws)
                            .map_err(Fail::launch)
                    })
                }
                Contestant::Quantizer(i) => {
                    let ws = workspaces[i]
                        .as_mut()
                        .expect("passing variants have a workspace");
                    let (b, x) = (&rc.built[i], &xs[s]);
                    rc.timer.time(stream, &rc.spinner, || {
                        b.variant
                            .quantize_activations(x, n, k, stream, ws)
                            .map_err(Fail::launch)
                    })
                }
                Contestant::Cublas(j) => {
                    let cublas = rc
                        .cublas
                        .as_ref()
                        .expect("baselines exist only with cuBLAS");
                    let args = gemm_args;
                    let d = &mut dense[j];
                    let (w, x, out) = (&d.w[s], &d.x[s], &mut d.out[s]);
                    let kind = d.dense;
                    rc.timer.time(stream, &rc.spinner, || {
                        cublas.gemm(stream, kind, args, w, x, out)
                    })
                }
            };
            match timed {
                Ok((us, enqueue_us)) => {
                    if round >= cfg.warmup {
                        samples[c].push(us);
                        if enqueue_us > rc.spinner.us {
                            launch_bound[c] += 1;
                        }
                    }
                }
                Err(Fail::Fatal(e)) => {
                    let who = contestant_name(rc, &dense, contestants[c]);
                    return Err(Fail::Fatal(format!("{who} while being timed: {e}")));
                }
                Err(Fail::Local(e)) => failed[c] = Some(format!("a timed call failed: {e}")),
            }
        }
        if last_note.elapsed().as_secs_f64() > 10.0 {
            last_note = Instant::now();
            progress(&format!(
                "{label}: timing round {}/{rounds} ({count} contestants, {:.0} s)",
                round + 1,
                t.elapsed().as_secs_f64()
            ));
        }
    }

    // Results.
    let outcome = |c: usize| match (&failed[c], Stats::from_samples(&samples[c])) {
        (Some(e), _) => Outcome::NotTimed(e.clone()),
        (None, Some(st)) => Outcome::Timed(st),
        (None, None) => Outcome::NotTimed("no timed call".into()),
    };
    for (c, con) in contestants.iter().enumerate() {
        match *con {
            Contestant::Total(i) => {
                results[i].total = outcome(c);
                results[i].launch_bound = launch_bound[c];
            }
            Contestant::Quantizer(i) => results[i].quantizer = outcome(c),
            Contestant::Cublas(j) => {
                dense[j].result.total = outcome(c);
                dense[j].result.launch_bound = launch_bound[c];
            }
        }
    }
    stream
        .synchronize()
        .map_err(|e| Fail::driver("waiting for the stream", e))?;
    finish_shape(result, results, dense);
    Ok(())
}

fn finish_shape(result: &mut ShapeResult, variants: Vec<VariantResult>, dense: Vec<DenseDevice>) {
    result.variants = variants;
    for d in dense {
        let r = d.result;
        match d.dense {
            Dense::Bf16 => result.cublas_bf16 = Some(r),
            Dense::F16 => result.cublas_f16 = Some(r),
        }
    }
}

fn contestant_name(rc: &RunCtx, dense: &[DenseDevice], c: Contestant) -> String {
    match c {
        Contestant::Total(i) => format!("variant '{}'", rc.built[i].desc.name),
        Contestant::Quantizer(i) => format!("the quantizer of variant '{}'", rc.built[i].desc.name),
        Contestant::Cublas(j) => dense[j].dense.name().to_string(),
    }
}

fn fail_text(f: Fail) -> String {
    match f {
        Fail::Local(s) | Fail::Fatal(s) => s,
    }
}

enum WeightsErrorKind {
    Fatal(String),
    Local,
}

fn classify_weights(e: &crate::weights::WeightsError) -> WeightsErrorKind {
    match e {
        crate::weights::WeightsError::Device(d) if sticky(d.driver_error()) => {
            WeightsErrorKind::Fatal(format!("registering the weights: {e}"))
        }
        _ => WeightsErrorKind::Local,
    }
}

impl fmt::Display for CublasOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_on_known_vectors() {
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = Stats::from_samples(&ten).unwrap();
        assert_eq!(s.n, 10);
        assert!((s.median - 5.5).abs() < 1e-12, "{s:?}");
        // numpy.percentile(range(1, 11), 20) = 2.8, 80 -> 8.2.
        assert!((s.p20 - 2.8).abs() < 1e-12, "{s:?}");
        assert!((s.p80 - 8.2).abs() < 1e-12, "{s:?}");
        assert_eq!((s.min, s.max), (1.0, 10.0));

        // Order does not matter; an odd count has a middle element.
        let s = Stats::from_samples(&[30.0, 10.0, 20.0, 50.0, 40.0]).unwrap();
        assert_eq!(s.median, 30.0);
        assert!((s.p20 - 18.0).abs() < 1e-12, "{s:?}");
        assert!((s.p80 - 42.0).abs() < 1e-12, "{s:?}");

        let one = Stats::from_samples(&[7.0]).unwrap();
        assert_eq!((one.n, one.median, one.p20, one.p80), (1, 7.0, 7.0, 7.0));
        assert_eq!(Stats::from_samples(&[]), None);

        // An outlier moves the mean, not the median.
        let s = Stats::from_samples(&[100.0, 101.0, 99.0, 100.5, 5000.0]).unwrap();
        assert_eq!(s.median, 100.5);
        assert_eq!(quantile_sorted(&[1.0, 2.0], 0.0), 1.0);
        assert_eq!(quantile_sorted(&[1.0, 2.0], 1.0), 2.0);
    }

    #[test]
    fn tflops_counts_two_flops_per_multiply_add() {
        // 4096 x 512 x 14336 in 436 µs is llama.cpp's 137.8 TFLOPS (ANCHORS.md 4).
        let t = tflops(Shape::new(4096, 512, 14336), 436.0);
        assert!((t - 137.9).abs() < 0.1, "{t}");
    }

    #[test]
    fn the_landing_rule_needs_one_and_a_half_percent() {
        let v = ab_verdict(100.0, 98.0);
        assert!(v.lands, "{v:?}");
        assert!((v.gain - 100.0 / 98.0 + 1.0).abs() < 1e-15);
        assert!(!ab_verdict(100.0, 99.0).lands, "+1.01% is under the bar");
        assert!(!ab_verdict(100.0, 101.0).lands, "a regression never lands");
        assert!(!ab_verdict(100.0, 100.0).lands);
        assert!(ab_verdict(101.5, 100.0).lands, "exactly +1.5% lands");
        assert!(!ab_verdict(101.49, 100.0).lands);
        assert!(!ab_verdict(100.0, 0.0).lands, "a zero time is no verdict");
        assert!(!ab_verdict(f64::NAN, 1.0).lands);

        // Overall: sums of medians, so the long shapes weigh most.
        let o = ab_overall(&[(1000.0, 970.0), (10.0, 12.0)]).unwrap();
        assert!(o.lands, "{o:?}");
        assert!((o.gain - (1010.0 / 982.0 - 1.0)).abs() < 1e-12);
        let o = ab_overall(&[(1000.0, 1000.0), (10.0, 5.0)]).unwrap();
        assert!(
            !o.lands,
            "a short shape's gain does not carry the wall: {o:?}"
        );
        assert_eq!(ab_overall(&[]), None);
    }

    #[test]
    fn the_suspect_baseline_rule() {
        let s = Shape::new(4096, 512, 4096); // anchor 435 TFLOPS; 80% is 348.
        assert_eq!(
            check_bf16_baseline(s, 349.0),
            BaselineCheck::Consistent {
                measured: 349.0,
                anchor: 435.0
            }
        );
        assert!(check_bf16_baseline(s, 347.0).is_suspect());
        assert!(!check_bf16_baseline(s, 900.0).is_suspect());
        assert!(check_bf16_baseline(s, f64::NAN).is_suspect());
        let loud = check_bf16_baseline(s, 200.0).sentence(s);
        assert!(loud.starts_with("SUSPECT BASELINE"), "{loud}");
        assert!(loud.contains("435"), "{loud}");

        for (shape, anchor) in [
            ((4096, 512, 14336), 659.0),
            ((14336, 512, 4096), 582.0),
            ((4096, 2048, 14336), 795.0),
            ((14336, 2048, 4096), 750.0),
            ((4096, 4096, 14336), 807.0),
            ((14336, 4096, 4096), 745.0),
        ] {
            let s = Shape::new(shape.0, shape.1, shape.2);
            assert_eq!(bf16_anchor_tflops(s), Some(anchor));
            assert!(check_bf16_baseline(s, anchor * 0.79).is_suspect());
            assert!(!check_bf16_baseline(s, anchor * 0.81).is_suspect());
        }
        // No anchor: said so, never suspect.
        for s in [
            Shape::new(4096, 2048, 4096),
            Shape::new(4096, 4096, 4096),
            Shape::new(4096, 1, 4096),
        ] {
            assert_eq!(check_bf16_baseline(s, 1.0), BaselineCheck::NoAnchor);
            assert!(BaselineCheck::NoAnchor
                .sentence(s)
                .contains("no directly called bf16 figure"));
        }
    }

    #[test]
    fn llamacpp_anchors_follow_anchors_md() {
        let us: Vec<f64> = default_shapes()
            .into_iter()
            .filter_map(llamacpp_anchor_us)
            .collect();
        assert_eq!(
            us,
            vec![128.0, 436.0, 463.0, 500.0, 1712.0, 1667.0, 1015.0, 3362.0, 3357.0]
        );
        assert_eq!(llamacpp_anchor_us(Shape::new(14336, 512, 14336)), None);
        assert_eq!(llamacpp_anchor_us(Shape::new(4096, 1, 4096)), None);
    }

    #[test]
    fn default_and_prefill_shapes() {
        let d = default_shapes();
        assert_eq!(d.len(), 16);
        assert_eq!(
            &d[..4],
            &[
                Shape::new(4096, 1, 4096),
                Shape::new(4096, 8, 4096),
                Shape::new(4096, 32, 4096),
                Shape::new(4096, 128, 4096)
            ]
        );
        for m in [4096, 14336] {
            for n in [512, 2048, 4096] {
                for k in [4096, 14336] {
                    assert!(d.contains(&Shape::new(m, n, k)), "{m},{n},{k}");
                }
            }
        }
        assert_eq!(dedup_shapes(d.clone()), d);
        let p = prefill_shapes();
        assert_eq!(
            p,
            vec![
                Shape::new(4096, 512, 4096),
                Shape::new(1024, 512, 4096),
                Shape::new(14336, 512, 4096),
                Shape::new(4096, 512, 14336),
                Shape::new(4096, 2048, 4096),
                Shape::new(1024, 2048, 4096),
                Shape::new(14336, 2048, 4096),
                Shape::new(4096, 2048, 14336),
            ]
        );
        let both = dedup_shapes(d.iter().chain(&p).copied().collect());
        assert_eq!(both.len(), 18, "only the two k/v shapes are new");
    }

    #[test]
    fn buffer_sets_exceed_three_l2() {
        let l2 = 60 << 20;
        // 30 MiB sets: 6 of them are exactly 180 MiB, which is not more than 3 L2.
        assert_eq!(buffer_sets(l2, 30 << 20), 7);
        assert_eq!(buffer_sets(l2, 100 << 20), 3, "never fewer than three");
        assert_eq!(buffer_sets(l2, 1 << 30), 3);
        assert_eq!(buffer_sets(l2, 1024), MAX_BUFFER_SETS, "capped");
        for bytes in [(13 << 20) + 7, 33 << 20, 61 << 20] {
            let s = buffer_sets(l2, bytes);
            assert!(s * bytes > 3 * l2 && (s - 1) * bytes <= 3 * l2 || s == MIN_BUFFER_SETS);
        }
    }

    /// cuBLAS's semantics, emulated: column-major `C = alpha op(A) op(B) + beta C`.
    #[allow(clippy::too_many_arguments)]
    fn cublas_like_gemm(args: GemmArgs, a: &[f64], b: &[f64], c: &mut [f64]) {
        let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
        let (lda, ldb, ldc) = (args.lda as usize, args.ldb as usize, args.ldc as usize);
        let op_a = |i: usize, l: usize| match args.transa {
            GemmOp::N => a[i + l * lda],
            GemmOp::T => a[l + i * lda],
        };
        let op_b = |l: usize, j: usize| match args.transb {
            GemmOp::N => b[l + j * ldb],
            GemmOp::T => b[j + l * ldb],
        };
        for j in 0..n {
            for i in 0..m {
                c[i + j * ldc] = (0..k).map(|l| op_a(i, l) * op_b(l, j)).sum();
            }
        }
    }

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 33) % 17) as f64 - 8.0
    }

    #[test]
    fn the_cublas_mapping_computes_x_times_w_transposed() {
        for (rows, tokens, k) in [(5, 3, 7), (64, 1, 256), (3, 9, 2), (1, 1, 1)] {
            let mut seed = (rows * 1000 + tokens * 10 + k) as u64;
            let w: Vec<f64> = (0..rows * k).map(|_| lcg(&mut seed)).collect(); // [rows][k]
            let x: Vec<f64> = (0..tokens * k).map(|_| lcg(&mut seed)).collect(); // [tokens][k]
            let want: Vec<f64> = (0..tokens)
                .flat_map(|t| {
                    let (w, x) = (&w, &x);
                    (0..rows).map(move |r| (0..k).map(|l| x[t * k + l] * w[r * k + l]).sum())
                })
                .collect(); // [tokens][rows]
            let args = GemmArgs::for_linear(rows, tokens, k).unwrap();
            assert_eq!(
                (args.transa, args.transb),
                (GemmOp::T, GemmOp::N),
                "W is the transposed operand"
            );
            assert_eq!(
                (args.lda, args.ldb, args.ldc),
                (k as i32, k as i32, rows as i32)
            );
            args.check().unwrap();
            let mut out = vec![f64::NAN; rows * tokens];
            cublas_like_gemm(args, &w, &x, &mut out);
            assert_eq!(out, want, "{rows}x{tokens}x{k}");

            // The test has teeth: the untransposed call computes something else (or is refused).
            let wrong = GemmArgs {
                transa: GemmOp::N,
                lda: rows as i32,
                ..args
            };
            if rows > 1 && k > 1 {
                let mut out = vec![f64::NAN; rows * tokens];
                cublas_like_gemm(wrong, &w, &x, &mut out);
                assert_ne!(out, want);
            }
        }
        // cuBLAS's leading-dimension rules.
        let a = GemmArgs::for_linear(4096, 512, 14336).unwrap();
        a.check().unwrap();
        assert!(GemmArgs { lda: 4096, ..a }
            .check()
            .unwrap_err()
            .contains("lda"));
        assert!(GemmArgs { ldb: 512, ..a }
            .check()
            .unwrap_err()
            .contains("ldb"));
        assert!(GemmArgs { ldc: 512, ..a }
            .check()
            .unwrap_err()
            .contains("ldc"));
        assert!(GemmArgs::for_linear(0, 1, 1).is_err());
        assert!(GemmArgs::for_linear(1 << 31, 1, 1).is_err());
    }

    #[test]
    fn dense_weights_fit_f16_outputs() {
        let (m, k) = (64, 14336);
        let raw = mmqgen_reference::data::random_blocks(m, k, 3);
        let blocks = dense_blocks(&raw);
        assert_eq!(blocks.len(), raw.len());
        // Only d changed, and only its exponent.
        for (a, b) in raw.chunks_exact(210).zip(blocks.chunks_exact(210)) {
            assert_eq!(a[..208], b[..208]);
            let (da, db) = (
                u16::from_le_bytes([a[208], a[209]]),
                u16::from_le_bytes([b[208], b[209]]),
            );
            assert_eq!(da & 0x83FF, db & 0x83FF);
            assert!(
                da & 0x7FFF == 0 || (db >> 10) & 0x1F == 3,
                "{da:#x} -> {db:#x}"
            );
        }
        let w = dense_weights(&raw, Shape::new(m, 1, k)).unwrap();
        assert_eq!(w, mmqgen_formats::dequantize_rows(&blocks).unwrap());
        assert!(w.iter().all(|v| v.abs() <= 8.0), "every weight within +-8");
        assert!(
            w.iter().filter(|v| **v != 0.0).count() > w.len() * 9 / 10,
            "not mostly zeros"
        );
        // The worst output over a K = 14336 row with the activations' outliers (x20) still fits f16, and
        // the conversions keep every value finite.
        let x = mmqgen_reference::data::activations(4, k, 9, 4);
        for t in 0..4 {
            for r in 0..m {
                let dot: f64 = (0..k)
                    .map(|l| {
                        Dense::F16.value(Dense::F16.bits(x[t * k + l]))
                            * Dense::F16.value(Dense::F16.bits(w[r * k + l]))
                    })
                    .sum();
                assert!(dot.abs() < 65504.0 / 4.0, "token {t} row {r}: {dot}");
            }
        }
        for d in [Dense::Bf16, Dense::F16] {
            assert!(convert(&w, d).iter().all(|&b| d.value(b).is_finite()));
        }
        assert_eq!(Dense::Bf16.value(Dense::Bf16.bits(1.5)), 1.5);
        assert_eq!(Dense::F16.value(Dense::F16.bits(1e9)), 65504.0);
    }

    #[test]
    fn dates_and_driver_versions() {
        assert_eq!(utc_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_from_unix(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_from_unix(1_796_083_199), "2026-11-30T23:59:59Z");
        assert!(utc_now().ends_with('Z'));
        assert_eq!(
            parse_driver_release(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  \
                 (dvs-builder@U22)  Thu Oct  9 2025\nGCC version:  gcc version 12.3.0"
            ),
            Some("580.159.04".into())
        );
        assert_eq!(
            parse_driver_release(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19"
            ),
            Some("535.104.05".into())
        );
        assert_eq!(parse_driver_release("garbage"), None);
        assert!(!commit().is_empty());
    }

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

    fn stats(median: f64) -> Stats {
        Stats {
            n: 20,
            median,
            p20: median * 0.99,
            p80: median * 1.01,
            min: median * 0.98,
            max: median * 1.05,
        }
    }

    fn variant(name: &str, median: Option<f64>) -> VariantResult {
        VariantResult {
            name: name.into(),
            canonical: format!("{name}_canonical"),
            parity: Some(ParitySummary {
                checked: 5000,
                quant_checked: 100,
                ..Default::default()
            }),
            total: median.map_or(
                Outcome::NotTimed("parity failed: 3 of 5000 differ".into()),
                |m| Outcome::Timed(stats(m)),
            ),
            quantizer: Outcome::Timed(stats(9.0)),
            launch_bound: 0,
            device_bytes: 14 << 20,
        }
    }

    fn baseline(name: &str, median: f64) -> BaselineResult {
        BaselineResult {
            name: name.into(),
            total: Outcome::Timed(stats(median)),
            rel_error: Some(1e-3),
            launch_bound: 0,
        }
    }

    fn report(shapes: Vec<ShapeResult>) -> BenchReport {
        BenchReport {
            info: RunInfo {
                gpu: "NVIDIA H200".into(),
                arch: "sm_90".into(),
                multiprocessors: 132,
                driver_cuda: "13.0".into(),
                driver_release: "580.159.04".into(),
                nvrtc: "13.0".into(),
                commit: "abc".into(),
                date: "2026-11-29T00:00:00Z".into(),
                l2_bytes: 60 << 20,
                l2_source: "device attribute".into(),
                spin_us: 200.0,
            },
            config: BenchConfig::default(),
            builds: Vec::new(),
            cublas_note: None,
            shapes,
            aborted: None,
        }
    }

    fn shape_result(shape: Shape, variants: Vec<VariantResult>, bf16_us: f64) -> ShapeResult {
        ShapeResult {
            shape,
            buffer_sets: 7,
            rotation_bytes: 200 << 20,
            variants,
            cublas_bf16: Some(baseline("cuBLAS bf16", bf16_us)),
            cublas_f16: Some(baseline("cuBLAS f16", bf16_us * 1.2)),
            error: None,
            wall_s: 1.0,
        }
    }

    #[test]
    fn the_table_has_ratios_anchors_and_failures() {
        let s = Shape::new(4096, 512, 14336);
        // cuBLAS bf16 at 200 µs is 301 TFLOPS: suspect against 659.
        let r = report(vec![shape_result(
            s,
            vec![
                variant("a", Some(400.0)),
                variant("b", None),
                variant("c", Some(218.0)),
            ],
            200.0,
        )]);
        let t = r.markdown_table();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2 + 5, "{t}");
        assert!(lines[0].starts_with("| m,n,k | variant | median µs |"));
        assert!(lines[2].contains("cuBLAS bf16 **SUSPECT**"), "{t}");
        assert!(lines[3].contains("| cuBLAS f16 |"), "{t}");
        // a: 400 µs; x cuBLAS bf16 = 0.50, x f16 = 0.60, llama.cpp 436 -> 1.09; quantizer 9.0; 14 MiB of
        // weights against the GGUF tensor's 48.2 MB.
        assert_eq!(
            lines[4],
            "| 4096,512,14336 | a | 400 | 396–404 | 20 | 150.3 | 0.50 | 0.60 | 436 | 1.09 | 9.0 | 14.0 MiB (0.30x) |"
        );
        assert!(
            lines[2].ends_with("| 112.0 MiB (2.44x) |"),
            "cuBLAS holds two bytes a weight: {t}"
        );
        assert!(lines[5].contains("| b | not timed: parity failed"), "{t}");
        assert!(lines[6].contains("| **c** | 218 |"), "best is bold: {t}");
        let notes = r.notes();
        assert!(
            notes.iter().any(|n| n.starts_with("SUSPECT BASELINE")),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n.contains("variant 'b'")), "{notes:?}");

        // No anchor: dashes, and a note.
        let s2 = Shape::new(4096, 8, 4096);
        let r = report(vec![shape_result(s2, vec![variant("a", Some(20.0))], 10.0)]);
        let t = r.markdown_table();
        assert!(
            t.contains("| 4096,8,4096 | **a** | 20.0 | 19.8–20.2 | 20 |"),
            "{t}"
        );
        assert!(t.contains("| — | — | 9.0 |"), "{t}");
        assert!(r
            .notes()
            .iter()
            .any(|n| n.contains("no directly called bf16 figure for 4096,8,4096")));
        assert!(r.legend().contains("QUOTED"));
    }

    #[test]
    fn json_lines_are_self_contained_objects() {
        let s = Shape::new(4096, 512, 4096);
        let r = report(vec![shape_result(
            s,
            vec![variant("a\"q", Some(100.0)), variant("b", None)],
            30.0,
        )]);
        let lines = r.json_lines();
        assert_eq!(lines.len(), 4);
        for l in &lines {
            assert!(
                l.starts_with("{\"mmqgen_bench\":1,") && l.ends_with('}'),
                "{l}"
            );
            assert!(l.contains("\"gpu\":\"NVIDIA H200\""), "{l}");
            assert!(l.contains("\"driver\":\"580.159.04\""), "{l}");
            assert!(l.contains("\"nvrtc\":\"13.0\""), "{l}");
            assert!(l.contains("\"commit\":\"abc\""), "{l}");
            assert!(l.contains("\"date\":\"2026-11-29T00:00:00Z\""), "{l}");
            assert_eq!(l.matches('{').count(), l.matches('}').count(), "{l}");
        }
        assert!(
            lines[0].contains("\"kind\":\"cublas_bf16\"") && lines[0].contains("\"suspect\":false")
        );
        assert!(lines[2].contains("\"variant\":\"a\\\"q\""), "{}", lines[2]);
        assert!(lines[2].contains("\"median_us\":100,"), "{}", lines[2]);
        assert!(lines[2].contains("\"x_cublas_bf16\":0.3,"), "{}", lines[2]);
        assert!(
            lines[2].contains("\"llamacpp_quoted_us\":128"),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].contains("\"status\":\"not_timed\""),
            "{}",
            lines[3]
        );
        assert_eq!(json_num(Some(f64::INFINITY)), "null");
    }

    #[test]
    fn prefill_sums_the_best_medians() {
        let mut shapes = Vec::new();
        for (i, (_, m, k)) in LLAMA3_8B_LAYER.iter().enumerate() {
            let s = Shape::new(*m, 512, *k);
            if shapes.iter().any(|r: &ShapeResult| r.shape == s) {
                continue;
            }
            let base = 100.0 * (i + 1) as f64;
            shapes.push(shape_result(
                s,
                vec![
                    variant("slow", Some(base * 2.0)),
                    variant("fast", Some(base)),
                ],
                base / 2.0,
            ));
        }
        let r = report(shapes);
        let p = r.prefill(512, None);
        // q 100, k 200, v = k's shape 200, o = q's shape 100, gate 500, up = gate 500, down 700.
        assert_eq!(
            p.layer_us,
            Some(100.0 + 200.0 + 200.0 + 100.0 + 500.0 + 500.0 + 700.0)
        );
        assert!(p
            .matmuls
            .iter()
            .all(|m| m.variant.as_deref() == Some("fast")));
        assert_eq!(p.cublas_layer_us, Some(1150.0));
        assert!((p.tokens_per_s().unwrap() - 512.0 / 2300e-6).abs() < 1e-6);
        let only = r.prefill(512, Some("slow"));
        assert_eq!(only.layer_us, Some(4600.0));
        assert!(
            r.prefill(2048, None).layer_us.is_none(),
            "2048 was not measured"
        );
        assert!(
            p.markdown().contains("| **layer** | | | 2300 | 1150 |"),
            "{}",
            p.markdown()
        );
    }

    #[test]
    fn ab_report_per_shape_and_overall() {
        let s1 = Shape::new(4096, 512, 4096);
        let s2 = Shape::new(4096, 2048, 4096);
        let r = report(vec![
            shape_result(
                s1,
                vec![variant("A", Some(100.0)), variant("B", Some(97.0))],
                80.0,
            ),
            shape_result(
                s2,
                vec![variant("A", Some(400.0)), variant("B", Some(399.0))],
                300.0,
            ),
        ]);
        let ab = r.ab("A", "B");
        assert!(ab.shapes[0].1.as_ref().unwrap().lands);
        assert!(!ab.shapes[1].1.as_ref().unwrap().lands);
        let overall = ab.overall.unwrap();
        assert!(!overall.lands, "500 -> 496 is +0.8%");
        let text = ab.text();
        assert!(
            text.contains("4096,512,4096: A 100 µs, B 97.0 µs: +3.09% -> LANDS"),
            "{text}"
        );
        assert!(
            text.contains("overall (sum of medians over 2 shape(s))"),
            "{text}"
        );
        assert!(text.contains("B does not land"), "{text}");

        // B failing parity at a shape: no verdict there, and B cannot land overall.
        let r = report(vec![
            shape_result(
                s1,
                vec![variant("A", Some(100.0)), variant("B", Some(90.0))],
                80.0,
            ),
            shape_result(
                s2,
                vec![variant("A", Some(400.0)), variant("B", None)],
                300.0,
            ),
        ]);
        let ab = r.ab("A", "B");
        assert_eq!(ab.missing, 1);
        assert!(!ab.overall.unwrap().lands);
        assert!(ab
            .text()
            .contains("no verdict: B was not timed: parity failed"));
    }

    #[test]
    fn parity_summaries_say_what_failed() {
        let ok = ParitySummary {
            checked: 10,
            quant_checked: 4,
            ..Default::default()
        };
        assert!(ok.passed());
        let bad = ParitySummary {
            mismatches: 2,
            unwritten: 1,
            first_bad: Some("token 0 row 1: want 0x1, got 0x2".into()),
            ..ok.clone()
        };
        assert!(!bad.passed());
        assert_eq!(
            bad.failure_sentence(),
            "parity failed: 2 of 10 sampled outputs differ from the CPU reference; 1 outputs were never \
             written (first: token 0 row 1: want 0x1, got 0x2)"
        );
        assert!(
            !ParitySummary::default().passed(),
            "nothing compared is no pass"
        );
    }

    #[test]
    fn parallel_map_keeps_order() {
        let items: Vec<usize> = (0..1000).collect();
        assert_eq!(
            parallel_map(&items, |&i| i * 2),
            (0..1000).map(|i| i * 2).collect::<Vec<_>>()
        );
        assert_eq!(
            parallel_map(&Vec::<usize>::new(), |&i| i),
            Vec::<usize>::new()
        );
        let chunks = row_chunks(14336);
        assert_eq!(chunks.first().unwrap().0, 0);
        assert_eq!(chunks.last().unwrap().1, 14336);
        assert!(chunks.windows(2).all(|w| w[0].1 == w[1].0));
    }

    /// On a GPU: two variants and both baselines at one small-n shape, end to end, with few repeats.
    #[test]
    fn bench_runs_on_the_gpu() {
        let Some(gpu) = crate::testing::gpu_or_skip("bench::bench_runs_on_the_gpu") else {
            return;
        };
        let descs = vec![crate::catalogue::R41, crate::catalogue::FOLD_PER256];
        let cfg = BenchConfig {
            shapes: vec![Shape::new(4096, 8, 4096)],
            warmup: 1,
            repeats: 5,
            ..BenchConfig::default()
        };
        let mut lines = Vec::new();
        let report = run_bench(&gpu, &descs, &cfg, &mut |l: &str| lines.push(l.to_string()))
            .unwrap_or_else(|e| panic!("bench failed to start: {e}"));
        let table = report.markdown_table();
        eprintln!(
            "{}\n{}\n{}",
            lines.join("\n"),
            report.notes().join("\n"),
            table
        );
        assert!(report.aborted.is_none(), "{:?}", report.aborted);
        assert!(report.info.l2_bytes > 0 && report.info.spin_us > 0.0);
        let s = &report.shapes[0];
        assert_eq!(s.error, None);
        assert!(s.buffer_sets >= MIN_BUFFER_SETS);
        for v in &s.variants {
            let st = v
                .total
                .stats()
                .unwrap_or_else(|| panic!("variant {} not timed: {:?}", v.name, v.total));
            assert_eq!(st.n, 5);
            assert!(st.median > 0.0 && st.p20 <= st.median && st.median <= st.p80);
            assert!(v
                .quantizer
                .median()
                .is_some_and(|q| q > 0.0 && q < st.median));
            assert!(v.parity.as_ref().is_some_and(|p| p.passed()));
        }
        match &report.cublas_note {
            // cuBLAS present: both baselines ran, their outputs matched the CPU product, and they were timed.
            None => {
                for b in [&s.cublas_bf16, &s.cublas_f16] {
                    let b = b.as_ref().expect("a baseline row");
                    assert!(b.rel_error.is_some_and(|e| e < 1e-2), "{b:?}");
                    assert!(b.total.median().is_some_and(|t| t > 0.0), "{b:?}");
                }
            }
            Some(note) => eprintln!("SKIPPED cuBLAS part: {note}"),
        }
        let baselines = usize::from(s.cublas_bf16.is_some()) + usize::from(s.cublas_f16.is_some());
        assert_eq!(report.json_lines().len(), baselines + descs.len());
    }
}
