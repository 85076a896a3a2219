// An unknown field is a problem of the sweep, not of a point: it does not build.
use mmqgen_codegen::sweep::StaticSweep;

const S: StaticSweep = mmqgen_macros::sweep! {
    name: "s",
    stagez: [1, 2],
};

fn main() {
    let _ = S;
}
