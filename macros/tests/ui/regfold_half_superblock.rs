// The register-fold engine stages whole q6_K blocks, so a window of half a super-block is refused.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k32_regfold,
    mode: int_per32,
    kdr: 4,
    nbj: 64,
    tile_n: 64,
    warps_m: 4,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    cp_async_activations: 16,
    stages: 3,
};

fn main() {
    let _ = V;
}
