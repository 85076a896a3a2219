// TOML habit: `=` instead of `:`.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {
    name: "bad",
    kdr = 2,
};

fn main() {
    let _ = V;
}
