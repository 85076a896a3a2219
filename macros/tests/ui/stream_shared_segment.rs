// The streaming engine keeps each lane's total and running segment in registers itself.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_dp4a,
    mode: int_per32,
    kdr: 8,
    nbj: 8,
    tile_n: 1,
    warps_m: 4,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    segment: shared,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
