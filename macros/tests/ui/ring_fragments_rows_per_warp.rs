// A fragment ring's row groups are 16 rows each: nbj must be 16 x warps_m.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int_per32,
    kdr: 8,
    nbj: 128,
    tile_n: 16,
    warps_m: 4,
    warps_n: 2,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    refill: tma,
    ring_lanes: fragments,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
