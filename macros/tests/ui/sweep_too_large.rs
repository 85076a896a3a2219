// More than 10,000 points: refused before anything is expanded.
use mmqgen_codegen::sweep::StaticSweep;

const S: StaticSweep = mmqgen_macros::sweep! {
    name: "big",
    nbj: [16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 272, 288, 304, 320],
    tile_n: [8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160],
    warps_m: [1, 2, 4, 8, 16],
    warps_n: [1, 2, 4, 8],
    stages: [1, 2],
};

fn main() {
    let _ = S;
}
