// An empty list: a sweep needs at least one value per field.
use mmqgen_codegen::sweep::StaticSweep;

const S: StaticSweep = mmqgen_macros::sweep! {
    name: "s",
    stages: [],
};

fn main() {
    let _ = S;
}
