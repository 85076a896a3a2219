// Every thread of the ring engine forms every token's sums of its super-block: at most 8 tokens a block.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int_per32,
    kdr: 8,
    nbj: 32,
    tile_n: 9,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 2,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
