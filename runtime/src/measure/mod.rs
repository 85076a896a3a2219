//! Measuring variants on a GPU: [`mod@bench`] times them against each other and against cuBLAS, [`tune`] holds
//! the GPU-free halves of `mmqgen tune` (compile every candidate and drop the hopeless ones; turn the
//! measurements into a checked config, [`tune::rules`]), and [`profile`] reads what Nsight Compute says about
//! one kernel.

pub mod bench;
pub mod profile;
pub mod tune;
