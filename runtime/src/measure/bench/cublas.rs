//! The dense baseline: the same q6_K blocks dequantized on the CPU, converted to bf16 and f16, checked against
//! an f64 CPU product, and multiplied by cuBLAS (`cublasGemmEx`) on the bench's stream.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use half::{bf16, f16};

use super::config::CublasOut;
use super::fail::{panic_text, Fail};
use super::report::BaselineResult;
use super::threads::{parallel_map, row_chunks, worker_threads};
use crate::check::{sub_seed, Shape};
use crate::gpu::workspace::read_prefix;

/// The dense baselines dequantize the parity blocks with each block's `d` moved to this binary exponent
/// (sign and mantissa kept): the full-range parity blocks have `d` up to 65504 and subnormal, which would
/// overflow f16 outputs; with it every weight lies within +-8 and every output fits f16. Values do not change a
/// GEMM's speed (zeros would; there are none to speak of).
pub const DENSE_D_EXPONENT: i32 = -12;

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

/// The dense element types of the baselines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dense {
    Bf16,
    F16,
}

impl Dense {
    pub(super) fn name(self) -> &'static str {
        match self {
            Dense::Bf16 => "cuBLAS bf16",
            Dense::F16 => "cuBLAS f16",
        }
    }

    pub(super) fn data_type(self) -> cudarc::cublas::sys::cudaDataType {
        match self {
            Dense::Bf16 => cudarc::cublas::sys::cudaDataType::CUDA_R_16BF,
            Dense::F16 => cudarc::cublas::sys::cudaDataType::CUDA_R_16F,
        }
    }

    pub(super) fn bits(self, v: f32) -> u16 {
        match self {
            Dense::Bf16 => bf16::from_f32(v).to_bits(),
            Dense::F16 => f16::from_f32(v.clamp(-65504.0, 65504.0)).to_bits(),
        }
    }

    pub(super) fn value(self, bits: u16) -> f64 {
        match self {
            Dense::Bf16 => bf16::from_bits(bits).to_f64(),
            Dense::F16 => f16::from_bits(bits).to_f64(),
        }
    }
}

/// A cuBLAS handle on the bench's stream.
pub(super) struct Cublas {
    pub(super) blas: cudarc::cublas::CudaBlas,
    pub(super) out: CublasOut,
}

pub(super) fn guard_cublas<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
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
    pub(super) fn open(stream: &Arc<CudaStream>, out: CublasOut) -> Result<Cublas, String> {
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

    pub(super) fn out_type(&self, dense: Dense) -> cudarc::cublas::sys::cudaDataType {
        match self.out {
            CublasOut::Input => dense.data_type(),
            CublasOut::F32 => cudarc::cublas::sys::cudaDataType::CUDA_R_32F,
        }
    }

    pub(super) fn out_bytes(&self) -> usize {
        match self.out {
            CublasOut::Input => 2,
            CublasOut::F32 => 4,
        }
    }

    /// Queues `out[n][m] = x[n][K] * W^T`.
    pub(super) fn gemm(
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

/// The dense inputs of the baselines, as 16-bit patterns.
pub(super) struct DenseHost {
    pub(super) dense: Dense,
    pub(super) w: Vec<u16>,
    pub(super) x: Vec<u16>,
}

/// The device buffers of one dense baseline, per set.
pub(super) struct DenseDevice {
    pub(super) dense: Dense,
    pub(super) w: Vec<CudaSlice<u16>>,
    pub(super) x: Vec<CudaSlice<u16>>,
    pub(super) out: Vec<CudaSlice<u8>>,
    pub(super) result: BaselineResult,
    /// Its output matched the CPU product: it is timed.
    pub(super) ready: bool,
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
pub(super) fn dense_weights(raw: &[u8], shape: Shape) -> Result<Vec<f32>, String> {
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
pub(super) fn convert(values: &[f32], dense: Dense) -> Vec<u16> {
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

/// Sampled `|out - ref| / |ref|` of one baseline call on set 0 against an f64 CPU product of the same
/// converted inputs; `Err` when the call fails.
pub(super) fn check_dense(
    stream: &Arc<CudaStream>,
    seed: u64,
    cublas: &Cublas,
    host: &DenseHost,
    dev: &mut DenseDevice,
    shape: Shape,
    args: GemmArgs,
) -> Result<f64, Fail> {
    let Shape { m, n, k } = shape;
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
        .map(|i| (sub_seed(seed, 1000 + i) % total as u64) as usize)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
