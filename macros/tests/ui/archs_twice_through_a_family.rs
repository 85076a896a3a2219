// An architecture named itself and again through a family it belongs to.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    archs: [sm_90, hopper_and_later],
};

fn main() {
    let _ = V;
}
