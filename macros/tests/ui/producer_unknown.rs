// `producer` is a keyword field: none or warpgroup.
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
    expand: uint4,
    stages: 2,
    refill: tma,
    producer: warp,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
