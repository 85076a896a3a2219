// The copy engine stages a tma variant's tokens and scales: a cp.async width for them would describe nothing.
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
    stages: 2,
    refill: tma,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
