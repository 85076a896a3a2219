//! Launching a loaded variant's kernels, exactly as docs/KERNELS.md describes the ABI.
//!
//! A [`LoadedVariant`] is one CUDA module (the cubin NVRTC made from the rendered source) with its entry points
//! (the activation quantizer, the matmul for each weight layout, and the split-K combine) and its launch contract
//! ([`mmqgen_codegen::launch::LaunchContract`]): grid, block, shared memory, workspace and the matmul's ordered
//! arguments, computed by codegen beside the source, so that nothing here names an engine or a feature. A
//! [`Workspace`] holds what passes between the kernels and is reused across calls, so a matmul allocates nothing.
//!
//! Every shape and buffer is checked before anything is queued, each refusal one sentence. Launches are
//! asynchronous: a fault inside a kernel (a misaligned access, say) surfaces at the next synchronisation, which
//! is why [`crate::check`] synchronises after each kernel.
//!
//! One job per module: [`error`] (the refusals), [`shape`] (the checks before a call), [`geometry`] (grids and
//! blocks), [`loaded`] (loading a module), [`queue`] (queueing its kernels) and [`driver`] (one launch).

pub mod driver;
pub mod error;
pub mod geometry;
pub mod loaded;
pub mod queue;
pub mod shape;

pub use error::{LaunchError, ShapeError};
pub use geometry::{
    combine_config, matmul_config, quantizer_config, COMBINE_THREADS, QUANTIZER_WARPS,
};
pub use loaded::{EntryPoints, KernelInfo, LoadedVariant};
pub use mmqgen_codegen::launch::{TailSplit, MAX_GRID_YZ};
pub use shape::{check_shape, segment_count, segment_len, SEGMENT_K};

// The stage's names that live elsewhere keep their paths here (`mmqgen::launch::Workspace`, ...): building a variant
// is compile/'s job, the workspace gpu/workspace's.
pub use crate::compile::build::{
    build_rendered, build_variant, rendered_dynamic_shared, rendered_entry_points, BuildError,
    BuildInfo, PROFILE_SOURCE_DIR_ENV,
};
pub use crate::gpu::workspace::{
    multiprocessors, poison_f32, read_prefix, Workspace, WorkspaceSize, POISON_BITS, POISON_Q,
};
