// Shared-memory totals with a split K, which keeps no totals.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    ksplit: 2,
    totals: shared,
};

fn main() {
    let _ = V;
}
