// kdr must divide 8.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    kdr: 3,
};

fn main() {
    let _ = V;
}
