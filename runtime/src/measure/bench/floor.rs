//! The read floor as a contestant: a kernel that only reads a matrix's bytes (16-byte loads striding the grid,
//! a few geometries, the best one kept), timed at decode shapes exactly like a call (the same spin and events,
//! its own buffer sets rotated like the variants'), so that every decode row can say how far its time is from
//! what reading the weights alone costs on this GPU in this run (issue 54 target 1; the probe of docs/PERF.md's
//! "The read floor" made a contestant).
//!
//! The reader folds every 32-bit word it loads by xor and each warp writes its fold, so the loads cannot be
//! dropped; the xor of the warps' words is the xor of the buffer's words, which the bench checks on the host
//! before timing (a reader that skipped bytes is not timed).

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::fail::{BenchError, Fail};
use crate::check::Shape;
use crate::compile::compile_cubin;
use crate::gpu::device::{DeviceError, Gpu};

/// Decode shapes: at most this many tokens. The floor is timed beside them (`--floor decode`, the default).
pub const DECODE_MAX_N: usize = 32;

pub(super) const FLOOR_KERNEL: &str = "mmqgen_read_floor";
pub(super) const FLOOR_SOURCE: &str = r#"
// Reads len bytes once, 16 at a time, four loads in flight per thread, striding the whole grid; folds every
// 32-bit word by xor and writes one word per warp: out[global warp] = xor of the words that warp read.
extern "C" __global__ void mmqgen_read_floor(const unsigned char* __restrict__ bytes, unsigned long long len,
                                             unsigned* __restrict__ out) {
    const uint4* words = reinterpret_cast<const uint4*>(bytes);
    const unsigned long long count = len / 16;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < count; i += 4 * stride) {
        uint4 a = __ldg(words + i), b = __ldg(words + i + stride);
        uint4 c = __ldg(words + i + 2 * stride), d = __ldg(words + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
        acc ^= c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < count; i += stride) {
        uint4 a = __ldg(words + i);
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    // The last len % 16 bytes (raw rows may end off 16), a byte a thread of block 0, at its place in its word.
    if (blockIdx.x == 0 && threadIdx.x < len % 16) {
        acc ^= (unsigned)bytes[count * 16 + threadIdx.x] << (8 * (threadIdx.x % 4));
    }
    for (int lane = 16; lane > 0; lane /= 2) {
        acc ^= __shfl_xor_sync(0xffffffffu, acc, lane);
    }
    if (threadIdx.x % 32 == 0) {
        out[((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) / 32] = acc;
    }
}
"#;

/// One launch geometry of the reader: threads a block, blocks an SM (the grid is that times the SMs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloorGeometry {
    pub threads: u32,
    pub blocks_per_sm: u32,
}

impl FloorGeometry {
    pub fn grid(self, multiprocessors: u32) -> u32 {
        self.blocks_per_sm * multiprocessors.max(1)
    }

    /// Words the reader writes: one per warp of the grid.
    pub fn warps(self, multiprocessors: u32) -> usize {
        self.grid(multiprocessors) as usize * (self.threads as usize / 32)
    }
}

impl fmt::Display for FloorGeometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} threads x {}/SM", self.threads, self.blocks_per_sm)
    }
}

/// The geometries tried at every floor shape, each a contestant; the floor is the one with the smallest
/// median. From one 256-thread block an SM to the SM's 2048 threads.
pub const FLOOR_GEOMETRIES: [FloorGeometry; 8] = [
    FloorGeometry {
        threads: 256,
        blocks_per_sm: 1,
    },
    FloorGeometry {
        threads: 256,
        blocks_per_sm: 2,
    },
    FloorGeometry {
        threads: 256,
        blocks_per_sm: 4,
    },
    FloorGeometry {
        threads: 256,
        blocks_per_sm: 8,
    },
    FloorGeometry {
        threads: 512,
        blocks_per_sm: 1,
    },
    FloorGeometry {
        threads: 512,
        blocks_per_sm: 2,
    },
    FloorGeometry {
        threads: 512,
        blocks_per_sm: 4,
    },
    FloorGeometry {
        threads: 1024,
        blocks_per_sm: 2,
    },
];

/// Where the read floor is timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorMode {
    /// At decode shapes, n <= [`DECODE_MAX_N`].
    Decode,
    /// At every shape.
    All,
    /// Nowhere.
    Off,
}

impl FloorMode {
    pub fn applies(self, shape: Shape) -> bool {
        match self {
            FloorMode::Decode => shape.n <= DECODE_MAX_N,
            FloorMode::All => true,
            FloorMode::Off => false,
        }
    }

    pub fn keyword(self) -> &'static str {
        match self {
            FloorMode::Decode => "decode",
            FloorMode::All => "all",
            FloorMode::Off => "off",
        }
    }
}

/// The xor of `bytes` as little-endian 32-bit words, the last one zero-padded: what the reader's warps' words
/// fold to when it read every byte once.
pub fn xor_words(bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(4);
    let mut acc = 0u32;
    for c in &mut chunks {
        acc ^= u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    let mut last = [0u8; 4];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    acc ^ u32::from_le_bytes(last)
}

/// The compiled reader.
pub(super) struct Reader {
    _module: Arc<CudaModule>,
    func: CudaFunction,
    multiprocessors: u32,
}

impl Reader {
    pub(super) fn new(gpu: &Gpu) -> Result<Reader, BenchError> {
        let compiled = compile_cubin(FLOOR_SOURCE, "mmqgen_read_floor.cu", gpu.arch(), false)
            .map_err(|e| {
                BenchError::Setup(format!(
                    "compiling the bench's read-floor kernel failed: {e}"
                ))
            })?;
        let module = gpu
            .context()
            .load_module(Ptx::from_binary(compiled.cubin))
            .map_err(|e| DeviceError::cuda("loading the bench's read-floor kernel", e))?;
        let func = module
            .load_function(FLOOR_KERNEL)
            .map_err(|e| DeviceError::cuda("finding the bench's read-floor kernel", e))?;
        Ok(Reader {
            _module: module,
            func,
            multiprocessors: gpu.info().multiprocessors,
        })
    }

    /// Words of the largest grid's output.
    fn out_words(&self) -> usize {
        FLOOR_GEOMETRIES
            .iter()
            .map(|g| g.warps(self.multiprocessors))
            .max()
            .unwrap_or(1)
    }

    pub(super) fn launch(
        &self,
        stream: &Arc<CudaStream>,
        geometry: FloorGeometry,
        bytes: &CudaSlice<u8>,
        out: &mut CudaSlice<u32>,
    ) -> Result<(), Fail> {
        let cfg = LaunchConfig {
            grid_dim: (geometry.grid(self.multiprocessors), 1, 1),
            block_dim: (geometry.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let len = bytes.len() as u64;
        let mut b = stream.launch_builder(&self.func);
        b.arg(bytes).arg(&len).arg(out);
        // SAFETY: the kernel reads `len` bytes of `bytes` and writes one word per warp of the grid into `out`,
        // which holds the largest grid's words (FloorBuffers::new).
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(|e| Fail::driver("launching the bench's read-floor kernel", e))
    }
}

/// The floor's side of one shape: the matrix's bytes in the run's layout, one copy per buffer set, and the
/// words the reader writes (shared by every set: a few KiB).
pub(super) struct FloorBuffers {
    pub(super) sets: Vec<CudaSlice<u8>>,
    pub(super) out: CudaSlice<u32>,
    /// [`xor_words`] of the bytes.
    pub(super) xor: u32,
}

impl FloorBuffers {
    /// Set 0: `bytes` uploaded.
    pub(super) fn new(
        stream: &Arc<CudaStream>,
        reader: &Reader,
        bytes: &[u8],
    ) -> Result<FloorBuffers, Fail> {
        Ok(FloorBuffers {
            sets: vec![stream
                .clone_htod(bytes)
                .map_err(|e| Fail::driver("uploading the read floor's bytes", e))?],
            out: stream
                .alloc_zeros::<u32>(reader.out_words())
                .map_err(|e| Fail::driver("allocating the read floor's output", e))?,
            xor: xor_words(bytes),
        })
    }

    /// Sets 1..`sets`, copies of set 0.
    pub(super) fn grow(&mut self, stream: &Arc<CudaStream>, sets: usize) -> Result<(), Fail> {
        while self.sets.len() < sets {
            let copy = stream.clone_dtod(&self.sets[0]).map_err(|e| {
                Fail::driver(
                    &format!("copying the read floor's bytes (set {})", self.sets.len()),
                    e,
                )
            })?;
            self.sets.push(copy);
        }
        Ok(())
    }

    /// Runs every geometry once on set 0 and checks that its warps' words fold to the bytes' xor; `Err` with a
    /// sentence naming the first geometry that did not read every byte.
    pub(super) fn check(&mut self, stream: &Arc<CudaStream>, reader: &Reader) -> Result<(), Fail> {
        for g in FLOOR_GEOMETRIES {
            reader.launch(stream, g, &self.sets[0], &mut self.out)?;
            let words = stream
                .clone_dtoh(&self.out)
                .map_err(|e| Fail::driver("reading the read floor's output back", e))?;
            let got = words[..g.warps(reader.multiprocessors)]
                .iter()
                .fold(0u32, |a, w| a ^ w);
            if got != self.xor {
                return Err(Fail::Local(format!(
                    "the read-floor kernel at {g} folded the bytes to {got:#010x}, not {:#010x}: it did not \
                     read every byte once",
                    self.xor
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::nvrtc_or_skip;

    #[test]
    fn xor_words_pads_the_last_word() {
        assert_eq!(xor_words(&[]), 0);
        assert_eq!(xor_words(&[1, 2, 3, 4]), 0x0403_0201);
        assert_eq!(xor_words(&[1, 2, 3, 4, 1, 2, 3, 4]), 0);
        // 16 bytes then a 3-byte tail, as the reader's block 0 folds it.
        let mut b: Vec<u8> = (0u8..19).collect();
        let words = b[..16]
            .chunks(4)
            .fold(0u32, |a, c| a ^ u32::from_le_bytes(c.try_into().unwrap()));
        assert_eq!(xor_words(&b), words ^ 0x0012_1110);
        b.push(0);
        assert_eq!(
            xor_words(&b),
            words ^ 0x0012_1110,
            "a zero byte changes nothing"
        );
    }

    #[test]
    fn decode_shapes_get_the_floor() {
        let at = |n| Shape::new(4096, n, 4096);
        assert!(FloorMode::Decode.applies(at(1)) && FloorMode::Decode.applies(at(32)));
        assert!(!FloorMode::Decode.applies(at(33)));
        assert!(FloorMode::All.applies(at(4096)));
        assert!(!FloorMode::Off.applies(at(1)));
    }

    #[test]
    fn geometries_fit_an_sm_and_are_distinct() {
        for (i, g) in FLOOR_GEOMETRIES.iter().enumerate() {
            assert!(
                g.threads % 32 == 0 && g.threads * g.blocks_per_sm <= 2048,
                "{g}"
            );
            assert!(!FLOOR_GEOMETRIES[..i].contains(g), "{g} twice");
        }
        let g = FLOOR_GEOMETRIES[1];
        assert_eq!((g.grid(132), g.warps(132)), (264, 264 * 8));
        assert_eq!(g.to_string(), "256 threads x 2/SM");
    }

    #[test]
    fn the_reader_compiles_for_sm_90_without_spills() {
        if !nvrtc_or_skip("floor::the_reader_compiles_for_sm_90_without_spills") {
            return;
        }
        let c = compile_cubin(FLOOR_SOURCE, "mmqgen_read_floor.cu", "sm_90", false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&c.cubin[..4], b"\x7fELF");
        let k = c
            .report
            .iter()
            .find(|k| k.kernel == FLOOR_KERNEL)
            .unwrap_or_else(|| panic!("no ptxas report for the reader:\n{}", c.log));
        assert_eq!((k.spill_stores_bytes, k.shared_bytes), (0, 0), "{k:?}");
    }
}
