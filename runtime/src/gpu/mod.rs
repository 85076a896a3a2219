//! Launch, the stage after compile: the GPU and its context ([`device`]), the registered weights ([`weights`]),
//! a loaded variant's kernels and their geometry ([`launch`]), the buffers between them ([`workspace`]), the copy
//! engine's maps of a `refill = tma` call ([`tensor_maps`]), and the matmul API built on them ([`matmul`]).

pub mod buffer;
pub mod device;
pub mod launch;
pub mod matmul;
pub mod tensor_maps;
pub mod weights;
pub mod workspace;
