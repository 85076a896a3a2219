// Every point refused: the sweep declares nothing, so it does not build.
use mmqgen_codegen::sweep::StaticSweep;

const S: StaticSweep = mmqgen_macros::sweep! {
    name: "bad",
    kdr: [3, 5],
};

fn main() {
    let _ = S;
}
