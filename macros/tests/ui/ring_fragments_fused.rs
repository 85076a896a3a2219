// A ring whose warps run mma fragments copies the tokens the quantizer kernel wrote: it cannot quantize them itself.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int_per32,
    kdr: 8,
    nbj: 112,
    tile_n: 16,
    warps_m: 7,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    stages: 3,
    quantizer: fused,
    refill: tma,
    ring_lanes: fragments,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
