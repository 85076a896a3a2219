// The int12 rings are those whose threads take whole super-blocks: a ring whose warps run mma fragments forms per-32
// sums only, and says so in one sentence.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int12_per256,
    nbj: 128,
    tile_n: 8,
    warps_m: 8,
    warps_n: 1,
    stages: 3,
    refill: tma,
    ring_lanes: fragments,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
