// The tensor-copy refill on an engine that stages the prefolded planes, not the q6_K blocks.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k32_prefolded,
    kdr: 8,
    scale_fetch: plane,
    cp_async_activations: 16,
    cp_async_plane: 16,
    stages: 2,
    refill: tma,
    archs: [sm_90],
};

fn main() {
    let _ = V;
}
