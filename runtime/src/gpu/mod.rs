//! Launch, the stage after compile: the GPU and its context ([`device`]), the registered weights ([`weights`]),
//! a loaded variant's kernels and their geometry ([`launch`]), and the matmul API built on them ([`matmul`]).

pub mod device;
pub mod launch;
pub mod matmul;
pub mod weights;
