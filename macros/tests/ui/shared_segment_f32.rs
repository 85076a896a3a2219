// Mode f32_per16 adds each chunk's float into the running segment, which has no super-block epilogue to scale into
// a shared slot: a shared segment is refused (it validated once, and the renderer failed on it).
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    engine: mma_k16,
    mode: f32_per16,
    segment: shared,
    archs: [sm_80],
};

fn main() {
    let _ = V;
}
