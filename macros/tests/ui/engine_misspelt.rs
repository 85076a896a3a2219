// An engine keyword with a typo.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k61,
};

fn main() {
    let _ = V;
}
