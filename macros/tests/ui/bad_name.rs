// Names are lower-case handles.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "R56!",
};

fn main() {
    let _ = V;
}
