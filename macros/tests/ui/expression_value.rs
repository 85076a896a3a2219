// Values are written out, never computed.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    nbj: 32 * 2,
};

fn main() {
    let _ = V;
}
