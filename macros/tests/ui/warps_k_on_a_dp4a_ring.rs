// Only a ring whose warps run mma fragments splits K between its warps.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int_per32,
    kdr: 8,
    nbj: 32,
    tile_n: 4,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    ring_lanes: rows,
    warps_k: 2,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
