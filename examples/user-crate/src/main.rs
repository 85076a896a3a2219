//! The README's "In your own crate" example, verbatim: a crate that depends on `mmqgen`, declares its own
//! variant and hands it, with the project's catalogue, to the same command line. `tests/cli.rs` runs it.

use std::process::ExitCode;

const MINE: mmqgen::VariantDescription = mmqgen::variant! {
    name: "mine", engine: mma_k32_regfold, mode: int_per32, kdr: 8, nbj: 64, tile_n: 64, warps_m: 4,
    warps_n: 1, scale_fetch: narrow, expand: uint4, cp_async_activations: 16, stages: 3, refill: spread,
    chunk_unroll: 4,
};

fn main() -> ExitCode {
    let mut list = mmqgen::catalogue::all();
    list.push(MINE);
    mmqgen::cli::main_with(&list) // `cargo run -- list`, `emit mine`, `check --variant mine`, ...
}
