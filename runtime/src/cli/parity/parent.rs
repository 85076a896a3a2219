//! The parent of a parity run: every variant, layout and shape, each case in a child process, then the table.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mmqgen_codegen::VariantDescription;

use super::args::{ChildCommand, ParityArgs, ParityCliError};
use super::child::{run_child_process, ChildSpec};
use super::report::{progress_line, render_table, write_json};
use super::select_variants;
use crate::check::{GgufWeights, ParityCase, Shape, Status, DEFAULT_SHAPES};

/// A scratch folder removed when dropped.
pub(super) struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, ParityCliError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("mmqgen-parity-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(path.join("cubins")).map_err(|source| ParityCliError::Io {
            what: "creating the scratch folder",
            path: path.clone(),
            source,
        })?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn run_parent(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
) -> Result<ExitCode, ParityCliError> {
    let variants = select_variants(catalogue, &args.variant)?;
    let mut stderr = std::io::stderr();
    let gguf = args.gguf_tensor();
    let shapes: Vec<Shape> = if let Some(source) = &gguf {
        // Read here first, so that a bad file or tensor fails the run before any process starts; each child
        // reads it again (the weights are not kept here).
        let weights = GgufWeights::load(source)?;
        let shape = weights.shape(args.gguf_tokens())?;
        let _ = writeln!(
            stderr,
            "weights: q6_K {source} (m = {}, K = {}); activations seeded with seed {}, n = {}",
            shape.m, shape.k, args.seed, shape.n
        );
        vec![shape]
    } else if args.shapes.is_empty() {
        DEFAULT_SHAPES.to_vec()
    } else {
        args.shapes.clone()
    };
    let layouts = args.layout.layouts();
    let scratch = Scratch::new()?;
    let total = variants.len() * shapes.len() * layouts.len();
    let mut rows = Vec::with_capacity(total);
    // (mode, shape) -> (who, file) of the first passing output on a sampled shape.
    let mut proven: Vec<((String, Shape), (String, PathBuf))> = Vec::new();
    for desc in &variants {
        for &shape in &shapes {
            for &layout in &layouts {
                let case = ParityCase::new(shape, layout, args.seed);
                let key = (desc.mode.keyword().to_string(), shape);
                let proven_for = if shape.compares_every_output() {
                    None
                } else {
                    proven
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map(|(_, v)| v.clone())
                };
                let save = (!shape.compares_every_output() && proven_for.is_none())
                    .then(|| scratch.0.join(format!("output-{}.f32", rows.len())));
                let spec = ChildSpec {
                    desc,
                    case,
                    gguf: gguf.as_ref(),
                    gpu: args.gpu,
                    proven: proven_for.as_ref(),
                    save: save.as_deref(),
                    cubin_cache: Some(&scratch.0.join("cubins")),
                    timeout: Duration::from_secs(args.timeout.max(1)),
                };
                let row = run_child_process(child, &spec);
                let _ = writeln!(
                    stderr,
                    "[{}/{total}] {}",
                    rows.len() + 1,
                    progress_line(&row)
                );
                if row.status == Status::Pass {
                    if let Some(path) = save.filter(|p| p.is_file()) {
                        proven.push((key, (format!("{} ({layout})", desc.name), path)));
                    }
                }
                rows.push(row);
            }
        }
    }
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(render_table(&rows).as_bytes());
    if let Some(path) = &args.json {
        write_json(path, &rows)?;
    }
    let bad = rows.iter().filter(|r| r.status.is_bad()).count();
    let skipped = rows.iter().filter(|r| r.status == Status::Skipped).count();
    let _ = writeln!(
        stdout,
        "{} case(s): {} passed, {} failed or mismatched, {} skipped",
        rows.len(),
        rows.iter().filter(|r| r.status == Status::Pass).count(),
        bad,
        skipped
    );
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
