// nbj = 48 over 2 warps of 16-row mma tiles.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16,
    warps_m: 2,
    nbj: 48,
};

fn main() {
    let _ = V;
}
