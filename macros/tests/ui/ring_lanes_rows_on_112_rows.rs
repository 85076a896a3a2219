// A warp's lanes take one row each, so a ring block that gives its lanes rows has 32 of them.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int_per32,
    kdr: 8,
    nbj: 112,
    tile_n: 4,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    ring_lanes: rows,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
