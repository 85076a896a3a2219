// Mode int12_per256's three wgmma sums run whole super-blocks in one block: no split-K (yet).
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
    scale_fetch: narrow,
    expand: uint4,
    cp_async_activations: 16,
    stages: 2,
    ksplit: 2,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
