// The copy engine stages the wgmma register fold's tokens only in the 12-bit mode's layout: int_per32 is refused.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: wgmma_k32_regfold,
    mode: int_per32,
    kdr: 8,
    nbj: 128,
    tile_n: 64,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    accumulator_sets: 2,
    refill: tma,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
