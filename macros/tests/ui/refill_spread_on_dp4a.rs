// A spread refill on an engine whose chunk loop does not issue copies.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: dp4a,
    cp_async_activations: 16,
    stages: 2,
    refill: spread,
};

fn main() {
    let _ = V;
}
