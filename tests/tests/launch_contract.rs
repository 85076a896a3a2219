//! The launch contract codegen hands the launcher is the ABI the generated source declares: for every declared
//! variant (and the sweeps' points), each matmul entry point takes exactly the contract's parameters, in its order,
//! and the module names exactly the contract's entry points.

use mmqgen::codegen::launch::LaunchContract;
use mmqgen::codegen::render::render;
use mmqgen::codegen::{spec_file, VariantDescription};

/// The parameters `entry` declares in `source`, whitespace collapsed.
fn declared_parameters(source: &str, entry: &str) -> Option<Vec<String>> {
    let start = source.find(&format!(" {entry}("))? + entry.len() + 2;
    let end = start + source[start..].find(')')?;
    Some(
        source[start..end]
            .split(',')
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect(),
    )
}

fn check(desc: &VariantDescription) {
    let rendered = render(desc).expect("declared variants render");
    let contract = LaunchContract::of(desc);
    assert_eq!(rendered.kernels, contract.kernels, "{}", desc.name);
    let names = &contract.kernels;
    let entries = [
        Some((&names.raw, contract.c_parameters())),
        Some((&names.padded, contract.c_parameters())),
        names
            .raw_rows
            .as_ref()
            .map(|entry| (entry, contract.raw_rows_c_parameters())),
    ];
    for (entry, parameters) in entries.into_iter().flatten() {
        let declared = declared_parameters(&rendered.source, entry)
            .unwrap_or_else(|| panic!("{}: no entry point {entry}", desc.name));
        assert_eq!(declared, parameters, "{}: {entry}", desc.name);
    }
    assert!(rendered.source.contains(&format!(" {}(", names.quantize)));
    if let Some(combine) = &names.combine {
        assert!(
            rendered.source.contains(&format!(" {combine}(")),
            "{}",
            desc.name
        );
    }
}

#[test]
fn every_declared_variant_takes_its_contracts_arguments() {
    for desc in mmqgen::catalogue::all() {
        check(&desc);
    }
}

#[test]
fn every_sweep_point_takes_its_contracts_arguments() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/sweeps/");
    let mut count = 0;
    for file in ["regfold.toml", "regfold_tma.toml"] {
        let text = std::fs::read_to_string(format!("{root}{file}")).unwrap();
        let spec = spec_file::spec_from_toml_str(&text).unwrap();
        let points = spec.sweeps.iter().flat_map(|sweep| sweep.descriptions());
        for desc in spec.variants.iter().cloned().chain(points) {
            check(&desc);
            count += 1;
        }
    }
    assert!(count > 100, "{count} sweep points");
}
