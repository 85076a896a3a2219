// Two accumulator sets on an engine that has no h/l planes.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: dp4a,
    mode: int_per256,
    accumulator_sets: 2,
};

fn main() {
    let _ = V;
}
