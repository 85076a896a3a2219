// The producer warpgroup waits for the tile's warps on an mbarrier and refills the stage with the copy engine, which
// a cp.async refill does not use.
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
    producer: warpgroup,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
