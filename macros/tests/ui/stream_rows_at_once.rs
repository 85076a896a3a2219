// Up to four tokens a block the streaming engine reads two rows a step, so 4 warps need a multiple of 8 rows.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: stream_dp4a,
    mode: int_per32,
    kdr: 8,
    nbj: 4,
    tile_n: 1,
    warps_m: 4,
    warps_n: 1,
    scale_fetch: narrow,
    expand: uint4,
};

fn main() {
    let _ = V;
}
