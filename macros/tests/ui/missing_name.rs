// No name: the whole invocation is underlined.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    engine: mma_k16,
    kdr: 2,
};

fn main() {
    let _ = V;
}
