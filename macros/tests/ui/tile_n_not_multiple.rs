// tile_n = 24 over 2 warps of 8-token mma tiles.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16,
    warps_n: 2,
    tile_n: 24,
};

fn main() {
    let _ = V;
}
