//! What a parity run prints and writes: the progress lines, the table of rows and the JSON file.

use std::path::Path;

use super::args::ParityCliError;
use crate::check::{ParityRow, Status};

/// Left-aligned columns two spaces apart, with a dashed rule under the header (the parity and mutant tables).
pub(super) fn text_table<const N: usize>(header: [&str; N], cells: &[[String; N]]) -> String {
    let mut widths = header.map(str::len);
    for c in cells {
        for (w, cell) in widths.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |c: &[String]| -> String {
        let parts: Vec<String> = c
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = line(&header.map(String::from));
    out.push_str(&line(&widths.map(|w| "-".repeat(w))));
    for c in cells {
        out.push_str(&line(c));
    }
    out
}

pub(super) fn progress_line(row: &ParityRow) -> String {
    let mut s = format!(
        "{} {} {}: {} ({} checked{}, {} mismatched, {:.0} ms)",
        row.variant,
        row.layout,
        row.shape,
        row.status,
        row.checked,
        if row.proven_checked > 0 {
            format!(
                " + all {} vs {}",
                row.proven_checked,
                row.proven_by.as_deref().unwrap_or("?")
            )
        } else {
            String::new()
        },
        row.mismatches + row.proven_mismatches + row.unwritten,
        row.wall_ms
    );
    if let Some(e) = &row.error {
        s.push_str(": ");
        s.push_str(e);
    }
    s
}

pub(super) fn first_bad_cell(row: &ParityRow) -> String {
    if let Some(b) = row.any_first_bad() {
        return b.to_string();
    }
    if let Some(q) = &row.quant_first_bad {
        return format!("activations: {q}");
    }
    if row.unwritten > 0 {
        return format!("{} output(s) never written", row.unwritten);
    }
    match (&row.status, &row.error) {
        (Status::Failed | Status::Skipped, Some(_)) => "see below".to_string(),
        _ => "-".to_string(),
    }
}

/// The report table (variant, layout, shape, checked, mismatches, first bad, status), then every failure's
/// sentence.
pub fn render_table(rows: &[ParityRow]) -> String {
    let header = [
        "variant",
        "layout",
        "shape",
        "checked",
        "mismatches",
        "first bad",
        "status",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            let checked = if r.proven_checked > 0 {
                format!("{}+all", r.checked)
            } else if r.full {
                r.checked.to_string()
            } else {
                format!("{} sampled", r.checked)
            };
            let mismatches = r.mismatches + r.proven_mismatches + r.quant_mismatches + r.unwritten;
            [
                r.variant.clone(),
                r.layout.to_string(),
                r.shape.to_string(),
                checked,
                mismatches.to_string(),
                first_bad_cell(r),
                r.status.to_string(),
            ]
        })
        .collect();
    let mut out = text_table(header, &cells);
    let notes: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            r.error.as_ref().map(|e| {
                format!(
                    "{} {} {} ({}): {e}\n",
                    r.variant, r.layout, r.shape, r.status
                )
            })
        })
        .collect();
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&n);
        }
    }
    out
}

pub(super) fn write_json(path: &Path, rows: &[ParityRow]) -> Result<(), ParityCliError> {
    let mut text = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        text.push_str("  ");
        text.push_str(&r.to_json());
        text.push_str(if i + 1 < rows.len() { ",\n" } else { "\n" });
    }
    text.push_str("]\n");
    std::fs::write(path, text).map_err(|source| ParityCliError::Io {
        what: "writing the JSON report",
        path: path.to_path_buf(),
        source,
    })
}
