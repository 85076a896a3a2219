// A cluster's blocks share each stage's token boxes by multicast tensor copies, which consumer Blackwell (sm_120)
// does not have; its wgmma engine is Hopper's alone as well.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: wgmma_k32_regfold,
    mode: int12_per256,
    kdr: 8,
    nbj: 128,
    tile_n: 64,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    refill: tma,
    cluster_rows: 2,
    archs: [sm_90, sm_120],
};

fn main() {
    let _ = V;
}
