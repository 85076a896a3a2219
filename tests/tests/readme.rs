//! The README works as written: its Rust and TOML examples are the files in `tests/readme/` (and the user crate's
//! `main.rs`), character for character, and those files do what the README says they do. A README edit that
//! breaks an example, or an example that stops working, fails here.

use mmqgen::codegen::spec_file::spec_from_toml_str;
use mmqgen::codegen::{canonical_name, render::render};
use mmqgen::select::Config;
use mmqgen::{catalogue, Arch, Layout};

/// The walkthrough's variant, exactly as the README shows it, with the two names a family file of
/// `runtime/src/catalogue/` brings into scope.
mod walkthrough {
    use mmqgen::codegen::VariantDescription;
    use mmqgen::variant;
    include!("../readme/catalogue_variant.rs");
}

/// The engine example, exactly as the README shows it: it compiles here and runs where there is a GPU.
mod engine {
    include!("../readme/engine.rs");
    pub(super) fn run(
        blocks: &[u8],
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<(), Box<dyn std::error::Error>> {
        serve(blocks, m, k, n)
    }
}

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md reads")
}

/// The bodies of the README's fenced blocks of one language, in order.
fn blocks(readme: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    let mut out = Vec::new();
    let mut rest = readme;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```\n").expect("every fence closes");
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

#[test]
fn the_readme_examples_are_the_tested_files() {
    let readme = readme();
    let rust = blocks(&readme, "rust");
    let toml = blocks(&readme, "toml");
    assert!(
        rust.contains(&include_str!("../readme/catalogue_variant.rs").to_string()),
        "README's catalogue example differs from tests/readme/catalogue_variant.rs"
    );
    assert!(
        rust.contains(&include_str!("../readme/engine.rs").to_string()),
        "README's engine example differs from tests/readme/engine.rs"
    );
    let user_main = include_str!("../../examples/user-crate/src/main.rs");
    let user_main = &user_main[user_main.find("use std::process::ExitCode;").unwrap()..];
    assert!(
        rust.iter().any(|b| b == user_main),
        "README's own-crate example differs from examples/user-crate/src/main.rs"
    );
    for (file, text) in [
        ("sweep.toml", include_str!("../readme/sweep.toml")),
        (
            "expanded_rule.toml",
            include_str!("../readme/expanded_rule.toml"),
        ),
    ] {
        assert!(
            toml.iter().any(|b| b == text),
            "README's TOML differs from tests/readme/{file}"
        );
    }
}

#[test]
fn the_walkthrough_variant_is_new_and_renders() {
    let mine = walkthrough::R56_KDR4;
    let all = catalogue::all();
    let canonical = canonical_name(&mine);
    for v in &all {
        assert_ne!(
            v.name, mine.name,
            "the catalogue already declares {}",
            mine.name
        );
        assert_ne!(
            canonical_name(v),
            canonical,
            "{} renders like {}",
            mine.name,
            v.name
        );
        assert_ne!(canonical_name(v), mine.name.as_ref());
    }
    assert!(render(&mine)
        .expect("it renders")
        .source
        .contains(&canonical));
    // The walkthrough's commands name it.
    let readme = readme();
    assert!(readme.contains(&format!("--variant {}", mine.name)));
    assert!(readme
        .contains("add `R56_KDR4,` to the list of its role in `runtime/src/catalogue/mod.rs`"));
}

#[test]
fn the_sweep_example_expands_to_the_points_the_readme_names() {
    let spec = spec_from_toml_str(include_str!("../readme/sweep.toml")).expect("the sweep parses");
    assert_eq!(spec.sweeps.len(), 1);
    let sweep = &spec.sweeps[0];
    assert!(sweep.refused.is_empty(), "{:?}", sweep.refused);
    let names: Vec<&str> = sweep.points.iter().map(|p| p.desc.name.as_ref()).collect();
    assert_eq!(names.len(), sweep.total);
    let readme = readme();
    for name in &names {
        assert!(
            readme.contains(&format!("`{name}`")),
            "the README does not name {name}"
        );
    }
    assert!(readme.contains(&format!(
        "This one expands to {} points",
        ["", "one", "two", "three", "four"][names.len()]
    )));
}

#[test]
fn the_regfold_sweep_count_is_the_readmes() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/sweeps/regfold.toml"
    ))
    .unwrap();
    let sweep = &spec_from_toml_str(&text).unwrap().sweeps[0];
    let line = format!(
        "# {} points of {}, {} refused",
        sweep.points.len(),
        sweep.total,
        sweep.refused.len()
    );
    let readme = readme();
    let listed = readme
        .lines()
        .find(|l| l.starts_with("mmqgen --variants examples/sweeps/regfold.toml list"))
        .expect("the README lists the regfold sweep");
    assert!(
        listed.contains(&line),
        "README says `{listed}`, the sweep gives `{line}`"
    );
}

#[test]
fn the_expanded_engine_rule_is_a_valid_config() {
    let all = catalogue::all();
    let config =
        Config::parse(include_str!("../readme/expanded_rule.toml"), &all).expect("the rule parses");
    let pick = config
        .select(Arch::Sm90, Layout::Padded, 4096, 512, 4096)
        .unwrap();
    assert_eq!(pick.variant.name, "prefolded_spread");
    assert!(
        pick.variant.engine.is_prefolded(),
        "the README's example names an expanded engine"
    );
}

#[test]
fn the_engine_example_runs_on_a_gpu() {
    if let Err(e) = mmqgen::Mmq::new(0) {
        mmqgen::testing::skip_or_fail(
            "MMQGEN_REQUIRE_GPU",
            "the_engine_example_runs_on_a_gpu",
            &format!("no CUDA GPU: {e}"),
        );
        return;
    }
    let (m, k) = (4096, 4096);
    let (blocks, _) = mmqgen::reference::digest_case_inputs(m, 1, k, 1);
    engine::run(&blocks, m, k, 8).expect("the README's engine example runs");
}
