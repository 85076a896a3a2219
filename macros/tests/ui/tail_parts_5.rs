// A tile of the last wave splits into at most four parts along K.
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
    tail_parts: 5,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
