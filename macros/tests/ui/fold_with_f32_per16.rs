// The fold engine has no per-16 partial sums.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k32_fold,
    mode: f32_per16,
};

fn main() {
    let _ = V;
}
