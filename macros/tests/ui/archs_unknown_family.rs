// A family that is not one of the table's: the sentence lists the architectures and the families.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    archs: [volta_and_later],
};

fn main() {
    let _ = V;
}
