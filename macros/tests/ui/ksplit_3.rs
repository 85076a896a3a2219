// K splits in whole segments: 1, 2 or 4.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    ksplit: 3,
};

fn main() {
    let _ = V;
}
