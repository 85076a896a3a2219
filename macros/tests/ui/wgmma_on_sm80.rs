// The wgmma engine declared for an architecture without wgmma.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: wgmma_k32_prefolded,
    mode: int_per256,
    kdr: 8,
    nbj: 64,
    tile_n: 128,
    warps_m: 4,
    warps_n: 2,
    scale_fetch: plane,
    cp_async_activations: 16,
    cp_async_plane: 16,
    stages: 2,
    archs: [sm_80, sm_90],
};

fn main() {
    let _ = V;
}
