// A sweep's name is one string, the prefix of its points' names.
use mmqgen_codegen::sweep::StaticSweep;

const S: StaticSweep = mmqgen_macros::sweep! {
    name: ["a", "b"],
    stages: [1],
};

fn main() {
    let _ = S;
}
