// The f16 warpgroup engine sums a chunk's two planes in one f32 accumulator: it has no second set.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: wgmma_f16_regfold,
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
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
