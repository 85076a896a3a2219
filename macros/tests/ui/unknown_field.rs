// A field that does not exist: the caret is under the name, the sentence lists the fields.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    warp_m: 2,
};

fn main() {
    let _ = V;
}
