//! mmqgen: declare q6_K MMQ kernel variants in Rust, review their generated CUDA, JIT them with NVRTC, prove
//! them bit-identical to the CPU reference, time them, and let the runtime pick one per shape.
//!
//! The pipeline, one module (or crate) per step:
//! description ([`variant!`], [`codegen`]) -> validation ([`codegen::validate()`]) -> rendering
//! ([`codegen::render`]) -> compile ([`compile`]) -> launch ([`gpu`]: device, weights, kernels, the matmul
//! API) -> check ([`check`], [`mmqgen_reference`]) -> measure ([`measure`]); [`select`] picks a variant per shape.

pub use gpu::matmul::{Mmq, MmqError, Q6kMatrix};
pub use gpu::weights::Layout;
pub use mmqgen_codegen as codegen;
pub use mmqgen_codegen::{Arch, Engine, NumericsMode, VariantDescription};
pub use mmqgen_formats as formats;
pub use mmqgen_macros::{sweep, variant};
pub use mmqgen_reference as reference;
// The launch stage's modules keep their short public paths (`mmqgen::launch`, ...).
pub use gpu::{device, launch, matmul, weights};

pub mod catalogue;
pub mod check;
pub mod cli;
pub mod compile;
pub mod gpu;
pub mod measure;
pub mod select;
pub mod testing;
