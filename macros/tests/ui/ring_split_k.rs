// A ring whose lanes take rows walks all of K in each block: a split K is refused (a ring whose lanes take
// super-blocks may split it).
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
    ksplit: 2,
    ring_lanes: rows,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
