// Only a precomputed scale plane is copied with cp.async.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    scale_fetch: wide,
    cp_async_plane: 4,
};

fn main() {
    let _ = V;
}
