//! Embeds every template under templates/ (at the repository root) in the crate: a new template is found by being
//! there, with no list to keep in step. Writes `$OUT_DIR/templates.rs`, a `&[(name, text)]` of the files, the name
//! their path below templates/ (`schedule/grid.cu.tera`), sorted.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            // A directory is watched for files added to it.
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, root, out)?;
        } else if path.extension().is_some_and(|e| e == "tera") {
            let name = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((name, path));
        }
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.join("../templates");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files)?;
    files.sort();
    let mut text = String::from("&[\n");
    for (name, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        text += &format!(
            "    ({name:?}, include_str!({:?})),\n",
            path.display().to_string()
        );
    }
    text += "]\n";
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("templates.rs");
    std::fs::write(out, text)
}
