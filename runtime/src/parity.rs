//! GPU parity (DECISIONS.md 11): a variant's outputs, and the activations its quantizer wrote, must equal the
//! CPU reference bit for bit.
//!
//! One case is a variant, a weight layout, a shape (m, n, K) and a seed. The inputs are the reference's digest
//! case inputs (`digest_case_inputs`): full-range random q6_K blocks (`data::random_blocks`, every integer path
//! exercised) and activations with 4 outlier channels per 4096 (`data::activations`). Before the launch the output and the workspace are poisoned
//! ([`POISON_BITS`], [`POISON_Q`]), so an output the kernel never wrote shows even where it is not compared.
//! Small shapes (m * n <= [`FULL_COMPARE_LIMIT`]) compare every output with the reference; larger ones compare
//! a seeded sample of at least [`MIN_SAMPLED_OUTPUTS`] outputs (plus the first and last token and weight row in
//! full) with `reference_output`, and, when a variant already proven on the same inputs is supplied, every
//! output bitwise with its output. Comparisons are on `to_bits()`: bit-identical, not approximately equal.
//!
//! The weights may instead come from a q6_K tensor of a GGUF file ([`GgufWeights`], `mmqgen parity --gguf FILE
//! --tensor NAME`): m and K are the tensor's, the activations stay seeded (the same ones a seeded case of that
//! shape and seed gets), and the row records the file and the tensor.
//!
//! A case may name a deliberate mutant ([`crate::mutants`]): the bug is planted in the variant's rendered source
//! before it is compiled, and the row records it, so that `mmqgen parity --mutants` can show parity catching it.
//!
//! The comparison logic works on host vectors ([`compare_all`], [`compare_sampled`], [`count_unwritten`],
//! [`compare_quantized`], [`sample_indices`]) so it is tested without a GPU.

use crate::formats::input::shown;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use mmqgen_codegen::{canonical_name, NumericsMode, VariantDescription};
use mmqgen_formats::{GgufError, GgufFile};
use mmqgen_reference::activations::{quantize_activations, QuantizedActivations};
use mmqgen_reference::matmul::{reference_matmul, reference_output};
use mmqgen_reference::{activations, derive_seed, digest, digest_case_inputs, ACTIVATION_STREAM};

use crate::device::{is_sticky_kernel_fault, synchronize, DeviceError, Gpu};
use crate::launch::{
    build_rendered, build_variant, check_shape, poison_f32, read_prefix, BuildError, LaunchError,
    ShapeError, Workspace, POISON_BITS, POISON_Q,
};
use crate::mutants::MutantError;
use crate::weights::{Layout, RegisteredWeights, WeightsError};

/// Shapes with at most this many outputs compare every output with the CPU reference.
pub const FULL_COMPARE_LIMIT: usize = 200_000;
/// Larger shapes compare at least this many randomly drawn outputs with the CPU reference.
pub const MIN_SAMPLED_OUTPUTS: usize = 4096;
/// The issue's default shapes: (1000, 77, 2816), (64, 1, 256), (4097, 513, 4096) (the last one sampled).
pub const DEFAULT_SHAPES: [Shape; 3] = [
    Shape {
        m: 1000,
        n: 77,
        k: 2816,
    },
    Shape {
        m: 64,
        n: 1,
        k: 256,
    },
    Shape {
        m: 4097,
        n: 513,
        k: 4096,
    },
];

/// A matmul shape: `m` weight rows, `n` tokens, `K` values per row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Shape {
    pub const fn new(m: usize, n: usize, k: usize) -> Shape {
        Shape { m, n, k }
    }

    pub const fn outputs(&self) -> usize {
        self.m * self.n
    }

    /// Whether parity compares every output with the CPU reference (otherwise a sample, DECISIONS.md 11).
    pub const fn compares_every_output(&self) -> bool {
        self.outputs() <= FULL_COMPARE_LIMIT
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.m, self.n, self.k)
    }
}

impl Shape {
    /// The shape `m, n, k` if a kernel can run it: the one shape check ([`check_shape`]) behind every command
    /// that takes a shape (`explain`, `parity`, `bench`, `profile`, `tune`, and `Mmq::matmul`).
    pub fn checked(m: u64, n: u64, k: u64) -> Result<Shape, ShapeError> {
        let dim = |what: &'static str, v: u64| {
            usize::try_from(v).map_err(|_| ShapeError::TooLarge {
                what: what.to_string(),
                value: usize::MAX,
            })
        };
        let (m, n, k) = (dim("m", m)?, dim("n", n)?, dim("K", k)?);
        check_shape(m, n, k)?;
        Ok(Shape::new(m, n, k))
    }
}

impl FromStr for Shape {
    type Err = String;
    /// `m,n,k`, e.g. `1000,77,2816`; refuses what no kernel can run, with a sentence.
    fn from_str(s: &str) -> Result<Shape, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let shown_s = shown(s);
        if parts.len() != 3 {
            return Err(format!(
                "'{shown_s}' is not a shape: write m,n,k (weight rows, tokens, K), for example 1000,77,2816"
            ));
        }
        let mut v = [0u64; 3];
        for (slot, (part, what)) in v.iter_mut().zip(parts.iter().zip(["m", "n", "K"])) {
            *slot = part.parse().map_err(|e: std::num::ParseIntError| {
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow => "is out of range (too large)",
                    _ => "is not a whole number",
                };
                format!(
                    "'{}' in shape '{shown_s}' {why}, so it cannot be {what}",
                    shown(part)
                )
            })?;
        }
        Shape::checked(v[0], v[1], v[2])
            .map_err(|e| format!("shape '{shown_s}' cannot be run: {e}"))
    }
}

/// One parity case: a shape, a weight layout and a seed (the variant is passed beside it), and optionally a
/// deliberate mutant ([`crate::mutants`]) to plant in the variant's rendered source before it is compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParityCase {
    pub shape: Shape,
    pub layout: Layout,
    pub seed: u64,
    /// The name of a shipped mutant ([`crate::mutants::find`]); `None` checks the variant as rendered.
    pub mutant: Option<String>,
}

impl ParityCase {
    /// A case of the variant as rendered (no mutant).
    pub const fn new(shape: Shape, layout: Layout, seed: u64) -> ParityCase {
        ParityCase {
            shape,
            layout,
            seed,
            mutant: None,
        }
    }
}

/// A q6_K tensor of a GGUF file to take a case's weights from (`mmqgen parity --gguf FILE --tensor NAME`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufTensorRef {
    pub path: PathBuf,
    pub tensor: String,
}

impl fmt::Display for GgufTensorRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor '{}' of {}", self.tensor, self.path.display())
    }
}

/// Why a GGUF tensor cannot give a case its weights. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum GgufWeightsError {
    /// Not a readable regular file within the cap, with [`crate::formats::input`]'s sentence.
    #[error(transparent)]
    Input(Box<crate::formats::input::InputError>),
    #[error("cannot take the parity weights from {}: {source}", path.display())]
    Gguf {
        path: PathBuf,
        #[source]
        source: GgufError,
    },
    #[error("{source_ref} cannot be run with {tokens} token(s): {source}")]
    Shape {
        source_ref: GgufTensorRef,
        tokens: usize,
        #[source]
        source: ShapeError,
    },
}

/// The blocks of a q6_K GGUF tensor, copied out of the file: `rows` rows of `k / 256` 210-byte blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufWeights {
    pub source: GgufTensorRef,
    pub raw: Vec<u8>,
    pub rows: usize,
    pub k: usize,
}

impl GgufWeights {
    /// Reads `source.path` and copies out the q6_K tensor `source.tensor` (the rest of the file is dropped).
    pub fn load(source: &GgufTensorRef) -> Result<GgufWeights, GgufWeightsError> {
        let bytes =
            crate::formats::input::read_capped(&source.path, crate::formats::input::GGUF_FILE)
                .map_err(|e| GgufWeightsError::Input(Box::new(e)))?;
        GgufWeights::from_bytes(source, &bytes)
    }

    /// [`Self::load`] on a file already read.
    pub fn from_bytes(
        source: &GgufTensorRef,
        bytes: &[u8],
    ) -> Result<GgufWeights, GgufWeightsError> {
        let gguf = |e| GgufWeightsError::Gguf {
            path: source.path.clone(),
            source: e,
        };
        let file = GgufFile::parse(bytes).map_err(gguf)?;
        let t = file.q6k_tensor(&source.tensor).map_err(gguf)?;
        Ok(GgufWeights {
            source: source.clone(),
            raw: t.bytes().to_vec(),
            rows: t.rows(),
            k: t.k(),
        })
    }

    /// The case shape (rows, `tokens`, K), refused with a sentence when no kernel can run it.
    pub fn shape(&self, tokens: usize) -> Result<Shape, GgufWeightsError> {
        check_shape(self.rows, tokens, self.k).map_err(|e| GgufWeightsError::Shape {
            source_ref: self.source.clone(),
            tokens,
            source: e,
        })?;
        Ok(Shape::new(self.rows, tokens, self.k))
    }
}

/// splitmix64: the sampling stream and the sub-seeds (kept here so that a sample is a pure function of its
/// seed, whatever the reference crate's generator does).
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// An independent seed for sub-stream `stream` of `seed` (the sample draws from stream 3).
pub fn sub_seed(seed: u64, stream: u64) -> u64 {
    SplitMix64(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// The seeded inputs of a case, and the reference's quantization of the activations.
#[derive(Clone, Debug)]
pub struct ParityInputs {
    /// GGUF rows: `m` rows of `K / 256` 210-byte blocks.
    pub raw: Vec<u8>,
    /// Activations `[n][K]`.
    pub x: Vec<f32>,
    /// The reference's `quantize_activations(x)` in the mode's group size.
    pub acts: QuantizedActivations,
    pub mode: NumericsMode,
}

impl ParityInputs {
    /// The inputs of `mmqgen_reference::digest_case_inputs(m, n, k, seed)`: the same weights and activations
    /// as the reference's digest cases, so a parity run with `DIGEST_SEED` on a digest shape reproduces the
    /// snapshot digests (the row records the GPU output's digest).
    pub fn generate(shape: Shape, seed: u64, mode: NumericsMode) -> ParityInputs {
        let Shape { m, n, k } = shape;
        let (raw, x) = digest_case_inputs(m, n, k, seed);
        let acts = quantize_activations(&x, n, k, mode.activation_group() as usize);
        ParityInputs { raw, x, acts, mode }
    }

    /// Inputs with the given weights (`shape.m` rows of `shape.k / 256` q6_K blocks, e.g. a GGUF tensor's) and
    /// the seeded activations a seeded case of `shape` and `seed` gets.
    pub fn with_weights(raw: Vec<u8>, shape: Shape, seed: u64, mode: NumericsMode) -> ParityInputs {
        let Shape { n, k, .. } = shape;
        let x = activations(n, k, derive_seed(seed, ACTIVATION_STREAM), 4);
        let acts = quantize_activations(&x, n, k, mode.activation_group() as usize);
        ParityInputs { raw, x, acts, mode }
    }

    /// The full reference output `[n][m]`.
    pub fn reference(&self, shape: Shape) -> Vec<f32> {
        reference_matmul(&self.raw, shape.m, shape.n, shape.k, &self.acts, self.mode)
    }

    /// One reference output.
    pub fn reference_at(&self, shape: Shape, token: usize, row: usize) -> f32 {
        reference_output(
            &self.raw, shape.m, shape.k, &self.acts, self.mode, row, token,
        )
    }
}

/// The first output that differs: where, and both bit patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstBad {
    /// Index into `[n][m]`: `token * m + row`.
    pub index: usize,
    pub token: usize,
    pub row: usize,
    pub expected_bits: u32,
    pub got_bits: u32,
}

impl fmt::Display for FirstBad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let got = if self.got_bits == POISON_BITS {
            "never written".to_string()
        } else {
            format!("{:e}", f32::from_bits(self.got_bits))
        };
        write!(
            f,
            "token {} row {}: want {:#010x} ({:e}), got {:#010x} ({got})",
            self.token,
            self.row,
            self.expected_bits,
            f32::from_bits(self.expected_bits),
            self.got_bits
        )
    }
}

/// The result of comparing outputs bit for bit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub checked: usize,
    pub mismatches: usize,
    /// The mismatch of lowest index.
    pub first_bad: Option<FirstBad>,
}

impl Comparison {
    fn record(&mut self, index: usize, m: usize, expected: f32, got: f32) {
        self.checked += 1;
        if expected.to_bits() != got.to_bits() {
            self.mismatches += 1;
            if self.first_bad.is_none_or(|b| index < b.index) {
                self.first_bad = Some(FirstBad {
                    index,
                    token: index / m,
                    row: index % m,
                    expected_bits: expected.to_bits(),
                    got_bits: got.to_bits(),
                });
            }
        }
    }
}

/// Compares every output bit for bit (`got` and `expected` are `[n][m]`; a length difference counts every
/// missing or extra value as a mismatch).
pub fn compare_all(got: &[f32], expected: &[f32], m: usize) -> Comparison {
    let m = m.max(1);
    let mut c = Comparison::default();
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        c.record(i, m, e, g);
    }
    let (short, long) = (got.len().min(expected.len()), got.len().max(expected.len()));
    for i in short..long {
        let g = got.get(i).copied().unwrap_or(f32::from_bits(POISON_BITS));
        let e = expected
            .get(i)
            .copied()
            .unwrap_or(f32::from_bits(!POISON_BITS));
        c.record(i, m, e, g);
    }
    c
}

/// Compares the outputs at `indices` (into `[n][m]`) with `expected(token, row)`, bit for bit.
pub fn compare_sampled(
    got: &[f32],
    m: usize,
    indices: &[usize],
    mut expected: impl FnMut(usize, usize) -> f32,
) -> Comparison {
    let m = m.max(1);
    let mut c = Comparison::default();
    for &i in indices {
        let e = expected(i / m, i % m);
        let g = got.get(i).copied().unwrap_or(f32::from_bits(POISON_BITS));
        c.record(i, m, e, g);
    }
    c
}

/// How many outputs still hold the poison pattern (never written by the kernel), and the first one.
pub fn count_unwritten(got: &[f32]) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut first = None;
    for (i, v) in got.iter().enumerate() {
        if v.to_bits() == POISON_BITS {
            count += 1;
            first.get_or_insert(i);
        }
    }
    (count, first)
}

/// The outputs a sampled check compares: every output of the first and last token and of the first and last
/// weight row (where tile edges are), plus `count` more drawn uniformly with `seed`; sorted, distinct, and every
/// output when there are no more than that.
pub fn sample_indices(m: usize, n: usize, seed: u64, count: usize) -> Vec<usize> {
    let total = m * n;
    if m == 0 || n == 0 {
        return Vec::new();
    }
    let mut set = std::collections::BTreeSet::new();
    for t in [0, n - 1] {
        set.extend((0..m).map(|j| t * m + j));
    }
    for j in [0, m - 1] {
        set.extend((0..n).map(|t| t * m + j));
    }
    let target = (set.len() + count).min(total);
    if target == total {
        return (0..total).collect();
    }
    let mut rng = SplitMix64(sub_seed(seed, 3));
    while set.len() < target {
        set.insert((rng.next_u64() % total as u64) as usize);
    }
    set.into_iter().collect()
}

/// The result of comparing the GPU's quantized activations with the reference's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuantComparison {
    /// Quants plus scales compared.
    pub checked: usize,
    pub mismatches: usize,
    pub first_bad: Option<String>,
}

/// Compares quants (`q [n][K]`) and scales (`d [n][K/G]`, by bits) with the reference's.
pub fn compare_quantized(
    got: &QuantizedActivations,
    want: &QuantizedActivations,
) -> QuantComparison {
    let mut c = QuantComparison::default();
    if (got.n, got.k, got.group) != (want.n, want.k, want.group) {
        c.mismatches = 1;
        c.first_bad = Some(format!(
            "the GPU quantized n = {}, K = {} in groups of {} but the reference n = {}, K = {} in groups of {}",
            got.n, got.k, got.group, want.n, want.k, want.group
        ));
        return c;
    }
    let k = want.k.max(1);
    let groups = (want.k / want.group.max(1)).max(1);
    for (i, (&g, &w)) in got.q.iter().zip(&want.q).enumerate() {
        c.checked += 1;
        if g != w {
            c.mismatches += 1;
            c.first_bad.get_or_insert_with(|| {
                let poison = if g == POISON_Q {
                    " (never written)"
                } else {
                    ""
                };
                format!("q[token {}][{}]: want {w}, got {g}{poison}", i / k, i % k)
            });
        }
    }
    for (i, (&g, &w)) in got.d.iter().zip(&want.d).enumerate() {
        c.checked += 1;
        if g.to_bits() != w.to_bits() {
            c.mismatches += 1;
            let first = format!(
                "d[token {}][group {}]: want {:#010x} ({:e}), got {:#010x} ({:e})",
                i / groups,
                i % groups,
                w.to_bits(),
                w,
                g.to_bits(),
                g
            );
            // Quants are reported first; a scale only when no quant differed.
            c.first_bad.get_or_insert(first);
        }
    }
    let missing = got.q.len().abs_diff(want.q.len()) + got.d.len().abs_diff(want.d.len());
    if missing > 0 {
        c.mismatches += missing;
        c.first_bad
            .get_or_insert_with(|| "the GPU's quantized activations have the wrong length".into());
    }
    c
}

/// The outcome of one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every compared output and quantized activation is bit-identical and every output was written.
    Pass,
    /// Some output or activation differs, or was never written.
    Mismatch,
    /// The case could not run (render, compile, load, launch, a kernel fault, a crashed child).
    Failed,
    /// The variant does not target this GPU's architecture.
    Skipped,
}

impl Status {
    pub const fn keyword(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Mismatch => "MISMATCH",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
        }
    }

    /// Whether the case counts against the run (mismatch or failure).
    pub const fn is_bad(self) -> bool {
        matches!(self, Status::Mismatch | Status::Failed)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Status, String> {
        [
            Status::Pass,
            Status::Mismatch,
            Status::Failed,
            Status::Skipped,
        ]
        .into_iter()
        .find(|st| st.keyword() == s)
        .ok_or_else(|| format!("'{s}' is not a parity status"))
    }
}

/// One row of the parity report.
#[derive(Clone, Debug, PartialEq)]
pub struct ParityRow {
    /// Declared name.
    pub variant: String,
    pub canonical: String,
    pub mode: String,
    pub layout: Layout,
    pub shape: Shape,
    pub seed: u64,
    /// The mutant planted in the variant's source (`mmqgen parity --mutants`), if any.
    pub mutant: Option<String>,
    /// The GGUF tensor the weights came from (`None`: seeded random blocks).
    pub gguf: Option<GgufTensorRef>,
    pub status: Status,
    /// Whether the case failed because a kernel faulted (the driver reported an error that ends the context).
    pub kernel_fault: bool,
    /// Whether every output was compared with the CPU reference (else a sample).
    pub full: bool,
    /// Outputs compared with the CPU reference, and how many differed.
    pub checked: usize,
    pub mismatches: usize,
    /// Outputs that still held the poison pattern (all outputs are scanned).
    pub unwritten: usize,
    pub first_bad: Option<FirstBad>,
    /// The variant whose output every output was compared with (sampled shapes), and the result.
    pub proven_by: Option<String>,
    pub proven_checked: usize,
    pub proven_mismatches: usize,
    pub proven_first_bad: Option<FirstBad>,
    /// Quantized activations (quants and scales) compared, and how many differed.
    pub quant_checked: usize,
    pub quant_mismatches: usize,
    pub quant_first_bad: Option<String>,
    /// `mmqgen_reference::digest` of the GPU's whole output (when the case ran to the end).
    pub digest: Option<String>,
    /// Wall time of the whole case (build, inputs, launch, reference, comparison), and of the three kernels
    /// from the first launch to the last synchronisation.
    pub wall_ms: f64,
    pub kernels_ms: f64,
    /// Why the case failed or was skipped.
    pub error: Option<String>,
}

/// The prefix of the line a parity child prints its row on.
pub const ROW_LINE_PREFIX: &str = "mmqgen-parity-row";

impl ParityRow {
    /// An empty row for `desc` and `case` (status `Failed` until filled in).
    pub fn new(desc: &VariantDescription, case: &ParityCase) -> ParityRow {
        ParityRow {
            variant: desc.name.to_string(),
            canonical: canonical_name(desc),
            mode: desc.mode.keyword().to_string(),
            layout: case.layout,
            shape: case.shape,
            seed: case.seed,
            mutant: case.mutant.clone(),
            gguf: None,
            status: Status::Failed,
            kernel_fault: false,
            full: case.shape.compares_every_output(),
            checked: 0,
            mismatches: 0,
            unwritten: 0,
            first_bad: None,
            proven_by: None,
            proven_checked: 0,
            proven_mismatches: 0,
            proven_first_bad: None,
            quant_checked: 0,
            quant_mismatches: 0,
            quant_first_bad: None,
            digest: None,
            wall_ms: 0.0,
            kernels_ms: 0.0,
            error: None,
        }
    }

    /// The status the counts imply (for a case that ran to the end).
    pub fn status_from_counts(&self) -> Status {
        if self.mismatches + self.unwritten + self.proven_mismatches + self.quant_mismatches > 0 {
            Status::Mismatch
        } else {
            Status::Pass
        }
    }

    /// The earliest bad output against the reference or the proven variant.
    pub fn any_first_bad(&self) -> Option<FirstBad> {
        match (self.first_bad, self.proven_first_bad) {
            (Some(a), Some(b)) => Some(if b.index < a.index { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    fn fields(&self) -> Vec<(&'static str, Value)> {
        use Value::*;
        let bad =
            |b: Option<FirstBad>, f: fn(&FirstBad) -> Value| b.as_ref().map(f).unwrap_or(Null);
        fn hex(bits: u32) -> Value {
            Value::Str(format!("{bits:#010x}"))
        }
        let opt = |s: &Option<String>| s.clone().map(Str).unwrap_or(Null);
        vec![
            ("variant", Str(self.variant.clone())),
            ("canonical", Str(self.canonical.clone())),
            ("mode", Str(self.mode.clone())),
            ("layout", Str(self.layout.keyword().into())),
            ("m", Num(self.shape.m.to_string())),
            ("n", Num(self.shape.n.to_string())),
            ("k", Num(self.shape.k.to_string())),
            ("seed", Num(self.seed.to_string())),
            ("mutant", opt(&self.mutant)),
            (
                "gguf",
                self.gguf
                    .as_ref()
                    .map_or(Null, |g| Str(g.path.display().to_string())),
            ),
            (
                "tensor",
                self.gguf.as_ref().map_or(Null, |g| Str(g.tensor.clone())),
            ),
            ("status", Str(self.status.keyword().into())),
            ("kernel_fault", Bool(self.kernel_fault)),
            ("full", Bool(self.full)),
            ("checked", Num(self.checked.to_string())),
            ("mismatches", Num(self.mismatches.to_string())),
            ("unwritten", Num(self.unwritten.to_string())),
            (
                "first_bad_index",
                bad(self.first_bad, |b| Num(b.index.to_string())),
            ),
            (
                "first_bad_token",
                bad(self.first_bad, |b| Num(b.token.to_string())),
            ),
            (
                "first_bad_row",
                bad(self.first_bad, |b| Num(b.row.to_string())),
            ),
            (
                "first_bad_expected",
                bad(self.first_bad, |b| hex(b.expected_bits)),
            ),
            ("first_bad_got", bad(self.first_bad, |b| hex(b.got_bits))),
            ("proven_by", opt(&self.proven_by)),
            ("proven_checked", Num(self.proven_checked.to_string())),
            ("proven_mismatches", Num(self.proven_mismatches.to_string())),
            (
                "proven_first_bad_index",
                bad(self.proven_first_bad, |b| Num(b.index.to_string())),
            ),
            (
                "proven_first_bad_token",
                bad(self.proven_first_bad, |b| Num(b.token.to_string())),
            ),
            (
                "proven_first_bad_row",
                bad(self.proven_first_bad, |b| Num(b.row.to_string())),
            ),
            (
                "proven_first_bad_expected",
                bad(self.proven_first_bad, |b| hex(b.expected_bits)),
            ),
            (
                "proven_first_bad_got",
                bad(self.proven_first_bad, |b| hex(b.got_bits)),
            ),
            ("quant_checked", Num(self.quant_checked.to_string())),
            ("quant_mismatches", Num(self.quant_mismatches.to_string())),
            ("quant_first_bad", opt(&self.quant_first_bad)),
            ("digest", opt(&self.digest)),
            ("wall_ms", Num(format!("{:.3}", finite(self.wall_ms)))),
            ("kernels_ms", Num(format!("{:.3}", finite(self.kernels_ms)))),
            ("error", opt(&self.error)),
        ]
    }

    /// One JSON object (for `--json`).
    pub fn to_json(&self) -> String {
        let body: Vec<String> = self
            .fields()
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::Str(s) => json_string(&s),
                    Value::Num(n) => n,
                    Value::Bool(b) => b.to_string(),
                    Value::Null => "null".to_string(),
                };
                format!("{}: {v}", json_string(k))
            })
            .collect();
        format!("{{{}}}", body.join(", "))
    }

    /// The one line a parity child prints: [`ROW_LINE_PREFIX`], then tab-separated `key=value` fields
    /// (backslash, tab, CR and LF escaped; absent values left out).
    pub fn encode(&self) -> String {
        let mut line = ROW_LINE_PREFIX.to_string();
        for (k, v) in self.fields() {
            let v = match v {
                Value::Str(s) | Value::Num(s) => s,
                Value::Bool(b) => b.to_string(),
                Value::Null => continue,
            };
            line.push('\t');
            line.push_str(k);
            line.push('=');
            line.push_str(&escape(&v));
        }
        line
    }

    /// Parses a line made by [`Self::encode`].
    pub fn decode(line: &str) -> Result<ParityRow, String> {
        let rest = line
            .strip_prefix(ROW_LINE_PREFIX)
            .ok_or_else(|| format!("the line does not start with '{ROW_LINE_PREFIX}'"))?;
        let mut map = BTreeMap::new();
        for field in rest.split('\t').filter(|f| !f.is_empty()) {
            let (k, v) = field
                .split_once('=')
                .ok_or_else(|| format!("the field '{field}' of the result line has no '='"))?;
            map.insert(k.to_string(), unescape(v));
        }
        let get = |k: &str| -> Result<&String, String> {
            map.get(k)
                .ok_or_else(|| format!("the result line has no field '{k}'"))
        };
        fn num<T: FromStr>(map: &BTreeMap<String, String>, k: &str) -> Result<T, String> {
            let v = map
                .get(k)
                .ok_or_else(|| format!("the result line has no field '{k}'"))?;
            v.parse()
                .map_err(|_| format!("the result line's field '{k}' = '{v}' is not a number"))
        }
        fn hex(v: &str) -> Result<u32, String> {
            u32::from_str_radix(v.trim_start_matches("0x"), 16)
                .map_err(|_| format!("'{v}' is not a bit pattern"))
        }
        let first_bad = |prefix: &str| -> Result<Option<FirstBad>, String> {
            if !map.contains_key(&format!("{prefix}_index")) {
                return Ok(None);
            }
            Ok(Some(FirstBad {
                index: num(&map, &format!("{prefix}_index"))?,
                token: num(&map, &format!("{prefix}_token"))?,
                row: num(&map, &format!("{prefix}_row"))?,
                expected_bits: hex(get(&format!("{prefix}_expected"))?)?,
                got_bits: hex(get(&format!("{prefix}_got"))?)?,
            }))
        };
        Ok(ParityRow {
            variant: get("variant")?.clone(),
            canonical: get("canonical")?.clone(),
            mode: get("mode")?.clone(),
            layout: get("layout")?.parse()?,
            shape: Shape::new(num(&map, "m")?, num(&map, "n")?, num(&map, "k")?),
            seed: num(&map, "seed")?,
            mutant: map.get("mutant").cloned(),
            gguf: match (map.get("gguf"), map.get("tensor")) {
                (Some(path), Some(tensor)) => Some(GgufTensorRef {
                    path: PathBuf::from(path),
                    tensor: tensor.clone(),
                }),
                (None, None) => None,
                _ => return Err(
                    "the result line has one of the fields 'gguf' and 'tensor' but not the other"
                        .to_string(),
                ),
            },
            status: get("status")?.parse()?,
            kernel_fault: num(&map, "kernel_fault")?,
            full: num(&map, "full")?,
            checked: num(&map, "checked")?,
            mismatches: num(&map, "mismatches")?,
            unwritten: num(&map, "unwritten")?,
            first_bad: first_bad("first_bad")?,
            proven_by: map.get("proven_by").cloned(),
            proven_checked: num(&map, "proven_checked")?,
            proven_mismatches: num(&map, "proven_mismatches")?,
            proven_first_bad: first_bad("proven_first_bad")?,
            quant_checked: num(&map, "quant_checked")?,
            quant_mismatches: num(&map, "quant_mismatches")?,
            quant_first_bad: map.get("quant_first_bad").cloned(),
            digest: map.get("digest").cloned(),
            wall_ms: num(&map, "wall_ms")?,
            kernels_ms: num(&map, "kernels_ms")?,
            error: map.get("error").cloned(),
        })
    }
}

enum Value {
    Str(String),
    Num(String),
    Bool(bool),
    Null,
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The output of a variant already proven on the same inputs (same mode, shape and seed), to compare every
/// output with on sampled shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct ProvenOutput {
    /// Its declared name (and layout), for the report.
    pub variant: String,
    /// `[n][m]`.
    pub output: Vec<f32>,
}

/// What a case produced: its row, and the GPU's output when the case ran to the end (to save as the proven
/// output for later variants).
#[derive(Clone, Debug)]
pub struct CaseOutcome {
    pub row: ParityRow,
    pub output: Option<Vec<f32>>,
}

/// Why a case could not run to the end. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum ParityError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Mutant(#[from] MutantError),
    #[error("registering the {layout} weights failed: {source}")]
    Weights {
        layout: Layout,
        #[source]
        source: WeightsError,
    },
    #[error("{stage} failed: {source}{}", sticky_hint(source.driver_error()))]
    Launch {
        stage: String,
        #[source]
        source: Box<LaunchError>,
    },
    #[error("{source}{}", sticky_hint(source.driver_error()))]
    Device {
        #[source]
        source: DeviceError,
    },
    #[error(
        "{source_ref} is {rows} x {k} but the case's shape is {shape}, so the weights do not fit the case"
    )]
    GgufShape {
        source_ref: GgufTensorRef,
        rows: usize,
        k: usize,
        shape: Shape,
    },
    #[error(
        "the proven output of '{variant}' has {len} values but the shape {shape} has {expected} outputs, so it \
         is not an output for these inputs"
    )]
    ProvenLength {
        variant: String,
        len: usize,
        shape: Shape,
        expected: usize,
    },
}

fn sticky_hint(e: Option<cudarc::driver::DriverError>) -> &'static str {
    match e {
        Some(e) if is_sticky_kernel_fault(e) => {
            " (a fault inside a kernel: this process's CUDA context is unusable from here on)"
        }
        _ => "",
    }
}

impl ParityError {
    /// Whether a kernel faulted: a launch, synchronisation or read-back failed with an error that leaves the
    /// CUDA context unusable ([`is_sticky_kernel_fault`]). Building, loading and registering never count.
    pub fn is_kernel_fault(&self) -> bool {
        let code = match self {
            ParityError::Launch { source, .. } => source.driver_error(),
            ParityError::Device { source } => source.driver_error(),
            _ => None,
        };
        code.is_some_and(is_sticky_kernel_fault)
    }
}

impl From<DeviceError> for ParityError {
    fn from(source: DeviceError) -> ParityError {
        ParityError::Device { source }
    }
}

fn stage(stage: impl Into<String>) -> impl FnOnce(LaunchError) -> ParityError {
    let stage = stage.into();
    move |source| ParityError::Launch {
        stage,
        source: Box::new(source),
    }
}

/// Runs one parity case on `gpu`: build the variant (through the cubin cache when given; with the case's mutant
/// planted in its rendered source, and then never through the cache), register the seeded weights in the case's
/// layout, poison, run the quantizer, the matmul and the combine (synchronising after each, so a kernel fault is
/// attributed to its kernel), read back, and compare with the reference (and the proven output, when given).
/// Never panics on a GPU failure: it becomes a `Failed` row with a sentence (and `kernel_fault` when a kernel
/// faulted).
pub fn run_case(
    gpu: &Gpu,
    desc: &VariantDescription,
    case: &ParityCase,
    proven: Option<&ProvenOutput>,
    cubin_cache: Option<&Path>,
) -> CaseOutcome {
    run_case_with(gpu, desc, case, None, proven, cubin_cache)
}

/// [`run_case`] with the weights of a GGUF tensor instead of seeded blocks when `gguf` is given (its rows and K
/// must be the case's m and K; the activations stay seeded). The row records the tensor.
pub fn run_case_with(
    gpu: &Gpu,
    desc: &VariantDescription,
    case: &ParityCase,
    gguf: Option<&GgufWeights>,
    proven: Option<&ProvenOutput>,
    cubin_cache: Option<&Path>,
) -> CaseOutcome {
    let start = Instant::now();
    let mut row = ParityRow::new(desc, case);
    row.gguf = gguf.map(|g| g.source.clone());
    if let Err(e) = gpu.check_variant_arch(desc) {
        row.status = Status::Skipped;
        row.error = Some(e.to_string());
        return CaseOutcome { row, output: None };
    }
    let output = match run_case_inner(gpu, desc, case, gguf, proven, cubin_cache, &mut row) {
        Ok(output) => {
            row.status = row.status_from_counts();
            Some(output)
        }
        Err(e) => {
            row.status = Status::Failed;
            row.kernel_fault = e.is_kernel_fault();
            row.error = Some(e.to_string());
            None
        }
    };
    row.wall_ms = start.elapsed().as_secs_f64() * 1e3;
    CaseOutcome { row, output }
}

fn run_case_inner(
    gpu: &Gpu,
    desc: &VariantDescription,
    case: &ParityCase,
    gguf: Option<&GgufWeights>,
    proven: Option<&ProvenOutput>,
    cubin_cache: Option<&Path>,
    row: &mut ParityRow,
) -> Result<Vec<f32>, ParityError> {
    let shape = case.shape;
    let Shape { m, n, k } = shape;
    check_shape(m, n, k).map_err(|e| stage(format!("checking the shape {shape}"))(e.into()))?;
    if let Some(g) = gguf {
        if (g.rows, g.k) != (m, k) {
            return Err(ParityError::GgufShape {
                source_ref: g.source.clone(),
                rows: g.rows,
                k: g.k,
                shape,
            });
        }
    }
    if let Some(p) = proven {
        if p.output.len() != shape.outputs() {
            return Err(ParityError::ProvenLength {
                variant: p.variant.clone(),
                len: p.output.len(),
                shape,
                expected: shape.outputs(),
            });
        }
    }
    let (variant, _build) = match &case.mutant {
        None => build_variant(gpu, desc, cubin_cache)?,
        Some(name) => {
            // A mutant is built once and compiled fresh: its source differs from the variant's, and the cache key
            // (which hashes the source) would never hit anyway.
            let (rendered, _sites) = crate::mutants::find(name)?.render(desc)?;
            build_rendered(gpu, desc, rendered, None)?
        }
    };
    let stream = gpu.stream();
    let inputs = match gguf {
        Some(g) => ParityInputs::with_weights(g.raw.clone(), shape, case.seed, desc.mode),
        None => ParityInputs::generate(shape, case.seed, desc.mode),
    };
    let weights = RegisteredWeights::register_for(gpu, &inputs.raw, m, k, case.layout, desc)
        .map_err(|source| ParityError::Weights {
            layout: case.layout,
            source,
        })?;
    let mut ws =
        Workspace::new(gpu, &variant, m, n, k).map_err(stage("allocating the workspace"))?;
    ws.poison(stream)
        .map_err(stage("poisoning the workspace"))?;
    let x = stream.clone_htod(&inputs.x).map_err(|e| {
        DeviceError::cuda(
            format!("uploading the activations ({} values)", inputs.x.len()),
            e,
        )
    })?;
    let mut out = stream.alloc_zeros::<f32>(shape.outputs()).map_err(|e| {
        DeviceError::cuda(
            format!("allocating the output ({} values)", shape.outputs()),
            e,
        )
    })?;
    poison_f32(stream, &mut out, "the output")?;
    synchronize(stream, "the uploads")?;

    let entry = variant.entry_points().clone();
    let kernels_start = Instant::now();
    variant
        .quantize_activations(&x, n, k, stream, &mut ws)
        .map_err(stage(format!(
            "launching the activation quantizer {}",
            entry.quantize
        )))?;
    synchronize(
        stream,
        &format!("the activation quantizer {}", entry.quantize),
    )?;
    let matmul_name = entry.matmul(case.layout).to_string();
    variant
        .matmul_entry(&weights, &mut out, n, stream, &mut ws)
        .map_err(stage(format!("launching the matmul {matmul_name}")))?;
    synchronize(stream, &format!("the matmul {matmul_name}"))?;
    if desc.ksplit > 1 {
        let name = entry.combine.clone().unwrap_or_default();
        variant
            .combine(m, n, k, &mut out, stream, &ws)
            .map_err(stage(format!("launching the combine {name}")))?;
        synchronize(stream, &format!("the combine {name}"))?;
    }
    row.kernels_ms = kernels_start.elapsed().as_secs_f64() * 1e3;

    let got_acts = ws
        .read_quantized(stream)
        .map_err(stage("reading the quantized activations back"))?;
    let got = read_prefix(stream, &out, shape.outputs(), "output")
        .map_err(stage("reading the output back"))?;

    let q = compare_quantized(&got_acts, &inputs.acts);
    row.quant_checked = q.checked;
    row.quant_mismatches = q.mismatches;
    row.quant_first_bad = q.first_bad;

    row.unwritten = count_unwritten(&got).0;
    row.digest = Some(digest(&got));
    let c = if shape.compares_every_output() {
        compare_all(&got, &inputs.reference(shape), m)
    } else {
        let indices = sample_indices(m, n, case.seed, MIN_SAMPLED_OUTPUTS);
        compare_sampled(&got, m, &indices, |t, j| inputs.reference_at(shape, t, j))
    };
    row.checked = c.checked;
    row.mismatches = c.mismatches;
    row.first_bad = c.first_bad;
    if let Some(p) = proven {
        let c = compare_all(&got, &p.output, m);
        row.proven_by = Some(p.variant.clone());
        row.proven_checked = c.checked;
        row.proven_mismatches = c.mismatches;
        row.proven_first_bad = c.first_bad;
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: u32) -> f32 {
        f32::from_bits(v)
    }

    #[test]
    fn shapes_parse_with_sentences() {
        assert_eq!(
            "1000,77,2816".parse::<Shape>(),
            Ok(Shape::new(1000, 77, 2816))
        );
        assert_eq!(" 64, 1 ,256".parse::<Shape>(), Ok(Shape::new(64, 1, 256)));
        assert_eq!(
            "1000,77".parse::<Shape>().unwrap_err(),
            "'1000,77' is not a shape: write m,n,k (weight rows, tokens, K), for example 1000,77,2816"
        );
        assert_eq!(
            "1000,x,256".parse::<Shape>().unwrap_err(),
            "'x' in shape '1000,x,256' is not a whole number, so it cannot be n"
        );
        assert_eq!(
            "10,1,300".parse::<Shape>().unwrap_err(),
            "shape '10,1,300' cannot be run: K = 300 is not a multiple of 256: q6_K weights come in super-blocks \
             of 256 values"
        );
        assert_eq!(
            "10,0,256".parse::<Shape>().unwrap_err(),
            "shape '10,0,256' cannot be run: n = 0: a matmul needs at least one token"
        );
        assert_eq!(Shape::new(4097, 513, 4096).to_string(), "4097,513,4096");
        assert!(DEFAULT_SHAPES[0].compares_every_output());
        assert!(DEFAULT_SHAPES[1].compares_every_output());
        assert!(!DEFAULT_SHAPES[2].compares_every_output());
    }

    #[test]
    fn sampling_is_deterministic_and_covers_the_edges() {
        let (m, n) = (4097, 513);
        let a = sample_indices(m, n, 7, MIN_SAMPLED_OUTPUTS);
        assert_eq!(a, sample_indices(m, n, 7, MIN_SAMPLED_OUTPUTS));
        assert_ne!(a, sample_indices(m, n, 8, MIN_SAMPLED_OUTPUTS));
        assert!(a.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        assert!(a.iter().all(|&i| i < m * n));
        let edges = 2 * m + 2 * n - 4;
        assert_eq!(a.len(), edges + MIN_SAMPLED_OUTPUTS);
        for j in 0..m {
            assert!(a.binary_search(&j).is_ok());
            assert!(a.binary_search(&((n - 1) * m + j)).is_ok());
        }
        for t in 0..n {
            assert!(a.binary_search(&(t * m)).is_ok());
            assert!(a.binary_search(&(t * m + m - 1)).is_ok());
        }
        // Enough random draws land in the interior.
        let interior = a
            .iter()
            .filter(|&&i| i / m != 0 && i / m != n - 1 && i % m != 0 && i % m != m - 1)
            .count();
        assert!(interior >= MIN_SAMPLED_OUTPUTS - 16, "{interior}");
        // Small totals give every output; one token or one row too.
        assert_eq!(sample_indices(3, 5, 1, 4096), (0..15).collect::<Vec<_>>());
        assert_eq!(sample_indices(100, 1, 1, 10).len(), 100);
        assert!(sample_indices(0, 5, 1, 10).is_empty());
    }

    #[test]
    fn bitwise_comparison_finds_the_first_bad_output() {
        let m = 4;
        let want: Vec<f32> = (0..12).map(|i| i as f32 * 0.5).collect();
        let mut got = want.clone();
        assert_eq!(
            compare_all(&got, &want, m),
            Comparison {
                checked: 12,
                mismatches: 0,
                first_bad: None
            }
        );
        // -0.0 vs +0.0 is a mismatch: bits, not values.
        got[0] = -0.0;
        got[9] = bits(POISON_BITS);
        got[6] = f32::from_bits(want[6].to_bits() + 1);
        let c = compare_all(&got, &want, m);
        assert_eq!((c.checked, c.mismatches), (12, 3));
        let b = c.first_bad.unwrap();
        assert_eq!((b.index, b.token, b.row), (0, 0, 0));
        assert_eq!((b.expected_bits, b.got_bits), (0, 0x8000_0000));
        // Sampled: only the indices asked for, in any order; the lowest bad index is reported.
        let c = compare_sampled(&got, m, &[9, 6, 1], |t, j| want[t * m + j]);
        assert_eq!((c.checked, c.mismatches), (3, 2));
        let b = c.first_bad.unwrap();
        assert_eq!((b.index, b.token, b.row), (6, 1, 2));
        assert_eq!(
            compare_sampled(&got, m, &[9], |t, j| want[t * m + j])
                .first_bad
                .unwrap()
                .to_string(),
            "token 2 row 1: want 0x40900000 (4.5e0), got 0xffc0dead (never written)"
        );
        // NaN payloads are compared by bits too.
        let c = compare_all(&[bits(0x7fc0_0000)], &[bits(0x7fc0_0001)], 1);
        assert_eq!(c.mismatches, 1);
        // A short output counts its missing values.
        assert_eq!(compare_all(&got[..10], &want, m).mismatches, 3 + 2);
    }

    #[test]
    fn poison_left_behind_is_counted_everywhere() {
        let mut got = vec![1.0f32; 1000];
        assert_eq!(count_unwritten(&got), (0, None));
        got[17] = bits(POISON_BITS);
        got[999] = bits(POISON_BITS);
        // A canonical NaN is written, not poison.
        got[5] = f32::NAN;
        assert_eq!(count_unwritten(&got), (2, Some(17)));
    }

    #[test]
    fn quantized_activations_are_compared_bit_for_bit() {
        let x: Vec<f32> = (0..2 * 512)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.1)
            .collect();
        let want = quantize_activations(&x, 2, 512, 32);
        let mut got = want.clone();
        assert_eq!(compare_quantized(&got, &want).mismatches, 0);
        assert_eq!(compare_quantized(&got, &want).checked, 2 * 512 + 2 * 16);
        got.q[515] = POISON_Q;
        got.d[17] = f32::from_bits(got.d[17].to_bits() ^ 1);
        let c = compare_quantized(&got, &want);
        assert_eq!(c.mismatches, 2);
        assert_eq!(
            c.first_bad.unwrap(),
            format!(
                "q[token 1][3]: want {}, got -128 (never written)",
                want.q[515]
            )
        );
        let mut got = want.clone();
        got.d[17] = -got.d[17];
        assert!(compare_quantized(&got, &want)
            .first_bad
            .unwrap()
            .starts_with("d[token 1][group 1]: want "));
        let other = quantize_activations(&x, 2, 512, 256);
        assert_eq!(compare_quantized(&other, &want).mismatches, 1);
    }

    #[test]
    fn rows_round_trip_through_the_child_line_and_json() {
        let desc = VariantDescription {
            name: "r56".into(),
            ..VariantDescription::DEFAULTS
        };
        let case = ParityCase {
            shape: Shape::new(4097, 513, 4096),
            layout: Layout::Raw,
            seed: 3,
            mutant: None,
        };
        let mut row = ParityRow::new(&desc, &case);
        assert_eq!(ParityRow::decode(&row.encode()), Ok(row.clone()));
        row.status = Status::Mismatch;
        row.checked = 12_290;
        row.mismatches = 2;
        row.first_bad = Some(FirstBad {
            index: 4098,
            token: 1,
            row: 1,
            expected_bits: 0x3f80_0000,
            got_bits: POISON_BITS,
        });
        row.proven_by = Some("r41 (padded)".into());
        row.proven_checked = 4097 * 513;
        row.quant_first_bad = Some("q[token 0][1]: want 3, got 4".into());
        row.digest = Some("0123456789abcdef".into());
        row.error = Some("tab\there, newline\nthere, back\\slash, \"quoted\"".into());
        row.wall_ms = 1234.5;
        row.mutant = Some("off_by_one_token_edge".into());
        row.kernel_fault = true;
        let line = row.encode();
        assert!(!line.contains('\n'));
        assert_eq!(ParityRow::decode(&line), Ok(row.clone()));
        let json = row.to_json();
        assert!(json.starts_with("{\"variant\": \"r56\", "));
        assert!(json.contains("\"first_bad_got\": \"0xffc0dead\""));
        assert!(json
            .contains("\"error\": \"tab\\there, newline\\nthere, back\\\\slash, \\\"quoted\\\"\""));
        assert!(json.contains("\"proven_first_bad_index\": null"));
        assert!(json.contains("\"full\": false"));
        assert!(json.contains("\"mutant\": \"off_by_one_token_edge\""));
        assert!(json.contains("\"kernel_fault\": true"));
        assert_eq!(
            ParityRow::decode("mmqgen-parity-row\tvariant=x").unwrap_err(),
            "the result line has no field 'canonical'"
        );
        assert!(ParityRow::decode("garbage").is_err());
    }

    #[test]
    fn statuses_follow_the_counts() {
        let desc = VariantDescription::DEFAULTS;
        let case = ParityCase {
            shape: Shape::new(64, 1, 256),
            layout: Layout::Padded,
            seed: 1,
            mutant: None,
        };
        let mut row = ParityRow::new(&desc, &case);
        assert_eq!(row.status_from_counts(), Status::Pass);
        row.unwritten = 1;
        assert_eq!(row.status_from_counts(), Status::Mismatch);
        row.unwritten = 0;
        row.quant_mismatches = 1;
        assert_eq!(row.status_from_counts(), Status::Mismatch);
        assert!(Status::Failed.is_bad() && Status::Mismatch.is_bad());
        assert!(!Status::Pass.is_bad() && !Status::Skipped.is_bad());
    }

    #[test]
    fn inputs_are_seeded() {
        let s = Shape::new(3, 2, 512);
        let a = ParityInputs::generate(s, 5, NumericsMode::IntPer32);
        let b = ParityInputs::generate(s, 5, NumericsMode::IntPer32);
        assert_eq!(a.raw, b.raw);
        assert_eq!(
            a.x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            b.x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_ne!(
            a.raw,
            ParityInputs::generate(s, 6, NumericsMode::IntPer32).raw
        );
        assert_eq!(a.acts.group, 32);
        assert_eq!(
            ParityInputs::generate(s, 5, NumericsMode::IntPer256)
                .acts
                .group,
            256
        );
        let full = a.reference(s);
        // The same inputs as the reference's digest cases.
        let (want, _) = mmqgen_reference::digest_case(NumericsMode::IntPer32, 3, 2, 512, 5);
        assert_eq!(digest(&full), want);
        for t in 0..2 {
            for j in 0..3 {
                assert_eq!(a.reference_at(s, t, j).to_bits(), full[t * 3 + j].to_bits());
            }
        }
    }

    fn small_q6k() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../formats/tests/fixtures/small_q6k.gguf")
    }

    fn tensor_of(path: PathBuf, tensor: &str) -> GgufTensorRef {
        GgufTensorRef {
            path,
            tensor: tensor.to_string(),
        }
    }

    #[test]
    fn gguf_weights_give_the_shape_and_a_reference() {
        let source = tensor_of(small_q6k(), "blk.0.ffn_down.weight");
        let w = GgufWeights::load(&source).unwrap();
        assert_eq!((w.rows, w.k), (4, 512));
        assert_eq!(w.raw.len(), 4 * 2 * 210);
        let bytes = std::fs::read(small_q6k()).unwrap();
        let file = GgufFile::parse(&bytes).unwrap();
        assert_eq!(
            w.raw,
            file.q6k_tensor("blk.0.ffn_down.weight").unwrap().bytes()
        );
        let shape = w.shape(77).unwrap();
        assert_eq!(shape, Shape::new(4, 77, 512));
        assert!(shape.compares_every_output());
        assert_eq!(
            source.to_string(),
            format!(
                "tensor 'blk.0.ffn_down.weight' of {}",
                small_q6k().display()
            )
        );

        let inputs = ParityInputs::with_weights(w.raw.clone(), shape, 1, NumericsMode::IntPer32);
        // The activations are those of a seeded case of the same shape and seed.
        let (_, x) = digest_case_inputs(1, 77, 512, 1);
        assert_eq!(
            inputs.x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let full = inputs.reference(shape);
        assert_eq!(full.len(), 4 * 77);
        assert!(full.iter().all(|v| v.is_finite()));
        assert!(full.iter().any(|v| *v != 0.0));
        for t in [0, 1, 76] {
            for j in 0..4 {
                assert_eq!(
                    inputs.reference_at(shape, t, j).to_bits(),
                    full[t * 4 + j].to_bits()
                );
            }
        }
        // The reference is the tensor's dequantized rows times the activations, up to activation quantization.
        let dense = mmqgen_formats::dequantize_rows(&w.raw).unwrap();
        for t in 0..77 {
            for j in 0..4 {
                let (mut exact, mut scale) = (0f64, 0f64);
                for c in 0..512 {
                    let p = f64::from(dense[j * 512 + c]) * f64::from(inputs.x[t * 512 + c]);
                    exact += p;
                    scale += p.abs();
                }
                let got = f64::from(full[t * 4 + j]);
                assert!(
                    (got - exact).abs() <= 0.02 * scale + 1e-6,
                    "token {t} row {j}: reference {got}, dequantized dot {exact}"
                );
            }
        }
        // A seeded case of the same shape has other weights, hence another reference.
        let seeded = ParityInputs::generate(shape, 1, NumericsMode::IntPer32);
        assert_ne!(seeded.raw, inputs.raw);
    }

    #[test]
    fn gguf_weights_are_refused_with_one_sentence() {
        let path = small_q6k();
        let shown = path.display().to_string();
        let err = |tensor: &str| {
            GgufWeights::load(&tensor_of(path.clone(), tensor))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("blk.9.nope"),
            format!(
                "cannot take the parity weights from {shown}: no tensor named 'blk.9.nope' in the file (it has 3 \
                 tensors: blk.0.ffn_down.weight, output_norm.weight, token_embd.weight)"
            )
        );
        assert_eq!(
            err("output_norm.weight"),
            format!(
                "cannot take the parity weights from {shown}: tensor 'output_norm.weight' has type F32 but a q6_K \
                 tensor (type 14) is needed"
            )
        );
        assert_eq!(
            err("token_embd.weight"),
            format!(
                "cannot take the parity weights from {shown}: tensor 'token_embd.weight' has type F16 but a q6_K \
                 tensor (type 14) is needed"
            )
        );
        let missing = Path::new("/nonexistent/model.gguf");
        let e = GgufWeights::load(&tensor_of(missing.into(), "w"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot read the GGUF file /nonexistent/model.gguf: "),
            "{e}"
        );
        let not_gguf = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let e = GgufWeights::load(&tensor_of(not_gguf.clone(), "w"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "cannot take the parity weights from {}: wrong magic: a GGUF file starts with the bytes 'GGUF', \
                 this one starts with '[pac'",
                not_gguf.display()
            )
        );
        // A q6_K tensor whose rows are not whole super-blocks (K = 100): the reader refuses it.
        let mut bytes = b"GGUF".to_vec();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&1u64.to_le_bytes()); // tensors
        bytes.extend_from_slice(&0u64.to_le_bytes()); // metadata keys
        bytes.extend_from_slice(&1u64.to_le_bytes());
        bytes.push(b'w');
        bytes.extend_from_slice(&2u32.to_le_bytes());
        bytes.extend_from_slice(&100u64.to_le_bytes());
        bytes.extend_from_slice(&4u64.to_le_bytes());
        bytes.extend_from_slice(&14u32.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.resize(bytes.len().next_multiple_of(32) + 64, 0);
        let e = GgufWeights::from_bytes(&tensor_of("k100.gguf".into(), "w"), &bytes)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "cannot take the parity weights from k100.gguf: tensor 'w' of type Q6_K has rows of 100 elements: rows \
             of that type must be a multiple of 256"
        );
        // A shape no kernel runs.
        let w = GgufWeights::load(&tensor_of(path.clone(), "blk.0.ffn_down.weight")).unwrap();
        assert_eq!(
            w.shape(0).unwrap_err().to_string(),
            format!(
                "tensor 'blk.0.ffn_down.weight' of {shown} cannot be run with 0 token(s): n = 0: a matmul needs at \
                 least one token"
            )
        );
        let e = ParityError::GgufShape {
            source_ref: w.source.clone(),
            rows: 4,
            k: 512,
            shape: Shape::new(8, 1, 512),
        };
        assert_eq!(
            e.to_string(),
            format!(
                "tensor 'blk.0.ffn_down.weight' of {shown} is 4 x 512 but the case's shape is 8,1,512, so the \
                 weights do not fit the case"
            )
        );
    }

    #[test]
    fn gguf_rows_round_trip() {
        let desc = VariantDescription::DEFAULTS;
        let case = ParityCase::new(Shape::new(4, 77, 512), Layout::Raw, 1);
        let mut row = ParityRow::new(&desc, &case);
        row.gguf = Some(tensor_of("models/a b.gguf".into(), "blk.0.ffn_down.weight"));
        row.status = Status::Pass;
        assert_eq!(ParityRow::decode(&row.encode()), Ok(row.clone()));
        let json = row.to_json();
        assert!(
            json.contains("\"gguf\": \"models/a b.gguf\", \"tensor\": \"blk.0.ffn_down.weight\""),
            "{json}"
        );
        row.gguf = None;
        let json = row.to_json();
        assert!(json.contains("\"gguf\": null, \"tensor\": null"), "{json}");
        assert_eq!(ParityRow::decode(&row.encode()), Ok(row.clone()));
        let mut line = row.encode();
        line.push_str("\ttensor=x");
        assert_eq!(
            ParityRow::decode(&line).unwrap_err(),
            "the result line has one of the fields 'gguf' and 'tensor' but not the other"
        );
    }

    /// The GPU end of parity: every default-catalogue-like variant on a small shape, both layouts. Skips
    /// visibly without a GPU (fails with `MMQGEN_REQUIRE_GPU=1`).
    #[test]
    fn gpu_parity_small_shape() {
        let Some(gpu) = crate::testing::gpu_or_skip("parity::gpu_parity_small_shape") else {
            return;
        };
        if !crate::compile::nvrtc_available() {
            assert!(
                !std::env::var("MMQGEN_REQUIRE_GPU").is_ok_and(|v| v == "1"),
                "MMQGEN_REQUIRE_GPU=1 but NVRTC is not installed"
            );
            eprintln!("SKIPPED: NVRTC not found (parity::gpu_parity_small_shape)");
            return;
        }
        let desc = VariantDescription {
            name: "parity-test".into(),
            ..VariantDescription::DEFAULTS
        };
        for layout in Layout::ALL {
            let case = ParityCase {
                shape: Shape::new(130, 33, 1280),
                layout,
                seed: 1,
                mutant: None,
            };
            let outcome = run_case(&gpu, &desc, &case, None, None);
            let row = &outcome.row;
            assert_eq!(row.status, Status::Pass, "{row:?}");
            assert_eq!(row.checked, 130 * 33);
            assert!(row.quant_checked > 0);
            // The output is its own proven output.
            let proven = ProvenOutput {
                variant: "self".into(),
                output: outcome.output.unwrap(),
            };
            let again = run_case(&gpu, &desc, &case, Some(&proven), None);
            assert_eq!(again.row.status, Status::Pass, "{:?}", again.row);
            assert_eq!(again.row.proven_checked, 130 * 33);
        }
    }
}
