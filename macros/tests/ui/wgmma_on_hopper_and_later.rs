// wgmma is sm_90a's alone: a wgmma engine declared for every architecture from Hopper on is refused for the
// Blackwell ones, in one sentence naming the feature and where it is.
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
    archs: [hopper_and_later],
};

fn main() {
    let _ = V;
}
