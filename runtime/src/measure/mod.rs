//! Measuring variants on a GPU: [`bench`] times them against each other and against cuBLAS, and [`tune`] is
//! the CPU half of `mmqgen tune` (compile every candidate, drop the hopeless ones, rank the rest).

pub mod bench;
pub mod tune;
