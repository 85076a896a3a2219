// Totals in the output with a split K, whose splits write their segments to global memory for the combine.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16,
    mode: int_per32,
    kdr: 8,
    nbj: 64,
    tile_n: 32,
    warps_m: 2,
    warps_n: 2,
    ksplit: 2,
    totals: output,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
