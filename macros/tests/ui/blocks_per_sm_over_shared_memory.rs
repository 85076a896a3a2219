// Three blocks of a three-stage 64 x 64 register-fold tile do not fit one SM's shared memory.
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
    blocks_per_sm: 3,
};

fn main() {
    let _ = V;
}
