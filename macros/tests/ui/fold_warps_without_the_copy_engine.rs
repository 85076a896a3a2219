// Fold warps wait for each stage's weights on an mbarrier the copy engine counts, which a cp.async refill does not.
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
    cp_async_activations: 16,
    stages: 2,
    fold_warps: 4,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
