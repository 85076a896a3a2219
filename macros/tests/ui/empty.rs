// Nothing at all: the sentence for a missing name, at the call site.
use mmqgen_codegen::VariantDescription;

const V: VariantDescription = mmqgen_macros::variant! {};

fn main() {
    let _ = V;
}
