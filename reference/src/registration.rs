//! Weight registration: the byte layouts of KERNELS.md that the runtime uploads, and the check that refuses bad
//! weights before any kernel sees them.
//!
//! The runtime uploads exactly these buffers, so getting a layout wrong here is a parity failure on every
//! variant that reads it; the tests pin them byte for byte. Layout functions assume weights that passed
//! [`check_weights`] and panic otherwise.

use mmqgen_formats::q6k::{blocks, first_non_finite_d, Q6kBlock, BLOCK_BYTES, BLOCK_WEIGHTS};

/// Bytes per block in the padded layout (210 + 14 zero bytes).
pub const PADDED_BLOCK_BYTES: usize = 224;
/// Bytes per row per super-block in the integer scale plane (f32 `d` + 16 int8 scales).
pub const INT_PLANE_ROW_BYTES: usize = 20;

/// Why weights cannot be registered. Each message is one sentence.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistrationError {
    /// K is not a whole number of super-blocks.
    #[error("K = {k} is not a multiple of 256: q6_K weights come in super-blocks of 256 values")]
    KNotMultiple {
        /// The K that was given.
        k: usize,
    },
    /// The buffer is not `m` rows of `K / 256` blocks.
    #[error("the weights are {len} bytes, but m = {m} rows of K = {k} in 210-byte q6_K blocks are {expected} bytes")]
    Length {
        /// Bytes given.
        len: usize,
        /// Rows.
        m: usize,
        /// Values per row.
        k: usize,
        /// `m * K / 256 * 210`.
        expected: usize,
    },
    /// A block's super-block scale is NaN or infinite.
    #[error("row {row}, super-block {block} has d = {d}, and weights whose d is not finite cannot be registered")]
    NonFiniteD {
        /// Weight row.
        row: usize,
        /// Super-block within the row.
        block: usize,
        /// The offending `d` (as f32).
        d: f32,
    },
}

/// Checks that `raw` is `m` GGUF rows of `K / 256` q6_K blocks, `K` a multiple of 256, and every block's `d` finite.
pub fn check_weights(raw: &[u8], m: usize, k: usize) -> Result<(), RegistrationError> {
    if !k.is_multiple_of(BLOCK_WEIGHTS) {
        return Err(RegistrationError::KNotMultiple { k });
    }
    let nsb = k / BLOCK_WEIGHTS;
    let expected = m.checked_mul(nsb).and_then(|b| b.checked_mul(BLOCK_BYTES));
    if expected != Some(raw.len()) {
        return Err(RegistrationError::Length {
            len: raw.len(),
            m,
            k,
            expected: expected.unwrap_or(usize::MAX),
        });
    }
    match first_non_finite_d(raw).expect("the length is a whole number of blocks") {
        None => Ok(()),
        Some(index) => {
            let d = Q6kBlock::new(&raw[index * BLOCK_BYTES..][..BLOCK_BYTES])
                .expect("one block")
                .d();
            Err(RegistrationError::NonFiniteD {
                row: index / nsb,
                block: index % nsb,
                d,
            })
        }
    }
}

/// Rows of a scale plane: `m` rounded up to a multiple of 16; rows past `m` are zero.
pub fn plane_rows(m: usize) -> usize {
    m.div_ceil(16) * 16
}

/// The padded layout: every 210-byte block followed by 14 zero bytes (row stride `K / 256 * 224`).
///
/// # Panics
/// If `raw` is not `m` rows of `K / 256` blocks.
pub fn raw_to_padded(raw: &[u8], m: usize, k: usize) -> Vec<u8> {
    assert_layout(raw, m, k);
    let mut out = vec![0u8; raw.len() / BLOCK_BYTES * PADDED_BLOCK_BYTES];
    for (dst, src) in out
        .chunks_exact_mut(PADDED_BLOCK_BYTES)
        .zip(raw.chunks_exact(BLOCK_BYTES))
    {
        dst[..BLOCK_BYTES].copy_from_slice(src);
    }
    out
}

/// The `f32_per16` scale plane: `float2 [K/32][plane_rows]`, entry `(c, j)` at byte `8 * (c * plane_rows + j)`
/// holding `(mul(d, sc[2c]), mul(d, sc[2c+1]))` of row `j` (little-endian f32; `c` counts 32-wide chunks over K,
/// scale indices are within the chunk's super-block).
///
/// # Panics
/// If `raw` is not `m` rows of `K / 256` blocks.
pub fn f32_per16_plane(raw: &[u8], m: usize, k: usize) -> Vec<u8> {
    assert_layout(raw, m, k);
    let (nsb, rows) = (k / BLOCK_WEIGHTS, plane_rows(m));
    let mut out = vec![0u8; k / 32 * rows * 8];
    for (index, block) in blocks(raw).expect("checked length").enumerate() {
        let (j, b) = (index / nsb, index % nsb);
        let (d, sc) = (block.d(), block.scales());
        for cc in 0..8 {
            let c = b * 8 + cc;
            let at = 8 * (c * rows + j);
            out[at..at + 4].copy_from_slice(&(d * f32::from(sc[2 * cc])).to_le_bytes());
            out[at + 4..at + 8].copy_from_slice(&(d * f32::from(sc[2 * cc + 1])).to_le_bytes());
        }
    }
    out
}

/// The integer scale plane (`int_per32`, `int_per256`): per super-block `b` a record of `plane_rows * 20` bytes at
/// `b * plane_rows * 20`: first `f32 d [plane_rows]` (the f16 `d` widened exactly), then `int8 sc [plane_rows][16]`.
///
/// # Panics
/// If `raw` is not `m` rows of `K / 256` blocks.
pub fn int_plane(raw: &[u8], m: usize, k: usize) -> Vec<u8> {
    assert_layout(raw, m, k);
    let (nsb, rows) = (k / BLOCK_WEIGHTS, plane_rows(m));
    let record = rows * INT_PLANE_ROW_BYTES;
    let mut out = vec![0u8; nsb * record];
    for (index, block) in blocks(raw).expect("checked length").enumerate() {
        let (j, b) = (index / nsb, index % nsb);
        let rec = &mut out[b * record..][..record];
        rec[4 * j..4 * j + 4].copy_from_slice(&block.d().to_le_bytes());
        let sc = &mut rec[4 * rows + 16 * j..][..16];
        for (dst, s) in sc.iter_mut().zip(block.scales()) {
            *dst = s as u8;
        }
    }
    out
}

/// The prefolded weights (engine `mma_k32_prefolded`, docs/KERNELS.md): per row and super-block 512 bytes, the
/// 256 `h` then the 256 `l` of `sc * (q6 - 32) = 64 h + l` ([`crate::matmul::fold`]), K order; row stride `2 K`.
///
/// # Panics
/// If `raw` is not `m` rows of `K / 256` blocks.
pub fn fold_planes(raw: &[u8], m: usize, k: usize) -> Vec<u8> {
    assert_layout(raw, m, k);
    let mut out = vec![0u8; m * 2 * k];
    for (index, block) in blocks(raw).expect("checked length").enumerate() {
        let record = &mut out[index * 512..][..512];
        let scales = block.scales();
        for weight in 0..BLOCK_WEIGHTS {
            let v = i32::from(scales[weight / 16]) * i32::from(block.q6(weight));
            let (h, l) = crate::matmul::fold(v);
            record[weight] = h as u8;
            record[256 + weight] = l as u8;
        }
    }
    out
}

fn assert_layout(raw: &[u8], m: usize, k: usize) {
    assert!(
        k.is_multiple_of(BLOCK_WEIGHTS),
        "K = {k} is not a multiple of {BLOCK_WEIGHTS}"
    );
    assert_eq!(
        raw.len(),
        m * (k / BLOCK_WEIGHTS) * BLOCK_BYTES,
        "the weights are not m = {m} rows of K = {k}"
    );
}

#[cfg(test)]
mod fold_plane_tests {
    use super::*;
    use crate::data::random_blocks;

    #[test]
    fn fold_planes_reassemble_every_scaled_weight() {
        let (m, k) = (3, 512);
        let raw = random_blocks(m, k, 11);
        let planes = fold_planes(&raw, m, k);
        assert_eq!(planes.len(), m * 2 * k);
        for (index, block) in blocks(&raw).unwrap().enumerate() {
            for weight in 0..BLOCK_WEIGHTS {
                let h = planes[index * 512 + weight] as i8 as i32;
                let l = planes[index * 512 + 256 + weight] as i8 as i32;
                let v = i32::from(block.scales()[weight / 16]) * i32::from(block.q6(weight));
                assert_eq!(64 * h + l, v, "block {index} weight {weight}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::random_blocks;
    use half::f16;

    /// A block with ql/qh bytes `fill`, scales `sc` and `d`.
    fn block(fill: u8, sc: [i8; 16], d: f32) -> Vec<u8> {
        let mut b = vec![fill; BLOCK_BYTES];
        for (i, s) in sc.iter().enumerate() {
            b[192 + i] = *s as u8;
        }
        b[208..].copy_from_slice(&f16::from_f32(d).to_bits().to_le_bytes());
        b
    }

    fn f32_at(bytes: &[u8], at: usize) -> f32 {
        f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn layouts_byte_for_byte_on_a_small_case() {
        // m = 2 rows, K = 512 (2 super-blocks): blocks (row, b) = (0,0) (0,1) (1,0) (1,1).
        let sc = |base: i8| std::array::from_fn::<i8, 16, _>(|i| base.wrapping_add(i as i8));
        let raw = [
            block(0x11, sc(-8), 0.5),
            block(0x22, sc(100), -2.0),
            block(0x33, sc(-128), 0.25),
            block(0x44, sc(1), 3.0),
        ]
        .concat();
        assert_eq!(check_weights(&raw, 2, 512), Ok(()));

        let padded = raw_to_padded(&raw, 2, 512);
        assert_eq!(padded.len(), 4 * 224);
        for i in 0..4 {
            assert_eq!(
                &padded[i * 224..i * 224 + 210],
                &raw[i * 210..i * 210 + 210]
            );
            assert!(padded[i * 224 + 210..(i + 1) * 224].iter().all(|&b| b == 0));
        }

        assert_eq!(plane_rows(2), 16);
        let f = f32_per16_plane(&raw, 2, 512);
        assert_eq!(f.len(), 16 * 16 * 8);
        // chunk c = 0, row 0: d = 0.5, sc[0], sc[1] = -8, -7.
        assert_eq!(
            &f[0..8],
            &[(-4.0f32).to_le_bytes(), (-3.5f32).to_le_bytes()].concat()[..]
        );
        // chunk c = 3, row 1: block (1, 0), d = 0.25, sc[6], sc[7] = -122, -121.
        assert_eq!(
            (
                f32_at(&f, 8 * (3 * 16 + 1)),
                f32_at(&f, 8 * (3 * 16 + 1) + 4)
            ),
            (-30.5, -30.25)
        );
        // chunk c = 9 (super-block 1, local chunk 1), row 0: d = -2, sc[2], sc[3] = 102, 103.
        assert_eq!(
            (f32_at(&f, 8 * (9 * 16)), f32_at(&f, 8 * (9 * 16) + 4)),
            (-204.0, -206.0)
        );
        // chunk c = 15, row 1: d = 3, sc[14], sc[15] = 15, 16.
        assert_eq!(
            (
                f32_at(&f, 8 * (15 * 16 + 1)),
                f32_at(&f, 8 * (15 * 16 + 1) + 4)
            ),
            (45.0, 48.0)
        );
        // rows 2..16 are zero in every chunk.
        for c in 0..16 {
            assert!(
                f[8 * (c * 16 + 2)..8 * (c * 16 + 16)]
                    .iter()
                    .all(|&b| b == 0),
                "chunk {c}"
            );
        }

        let p = int_plane(&raw, 2, 512);
        assert_eq!(p.len(), 2 * 16 * 20);
        let mut want = vec![0u8; 2 * 320];
        for (b, (d0, d1, s0, s1)) in [
            (0.5f32, 0.25f32, sc(-8), sc(-128)),
            (-2.0, 3.0, sc(100), sc(1)),
        ]
        .into_iter()
        .enumerate()
        {
            let rec = &mut want[b * 320..(b + 1) * 320];
            rec[0..4].copy_from_slice(&d0.to_le_bytes());
            rec[4..8].copy_from_slice(&d1.to_le_bytes());
            for i in 0..16 {
                rec[64 + i] = s0[i] as u8;
                rec[64 + 16 + i] = s1[i] as u8;
            }
        }
        assert_eq!(p, want);
    }

    #[test]
    fn planes_agree_with_the_blocks_on_random_data() {
        let (m, k) = (37, 768);
        let raw = random_blocks(m, k, 3);
        let (f, p, rows) = (
            f32_per16_plane(&raw, m, k),
            int_plane(&raw, m, k),
            plane_rows(m),
        );
        assert_eq!(rows, 48);
        for j in 0..m {
            for b in 0..3 {
                let blk = Q6kBlock::new(&raw[(j * 3 + b) * 210..][..210]).unwrap();
                assert_eq!(
                    f32_at(&p, b * rows * 20 + 4 * j).to_bits(),
                    blk.d().to_bits()
                );
                for s in 0..16 {
                    assert_eq!(p[b * rows * 20 + 4 * rows + 16 * j + s] as i8, blk.scale(s));
                    let c = b * 8 + s / 2;
                    let v = f32_at(&f, 8 * (c * rows + j) + 4 * (s % 2));
                    assert_eq!(v.to_bits(), (blk.d() * f32::from(blk.scale(s))).to_bits());
                }
            }
        }
    }

    #[test]
    fn check_weights_refuses_with_one_sentence() {
        let ok = block(0, [1; 16], 1.0);
        assert_eq!(
            check_weights(&ok, 1, 300),
            Err(RegistrationError::KNotMultiple { k: 300 })
        );
        let err = check_weights(&ok, 2, 256).unwrap_err();
        assert_eq!(
            err,
            RegistrationError::Length {
                len: 210,
                m: 2,
                k: 256,
                expected: 420
            }
        );
        assert_eq!(
            err.to_string(),
            "the weights are 210 bytes, but m = 2 rows of K = 256 in 210-byte q6_K blocks are 420 bytes"
        );
        let mut raw = [ok.clone(), ok.clone(), ok.clone(), ok.clone()].concat();
        raw[3 * 210 + 208..3 * 210 + 210].copy_from_slice(&f16::NAN.to_bits().to_le_bytes());
        raw[2 * 210 + 208..2 * 210 + 210]
            .copy_from_slice(&f16::NEG_INFINITY.to_bits().to_le_bytes());
        let err = check_weights(&raw, 2, 512).unwrap_err();
        assert_eq!(
            err,
            RegistrationError::NonFiniteD {
                row: 1,
                block: 0,
                d: f32::NEG_INFINITY
            }
        );
        assert_eq!(
            err.to_string(),
            "row 1, super-block 0 has d = -inf, and weights whose d is not finite cannot be registered"
        );
        assert!(check_weights(&[], 0, 512).is_ok());
    }
}
