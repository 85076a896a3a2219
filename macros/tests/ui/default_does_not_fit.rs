// A rule broken by a default (nbj = 64 over 8 warps of 16 rows): the whole input is underlined.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16,
    warps_m: 8,
};

fn main() {
    let _ = V;
}
