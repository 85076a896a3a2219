// Two fields on one line without a comma.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    kdr: 2 nbj: 64,
};

fn main() {
    let _ = V;
}
