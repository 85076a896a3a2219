// The last wave's split is built into the wgmma engine's block schedule only.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k32_regfold,
    mode: int_per32,
    kdr: 8,
    nbj: 64,
    tile_n: 64,
    warps_m: 4,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    refill: tma,
    tail_parts: 2,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
