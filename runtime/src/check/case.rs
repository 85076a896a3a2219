//! What one parity case is: a shape, a weight layout, a seed (and maybe a mutant), and its seeded inputs.

use std::fmt;
use std::str::FromStr;

use mmqgen_codegen::NumericsMode;
use mmqgen_reference::activations::{quantize_activations_for, QuantizedActivations};
use mmqgen_reference::matmul::{reference_matmul, reference_output};
use mmqgen_reference::{
    activations, derive_seed, plant_rounding_ties, random_blocks, ACTIVATION_STREAM, TIES_STREAM,
};

use crate::formats::input::shown;
use crate::gpu::launch::{check_shape, ShapeError};
use crate::gpu::weights::Layout;

/// Shapes with at most this many outputs compare every output with the CPU reference.
pub const FULL_COMPARE_LIMIT: usize = 200_000;
/// Larger shapes compare at least this many randomly drawn outputs with the CPU reference.
pub const MIN_SAMPLED_OUTPUTS: usize = 4096;
/// The default shapes: (1000, 77, 2816), (64, 1, 256), (4097, 513, 4096) (the last one sampled).
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

    /// Whether parity compares every output with the CPU reference (otherwise a sample, docs/DESIGN.md D11).
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
/// deliberate mutant ([`crate::check::mutants`]) to plant in the variant's rendered source before it is compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParityCase {
    pub shape: Shape,
    pub layout: Layout,
    pub seed: u64,
    /// The name of a shipped mutant ([`crate::check::mutants::find`]); `None` checks the variant as rendered.
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
    /// The inputs of `mmqgen_reference::digest_case_inputs(m, n, k, seed)` (the weights and activations `mmqgen
    /// bench` times) with rounding ties planted in one span of 256 activations per token
    /// ([`plant_rounding_ties`]), so that every case checks the quantizer where a quotient one ulp off would
    /// change a value.
    pub fn generate(shape: Shape, seed: u64, mode: NumericsMode) -> ParityInputs {
        ParityInputs::with_weights(random_blocks(shape.m, shape.k, seed), shape, seed, mode)
    }

    /// Inputs with the given weights (`shape.m` rows of `shape.k / 256` q6_K blocks, e.g. a GGUF tensor's) and
    /// the seeded activations, ties planted, that a seeded case of `shape` and `seed` gets.
    pub fn with_weights(raw: Vec<u8>, shape: Shape, seed: u64, mode: NumericsMode) -> ParityInputs {
        let Shape { n, k, .. } = shape;
        let mut x = activations(n, k, derive_seed(seed, ACTIVATION_STREAM), 4);
        plant_rounding_ties(&mut x, n, k, derive_seed(seed, TIES_STREAM));
        let acts = quantize_activations_for(&x, n, k, mode);
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn inputs_are_seeded() {
        let s = Shape::new(3, 2, 512);
        let a = ParityInputs::generate(s, 5, NumericsMode::IntPer32);
        let b = ParityInputs::generate(s, 5, NumericsMode::IntPer32);
        assert_eq!(a.raw, b.raw);
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.x), bits(&b.x));
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
        // The reference's digest inputs, with rounding ties planted in the activations.
        let (raw, mut x) = mmqgen_reference::digest_case_inputs(3, 2, 512, 5);
        assert_eq!(a.raw, raw);
        let untouched = x.clone();
        plant_rounding_ties(&mut x, 2, 512, derive_seed(5, TIES_STREAM));
        assert_ne!(x, untouched);
        assert_eq!(bits(&a.x), bits(&x));
        for t in 0..2 {
            for j in 0..3 {
                assert_eq!(a.reference_at(s, t, j).to_bits(), full[t * 3 + j].to_bits());
            }
        }
    }
}
