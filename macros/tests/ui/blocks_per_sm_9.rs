// More blocks per SM than the hardware schedules.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    blocks_per_sm: 9,
};

fn main() {
    let _ = V;
}
