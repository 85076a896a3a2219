//! The repository stands alone and speaks of itself (docs/DESIGN.md D15): no tracked file cites notes kept
//! outside it, and none speaks of the work by sessions (dates, commits and experiment names instead, e.g.
//! "prefill log 92"). It reads only the repository's own tracked files (`git ls-files`; without git, a walk of
//! the checkout that skips build outputs, installed tools and links).

use std::path::{Path, PathBuf};
use std::process::Command;

/// This file, which has to spell the words it looks for.
const ITSELF: &str = "tests/tests/repository_speaks_of_itself.rs";

/// Files whose owners are changing them in work not merged yet; each still holds what this test looks for, and
/// the test fails once one no longer does, so that the list can only shrink. Empty it at the merge.
const NOT_YET: &[&str] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The repository's tracked files, relative to its root.
fn tracked_files() -> Vec<String> {
    let git = Command::new("git")
        .arg("-C")
        .arg(root())
        .args(["ls-files", "-z"])
        .output();
    match git {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect(),
        _ => {
            let mut files = Vec::new();
            walk(&root(), "", &mut files);
            files
        }
    }
}

fn walk(dir: &Path, prefix: &str, files: &mut Vec<String>) {
    const SKIP: [&str; 6] = [".git", "target", ".nvrtc", ".device", ".whl", "device-out"];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = format!("{prefix}{name}");
        if kind.is_dir() && !SKIP.contains(&name.as_str()) {
            walk(&entry.path(), &format!("{path}/"), files);
        } else if kind.is_file() {
            files.push(path);
        }
    }
}

/// Each line that breaks a rule, as `path:line: what`.
fn problems(path: &str, text: &str) -> Vec<String> {
    // Built from pieces, so that the words themselves appear nowhere but in what is checked.
    let outside = [
        ["DECISIONS", ".md"].concat(),
        ["ANCHORS", ".md"].concat(),
        ["../", "shared"].concat(),
    ];
    let session = ["sess", "ion"].concat();
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        for note in &outside {
            if line.contains(note.as_str()) {
                found.push(format!(
                    "{path}:{}: cites {note}, which is outside the repository",
                    number + 1
                ));
            }
        }
        let lower = line.to_lowercase();
        let starts_word = |at: usize| {
            at == 0
                || !lower[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric())
        };
        if lower
            .match_indices(session.as_str())
            .any(|(at, _)| starts_word(at))
        {
            found.push(format!(
                "{path}:{}: speaks of {session}s; name a date, a commit or an experiment (\"prefill log 92\")",
                number + 1
            ));
        }
    }
    found
}

#[test]
fn no_tracked_file_cites_outside_notes_or_speaks_of_sessions() {
    let root = root();
    let mut found = Vec::new();
    let mut pending_clean = Vec::new();
    let files = tracked_files();
    assert!(
        files.iter().any(|f| f == "README.md"),
        "no tracked files found under {}",
        root.display()
    );
    for path in &files {
        if path == ITSELF {
            continue;
        }
        // Binary and non-UTF-8 files hold no prose.
        let Ok(text) = std::fs::read_to_string(root.join(path)) else {
            continue;
        };
        let here = problems(path, &text);
        if NOT_YET.contains(&path.as_str()) {
            if here.is_empty() {
                pending_clean.push(path.clone());
            }
        } else {
            found.extend(here);
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert!(
        pending_clean.is_empty(),
        "these files are clean now: take them out of NOT_YET: {}",
        pending_clean.join(", ")
    );
}

#[test]
fn the_rules_catch_what_they_are_for() {
    let session = ["Sess", "ion 12"].concat();
    assert_eq!(problems("a.rs", &format!("// {session}: a bug")).len(), 1);
    assert_eq!(
        problems("a.md", &["see DECI", "SIONS.md 2"].concat()).len(),
        1
    );
    assert_eq!(problems("a.md", &["(ANCH", "ORS.md 4)"].concat()).len(), 1);
    assert!(problems(
        "a.md",
        "prefill log 92, 2026-12-04, ea4b338; docs/DESIGN.md D2"
    )
    .is_empty());
}
