// A variant compiled for no architecture.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    archs: [],
};

fn main() {
    let _ = V;
}
