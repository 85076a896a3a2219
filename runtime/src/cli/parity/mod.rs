//! `mmqgen parity`: every variant, layout and shape checked bit for bit against the CPU reference, each case in
//! a fresh process (docs/DESIGN.md D11: a misaligned access inside a kernel leaves the CUDA context unusable, and
//! would hide every case after it).
//!
//! The parent never touches the GPU. For each case it re-executes its own binary (`std::env::current_exe()`)
//! with the arguments that led to this subcommand plus a hidden `--child VARIANT --shape m,n,k --layout L`;
//! the child runs [`crate::check::run_case`] and prints one line ([`crate::check::ParityRow::encode`]) on stdout. A child
//! that crashes, times out or prints no line becomes a failed row with the last line of its stderr. On sampled
//! shapes the first variant of a numerics mode that passes saves its output, and every later variant of that
//! mode (same inputs, so the same bits) is compared with it output by output.
//!
//! `mmqgen parity --gguf FILE --tensor NAME [--tokens N]` takes the weights from that q6_K tensor instead (m and
//! K are the tensor's, n is `--tokens`, default [`DEFAULT_GGUF_TOKENS`]; the activations stay seeded). The parent
//! reads the tensor first, so a missing file, a file that is not GGUF, a missing or non-q6_K tensor or a shape
//! no kernel runs fails the run with its sentence before any child starts; each child gets the same
//! `--gguf/--tensor/--tokens` and reads the file itself.
//!
//! `mmqgen parity --mutants` runs the shipped deliberate mutants ([`crate::check::mutants`]) instead: each is planted
//! in its base variant's rendered source by a child started with the hidden `--mutant NAME`, run on its own
//! case, and reported as caught (wrong or unwritten outputs, or a kernel fault) or MISSED; the run fails when
//! any mutant is missed or could not be tried.
//!
//! One job per module: [`args`] (the arguments), [`parent`] (the run over the cases), [`child`] (one case in a
//! child process), [`mutants`] (the mutant run) and [`report`] (the table and the JSON).

use std::process::ExitCode;

use mmqgen_codegen::{canonical_name, VariantDescription};

pub mod args;
pub mod child;
pub mod mutants;
pub mod parent;
pub mod report;
#[cfg(test)]
mod tests;

pub use args::{ChildCommand, LayoutChoice, ParityArgs, ParityCliError, DEFAULT_GGUF_TOKENS};
use child::run_child;
pub use child::{last_line, prove_in_child, row_from_stdout};
use mutants::run_mutants_parent;
pub use mutants::{mutant_summary, render_mutant_table, run_mutants, MutantOutcome};
use parent::run_parent;
pub use report::render_table;

/// Finds a variant by declared name, then by canonical name.
pub fn find_variant<'a>(
    catalogue: &'a [VariantDescription],
    name: &str,
) -> Result<&'a VariantDescription, ParityCliError> {
    catalogue
        .iter()
        .find(|d| d.name == name)
        .or_else(|| catalogue.iter().find(|d| canonical_name(d) == name))
        .ok_or_else(|| ParityCliError::UnknownVariant {
            name: name.to_string(),
            known: if catalogue.is_empty() {
                "none".to_string()
            } else {
                catalogue
                    .iter()
                    .map(|d| d.name.as_ref())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
}

/// Runs `mmqgen parity` with `catalogue` (the binary's variants), each case in a child process started as
/// `child` (this executable with every `--variants FILE` of the run, then `parity`).
pub fn run(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
) -> Result<ExitCode, ParityCliError> {
    if args.child.is_some() {
        return run_child(args, catalogue);
    }
    if args.mutants {
        return run_mutants_parent(args, catalogue, child);
    }
    run_parent(args, catalogue, child)
}

/// The variants a run checks: the named ones (declared or canonical names, each once) or the whole catalogue.
pub fn select_variants<'a>(
    catalogue: &'a [VariantDescription],
    names: &[String],
) -> Result<Vec<&'a VariantDescription>, ParityCliError> {
    if catalogue.is_empty() {
        return Err(ParityCliError::EmptyCatalogue);
    }
    if names.is_empty() {
        return Ok(catalogue.iter().collect());
    }
    let mut out: Vec<&VariantDescription> = Vec::new();
    for name in names {
        let d = find_variant(catalogue, name)?;
        if !out.iter().any(|o| std::ptr::eq(*o, d)) {
            out.push(d);
        }
    }
    Ok(out)
}
