// An int mode at kdr = 2 stages 4 scale bytes per row; a 16-byte copy overruns.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    mode: int_per32,
    kdr: 2,
    scale_fetch: plane,
    cp_async_plane: 16,
};

fn main() {
    let _ = V;
}
