// The ring engine's bulk and tensor copies complete on an mbarrier, which only sm_90 has: an sm_80 ring is refused.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int_per32,
    kdr: 8,
    nbj: 32,
    tile_n: 1,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    archs: [sm_80],
};

fn main() {
    let _ = V;
}
