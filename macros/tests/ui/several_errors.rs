// Every field error is reported, each at its own field.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: dp4b,
    kdr: 2,
    expand: u16,
    stagess: 1,
};

fn main() {
    let _ = V;
}
