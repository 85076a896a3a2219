//! Loading a variant's cubin and launching it, exactly as docs/KERNELS.md describes the ABI.
//!
//! A [`LoadedVariant`] is one CUDA module (the cubin NVRTC made from the rendered source) with its four entry
//! points: the activation quantizer, the matmul for each weight layout, and the split-K combine. A
//! [`Workspace`] holds the quantized activations (and the split-K segment partials) between the kernels and is
//! reused across calls, so a matmul allocates nothing.
//!
//! Every shape and buffer is checked before anything is queued, each refusal one sentence. Launches are
//! asynchronous: a fault inside a kernel (a misaligned access, say) surfaces at the next synchronisation, which
//! is why [`crate::check`] synchronises after each kernel.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUfunction_attribute_enum};
use cudarc::driver::{
    result::DriverError, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    DevicePtrMut, LaunchConfig,
};
use cudarc::nvrtc::Ptx;
use mmqgen_codegen::render::{has_raw_rows_entry, render, RenderError, RenderedVariant};
use mmqgen_codegen::validate::MAX_TAIL_PARTS;
use mmqgen_codegen::{
    canonical_name, ring_shared_bytes, shared_layout, Engine, NumericsMode, Quantizer, Refill,
    ScaleFetch, VariantDescription, PADDED_BLOCK_BYTES, SEGMENT_SUPERBLOCKS, SUPERBLOCK_K,
};
use mmqgen_reference::activations::QuantizedActivations;

use super::tensor_maps;
use crate::compile::cache::{CacheError, CacheOutcome, CubinCache};
use crate::compile::variant::{compile_rendered, CompiledVariant, VariantCompileError};
use crate::compile::CompileError;
use crate::gpu::buffer::DeviceRef;

use crate::gpu::device::{
    describe_driver_error, guard, DeviceError, Gpu, DEFAULT_SHARED_BYTES_PER_BLOCK,
};
use crate::gpu::weights::{Layout, PlaneKind, RegisteredWeights};

/// Bit pattern written into buffers before a launch so that an output the kernel never wrote is recognisable (a
/// quiet NaN no arithmetic produces: GPU arithmetic on NaN gives the canonical 0x7FFFFFFF).
pub const POISON_BITS: u32 = 0xFFC0_DEAD;
/// The poison byte for int8 activation quants: -128, which the quantizer never writes (it clamps to ±127).
pub const POISON_Q: i8 = i8::MIN;

/// K values per numerics segment (NUMERICS.md 4): 4 super-blocks of 256.
pub const SEGMENT_K: usize = (SEGMENT_SUPERBLOCKS * SUPERBLOCK_K) as usize;
/// Threads per block of the combine kernel (docs/KERNELS.md).
pub const COMBINE_THREADS: u32 = 256;
/// CUDA's limit on `gridDim.y` and `gridDim.z`.
pub const MAX_GRID_YZ: u32 = 65_535;

/// Number of segments of K (`ceil(K / 1024)`), the `nseg` of the split-K segment buffer.
pub fn segment_count(k: usize) -> usize {
    k.div_ceil(SEGMENT_K)
}

/// Why a call was refused before anything was queued. Each variant displays as one sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("K = {k} is not a multiple of 256: q6_K weights come in super-blocks of 256 values")]
    KNotMultiple { k: usize },
    #[error("{what} = 0: a matmul needs at least one {unit}")]
    Empty {
        what: &'static str,
        unit: &'static str,
    },
    #[error(
        "{what} = {value} does not fit the kernels' 32-bit int arithmetic (it must stay at or below 2147483647)"
    )]
    TooLarge { what: String, value: usize },
    #[error(
        "{what} needs a grid of {blocks} blocks along {axis}, more than CUDA's limit of {limit}"
    )]
    Grid {
        what: String,
        axis: &'static str,
        blocks: u64,
        limit: u32,
    },
    #[error("the {buffer} buffer holds {len} values but {shape} needs {needed}")]
    Buffer {
        buffer: &'static str,
        len: usize,
        shape: String,
        needed: usize,
    },
}

/// Everything that can go wrong while loading or launching a variant. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    Shape(#[from] ShapeError),

    #[error(transparent)]
    Device(#[from] DeviceError),

    #[error(
        "the binary given for variant '{variant}' is not a cubin: it is {len} bytes and does not start with an \
         ELF header (compile the source with compile::compile_cubin for a real sm_* architecture)"
    )]
    NotACubin { variant: String, len: usize },

    #[error(
        "loading the cubin of variant '{variant}' ({canonical}) on GPU {ordinal} ({arch}) failed with {}{hint}",
        describe_driver_error(*source)
    )]
    Load {
        variant: String,
        canonical: String,
        ordinal: usize,
        arch: String,
        /// Empty, or a parenthesised hint starting with a space.
        hint: String,
        #[source]
        source: DriverError,
    },

    #[error(
        "the cubin of variant '{variant}' has no kernel named '{kernel}', so the renderer and the launcher \
         disagree on docs/KERNELS.md's entry points"
    )]
    MissingKernel { variant: String, kernel: String },

    #[error(
        "variant '{variant}' needs {dynamic} bytes of dynamic shared memory per block (plus {static_bytes} static \
         bytes in {kernel}), but GPU {ordinal} ({gpu}) lets a block opt into at most {limit} bytes"
    )]
    SharedMemory {
        variant: String,
        kernel: String,
        dynamic: u32,
        static_bytes: u32,
        limit: u32,
        ordinal: usize,
        gpu: String,
    },

    #[error(
        "variant '{variant}' needs {needed} bytes of shared memory per block at K = {k} (its ring, plus each \
         token's activations and each row's super-block sums, which grow with K), but this GPU lets a block \
         have at most {limit}: use it at a smaller K or with fewer tokens or rows per block"
    )]
    SharedMemoryForK {
        variant: String,
        k: usize,
        needed: u64,
        limit: u32,
    },

    #[error(
        "variant '{variant}' quantizes the activations inside its matmul kernel (quantizer = fused), so it has no \
         matmul on activations quantized beforehand: call matmul with the activations x"
    )]
    FusedQuantizer { variant: String },

    #[error(
        "the driver would not encode the copy engine's {map} map of variant '{variant}' (refill = tma) for \
         m = {m}, n = {n}, K = {k}: {code:?}; the maps need 16-byte aligned buffers (device allocations are)"
    )]
    TensorMap {
        variant: String,
        map: &'static str,
        code: sys::CUresult,
        m: usize,
        n: usize,
        k: usize,
    },

    #[error(
        "variant '{variant}' launches {threads} threads per block, but its kernel {kernel} can run at most \
         {max} ({regs} registers per thread)"
    )]
    TooManyThreads {
        variant: String,
        kernel: String,
        threads: u32,
        max: u32,
        regs: u32,
    },

    #[error(
        "variant '{variant}' reads its scales from the {plane} plane, but the weights were registered without \
         it (use RegisteredWeights::register_for, or add_plane for {mode})"
    )]
    MissingPlane {
        variant: String,
        plane: PlaneKind,
        mode: NumericsMode,
    },

    #[error("{0}")]
    Workspace(String),

    #[error("{what} belongs to another CUDA context than variant '{variant}'; use one Gpu for everything")]
    WrongContext { variant: String, what: &'static str },

    #[error(
        "launching {kernel} (grid ({}, {}, {}), block {}, {shared} bytes of dynamic shared memory) failed with {}",
        grid.0, grid.1, grid.2, block, describe_driver_error(*source)
    )]
    Launch {
        kernel: String,
        grid: (u32, u32, u32),
        block: u32,
        shared: u32,
        #[source]
        source: DriverError,
    },
}

impl LaunchError {
    /// The driver's error code when a driver call failed.
    pub fn driver_error(&self) -> Option<DriverError> {
        match self {
            LaunchError::Device(d) => d.driver_error(),
            LaunchError::Load { source, .. } | LaunchError::Launch { source, .. } => Some(*source),
            _ => None,
        }
    }
}

/// The entry-point names docs/KERNELS.md gives a variant's module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryPoints {
    /// `mmq_quantize_activations_g{G}` (`_i12` under `int12_per256`).
    pub quantize: String,
    /// `{canonical}_raw`.
    pub raw: String,
    /// `{canonical}_padded`.
    pub padded: String,
    /// `{canonical}_raw_rows`, only for the `refill = tma` stage engines (raw rows that start 16-byte aligned).
    pub raw_rows: Option<String>,
    /// `{canonical}_combine`, only when `ksplit > 1`.
    pub combine: Option<String>,
}

impl EntryPoints {
    pub fn for_description(desc: &VariantDescription) -> EntryPoints {
        let canonical = canonical_name(desc);
        EntryPoints {
            quantize: desc.mode.quantizer_kernel(),
            raw: format!("{canonical}_raw"),
            padded: format!("{canonical}_padded"),
            raw_rows: has_raw_rows_entry(desc).then(|| format!("{canonical}_raw_rows")),
            combine: (desc.ksplit > 1).then(|| format!("{canonical}_combine")),
        }
    }

    /// The matmul entry point for a weight layout.
    pub fn matmul(&self, layout: Layout) -> &str {
        match layout {
            Layout::Raw => &self.raw,
            Layout::Padded => &self.padded,
        }
    }
}

/// Dynamic shared memory of the matmul launch: the layout's total when it is over 48 KiB, else 0 (the kernel
/// then declares its shared memory statically; docs/KERNELS.md).
pub fn dynamic_shared_bytes(desc: &VariantDescription) -> u32 {
    let total = shared_layout(desc).total_bytes;
    if total > DEFAULT_SHARED_BYTES_PER_BLOCK {
        total
    } else {
        0
    }
}

fn fits_i32(what: impl Into<String>, value: usize) -> Result<i32, ShapeError> {
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
    let len = segment_count(k).saturating_mul(n).saturating_mul(m);
    fits_i32(
        format!(
            "the segment buffer's nseg * n * m (nseg = {}, n = {n}, m = {m})",
            segment_count(k)
        ),
        len,
    )?;
    Ok(len)
}

/// Warps per block of the activation quantizer (docs/KERNELS.md); the template's `QUANTIZER_WARPS`. Each warp
/// quantizes 256 values of one token, eight per lane, whatever the group size.
pub const QUANTIZER_WARPS: usize = 8;

pub fn quantizer_config(n: usize, k: usize, group: u32) -> Result<LaunchConfig, ShapeError> {
    if group == 0 || !k.is_multiple_of(256) || !k.is_multiple_of(group as usize) {
        return Err(ShapeError::KNotMultiple { k });
    }
    if n as u64 > MAX_GRID_YZ as u64 {
        return Err(ShapeError::Grid {
            what: format!("quantizing n = {n} tokens"),
            axis: "y",
            blocks: n as u64,
            limit: MAX_GRID_YZ,
        });
    }
    // One warp per 256 values of a token (K is a multiple of 256 for every mode), QUANTIZER_WARPS per block.
    Ok(LaunchConfig {
        grid_dim: ((k / 256).div_ceil(QUANTIZER_WARPS) as u32, n as u32, 1),
        block_dim: (32 * QUANTIZER_WARPS as u32, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The matmul launch: `grid = (ceil(m / nbj), ceil(n / tile_n), ksplit)`, `block = 32 * warps_m * warps_n`; in a
/// cluster x and y are rounded up to whole clusters (the blocks past m or n read zeros and write nothing).
pub fn matmul_config(
    desc: &VariantDescription,
    m: usize,
    n: usize,
    dynamic_shared: u32,
) -> Result<LaunchConfig, ShapeError> {
    let (cluster_rows, cluster_tokens) = (
        desc.cluster_rows.max(1) as u64,
        desc.cluster_tokens.max(1) as u64,
    );
    let gx = (m.div_ceil(desc.nbj.max(1) as usize) as u64).div_ceil(cluster_rows) * cluster_rows;
    let gy =
        (n.div_ceil(desc.tile_n.max(1) as usize) as u64).div_ceil(cluster_tokens) * cluster_tokens;
    if gx > i32::MAX as u64 {
        return Err(ShapeError::Grid {
            what: format!("m = {m} weight rows in tiles of {}", desc.nbj),
            axis: "x",
            blocks: gx,
            limit: i32::MAX as u32,
        });
    }
    if gy > MAX_GRID_YZ as u64 {
        return Err(ShapeError::Grid {
            what: format!("n = {n} tokens in tiles of {}", desc.tile_n),
            axis: "y",
            blocks: gy,
            limit: MAX_GRID_YZ,
        });
    }
    if desc.ksplit as u64 > MAX_GRID_YZ as u64 {
        return Err(ShapeError::Grid {
            what: format!("ksplit = {}", desc.ksplit),
            axis: "z",
            blocks: desc.ksplit as u64,
            limit: MAX_GRID_YZ,
        });
    }
    Ok(LaunchConfig {
        grid_dim: (gx as u32, gy as u32, desc.ksplit.max(1)),
        block_dim: (desc.threads(), 1, 1),
        shared_mem_bytes: dynamic_shared,
    })
}

/// How a call of a variant with `tail_parts > 1` maps its tiles to blocks (docs/KERNELS.md, "The last wave"): the
/// first `whole_tiles` tiles take a block each, and the tiles after them, which would leave the last wave of
/// `resident` blocks part-full, `split` blocks each, with whole segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailSplit {
    pub whole_tiles: u64,
    /// Blocks each of the other tiles takes (1: every tile is whole).
    pub split: u64,
    /// Blocks of the launch.
    pub blocks: u64,
}

impl TailSplit {
    /// The split of `m x n x K` for `desc` on a GPU that holds `resident` of its blocks at once (its SMs times
    /// `blocks_per_sm`): the last wave's tiles take as many parts as fit in a wave, at most `tail_parts` and the
    /// segment count.
    pub fn of(desc: &VariantDescription, m: usize, n: usize, k: usize, resident: u64) -> TailSplit {
        let tiles = Self::tiles(desc, m, n);
        let tail = tiles % resident.max(1);
        let superblocks = (k / SUPERBLOCK_K as usize) as u64;
        // No tail (tiles fill every wave): no split. Otherwise at least a segment's super-blocks a part, so that a
        // part that continues a segment finds its head long published (docs/KERNELS.md), in parts of
        // ceil(superblocks / most): as many as that makes.
        let split = resident.checked_div(tail).map_or(1, |fit| {
            let most = (desc.tail_parts.max(1) as u64)
                .min(fit)
                .min(superblocks / SEGMENT_SUPERBLOCKS as u64)
                .max(1);
            superblocks.div_ceil(superblocks.div_ceil(most))
        });
        if split == 1 {
            return TailSplit {
                whole_tiles: tiles,
                split: 1,
                blocks: tiles,
            };
        }
        TailSplit {
            whole_tiles: tiles - tail,
            split,
            blocks: tiles - tail + tail * split,
        }
    }

    /// Tiles split into parts.
    pub fn split_tiles(&self) -> u64 {
        (self.blocks - self.whole_tiles) / self.split
    }

    /// f32 slots the split tiles need in the workspace (`split_tiles_len`).
    pub fn workspace_len(&self, desc: &VariantDescription, k: usize) -> usize {
        if self.split == 1 {
            return 0;
        }
        Self::split_tiles_len(desc, self.split_tiles() as usize, k)
    }

    /// The most f32 slots any call up to `max_m x max_n x max_k` needs: a split tile count is at most half a wave
    /// (two parts or more fit in one) and at most the tiles there are.
    pub fn max_workspace_len(
        desc: &VariantDescription,
        max_m: usize,
        max_n: usize,
        max_k: usize,
        resident: u64,
    ) -> usize {
        let most = Self::tiles(desc, max_m, max_n).min(resident / 2) as usize;
        if desc.tail_parts <= 1 || most == 0 {
            return 0;
        }
        Self::split_tiles_len(desc, most, max_k)
    }

    /// The counters' slots for `split_tiles` tiles of a variant of `tail_parts`: the first of the workspace,
    /// `tail_parts` a tile (its arrivals, then a flag for each cut), rounded up to 32 (the kernel's
    /// `split_segment_sums` starts the sums after them).
    pub fn counter_slots(split_tiles: usize, tail_parts: u32) -> usize {
        (split_tiles * tail_parts as usize).div_ceil(32) * 32
    }

    /// f32 slots of `split_tiles` split tiles: their counters, then every segment's sums of each (the tile's
    /// outputs for each segment of K).
    fn split_tiles_len(desc: &VariantDescription, split_tiles: usize, k: usize) -> usize {
        Self::counter_slots(split_tiles, desc.tail_parts)
            + split_tiles
                .saturating_mul(segment_count(k))
                .saturating_mul(desc.nbj as usize * desc.tile_n as usize)
    }

    /// Tiles of an `m x n` call.
    fn tiles(desc: &VariantDescription, m: usize, n: usize) -> u64 {
        (m.div_ceil(desc.nbj.max(1) as usize) as u64)
            .saturating_mul(n.div_ceil(desc.tile_n.max(1) as usize) as u64)
    }
}

/// Blocks of `desc` a GPU of `multiprocessors` SMs holds at once: a wave.
pub fn resident_blocks(multiprocessors: u32, desc: &VariantDescription) -> u64 {
    multiprocessors as u64 * desc.blocks_per_sm.max(1) as u64
}

/// The combine launch: `grid = ceil(n * m / 256)`, 256 threads.
pub fn combine_config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n * m).div_ceil(COMBINE_THREADS as usize) as u32, 1, 1),
        block_dim: (COMBINE_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn check_buffer(
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

/// Whether the copy engine can read raw rows of K at `weights`: the matrix 16-byte aligned and each row a multiple
/// of 16 bytes long (K a multiple of 2048: eight 210-byte blocks), as a tensor map's address and row stride must be.
pub fn raw_rows_reachable(weights: u64, k: usize) -> bool {
    weights.is_multiple_of(16)
        && (k / SUPERBLOCK_K as usize * Layout::Raw.block_bytes()).is_multiple_of(16)
}

/// The activations hold `n` tokens of K.
fn check_x(x: DeviceRef<f32>, n: usize, k: usize) -> Result<(), ShapeError> {
    check_buffer("activations", x.len(), n * k, || {
        format!("n = {n} tokens of K = {k}")
    })
}

/// What the driver says about one loaded kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    pub registers: u32,
    /// Local memory per thread (spills and stack), bytes.
    pub local_bytes: u32,
    pub static_shared_bytes: u32,
    /// The most threads per block this kernel can launch with (register-limited).
    pub max_threads: u32,
    /// `90` for an sm_90 cubin.
    pub binary_version: u32,
}

fn kernel_info(func: &CudaFunction, name: &str) -> Result<KernelInfo, DeviceError> {
    let attr = |a: CUfunction_attribute_enum, what: &str| -> Result<u32, DeviceError> {
        func.get_attribute(a)
            .map(|v| v.max(0) as u32)
            .map_err(|e| DeviceError::cuda(format!("reading {what} of kernel {name}"), e))
    };
    use CUfunction_attribute_enum::*;
    Ok(KernelInfo {
        name: name.to_string(),
        registers: attr(CU_FUNC_ATTRIBUTE_NUM_REGS, "the register count")?,
        local_bytes: attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "the local memory size")?,
        static_shared_bytes: attr(
            CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            "the static shared memory size",
        )?,
        max_threads: attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "the thread limit")?,
        binary_version: attr(CU_FUNC_ATTRIBUTE_BINARY_VERSION, "the binary version")?,
    })
}

struct Kernel {
    func: CudaFunction,
    info: KernelInfo,
}

/// A variant's CUDA module, loaded on one GPU, with its entry points and launch geometry.
pub struct LoadedVariant {
    desc: VariantDescription,
    canonical: String,
    entry: EntryPoints,
    ctx: Arc<CudaContext>,
    _module: Arc<CudaModule>,
    quantize: Kernel,
    raw: Kernel,
    padded: Kernel,
    /// The `refill = tma` stage engines' entry for raw rows that start 16-byte aligned.
    raw_rows: Option<Kernel>,
    combine: Option<Kernel>,
    dynamic_shared: u32,
    group: u32,
    gpu_name: String,
    ordinal: usize,
    /// Whether the matmul and the combine are queued as programmatic dependents of the kernel before them (PDL,
    /// sm_90 and later, where every kernel of the module waits for its predecessor with `griddepcontrol.wait`).
    programmatic: bool,
    /// With `refill = tma`, the copy engine's boxes, from which each call encodes its tensor maps.
    tma_boxes: Option<tensor_maps::Boxes>,
    /// Blocks the GPU holds at once (its SMs times `blocks_per_sm`): what `tail_parts` splits the last wave by.
    resident_blocks: u64,
}

impl std::fmt::Debug for LoadedVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedVariant")
            .field("name", &self.desc.name)
            .field("canonical", &self.canonical)
            .field("entry", &self.entry)
            .field("dynamic_shared", &self.dynamic_shared)
            .finish_non_exhaustive()
    }
}

fn load_hint(e: DriverError) -> String {
    use cudarc::driver::sys::CUresult::*;
    match e.0 {
        CUDA_ERROR_NO_BINARY_FOR_GPU => {
            " (the cubin was compiled for another architecture than this GPU's)".to_string()
        }
        CUDA_ERROR_UNSUPPORTED_PTX_VERSION | CUDA_ERROR_INVALID_PTX => {
            " (the cubin is newer than this driver: compile with NVRTC 13.0 for driver 580)"
                .to_string()
        }
        CUDA_ERROR_INVALID_IMAGE | CUDA_ERROR_INVALID_SOURCE => {
            " (the bytes are not a valid cubin for this driver)".to_string()
        }
        _ => String::new(),
    }
}

impl LoadedVariant {
    /// Loads `cubin` (compiled from `desc`'s rendered source for this GPU's architecture) and finds the entry
    /// points docs/KERNELS.md names; raises the matmul kernels' dynamic shared memory limit when the layout needs
    /// more than 48 KiB, and refuses a variant this GPU cannot launch.
    pub fn load(
        gpu: &Gpu,
        desc: &VariantDescription,
        cubin: &[u8],
    ) -> Result<LoadedVariant, LaunchError> {
        Self::load_with(
            gpu,
            desc,
            cubin,
            EntryPoints::for_description(desc),
            dynamic_shared_bytes(desc),
        )
    }

    /// [`Self::load`] with the entry points and dynamic shared memory given (what the renderer reports).
    pub fn load_with(
        gpu: &Gpu,
        desc: &VariantDescription,
        cubin: &[u8],
        entry: EntryPoints,
        dynamic_shared: u32,
    ) -> Result<LoadedVariant, LaunchError> {
        let variant = desc.name.to_string();
        if cubin.len() < 4 || &cubin[..4] != b"\x7fELF" {
            return Err(LaunchError::NotACubin {
                variant,
                len: cubin.len(),
            });
        }
        let canonical = canonical_name(desc);
        let info = gpu.info();
        let ctx = gpu.context().clone();
        let module = guard("loading a cubin", || {
            ctx.load_module(Ptx::from_binary(cubin.to_vec()))
                .map_err(|e| DeviceError::cuda("cuModuleLoadData", e))
        })
        .map_err(|e| match e.driver_error() {
            Some(source) => LaunchError::Load {
                variant: variant.clone(),
                canonical: canonical.clone(),
                ordinal: info.ordinal,
                arch: info.arch.clone(),
                hint: load_hint(source),
                source,
            },
            None => LaunchError::Device(e),
        })?;

        let find = |name: &str| -> Result<Kernel, LaunchError> {
            if name.contains('\0') {
                return Err(LaunchError::MissingKernel {
                    variant: variant.clone(),
                    kernel: name.escape_default().to_string(),
                });
            }
            let func = module.load_function(name).map_err(|e| {
                if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND {
                    LaunchError::MissingKernel {
                        variant: variant.clone(),
                        kernel: name.to_string(),
                    }
                } else {
                    DeviceError::cuda(format!("finding kernel {name} in the module"), e).into()
                }
            })?;
            let info = kernel_info(&func, name)?;
            Ok(Kernel { func, info })
        };
        let quantize = find(&entry.quantize)?;
        let raw = find(&entry.raw)?;
        let padded = find(&entry.padded)?;
        let raw_rows = entry.raw_rows.as_deref().map(find).transpose()?;
        let combine = entry.combine.as_deref().map(find).transpose()?;
        if desc.ksplit > 1 && combine.is_none() {
            return Err(LaunchError::MissingKernel {
                variant,
                kernel: format!("{canonical}_combine"),
            });
        }

        // Threads: the matmul block, the quantizer's 32 and the combine's 256 must all be launchable.
        let mut checks: Vec<(&Kernel, u32)> = vec![
            (&raw, desc.threads()),
            (&padded, desc.threads()),
            (&quantize, 32),
        ];
        if let Some(r) = &raw_rows {
            checks.push((r, desc.threads()));
        }
        if let Some(c) = &combine {
            checks.push((c, COMBINE_THREADS));
        }
        for (k, threads) in checks {
            if threads > k.info.max_threads {
                return Err(LaunchError::TooManyThreads {
                    variant,
                    kernel: k.info.name.clone(),
                    threads,
                    max: k.info.max_threads,
                    regs: k.info.registers,
                });
            }
        }

        // Shared memory: static + dynamic within the opt-in limit; raise the attribute above 48 KiB. The ring
        // engine's grows with K: its limit is raised as far as the GPU allows, and each call asks for its own.
        let dynamic_shared = if desc.engine == Engine::StreamRing {
            let static_bytes = raw
                .info
                .static_shared_bytes
                .max(padded.info.static_shared_bytes);
            info.max_shared_per_block_optin
                .saturating_sub(static_bytes)
                .max(dynamic_shared)
        } else {
            dynamic_shared
        };
        for k in [Some(&raw), Some(&padded), raw_rows.as_ref()]
            .into_iter()
            .flatten()
        {
            let total = k.info.static_shared_bytes as u64 + dynamic_shared as u64;
            if total > info.max_shared_per_block_optin as u64 {
                return Err(LaunchError::SharedMemory {
                    variant,
                    kernel: k.info.name.clone(),
                    dynamic: dynamic_shared,
                    static_bytes: k.info.static_shared_bytes,
                    limit: info.max_shared_per_block_optin,
                    ordinal: info.ordinal,
                    gpu: info.name.clone(),
                });
            }
            if dynamic_shared > 0 {
                ctx.bind_to_thread()
                    .map_err(|e| DeviceError::cuda("binding the context to this thread", e))?;
                k.func
                    .set_attribute(
                        CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        dynamic_shared as i32,
                    )
                    .map_err(|e| {
                        DeviceError::cuda(
                            format!(
                                "raising the dynamic shared memory limit of {} to {dynamic_shared} bytes",
                                k.info.name
                            ),
                            e,
                        )
                    })?;
            }
        }
        ctx.bind_to_thread()
            .map_err(|e| DeviceError::cuda("binding the context to this thread", e))?;
        // The quantizer asks for the SM's whole carveout as shared memory, so that a matmul queued early (PDL)
        // finds the SMs that run it already configured for the matmul's shared memory. Without it, the matmul's
        // blocks piled up, up to 1.7x slower (docs/PERF.md, decode logs 10 and 29): presumably they could start
        // only on SMs the quantizer had left, since an SM changes its carveout only when it drains. The other
        // kernels keep the driver's choice: the whole carveout for every kernel took L1 from the rings (log 31).
        // Only sm_90 queues early; the carveout is a preference, so a driver that refuses it costs speed, not bits.
        let programmatic = info.compute_capability.0 >= 9;
        if programmatic {
            let _ = quantize.func.set_attribute(
                CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                100,
            );
        }

        Ok(LoadedVariant {
            desc: desc.clone(),
            canonical,
            entry,
            ctx,
            _module: module,
            quantize,
            raw,
            padded,
            raw_rows,
            combine,
            dynamic_shared,
            group: desc.mode.activation_group(),
            gpu_name: info.name.clone(),
            ordinal: info.ordinal,
            programmatic,
            tma_boxes: tensor_maps::Boxes::of(desc),
            resident_blocks: resident_blocks(info.multiprocessors, desc),
        })
    }

    pub fn description(&self) -> &VariantDescription {
        &self.desc
    }

    /// The declared name.
    pub fn name(&self) -> &str {
        &self.desc.name
    }

    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    pub fn entry_points(&self) -> &EntryPoints {
        &self.entry
    }

    /// Dynamic shared memory of each matmul launch (0 when the kernel's shared memory is static); for the ring
    /// engine, whose launches size it from K ([`Self::call_shared_bytes`]), the most a launch may ask for.
    pub fn dynamic_shared_bytes(&self) -> u32 {
        self.dynamic_shared
    }

    /// Activation group size G.
    pub fn group(&self) -> u32 {
        self.group
    }

    /// What the driver says about each kernel: quantizer, raw, padded, then combine when there is one.
    pub fn kernels(&self) -> Vec<&KernelInfo> {
        let mut v = vec![&self.quantize.info, &self.raw.info, &self.padded.info];
        if let Some(c) = &self.combine {
            v.push(&c.info);
        }
        v
    }

    fn same_context(&self, what: &'static str, ctx: &Arc<CudaContext>) -> Result<(), LaunchError> {
        if **ctx == *self.ctx {
            Ok(())
        } else {
            Err(LaunchError::WrongContext {
                variant: self.desc.name.to_string(),
                what,
            })
        }
    }

    /// Queues the activation quantizer: `x` (`[n][K]` f32) into the workspace's `q` and `d`.
    pub fn quantize_activations(
        &self,
        x: &CudaSlice<f32>,
        n: usize,
        k: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        self.same_context("the activations", x.context())?;
        let (x_ptr, _x) = x.device_ptr(stream);
        // SAFETY: a live slice of this variant's context, of x.len() values, held for the launch.
        let x = unsafe { DeviceRef::from_raw(x_ptr, x.len()) };
        self.quantize_activations_ref(x, n, k, stream, ws)
    }

    /// [`Self::quantize_activations`] on activations a caller lends by address.
    pub fn quantize_activations_ref(
        &self,
        x: DeviceRef<f32>,
        n: usize,
        k: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        let (_, ni, ki) = check_shape(1, n, k)?;
        self.same_context("the stream", stream.context())?;
        check_x(x, n, k)?;
        self.same_context("the workspace", ws.act_q.context())?;
        ws.check_activations(n, k, self.desc.mode)?;
        let cfg = quantizer_config(n, k, self.group)?;
        ws.quantized = None;
        let kernel = &self.quantize;
        let x_ptr = x.addr();
        let (act_q, _q) = ws.act_q.device_ptr_mut(stream);
        let (act_d, _d) = ws.act_d.device_ptr_mut(stream);
        let mut args = [
            kernel_arg(&x_ptr),
            kernel_arg(&act_q),
            kernel_arg(&act_d),
            kernel_arg(&ni),
            kernel_arg(&ki),
        ];
        // SAFETY: the argument list is the ABI of mmq_quantize_activations_g{G} and _i12 (docs/KERNELS.md); every
        // buffer was checked above to hold what the grid touches: x >= n*K, q >= n*K*planes, d >= n*K/G.
        launch(&kernel.info.name, cfg, || unsafe {
            launch_maybe_programmatic(false, &kernel.func, cfg, stream, &mut args)
        })?;
        ws.quantized = Some(self.quantized(n, k));
        Ok(())
    }

    /// Whether this variant's quantizer writes the activation scales chunk-major (`refill = tma`: `[K/G]` rows
    /// of [`tensor_maps::scale_row_stride`]`(n)` scales, so that the copy engine stages a chunk's tokens side by
    /// side) rather than token-major (`[n][K/G]`): docs/KERNELS.md.
    pub fn scales_by_chunk(&self) -> bool {
        self.desc.refill == Refill::Tma
    }

    /// What this variant's quantizer leaves in a workspace for `n` tokens of K, and so what its matmul expects
    /// there.
    fn quantized(&self, n: usize, k: usize) -> Quantized {
        Quantized {
            n,
            k,
            group: self.group,
            planes: self.desc.mode.activation_planes(),
            by_chunk: self.scales_by_chunk(),
        }
    }

    /// Queues the whole matmul: the activation quantizer, the matmul entry point for the weights' layout, and
    /// the combine when `ksplit > 1`. `x` is `[n][K]` f32, `out` `[n][m]` f32 (overwritten).
    pub fn matmul(
        &self,
        weights: &RegisteredWeights,
        x: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        self.same_context("the activations", x.context())?;
        self.same_context("the output", out.context())?;
        let (x_ptr, _x) = x.device_ptr(stream);
        let out_len = out.len();
        let (out_ptr, _o) = out.device_ptr_mut(stream);
        // SAFETY: live slices of this variant's context, of their lengths, held until the work is queued.
        let (x, out) = unsafe {
            (
                DeviceRef::from_raw(x_ptr, x.len()),
                DeviceRef::from_raw(out_ptr, out_len),
            )
        };
        self.matmul_ref(weights, x, out, n, stream, ws)
    }

    /// [`Self::matmul`] on activations and an output a caller lends by address (an engine's own buffers).
    pub fn matmul_ref(
        &self,
        weights: &RegisteredWeights,
        x: DeviceRef<f32>,
        out: DeviceRef<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        // Check everything before queueing anything.
        self.check_matmul(weights, out.len(), n, ws)?;
        let k = weights.k();
        check_x(x, n, k)?;
        if self.desc.quantizer == Quantizer::Fused {
            // One launch: the kernel quantizes x itself and leaves q and d in the workspace for checks.
            ws.quantized = None;
            self.queue_matmul(weights, Some(x), out, n, stream, ws)?;
            ws.quantized = Some(self.quantized(n, k));
            if self.desc.ksplit > 1 {
                self.combine_ref(weights.m(), n, k, out, stream, ws)?;
            }
            return Ok(());
        }
        self.quantize_activations_ref(x, n, k, stream, ws)?;
        self.queue_matmul(weights, None, out, n, stream, ws)?;
        if self.desc.ksplit > 1 {
            self.combine_ref(weights.m(), n, k, out, stream, ws)?;
        }
        Ok(())
    }

    fn check_matmul(
        &self,
        weights: &RegisteredWeights,
        out_len: usize,
        n: usize,
        ws: &Workspace,
    ) -> Result<(), LaunchError> {
        let (m, k) = (weights.m(), weights.k());
        check_shape(m, n, k)?;
        check_buffer("output", out_len, n * m, || {
            format!("n = {n} tokens by m = {m} rows")
        })?;
        ws.check_activations(n, k, self.desc.mode)?;
        if self.desc.ksplit > 1 {
            ws.check_segments(m, n, k)?;
        }
        if self.desc.tail_parts > 1 {
            ws.check_split_tiles(&self.desc, self.tail_split(m, n, k), k)?;
        }
        if self.desc.scale_fetch == ScaleFetch::Plane && weights.plane_for(self.desc.mode).is_none()
        {
            return Err(LaunchError::MissingPlane {
                variant: self.desc.name.to_string(),
                plane: PlaneKind::for_mode(self.desc.mode),
                mode: self.desc.mode,
            });
        }
        if self.desc.engine.is_prefolded() && weights.plane(PlaneKind::Folded).is_none() {
            return Err(LaunchError::MissingPlane {
                variant: self.desc.name.to_string(),
                plane: PlaneKind::Folded,
                mode: self.desc.mode,
            });
        }
        Ok(())
    }

    /// Queues the matmul entry point (and the combine) on activations the workspace already holds quantized
    /// (by [`Self::quantize_activations`] for the same `n` and K).
    pub fn matmul_quantized(
        &self,
        weights: &RegisteredWeights,
        out: &mut CudaSlice<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        self.matmul_entry(weights, out, n, stream, ws)?;
        if self.desc.ksplit > 1 {
            self.combine(weights.m(), n, weights.k(), out, stream, ws)?;
        }
        Ok(())
    }

    /// Queues only the matmul entry point for the weights' layout (for split-K variants it writes the segment
    /// partials into the workspace, and [`Self::combine`] must follow). [`Self::matmul_quantized`] does both.
    /// A variant that quantizes inside its matmul (`quantizer = fused`) has no such entry: use [`Self::matmul`].
    pub fn matmul_entry(
        &self,
        weights: &RegisteredWeights,
        out: &mut CudaSlice<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        if self.desc.quantizer == Quantizer::Fused {
            return Err(LaunchError::FusedQuantizer {
                variant: self.desc.name.to_string(),
            });
        }
        self.same_context("the output", out.context())?;
        let out_len = out.len();
        let (out_ptr, _o) = out.device_ptr_mut(stream);
        // SAFETY: a live slice of this variant's context, of its length, held until the launch is queued.
        let out = unsafe { DeviceRef::from_raw(out_ptr, out_len) };
        self.queue_matmul(weights, None, out, n, stream, ws)
    }

    /// The matmul entry point on the workspace's quantized activations, or, for `quantizer = fused`, on `x`
    /// (passed in the `plane` slot, docs/KERNELS.md), whose quantization it writes into the workspace.
    fn queue_matmul(
        &self,
        weights: &RegisteredWeights,
        x: Option<DeviceRef<f32>>,
        out: DeviceRef<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        let (m, k) = (weights.m(), weights.k());
        let (mi, ni, ki) = check_shape(m, n, k)?;
        self.check_matmul(weights, out.len(), n, ws)?;
        self.same_context("the stream", stream.context())?;
        self.same_context("the weights", weights.context())?;
        self.same_context("the workspace", ws.act_q.context())?;
        if x.is_none() {
            ws.check_quantized(self.quantized(n, k))?;
        }
        let mut cfg = matmul_config(&self.desc, m, n, self.call_shared_bytes(k)?)?;
        // tail_parts: one row of blocks, the whole tiles and then the split ones' parts (docs/KERNELS.md).
        let tail = (self.desc.tail_parts > 1).then(|| self.tail_split(m, n, k));
        if let Some(tail) = &tail {
            cfg.grid_dim = (
                fits_i32(
                    "the blocks of the whole and split tiles",
                    tail.blocks as usize,
                )? as u32,
                1,
                1,
            );
        }
        let null: u64 = 0;
        let plane = if self.desc.scale_fetch == ScaleFetch::Plane {
            weights.plane_for(self.desc.mode)
        } else {
            None
        };
        // The prefolded engine reads the folded planes where the others read the layout's blocks.
        let (weights_ptr, _w) = match weights.plane(PlaneKind::Folded) {
            Some(folded) if self.desc.engine.is_prefolded() => {
                let (ptr, guard) = folded.device_ptr(stream);
                (ptr, Some(guard))
            }
            _ => weights.layout_ptr(stream),
        };
        let plane_view = plane.map(|p| p.device_ptr(stream));
        let plane_ptr = match (x, &plane_view) {
            (Some(x), _) => x.addr(),
            (None, Some((p, _))) => *p,
            (None, None) => null,
        };
        // A fused-quantizer kernel writes q and d; the others read them.
        let ((act_q, _q), (act_d, _d)) = if x.is_some() {
            (
                ws.act_q.device_ptr_mut(stream),
                ws.act_d.device_ptr_mut(stream),
            )
        } else {
            (ws.act_q.device_ptr(stream), ws.act_d.device_ptr(stream))
        };
        let out_ptr = out.addr();
        let segments_view = match (
            self.desc.ksplit > 1 || self.desc.tail_parts > 1,
            ws.segments.as_mut(),
        ) {
            (true, Some(s)) => Some(s.device_ptr_mut(stream)),
            _ => None,
        };
        let segments_ptr = segments_view.as_ref().map_or(null, |(p, _)| *p);
        // The layout's entry point; raw rows that the copy engine can reach take the raw_rows one where the
        // variant has it.
        let (kernel, block_bytes) = match weights.layout() {
            Layout::Padded => (&self.padded, Some(PADDED_BLOCK_BYTES)),
            Layout::Raw => match &self.raw_rows {
                Some(raw_rows) if raw_rows_reachable(weights_ptr, k) => {
                    (raw_rows, Some(Layout::Raw.block_bytes() as u32))
                }
                _ => (&self.raw, None),
            },
        };
        // refill = tma: the entry points also take the call's tensor maps (docs/KERNELS.md); the raw one's
        // weights map stays zero (it copies its 2-byte aligned blocks itself).
        let mapped_weights = block_bytes.map(|bytes| tensor_maps::MappedWeights {
            address: weights_ptr,
            block_bytes: bytes,
        });
        let maps = match &self.tma_boxes {
            Some(boxes) => Some(
                boxes
                    .encode(mapped_weights, act_q, act_d, m, n, k)
                    .map_err(|e| LaunchError::TensorMap {
                        variant: self.desc.name.to_string(),
                        map: e.map,
                        code: e.code,
                        m,
                        n,
                        k,
                    })?,
            ),
            None => None,
        };
        let mut args = vec![
            kernel_arg(&weights_ptr),
            kernel_arg(&plane_ptr),
            kernel_arg(&act_q),
            kernel_arg(&act_d),
            kernel_arg(&out_ptr),
            kernel_arg(&segments_ptr),
            kernel_arg(&mi),
            kernel_arg(&ni),
            kernel_arg(&ki),
        ];
        if let Some(maps) = &maps {
            args.push(kernel_arg(maps));
        }
        // Both fit an int: the blocks do (above), and the split is at most tail_parts.
        let split_args = tail.map(|t| (t.whole_tiles as i32, t.split as i32));
        if let Some((whole_tiles, split)) = &split_args {
            args.push(kernel_arg(whole_tiles));
            args.push(kernel_arg(split));
        }
        // A fused-quantizer matmul follows whatever the stream ran before, which may still be writing x: queued
        // the ordinary way. Every other one is the quantizer's programmatic dependent (decode log 29).
        let programmatic = self.programmatic && x.is_none();
        // SAFETY: `args` is docs/KERNELS.md's ARGS (with refill = tma, the tensor maps after them),
        // pointing at locals that outlive the call (which copies them);
        // with `quantizer = fused` the plane slot holds x, which matmul checked holds n*K values;
        // check_matmul verified the output (n*m), the quantized activations (n*K, n*K/G), the segment buffer
        // (nseg*n*m when ksplit > 1) and the plane; the weights hold m*K/256 blocks of their layout (by
        // construction, or checked when borrowed).
        launch(&kernel.info.name, cfg, || unsafe {
            launch_maybe_programmatic(programmatic, &kernel.func, cfg, stream, args.as_mut_slice())
        })
    }

    /// How a call of `m x n x K` maps its tiles to blocks on this GPU (only `tail_parts > 1` splits any).
    pub fn tail_split(&self, m: usize, n: usize, k: usize) -> TailSplit {
        TailSplit::of(&self.desc, m, n, k, self.resident_blocks)
    }

    /// Dynamic shared memory of one matmul launch at K = `k`: the variant's fixed amount, or for the ring engine
    /// what its records and sums need at this K, refused with a sentence when over the GPU's limit.
    pub fn call_shared_bytes(&self, k: usize) -> Result<u32, LaunchError> {
        if self.desc.engine != Engine::StreamRing {
            return Ok(self.dynamic_shared);
        }
        let needed = ring_shared_bytes(&self.desc, k as u64);
        match u32::try_from(needed) {
            Ok(bytes) if bytes <= self.dynamic_shared => Ok(bytes),
            _ => Err(LaunchError::SharedMemoryForK {
                variant: self.desc.name.to_string(),
                k,
                needed,
                limit: self.dynamic_shared,
            }),
        }
    }

    /// Queues only the split-K combine: the workspace's segment partials into `out` (`[n][m]`).
    pub fn combine(
        &self,
        m: usize,
        n: usize,
        k: usize,
        out: &mut CudaSlice<f32>,
        stream: &Arc<CudaStream>,
        ws: &Workspace,
    ) -> Result<(), LaunchError> {
        self.same_context("the output", out.context())?;
        let out_len = out.len();
        let (out_ptr, _o) = out.device_ptr_mut(stream);
        // SAFETY: a live slice of this variant's context, of its length, held until the launch is queued.
        let out = unsafe { DeviceRef::from_raw(out_ptr, out_len) };
        self.combine_ref(m, n, k, out, stream, ws)
    }

    fn combine_ref(
        &self,
        m: usize,
        n: usize,
        k: usize,
        out: DeviceRef<f32>,
        stream: &Arc<CudaStream>,
        ws: &Workspace,
    ) -> Result<(), LaunchError> {
        let (mi, ni, ki) = check_shape(m, n, k)?;
        let Some(combine) = self.combine.as_ref() else {
            return Err(LaunchError::MissingKernel {
                variant: self.desc.name.to_string(),
                kernel: format!("{}_combine", self.canonical),
            });
        };
        check_buffer("output", out.len(), n * m, || {
            format!("n = {n} tokens by m = {m} rows")
        })?;
        ws.check_segments(m, n, k)?;
        self.same_context("the stream", stream.context())?;
        let segments = ws
            .segments
            .as_ref()
            .expect("check_segments found the segment buffer");
        let cfg = combine_config(m, n);
        let (segments_ptr, _s) = segments.device_ptr(stream);
        let out_ptr = out.addr();
        let mut args = [
            kernel_arg(&segments_ptr),
            kernel_arg(&out_ptr),
            kernel_arg(&mi),
            kernel_arg(&ni),
            kernel_arg(&ki),
        ];
        // SAFETY: the combine's ABI (docs/KERNELS.md), pointing at locals that outlive the call; the segments
        // hold nseg*n*m values and out n*m.
        launch(&combine.info.name, cfg, || unsafe {
            launch_maybe_programmatic(self.programmatic, &combine.func, cfg, stream, &mut args)
        })
    }

    /// One line for logs.
    pub fn summary(&self) -> String {
        let kernels: Vec<String> = self
            .kernels()
            .iter()
            .map(|k| {
                format!(
                    "{} ({} regs, {} B local, {} B static smem)",
                    k.name, k.registers, k.local_bytes, k.static_shared_bytes
                )
            })
            .collect();
        format!(
            "variant '{}' ({}) on GPU {} ({}): {} B dynamic smem; {}",
            self.desc.name,
            self.canonical,
            self.ordinal,
            self.gpu_name,
            self.dynamic_shared,
            kernels.join(", ")
        )
    }
}

/// One kernel parameter for `cuLaunchKernel*`: the address of the value the driver copies.
fn kernel_arg<T>(value: &T) -> *mut std::ffi::c_void {
    value as *const T as *mut std::ffi::c_void
}

/// Queues `func` as the previous kernel's programmatic dependent when `programmatic` (sm_90, where every kernel of
/// a module waits for its predecessor's results with `griddepcontrol.wait`, docs/KERNELS.md), else the ordinary
/// way.
///
/// # Safety
/// `args` must be the kernel's parameters, each pointing at a value of the parameter's type.
unsafe fn launch_maybe_programmatic(
    programmatic: bool,
    func: &CudaFunction,
    cfg: LaunchConfig,
    stream: &CudaStream,
    args: &mut [*mut std::ffi::c_void],
) -> Result<(), DriverError> {
    if programmatic {
        return launch_programmatic(func, cfg, stream, args);
    }
    stream.context().bind_to_thread()?;
    sys::cuLaunchKernel(
        func.cu_function(),
        cfg.grid_dim.0,
        cfg.grid_dim.1,
        cfg.grid_dim.2,
        cfg.block_dim.0,
        cfg.block_dim.1,
        cfg.block_dim.2,
        cfg.shared_mem_bytes,
        stream.cu_stream(),
        args.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()
}

/// `cuLaunchKernelEx` with programmatic stream serialization (PDL): the kernel's blocks may start, and load
/// what no earlier kernel writes, while the kernel before it in `stream` finishes; its `griddepcontrol.wait`
/// holds back everything after that until the earlier kernel is done and its writes are visible.
///
/// # Safety
/// `args` must be the kernel's parameters, each pointing at a value of the parameter's type.
unsafe fn launch_programmatic(
    func: &CudaFunction,
    cfg: LaunchConfig,
    stream: &CudaStream,
    args: &mut [*mut std::ffi::c_void],
) -> Result<(), DriverError> {
    stream.context().bind_to_thread()?;
    let mut attribute: sys::CUlaunchAttribute = std::mem::zeroed();
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attribute,
        numAttrs: 1,
    };
    sys::cuLaunchKernelEx(
        &config,
        func.cu_function(),
        args.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()
}

fn launch<T>(
    kernel: &str,
    cfg: LaunchConfig,
    f: impl FnOnce() -> Result<T, DriverError>,
) -> Result<(), LaunchError> {
    let result = guard("launching a kernel", || {
        f().map_err(|e| DeviceError::cuda("launch", e))
    });
    match result {
        Ok(_) => Ok(()),
        Err(DeviceError::Cuda { source, .. }) => Err(LaunchError::Launch {
            kernel: kernel.to_string(),
            grid: cfg.grid_dim,
            block: cfg.block_dim.0,
            shared: cfg.shared_mem_bytes,
            source,
        }),
        Err(e) => Err(e.into()),
    }
}

/// Why a variant could not be built (rendered, compiled and loaded). Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("rendering variant '{variant}' failed: {source}")]
    Render {
        variant: String,
        #[source]
        source: RenderError,
    },
    #[error("compiling variant '{variant}' for {arch} failed: {source}")]
    Compile {
        variant: String,
        arch: String,
        #[source]
        source: Box<CompileError>,
    },
    #[error(transparent)]
    Cache(Box<CacheError>),
    #[error(transparent)]
    Load(#[from] Box<LaunchError>),
    #[error(
        "variant '{variant}' cannot be built for this GPU: it is {gpu_arch}, an architecture mmqgen does not \
         generate code for"
    )]
    UnknownArch { variant: String, gpu_arch: String },
}

impl From<LaunchError> for BuildError {
    fn from(e: LaunchError) -> BuildError {
        BuildError::Load(Box::new(e))
    }
}

/// How a variant was built, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildInfo {
    pub canonical: String,
    pub arch: String,
    /// Milliseconds spent rendering and compiling (0 for the compile when the cubin came from the cache).
    pub compile_ms: f64,
    pub from_cache: bool,
    pub cubin_bytes: usize,
}

/// The dynamic shared memory the renderer says its matmul kernels declare (0 when static).
pub fn rendered_dynamic_shared(rendered: &RenderedVariant) -> u32 {
    if rendered.dynamic_shared {
        rendered.shared_bytes
    } else {
        0
    }
}

/// The entry points the renderer names.
pub fn rendered_entry_points(rendered: &RenderedVariant) -> EntryPoints {
    EntryPoints {
        quantize: rendered.kernels.quantize.clone(),
        raw: rendered.kernels.raw.clone(),
        padded: rendered.kernels.padded.clone(),
        raw_rows: rendered.kernels.raw_rows.clone(),
        combine: rendered.kernels.combine.clone(),
    }
}

/// Renders `desc`, compiles it with NVRTC for this GPU's architecture (or takes the cubin from the
/// [`CubinCache`] in `cache_dir`, keyed by the source, options, NVRTC version and architecture) and loads it.
pub fn build_variant(
    gpu: &Gpu,
    desc: &VariantDescription,
    cache_dir: Option<&Path>,
) -> Result<(LoadedVariant, BuildInfo), BuildError> {
    let start = Instant::now();
    let rendered = render(desc).map_err(|source| BuildError::Render {
        variant: desc.name.to_string(),
        source,
    })?;
    build_rendered_since(gpu, desc, rendered, cache_dir, start)
}

/// The environment variable `mmqgen profile` sets to a folder of its own in the process it profiles: with line info
/// on, each compiled source is written there and compiled under that full path, which the line info records, so
/// that ncu's source page can show the generated CUDA beside the SASS.
pub const PROFILE_SOURCE_DIR_ENV: &str = "MMQGEN_PROFILE_SOURCE_DIR";

/// NVRTC's name for `rendered`'s program: `<canonical>.cu`, or its full path in [`PROFILE_SOURCE_DIR_ENV`]'s folder
/// once the source is written there (only with line info; a source that cannot be written keeps the short name).
fn program_name(rendered: &RenderedVariant, line_info: bool) -> String {
    let file = format!("{}.cu", rendered.canonical);
    let Some(dir) = std::env::var_os(PROFILE_SOURCE_DIR_ENV).filter(|_| line_info) else {
        return file;
    };
    let path = Path::new(&dir).join(&file);
    match std::fs::write(&path, &rendered.source) {
        Ok(()) => path.display().to_string(),
        Err(_) => file,
    }
}

/// Compiles an already rendered `desc` (its source possibly edited, e.g. a deliberate mutant from
/// [`crate::check::mutants`]) with NVRTC for this GPU's architecture, or takes the cubin from `cache_dir` (the key
/// hashes the source, so an edited source never meets the cubin of another), and loads it. `rendered` must come
/// from `render(desc)`: its entry points and shared memory are taken as they are.
pub fn build_rendered(
    gpu: &Gpu,
    desc: &VariantDescription,
    rendered: RenderedVariant,
    cache_dir: Option<&Path>,
) -> Result<(LoadedVariant, BuildInfo), BuildError> {
    build_rendered_since(gpu, desc, rendered, cache_dir, Instant::now())
}

/// [`build_rendered`], with `compile_ms` counted from `start` (so that [`build_variant`]'s includes the render).
fn build_rendered_since(
    gpu: &Gpu,
    desc: &VariantDescription,
    rendered: RenderedVariant,
    cache_dir: Option<&Path>,
    start: Instant,
) -> Result<(LoadedVariant, BuildInfo), BuildError> {
    let arch = gpu
        .info()
        .known_arch()
        .ok_or_else(|| BuildError::UnknownArch {
            variant: desc.name.to_string(),
            gpu_arch: gpu.arch().to_string(),
        })?;
    // `mmqgen profile` sets MMQGEN_LINE_INFO=1 in the process it profiles, so ncu can book stalls to lines.
    let line_info = std::env::var_os("MMQGEN_LINE_INFO").is_some_and(|v| v == "1");
    let program = program_name(&rendered, line_info);
    let cache = cache_dir.map(|dir| CubinCache::new(dir.to_path_buf()));
    let CompiledVariant {
        rendered,
        target,
        compiled,
        cache: outcome,
    } = compile_rendered(desc, rendered, &program, arch, cache.as_ref(), line_info).map_err(
        |e| match e {
            VariantCompileError::Render(source) => BuildError::Render {
                variant: desc.name.to_string(),
                source,
            },
            VariantCompileError::Compile {
                variant,
                target,
                source,
            } => BuildError::Compile {
                variant,
                arch: target,
                source,
            },
            VariantCompileError::Cache(e) => BuildError::Cache(e),
        },
    )?;
    let (arch, cubin, from_cache) = (target, compiled.cubin, outcome == Some(CacheOutcome::Hit));
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let loaded = LoadedVariant::load_with(
        gpu,
        desc,
        &cubin,
        rendered_entry_points(&rendered),
        rendered_dynamic_shared(&rendered),
    )?;
    Ok((
        loaded,
        BuildInfo {
            canonical: rendered.canonical,
            arch,
            compile_ms,
            from_cache,
            cubin_bytes: cubin.len(),
        },
    ))
}

/// Device buffers between the kernels, reused across calls: the quantized activations (`q [n][K]` int8,
/// `d [n][K/G]` f32, or `[K/G][round_up(n, 4)]` for a variant whose scales are chunk-major) and, for split-K
/// variants, the segment partials (`f32 [nseg][n][m]`).
#[derive(Debug)]
pub struct Workspace {
    size: WorkspaceSize,
    act_q: CudaSlice<i8>,
    act_d: CudaSlice<f32>,
    segments: Option<CudaSlice<f32>>,
    /// What the activations `act_q`/`act_d` hold now.
    quantized: Option<Quantized>,
}

/// What a [`Workspace`] holds, in elements, and the shapes it was sized for (for messages and for the split
/// tiles of `tail_parts > 1`, whose split depends on the GPU's SMs, read once here rather than at each call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkspaceSize {
    /// int8 activation quants.
    pub act_q: usize,
    /// f32 activation scales.
    pub act_d: usize,
    /// f32 segment partials (`ksplit > 1`) or the split tiles' counters and sums (`tail_parts > 1`).
    pub segments: usize,
    pub max_m: usize,
    pub max_n: usize,
    pub max_k: usize,
    /// The GPU's multiprocessors (0 when no variant sized for splits its tiles).
    pub multiprocessors: u32,
    /// The most blocks a wave holds among the `tail_parts > 1` variants sized for (0 if none): how many counters
    /// a poisoned workspace keeps at zero.
    pub split_wave: u64,
}

impl WorkspaceSize {
    /// What any call of `desc` with `m <= max_m`, `n <= max_n`, `K <= max_k` needs, on a GPU of
    /// `multiprocessors` SMs.
    pub fn for_description(
        desc: &VariantDescription,
        max_m: usize,
        max_n: usize,
        max_k: usize,
        multiprocessors: u32,
    ) -> Result<WorkspaceSize, ShapeError> {
        check_shape(max_m, max_n, max_k)?;
        let group = desc.mode.activation_group() as usize;
        let planes = desc.mode.activation_planes() as usize;
        let (segments, split_wave) = if desc.ksplit > 1 {
            (segment_len(max_m, max_n, max_k)?, 0)
        } else if desc.tail_parts > 1 {
            let resident = resident_blocks(multiprocessors.max(1), desc);
            let len = TailSplit::max_workspace_len(desc, max_m, max_n, max_k, resident).max(1);
            (len, resident)
        } else {
            (0, 0)
        };
        Ok(WorkspaceSize {
            act_q: max_n * max_k * planes,
            // Room for either layout of the scales: chunk-major rows are n rounded up to 4.
            act_d: tensor_maps::scale_row_stride(max_n) * (max_k / group),
            segments,
            max_m,
            max_n,
            max_k,
            multiprocessors,
            split_wave,
        })
    }

    /// Room for both: each buffer and bound the larger of the two.
    pub fn max(self, other: WorkspaceSize) -> WorkspaceSize {
        WorkspaceSize {
            act_q: self.act_q.max(other.act_q),
            act_d: self.act_d.max(other.act_d),
            segments: self.segments.max(other.segments),
            max_m: self.max_m.max(other.max_m),
            max_n: self.max_n.max(other.max_n),
            max_k: self.max_k.max(other.max_k),
            multiprocessors: self.multiprocessors.max(other.multiprocessors),
            split_wave: self.split_wave.max(other.split_wave),
        }
    }

    /// Device bytes of a workspace of this size.
    pub fn bytes(&self) -> usize {
        self.act_q + 4 * self.act_d + 4 * self.segments
    }
}

/// The multiprocessors of `stream`'s GPU.
pub fn multiprocessors(stream: &Arc<CudaStream>) -> Result<u32, DeviceError> {
    stream
        .context()
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .map(|sms| sms.max(1) as u32)
        .map_err(|e| DeviceError::cuda("reading the multiprocessor count", e))
}

/// The activations a workspace holds: `n` tokens of K in groups of G, their scales token- or chunk-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Quantized {
    n: usize,
    k: usize,
    group: u32,
    /// int8 planes per value (2 under `int12_per256`).
    planes: u32,
    by_chunk: bool,
}

impl Workspace {
    /// A workspace for any call of `variant` with `m <= max_m`, `n <= max_n`, `K <= max_k`.
    pub fn new(
        gpu: &Gpu,
        variant: &LoadedVariant,
        max_m: usize,
        max_n: usize,
        max_k: usize,
    ) -> Result<Workspace, LaunchError> {
        Self::for_description(gpu.stream(), variant.description(), max_m, max_n, max_k)
    }

    /// A workspace sized for `desc`'s activation group and split-K, on `stream`.
    pub fn for_description(
        stream: &Arc<CudaStream>,
        desc: &VariantDescription,
        max_m: usize,
        max_n: usize,
        max_k: usize,
    ) -> Result<Workspace, LaunchError> {
        let sms = multiprocessors(stream)?;
        let size = WorkspaceSize::for_description(desc, max_m, max_n, max_k, sms)?;
        Self::with_size(stream, size)
    }

    /// A workspace of `size` on `stream` (the union of several variants' needs: [`WorkspaceSize::max`]).
    pub fn with_size(
        stream: &Arc<CudaStream>,
        size: WorkspaceSize,
    ) -> Result<Workspace, LaunchError> {
        fn alloc_err(what: &'static str, len: usize) -> impl FnOnce(DriverError) -> DeviceError {
            move |e| {
                DeviceError::cuda(
                    format!("allocating the workspace's {what} ({len} elements)"),
                    e,
                )
            }
        }
        let act_q = stream
            .alloc_zeros::<i8>(size.act_q.max(1))
            .map_err(alloc_err("activation quants", size.act_q))?;
        let act_d = stream
            .alloc_zeros::<f32>(size.act_d.max(1))
            .map_err(alloc_err("activation scales", size.act_d))?;
        // Zeros: the split tiles' counters start at 0 (each call leaves them so: the last block resets the
        // arrivals, the part after a cut lowers its flag).
        let segments = match size.segments {
            0 => None,
            len => Some(
                stream
                    .alloc_zeros::<f32>(len)
                    .map_err(alloc_err("segment partials and split tiles' sums", len))?,
            ),
        };
        Ok(Workspace {
            size,
            act_q,
            act_d,
            segments,
            quantized: None,
        })
    }

    /// What this workspace holds.
    pub fn size(&self) -> WorkspaceSize {
        self.size
    }

    /// Whether this workspace can serve `desc` at this shape without growing.
    pub fn fits(&self, desc: &VariantDescription, m: usize, n: usize, k: usize) -> bool {
        self.check_activations(n, k, desc.mode).is_ok()
            && (desc.ksplit == 1 || self.check_segments(m, n, k).is_ok())
            && (desc.tail_parts == 1
                || self
                    .check_split_tiles(
                        desc,
                        TailSplit::of(
                            desc,
                            m,
                            n,
                            k,
                            resident_blocks(self.size.multiprocessors, desc),
                        ),
                        k,
                    )
                    .is_ok())
    }

    fn check_activations(&self, n: usize, k: usize, mode: NumericsMode) -> Result<(), LaunchError> {
        let g = mode.activation_group() as usize;
        let quants = n * k * mode.activation_planes() as usize;
        let scales = tensor_maps::scale_row_stride(n) * (k / g);
        if quants > self.act_q.len() || scales > self.act_d.len() {
            return Err(LaunchError::Workspace(format!(
                "the workspace holds {} activation quants and {} scales, but n = {n} tokens of K = {k} in groups \
                 of {g} need {} and {}: make a Workspace for the larger shape (it was made for n <= {}, K <= {})",
                self.act_q.len(),
                self.act_d.len(),
                quants,
                scales,
                self.size.max_n,
                self.size.max_k
            )));
        }
        Ok(())
    }

    fn check_quantized(&self, expected: Quantized) -> Result<(), LaunchError> {
        let Quantized {
            n,
            k,
            group,
            planes,
            by_chunk,
        } = expected;
        let layout = |by_chunk: bool| {
            if by_chunk {
                "chunk-major"
            } else {
                "token-major"
            }
        };
        match self.quantized {
            Some(q) if (q.n, q.k, q.group, q.planes) != (n, k, group, planes) => {
                Err(LaunchError::Workspace(format!(
                    "the workspace holds activations quantized for n = {}, K = {} in groups of {} ({} plane(s)), \
                     but this matmul is n = {n}, K = {k} in groups of {group} ({planes} plane(s)): quantize them \
                     first",
                    q.n, q.k, q.group, q.planes
                )))
            }
            Some(q) if q.by_chunk != by_chunk => Err(LaunchError::Workspace(format!(
                "the workspace holds activation scales laid out {}, but this variant reads them {}: quantize \
                 the activations with this variant first",
                layout(q.by_chunk),
                layout(by_chunk)
            ))),
            Some(_) => Ok(()),
            None => Err(LaunchError::Workspace(
                "the workspace holds no quantized activations: call quantize_activations first".into(),
            )),
        }
    }

    fn check_segments(&self, m: usize, n: usize, k: usize) -> Result<(), LaunchError> {
        let needed = segment_len(m, n, k)?;
        let have = self.segments.as_ref().map_or(0, |s| s.len());
        if needed > have {
            return Err(LaunchError::Workspace(format!(
                "the workspace holds {have} segment partials, but a split-K matmul of m = {m}, n = {n}, K = {k} \
                 needs {needed}: make the Workspace for this split-K variant and a large enough shape (it was \
                 made for m <= {}, n <= {}, K <= {})",
                self.size.max_m, self.size.max_n, self.size.max_k
            )));
        }
        Ok(())
    }

    fn check_split_tiles(
        &self,
        desc: &VariantDescription,
        split: TailSplit,
        k: usize,
    ) -> Result<(), LaunchError> {
        let needed = split.workspace_len(desc, k);
        let have = self.segments.as_ref().map_or(0, |s| s.len());
        if needed > have {
            return Err(LaunchError::Workspace(format!(
                "the workspace holds {have} slots for split tiles, but this call splits {} tiles of {} x {} in {} \
                 parts over K = {k} and needs {needed}: make the Workspace for this variant (tail_parts = {}) and \
                 a large enough shape (it was made for m <= {}, n <= {}, K <= {})",
                split.split_tiles(),
                desc.nbj,
                desc.tile_n,
                split.split,
                desc.tail_parts,
                self.size.max_m,
                self.size.max_n,
                self.size.max_k
            )));
        }
        Ok(())
    }

    /// Copies the quantized activations back (after the quantizer ran for `n` tokens of K), waiting for the
    /// stream. They are the GPU's `q [n][K]` and `d [n][K/G]`, for comparing with the reference's.
    pub fn read_quantized(
        &self,
        stream: &Arc<CudaStream>,
    ) -> Result<QuantizedActivations, LaunchError> {
        let Some(Quantized {
            n,
            k,
            group,
            planes,
            by_chunk,
        }) = self.quantized
        else {
            return Err(LaunchError::Workspace(
                "the workspace holds no quantized activations to read: run the quantizer first"
                    .into(),
            ));
        };
        let g = group as usize;
        let q = read_prefix(
            stream,
            &self.act_q,
            n * k * planes as usize,
            "the activation quants",
        )?;
        let d = if by_chunk {
            // [K/G][stride], tokens at their scale_position, back to [n][K/G], the reference's layout.
            let stride = tensor_maps::scale_row_stride(n);
            let rows = read_prefix(
                stream,
                &self.act_d,
                stride * (k / g),
                "the activation scales",
            )?;
            (0..n)
                .flat_map(|t| (0..k / g).map(move |c| (t, c)))
                .map(|(t, c)| rows[c * stride + tensor_maps::scale_position(t)])
                .collect()
        } else {
            read_prefix(stream, &self.act_d, n * (k / g), "the activation scales")?
        };
        Ok(QuantizedActivations {
            q,
            d,
            n,
            k,
            group: g,
            planes: planes as usize,
        })
    }

    /// Fills the whole workspace with poison (quants [`POISON_Q`], scales and segments [`POISON_BITS`]) so that
    /// a value a kernel never wrote shows. Allocates host staging; for checks, not for the hot path.
    pub fn poison(&mut self, stream: &Arc<CudaStream>) -> Result<(), LaunchError> {
        self.quantized = None;
        let q = vec![POISON_Q; self.act_q.len()];
        stream
            .memcpy_htod(&q, &mut self.act_q)
            .map_err(|e| DeviceError::cuda("poisoning the activation quants", e))?;
        poison_f32(stream, &mut self.act_d, "the activation scales")?;
        if let Some(s) = self.segments.as_mut() {
            poison_f32(stream, s, "the segment partials")?;
            // The split tiles' counters (a call's first slots, for at most half a wave of split tiles) must read
            // zero when a call starts.
            let arrivals =
                TailSplit::counter_slots((self.size.split_wave / 2) as usize, MAX_TAIL_PARTS)
                    .min(s.len());
            if arrivals > 0 {
                let mut counts = s.slice_mut(..arrivals);
                stream
                    .memset_zeros(&mut counts)
                    .map_err(|e| DeviceError::cuda("zeroing the split tiles' counters", e))?;
            }
        }
        Ok(())
    }

    /// The segment partials buffer (split-K variants only).
    pub fn segments(&self) -> Option<&CudaSlice<f32>> {
        self.segments.as_ref()
    }
}

/// Fills `buf` with [`POISON_BITS`].
pub fn poison_f32(
    stream: &Arc<CudaStream>,
    buf: &mut CudaSlice<f32>,
    what: &str,
) -> Result<(), DeviceError> {
    let host = vec![f32::from_bits(POISON_BITS); buf.len()];
    stream
        .memcpy_htod(&host, buf)
        .map_err(|e| DeviceError::cuda(format!("poisoning {what}"), e))
}

/// Copies the first `len` elements of `buf` back, waiting for the stream.
pub fn read_prefix<T: cudarc::driver::DeviceRepr + Default + Clone>(
    stream: &Arc<CudaStream>,
    buf: &CudaSlice<T>,
    len: usize,
    what: &'static str,
) -> Result<Vec<T>, LaunchError> {
    let view = buf.try_slice(0..len).ok_or_else(|| ShapeError::Buffer {
        buffer: what,
        len: buf.len(),
        shape: "reading it back".to_string(),
        needed: len,
    })?;
    let mut host = vec![T::default(); len];
    stream
        .memcpy_dtoh(&view, &mut host)
        .map_err(|e| DeviceError::cuda(format!("copying {what} back"), e))?;
    stream
        .synchronize()
        .map_err(|e| DeviceError::cuda(format!("waiting for the copy of {what}"), e))?;
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmqgen_codegen::{CpAsync, Engine, ExpandWidth};

    fn desc() -> VariantDescription {
        VariantDescription {
            name: "t".into(),
            nbj: 64,
            tile_n: 32,
            warps_m: 2,
            warps_n: 2,
            ..VariantDescription::DEFAULTS
        }
    }

    #[test]
    fn the_last_wave_splits_only_where_its_parts_fit_one_wave() {
        let d = VariantDescription {
            nbj: 128,
            tile_n: 96,
            tail_parts: 3,
            ..desc()
        };
        // 4096 x 2048: 32 x 22 = 704 tiles, 5 waves of 132 and 44 more, which take 3 parts each (of 6, 6 and 4
        // super-blocks); three counters a split tile, then its four segments' sums.
        let s = TailSplit::of(&d, 4096, 2048, 4096, 132);
        assert_eq!((s.whole_tiles, s.split, s.blocks), (660, 3, 660 + 132));
        assert_eq!(s.split_tiles(), 44);
        assert_eq!(s.workspace_len(&d, 4096), 160 + 44 * 4 * 128 * 96);
        assert_eq!(TailSplit::of(&d, 4096, 2048, 14336, 132).split, 3);
        // 4096^3: 56 tiles past 10 waves fit two parts each; a part has at least a segment's super-blocks, so
        // K = 1024 does not split, and K = 2048 or 2816 (8 or 11 super-blocks) splits in two, not three.
        assert_eq!(TailSplit::of(&d, 4096, 4096, 4096, 132).split, 2);
        assert_eq!(TailSplit::of(&d, 4096, 4096, 1024, 132).split, 1);
        assert_eq!(TailSplit::of(&d, 4096, 2048, 2048, 132).split, 2);
        assert_eq!(TailSplit::of(&d, 4096, 2048, 2816, 132).split, 2);
        // 14336 x 2048: 88 tiles past 18 waves: two parts do not fit a wave.
        let whole = TailSplit::of(&d, 14336, 2048, 4096, 132);
        assert_eq!(
            (whole.split, whole.blocks, whole.workspace_len(&d, 4096)),
            (1, 2464, 0)
        );
        // Fewer tiles than a wave: all of them split, as far as tail_parts allows.
        let small = TailSplit::of(&d, 333, 9, 4352, 132);
        assert_eq!((small.whole_tiles, small.split, small.blocks), (0, 3, 9));
        // The workspace for any call up to a shape covers every call up to it.
        let most = TailSplit::max_workspace_len(&d, 4096, 4096, 14336, 132);
        for (m, n, k) in [
            (4096, 2048, 4096),
            (4096, 4096, 14336),
            (333, 9, 4352),
            (4096, 100, 14336),
        ] {
            assert!(
                TailSplit::of(&d, m, n, k, 132).workspace_len(&d, k) <= most,
                "{m}x{n}x{k}"
            );
        }
        // tail_parts = 1 never splits.
        let one = VariantDescription { tail_parts: 1, ..d };
        assert_eq!(TailSplit::of(&one, 4096, 2048, 4096, 132).split, 1);
    }

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
    }

    #[test]
    fn launch_geometry_follows_kernels_md() {
        let d = desc();
        let c = matmul_config(&d, 4097, 513, 0).unwrap();
        assert_eq!(c.grid_dim, (65, 17, 1));
        assert_eq!(c.block_dim, (128, 1, 1));
        assert_eq!(c.shared_mem_bytes, 0);
        let split = VariantDescription {
            ksplit: 3,
            ..d.clone()
        };
        assert_eq!(
            matmul_config(&split, 64, 1, 60_000).unwrap().grid_dim,
            (1, 1, 3)
        );
        // A cluster of 2 x 2 takes whole pairs of row and token tiles: 65 tiles of 64 rows round up to 66, 17 of
        // 32 tokens to 18.
        let pair = VariantDescription {
            cluster_rows: 2,
            cluster_tokens: 2,
            ..d.clone()
        };
        assert_eq!(
            matmul_config(&pair, 4097, 513, 0).unwrap().grid_dim,
            (66, 18, 1)
        );
        assert_eq!(
            matmul_config(&split, 64, 1, 60_000)
                .unwrap()
                .shared_mem_bytes,
            60_000
        );

        // One warp per 256 values whatever the group: 11 spans of 256 in 2 blocks of 8 warps (3 spare warps).
        let q = quantizer_config(77, 2816, 32).unwrap();
        assert_eq!((q.grid_dim, q.block_dim), ((2, 77, 1), (256, 1, 1)));
        let q = quantizer_config(77, 2816, 256).unwrap();
        assert_eq!((q.grid_dim, q.block_dim), ((2, 77, 1), (256, 1, 1)));
        assert_eq!(
            quantizer_config(70_000, 256, 32).unwrap_err().to_string(),
            "quantizing n = 70000 tokens needs a grid of 70000 blocks along y, more than CUDA's limit of 65535"
        );
        assert_eq!(
            matmul_config(&VariantDescription { tile_n: 1, ..d }, 64, 65_536, 0).unwrap_err().to_string(),
            "n = 65536 tokens in tiles of 1 needs a grid of 65536 blocks along y, more than CUDA's limit of 65535"
        );

        let c = combine_config(1000, 77);
        assert_eq!((c.grid_dim, c.block_dim), ((301, 1, 1), (256, 1, 1)));
        assert_eq!(segment_count(256), 1);
        assert_eq!(segment_count(1024), 1);
        assert_eq!(segment_count(1280), 2);
        assert_eq!(segment_count(2816), 3);
        assert_eq!(segment_len(1000, 77, 2816), Ok(3 * 77 * 1000));
    }

    #[test]
    fn entry_points_follow_kernels_md() {
        let d = VariantDescription {
            mode: NumericsMode::IntPer256,
            ..desc()
        };
        let e = EntryPoints::for_description(&d);
        let canonical = canonical_name(&d);
        assert_eq!(e.quantize, "mmq_quantize_activations_g256");
        assert_eq!(e.raw, format!("{canonical}_raw"));
        assert_eq!(e.matmul(Layout::Padded), format!("{canonical}_padded"));
        assert_eq!(e.combine, None);
        let e = EntryPoints::for_description(&VariantDescription {
            ksplit: 2,
            mode: NumericsMode::F32Per16,
            ..desc()
        });
        assert_eq!(e.quantize, "mmq_quantize_activations_g32");
        assert!(e
            .combine
            .unwrap()
            .ends_with("_ks2_narrow_u32_cpa0_cpp0_s1_combine"));
    }

    #[test]
    fn dynamic_shared_memory_only_above_48_kib() {
        let small = desc();
        assert!(shared_layout(&small).total_bytes <= 48 * 1024);
        assert_eq!(dynamic_shared_bytes(&small), 0);
        let big = VariantDescription {
            engine: Engine::MmaK32Fold,
            nbj: 128,
            tile_n: 64,
            kdr: 8,
            stages: 3,
            expand: ExpandWidth::Uint4,
            cp_async_activations: CpAsync::B16,
            ..small
        };
        let total = shared_layout(&big).total_bytes;
        assert!(total > 48 * 1024, "{total}");
        assert_eq!(dynamic_shared_bytes(&big), total);
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
    }
}
