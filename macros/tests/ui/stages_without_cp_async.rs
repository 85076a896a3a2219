// Two stages with plain loads overlap nothing.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    stages: 2,
};

fn main() {
    let _ = V;
}
