//! Case weights from a q6_K tensor of a GGUF file (`mmqgen parity --gguf FILE --tensor NAME`).

use std::fmt;
use std::path::PathBuf;

use mmqgen_formats::{GgufError, GgufFile};

use super::case::Shape;
use crate::gpu::launch::{check_shape, ShapeError};

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

#[cfg(test)]
mod tests {
    use super::super::case::ParityInputs;
    use super::super::parity::ParityError;
    use super::*;
    use mmqgen_codegen::NumericsMode;
    use std::path::Path;

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
        let x = ParityInputs::generate(shape, 1, NumericsMode::IntPer32).x;
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
}
