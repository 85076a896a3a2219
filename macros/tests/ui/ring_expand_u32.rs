// The ring engine copies whole blocks with bulk copies: its copy fields are fixed, and the sentence points at the
// first one that is off (here expand).
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_ring,
    mode: int_per32,
    kdr: 8,
    nbj: 32,
    tile_n: 1,
    warps_m: 8,
    warps_n: 1,
    scale_fetch: narrow,
    expand: u32,
    stages: 2,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
