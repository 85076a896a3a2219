//! The checks every call passes before anything is queued: a matmul's shape, and that each buffer holds what the
//! shape needs.

use super::error::ShapeError;
use crate::gpu::buffer::DeviceRef;

pub use mmqgen_codegen::launch::{segment_count, SEGMENT_K};

pub(crate) fn fits_i32(what: impl Into<String>, value: usize) -> Result<i32, ShapeError> {
    i32::try_from(value).map_err(|_| ShapeError::TooLarge {
        what: what.into(),
        value,
    })
}

/// Checks a matmul shape: `K % 256 == 0`, `m, n >= 1`, and every size the kernels index with an `int` fits one.
/// Returns `(m, n, k)` as the kernels' `int` arguments.
pub fn check_shape(m: usize, n: usize, k: usize) -> Result<(i32, i32, i32), ShapeError> {
    if m == 0 {
        return Err(ShapeError::Empty {
            what: "m",
            unit: "weight row",
        });
    }
    if n == 0 {
        return Err(ShapeError::Empty {
            what: "n",
            unit: "token",
        });
    }
    if k == 0 {
        return Err(ShapeError::Empty {
            what: "K",
            unit: "super-block of 256 values",
        });
    }
    if !k.is_multiple_of(256) {
        return Err(ShapeError::KNotMultiple { k });
    }
    let mi = fits_i32("m", m)?;
    let ni = fits_i32("n", n)?;
    let ki = fits_i32("K", k)?;
    fits_i32(format!("n * K (n = {n}, K = {k})"), n.saturating_mul(k))?;
    fits_i32(format!("n * m (n = {n}, m = {m})"), n.saturating_mul(m))?;
    fits_i32(
        format!("m * K / 256 * 224 weight bytes (m = {m}, K = {k})"),
        m.saturating_mul(k / 256).saturating_mul(224),
    )?;
    Ok((mi, ni, ki))
}

/// The split-K segment buffer's length, `nseg * n * m`, checked against 32-bit indexing.
pub fn segment_len(m: usize, n: usize, k: usize) -> Result<usize, ShapeError> {
    Ok(mmqgen_codegen::launch::segment_len(m, n, k)?)
}

pub(crate) fn check_buffer(
    buffer: &'static str,
    len: usize,
    needed: usize,
    shape: impl FnOnce() -> String,
) -> Result<(), ShapeError> {
    if len < needed {
        Err(ShapeError::Buffer {
            buffer,
            len,
            shape: shape(),
            needed,
        })
    } else {
        Ok(())
    }
}

/// The activations hold `n` tokens of K.
pub(crate) fn check_x(x: DeviceRef<f32>, n: usize, k: usize) -> Result<(), ShapeError> {
    check_buffer("activations", x.len(), n * k, || {
        format!("n = {n} tokens of K = {k}")
    })
}

/// The output holds `n` tokens by `m` rows.
pub(crate) fn check_out(len: usize, m: usize, n: usize) -> Result<(), ShapeError> {
    check_buffer("output", len, n * m, || {
        format!("n = {n} tokens by m = {m} rows")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_refusals_are_sentences() {
        assert_eq!(
            check_shape(10, 3, 300).unwrap_err().to_string(),
            "K = 300 is not a multiple of 256: q6_K weights come in super-blocks of 256 values"
        );
        assert_eq!(
            check_shape(10, 0, 256).unwrap_err().to_string(),
            "n = 0: a matmul needs at least one token"
        );
        assert_eq!(
            check_shape(0, 1, 256).unwrap_err().to_string(),
            "m = 0: a matmul needs at least one weight row"
        );
        assert_eq!(
            check_shape(1, 1, 0).unwrap_err().to_string(),
            "K = 0: a matmul needs at least one super-block of 256 values"
        );
        assert_eq!(
            check_shape(1 << 20, 1 << 12, 256).unwrap_err().to_string(),
            "n * m (n = 4096, m = 1048576) = 4294967296 does not fit the kernels' 32-bit int arithmetic (it must \
             stay at or below 2147483647)"
        );
        assert_eq!(check_shape(4097, 513, 4096), Ok((4097, 513, 4096)));
        assert_eq!(segment_len(1000, 77, 2816), Ok(3 * 77 * 1000));
    }

    #[test]
    fn buffer_refusals_are_sentences() {
        assert_eq!(
            check_buffer("output", 10, 77_000, || "n = 77 tokens by m = 1000 rows"
                .into())
            .unwrap_err()
            .to_string(),
            "the output buffer holds 10 values but n = 77 tokens by m = 1000 rows needs 77000"
        );
        assert!(check_buffer("output", 77_000, 77_000, String::new).is_ok());
        assert!(check_out(77_000, 1000, 77).is_ok());
    }
}
