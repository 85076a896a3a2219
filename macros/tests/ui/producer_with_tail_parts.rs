// A producer warpgroup is built and proven for whole tiles only: with tail_parts > 1 (the last wave's tiles split
// along K) it is refused.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: wgmma_k32_regfold,
    mode: int12_per256,
    kdr: 8,
    nbj: 128,
    tile_n: 64,
    warps_m: 8,
    warps_n: 1,
    expand: uint4,
    stages: 2,
    refill: tma,
    tail_parts: 3,
    producer: warpgroup,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
