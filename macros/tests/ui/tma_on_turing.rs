// Turing has neither the int8 m16n8k32 mma nor tensor copies: the register fold fed by the copy engine is refused
// for sm_75, once for what its engine needs and once for what refill = tma needs.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k32_regfold,
    mode: int_per32,
    kdr: 8,
    nbj: 64,
    tile_n: 64,
    warps_m: 4,
    warps_n: 2,
    scale_fetch: narrow,
    expand: uint4,
    stages: 3,
    refill: tma,
    archs: [sm_75, sm_90],
};

fn main() {
    let _ = V;
}
