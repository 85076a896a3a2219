// A 64 x 64 warp tile: 128 accumulators per lane.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16,
    nbj: 128,
    tile_n: 128,
    warps_m: 2,
    warps_n: 2,
};

fn main() {
    let _ = V;
}
