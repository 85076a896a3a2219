//! placeholder

pub mod compile;
