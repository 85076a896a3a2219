// The register fold's three stages of 128 x 128 tiles fit sm_90's 227 KiB a block, not the 99 KiB of an RTX 4090.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k32_regfold,
    mode: int_per32,
    kdr: 8,
    nbj: 128,
    tile_n: 128,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    cp_async_activations: 16,
    stages: 3,
    chunk_unroll: 1,
    archs: [sm_89, sm_90],
};

fn main() {
    let _ = V;
}
