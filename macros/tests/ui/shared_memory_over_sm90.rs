// kdr 8, 256 x 128 tile, 3 stages: 340992 bytes, over the 232448 sm_90 allows.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16,
    kdr: 8,
    nbj: 256,
    tile_n: 128,
    warps_m: 4,
    warps_n: 4,
    cp_async_activations: 16,
    stages: 3,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
