//! Measuring variants on a GPU: [`bench`] times them against each other and against cuBLAS, [`tune`] is
//! the CPU half of `mmqgen tune` (compile every candidate, drop the hopeless ones, rank the rest), and
//! [`profile`] reads what Nsight Compute says about one kernel.

pub mod bench;
pub mod profile;
pub mod tune;
