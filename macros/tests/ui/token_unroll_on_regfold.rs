// Only the ring engine has a loop over a block's tokens inside a thread; the register fold's tokens are its mma tiles.
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
    cp_async_activations: 16,
    stages: 3,
    token_unroll: 1,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
