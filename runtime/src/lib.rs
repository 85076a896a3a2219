//! mmqgen: declare q6_K MMQ kernel variants in Rust, review their generated CUDA, JIT them with NVRTC, prove
//! them bit-identical to the CPU reference, time them, and let the runtime pick one per shape.
//!
//! The pipeline, one module (or crate) per step:
//! description ([`variant!`], [`codegen`]) -> validation ([`codegen::validate`]) -> rendering
//! ([`codegen::render`]) -> compile ([`compile`]) -> launch ([`device`], [`weights`], [`launch`]) -> check
//! ([`check`], [`mmqgen_reference`]) -> measure ([`measure`]).

pub use matmul::{Mmq, MmqError, Q6kMatrix};
pub use mmqgen_codegen as codegen;
pub use mmqgen_codegen::{Arch, Engine, NumericsMode, VariantDescription};
pub use mmqgen_formats as formats;
pub use mmqgen_macros::{sweep, variant};
pub use mmqgen_reference as reference;
pub use weights::Layout;

pub mod catalogue;
pub mod check;
pub mod cli;
pub mod compile;
pub mod device;
pub mod launch;
pub mod matmul;
pub mod measure;
pub mod select;
pub mod testing;
pub mod weights;
