//! Why a call or a load was refused: the shape and buffer refusals ([`ShapeError`]) and everything else that can
//! go wrong loading or launching a variant ([`LaunchError`]). Each variant displays as one sentence.

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use mmqgen_codegen::launch::GridError;
use mmqgen_codegen::NumericsMode;

use crate::gpu::device::{describe_driver_error, DeviceError};
use crate::gpu::weights::PlaneKind;

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

    #[error(
        "the launch contract of variant '{variant}' lists the argument {argument}, for which this call has no value \
         (a bug in mmqgen's launch contract)"
    )]
    Argument {
        variant: String,
        argument: &'static str,
    },

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

impl From<GridError> for ShapeError {
    fn from(e: GridError) -> ShapeError {
        match e {
            GridError::Axis {
                what,
                axis,
                blocks,
                limit,
            } => ShapeError::Grid {
                what,
                axis,
                blocks,
                limit,
            },
            GridError::TooLarge { what, value } => ShapeError::TooLarge { what, value },
        }
    }
}

impl From<GridError> for LaunchError {
    fn from(e: GridError) -> LaunchError {
        LaunchError::Shape(e.into())
    }
}
