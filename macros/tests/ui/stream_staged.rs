// The streaming engine stages nothing, so a description that asks for cp.async stages is refused.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_dp4a,
    mode: int_per32,
    kdr: 8,
    nbj: 8,
    tile_n: 4,
    warps_m: 4,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
    cp_async_activations: 16,
    stages: 2,
};

fn main() {
    let _ = V;
}
