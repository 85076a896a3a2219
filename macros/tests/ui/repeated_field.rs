// A field given twice: the caret is under the second name.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    nbj: 64,
    tile_n: 32,
    nbj: 128,
};

fn main() {
    let _ = V;
}
