// Mode int12_per256 on an engine that has no 12-bit form: the sentence names the engines that implement it.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: dp4a,
    mode: int12_per256,
    kdr: 2,
    nbj: 64,
    tile_n: 32,
    warps_m: 2,
    warps_n: 2,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
