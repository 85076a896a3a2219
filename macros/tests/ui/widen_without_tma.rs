// The widened k16 engine pairs its token fragments as the copy engine stages them: refill must be tma.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16_widen,
    mode: int_per32,
    kdr: 8,
    nbj: 64,
    tile_n: 16,
    warps_m: 4,
    warps_n: 1,
    ksplit: 4,
    scale_fetch: narrow,
    expand: uint4,
    cp_async_activations: 16,
    stages: 2,
    refill: spread,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
