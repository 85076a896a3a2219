// cp.async copies 4, 8 or 16 bytes.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    cp_async_activations: 12,
};

fn main() {
    let _ = V;
}
