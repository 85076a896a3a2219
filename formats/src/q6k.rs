//! The q6_K block format of GGUF/ggml (`block_q6_K`) and its dequantization.
//!
//! A block holds 256 weights in 210 bytes, little endian:
//!
//! | field    | type     | offset | meaning                         |
//! |----------|----------|--------|---------------------------------|
//! | `ql`     | `u8[128]` | 0      | low 4 bits of each 6-bit quant  |
//! | `qh`     | `u8[64]` | 128    | high 2 bits of each quant       |
//! | `scales` | `i8[16]` | 192    | one scale per 16 weights        |
//! | `d`      | f16      | 208    | super-block scale               |
//!
//! Weight `k` is `d * scales[k / 16] * (q6(k) - 32)`. Dequantization here computes `(d * sc) * (q - 32)` in f32,
//! left to right, exactly as ggml's `dequantize_row_q6_K` does, so its bits match ggml's (the CPU reference and
//! every kernel's parity check rely on that). The block is only 2-byte aligned inside a GGUF row (210 = 2 mod 4),
//! so the view reads bytes, never wider words.

use crate::FormatError;
use half::f16;

/// Weights in one q6_K block.
pub const BLOCK_WEIGHTS: usize = 256;
/// Bytes in one q6_K block.
pub const BLOCK_BYTES: usize = 210;

/// Byte offset of `ql` (`u8[128]`) in a block.
pub const QL_OFFSET: usize = 0;
/// Byte offset of `qh` (`u8[64]`) in a block.
pub const QH_OFFSET: usize = 128;
/// Byte offset of `scales` (`i8[16]`) in a block.
pub const SCALES_OFFSET: usize = 192;
/// Byte offset of `d` (f16, little endian) in a block.
pub const D_OFFSET: usize = 208;

/// A borrowed view of one q6_K block's 210 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Q6kBlock<'a> {
    bytes: &'a [u8; BLOCK_BYTES],
}

impl<'a> Q6kBlock<'a> {
    /// A view of exactly one block.
    pub fn from_array(bytes: &'a [u8; BLOCK_BYTES]) -> Self {
        Self { bytes }
    }

    /// A view of `bytes`, which must be exactly [`BLOCK_BYTES`] long.
    pub fn new(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let bytes: &[u8; BLOCK_BYTES] = bytes
            .try_into()
            .map_err(|_| FormatError::BlockBytes { len: bytes.len() })?;
        Ok(Self { bytes })
    }

    /// The block's bytes.
    pub fn bytes(&self) -> &'a [u8; BLOCK_BYTES] {
        self.bytes
    }

    /// The low-nibble plane `ql`.
    pub fn ql(&self) -> &'a [u8] {
        &self.bytes[QL_OFFSET..QH_OFFSET]
    }

    /// The high-bits plane `qh`.
    pub fn qh(&self) -> &'a [u8] {
        &self.bytes[QH_OFFSET..SCALES_OFFSET]
    }

    /// The raw f16 bits of the super-block scale `d`.
    pub fn d_bits(&self) -> u16 {
        u16::from_le_bytes([self.bytes[D_OFFSET], self.bytes[D_OFFSET + 1]])
    }

    /// The super-block scale `d`, widened exactly from f16 to f32.
    pub fn d(&self) -> f32 {
        f16::from_bits(self.d_bits()).to_f32()
    }

    /// The scale of sub-block `i` (weights `16 i .. 16 i + 15`).
    ///
    /// # Panics
    /// If `i >= 16`.
    pub fn scale(&self, i: usize) -> i8 {
        assert!(
            i < BLOCK_WEIGHTS / 16,
            "q6_K scale index {i} is out of range 0..16"
        );
        self.bytes[SCALES_OFFSET + i] as i8
    }

    /// All 16 scales.
    pub fn scales(&self) -> [i8; 16] {
        std::array::from_fn(|i| self.bytes[SCALES_OFFSET + i] as i8)
    }

    /// The block's 256 weights, as [`dequantize_block`] computes them.
    pub fn dequantize(&self) -> [f32; BLOCK_WEIGHTS] {
        let d = self.d();
        let scales = self.scales();
        std::array::from_fn(|k| (d * f32::from(scales[k / 16])) * f32::from(self.q6(k)))
    }

    /// The 6-bit quant of weight `k` minus 32, in `-32..=31`.
    ///
    /// # Panics
    /// If `k >= 256`.
    pub fn q6(&self, k: usize) -> i8 {
        assert!(
            k < BLOCK_WEIGHTS,
            "q6_K weight index {k} is out of range 0..256"
        );
        let half = k / 128;
        let l = k % 32;
        let quarter = (k % 128) / 32;
        let ql = self.bytes[QL_OFFSET + 64 * half + l + 32 * (quarter & 1)];
        let low = if quarter < 2 { ql & 0xF } else { ql >> 4 };
        let high = (self.bytes[QH_OFFSET + 32 * half + l] >> (2 * quarter)) & 3;
        ((low | (high << 4)) as i8) - 32
    }
}

/// Dequantizes one block: weight `k` is `(d * scales[k / 16]) * q6(k)` in f32, evaluated left to right as ggml's
/// `dequantize_row_q6_K` does.
///
/// # Panics
/// If `block` is not exactly [`BLOCK_BYTES`] long; use [`dequantize_rows`] for untrusted lengths.
pub fn dequantize_block(block: &[u8]) -> [f32; BLOCK_WEIGHTS] {
    let view = match Q6kBlock::new(block) {
        Ok(view) => view,
        Err(_) => panic!(
            "a q6_K block is {BLOCK_BYTES} bytes, this one is {}",
            block.len()
        ),
    };
    view.dequantize()
}

/// Dequantizes consecutive q6_K blocks (any number of rows, each a whole number of blocks) into f32 weights.
///
/// Fails if `bytes` is not a multiple of [`BLOCK_BYTES`] long.
pub fn dequantize_rows(bytes: &[u8]) -> Result<Vec<f32>, FormatError> {
    let blocks = blocks(bytes)?;
    let mut out = Vec::with_capacity(bytes.len() / BLOCK_BYTES * BLOCK_WEIGHTS);
    for block in blocks {
        out.extend_from_slice(&block.dequantize());
    }
    Ok(out)
}

/// Views of the blocks in `bytes`, which must be a multiple of [`BLOCK_BYTES`] long.
pub fn blocks(bytes: &[u8]) -> Result<impl ExactSizeIterator<Item = Q6kBlock<'_>>, FormatError> {
    let (whole, rest) = bytes.as_chunks::<BLOCK_BYTES>();
    if !rest.is_empty() {
        return Err(FormatError::BlockBytes { len: bytes.len() });
    }
    Ok(whole.iter().map(Q6kBlock::from_array))
}

/// The index of the first block whose `d` is NaN or infinite, if any (such weights are refused at registration).
pub fn first_non_finite_d(bytes: &[u8]) -> Result<Option<usize>, FormatError> {
    Ok(blocks(bytes)?.position(|block| !block.d().is_finite()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_with(
        ql: impl Fn(usize) -> u8,
        qh: impl Fn(usize) -> u8,
        sc: [i8; 16],
        d: f16,
    ) -> [u8; BLOCK_BYTES] {
        let mut b = [0u8; BLOCK_BYTES];
        for i in 0..128 {
            b[QL_OFFSET + i] = ql(i);
        }
        for i in 0..64 {
            b[QH_OFFSET + i] = qh(i);
        }
        for (i, s) in sc.iter().enumerate() {
            b[SCALES_OFFSET + i] = *s as u8;
        }
        b[D_OFFSET..].copy_from_slice(&d.to_bits().to_le_bytes());
        b
    }

    #[test]
    fn accessors_follow_the_documented_layout() {
        let b = block_with(
            |i| i as u8,
            |i| (i * 7) as u8,
            std::array::from_fn(|i| i as i8 - 8),
            f16::from_f32(0.5),
        );
        let v = Q6kBlock::from_array(&b);
        assert_eq!(v.d(), 0.5);
        assert_eq!(v.scale(0), -8);
        assert_eq!(v.scale(15), 7);
        for k in 0..BLOCK_WEIGHTS {
            let (n, l, q) = (k / 128, k % 32, (k % 128) / 32);
            let ql = b[64 * n + l + 32 * (q & 1)];
            let lo = if q < 2 { ql & 15 } else { ql >> 4 };
            let hi = (b[128 + 32 * n + l] >> (2 * q)) & 3;
            let want = (lo | hi << 4) as i32 - 32;
            assert_eq!(v.q6(k) as i32, want, "weight {k}");
            assert!((-32..=31).contains(&want));
        }
    }

    #[test]
    fn extremes_of_q6() {
        let all_ones = block_with(|_| 0xFF, |_| 0xFF, [1; 16], f16::ONE);
        let zeros = block_with(|_| 0, |_| 0, [1; 16], f16::ONE);
        let v1 = Q6kBlock::from_array(&all_ones);
        let v0 = Q6kBlock::from_array(&zeros);
        assert!((0..256).all(|k| v1.q6(k) == 31 && v0.q6(k) == -32));
        assert!(dequantize_block(&all_ones).iter().all(|&w| w == 31.0));
        assert!(dequantize_block(&zeros).iter().all(|&w| w == -32.0));
    }

    #[test]
    fn dequantize_rows_rejects_partial_blocks() {
        assert_eq!(
            dequantize_rows(&[0u8; 211]),
            Err(FormatError::BlockBytes { len: 211 })
        );
        assert_eq!(dequantize_rows(&[]), Ok(vec![]));
        assert_eq!(dequantize_rows(&[0u8; 420]).map(|v| v.len()), Ok(512));
        assert!(FormatError::BlockBytes { len: 211 }
            .to_string()
            .contains("210 bytes"));
    }

    #[test]
    fn non_finite_d_is_found() {
        let ok = block_with(|_| 0, |_| 0, [1; 16], f16::ONE);
        let bad = block_with(|_| 0, |_| 0, [1; 16], f16::INFINITY);
        let mut bytes = ok.to_vec();
        bytes.extend_from_slice(&ok);
        assert_eq!(first_non_finite_d(&bytes), Ok(None));
        bytes.extend_from_slice(&bad);
        assert_eq!(first_non_finite_d(&bytes), Ok(Some(2)));
    }
}
