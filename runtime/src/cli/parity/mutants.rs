//! `mmqgen parity --mutants`: each deliberate mutant planted in its base variant by a child, reported as caught
//! or MISSED.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use mmqgen_codegen::VariantDescription;

use super::args::{ChildCommand, ParityArgs, ParityCliError};
use super::child::{run_child_process, ChildSpec};
use super::report::{text_table, write_json};
use crate::check::mutants::{Mutant, Verdict};
use crate::check::{ParityCase, ParityRow, Shape, Status};
use crate::gpu::weights::Layout;

/// What `mmqgen parity --mutants` made of one mutant.
#[derive(Clone, Debug)]
pub struct MutantOutcome {
    pub mutant: &'static Mutant,
    /// Places the mutant changed in its base variant's rendered source (0 when it could not be planted).
    pub sites: usize,
    /// The base variant's own row on the mutant's case, unmutated: a mutant is only caught if this passes.
    pub control: Option<ParityRow>,
    /// The mutated case's row, when its process ran.
    pub row: Option<ParityRow>,
    pub verdict: Verdict,
}

/// Plants and runs every shipped mutant ([`crate::check::mutants::all`]), each in its own child process started from
/// `child` with `--mutant NAME` and no cubin cache, after a control run of its unmutated base variant on the same
/// case (once per base, shape and layout); calls `progress` with each outcome. A mutant that does not plant into
/// its base variant's current source, or whose control does not pass, fails without running.
pub fn run_mutants(
    catalogue: &[VariantDescription],
    child: &ChildCommand,
    seed: u64,
    gpu: usize,
    timeout: Duration,
    mut progress: impl FnMut(usize, &MutantOutcome),
) -> Vec<MutantOutcome> {
    let mut controls: Vec<((String, Shape, Layout), ParityRow)> = Vec::new();
    let mut outcomes = Vec::new();
    for (i, mutant) in crate::check::mutants::all().iter().enumerate() {
        let outcome = run_mutant(mutant, catalogue, child, seed, gpu, timeout, &mut controls);
        progress(i, &outcome);
        outcomes.push(outcome);
    }
    outcomes
}

pub(super) fn run_mutant(
    mutant: &'static Mutant,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
    seed: u64,
    gpu: usize,
    timeout: Duration,
    controls: &mut Vec<((String, Shape, Layout), ParityRow)>,
) -> MutantOutcome {
    let mut outcome = MutantOutcome {
        mutant,
        sites: 0,
        control: None,
        row: None,
        verdict: Verdict::Missed,
    };
    let fail = |mut outcome: MutantOutcome, error: String| {
        outcome.verdict = Verdict::Failed { error };
        outcome
    };
    let desc = match mutant.base(catalogue) {
        Ok(d) => d,
        Err(e) => return fail(outcome, e.to_string()),
    };
    // Planted here first (host only), so that a mutant the templates no longer admit fails with its sentence
    // before any process starts; the child plants it again into the source it compiles.
    outcome.sites = match mutant.render(desc) {
        Ok((_, sites)) => sites,
        Err(e) => return fail(outcome, e.to_string()),
    };
    let case = mutant.case(seed);
    let key = (desc.name.to_string(), case.shape, case.layout);
    let control = match controls.iter().find(|(k, _)| *k == key) {
        Some((_, row)) => row.clone(),
        None => {
            let spec = ChildSpec {
                desc,
                case: ParityCase::new(case.shape, case.layout, seed),
                gguf: None,
                gpu,
                proven: None,
                save: None,
                cubin_cache: None,
                timeout,
            };
            let row = run_child_process(child, &spec);
            controls.push((key, row.clone()));
            row
        }
    };
    let control_status = control.status;
    let control_why = control_summary(&control);
    outcome.control = Some(control);
    match control_status {
        Status::Pass => {}
        Status::Skipped => {
            outcome.verdict = Verdict::Skipped {
                reason: control_why,
            };
            return outcome;
        }
        other => {
            return fail(
                outcome,
                format!(
                    "the unmutated base variant '{}' does not pass the mutant's case ({} {}) by itself ({other}: \
                     {control_why}), so the mutant proves nothing",
                    desc.name, case.layout, case.shape
                ),
            );
        }
    }
    let spec = ChildSpec {
        desc,
        case,
        gguf: None,
        gpu,
        proven: None,
        save: None,
        cubin_cache: None,
        timeout,
    };
    let row = run_child_process(child, &spec);
    outcome.verdict = if row.mutant.as_deref() == Some(mutant.name) {
        Verdict::from_row(&row)
    } else {
        Verdict::Failed {
            error: format!(
                "the case's process reported {} instead of mutant '{}'",
                row.mutant
                    .as_deref()
                    .map_or("the unmutated variant".to_string(), |m| format!(
                        "mutant '{m}'"
                    )),
                mutant.name
            ),
        }
    };
    outcome.row = Some(row);
    outcome
}

/// Why a control row did not pass: its error, or its counts and first bad output.
pub(super) fn control_summary(row: &ParityRow) -> String {
    if let Some(e) = &row.error {
        return e.clone();
    }
    let mut s = format!(
        "{} of {} compared outputs differ, {} never written",
        row.mismatches + row.proven_mismatches,
        row.checked,
        row.unwritten
    );
    if row.quant_mismatches > 0 {
        s.push_str(&format!(
            ", {} quantized activations differ",
            row.quant_mismatches
        ));
    }
    if let Some(b) = row.any_first_bad() {
        s.push_str(&format!("; first {b}"));
    }
    s
}

pub(super) fn mutant_progress_line(o: &MutantOutcome) -> String {
    let mut s = format!(
        "mutant {} in {} ({} {}, {} site(s)): {}",
        o.mutant.name, o.mutant.base_variant, o.mutant.layout, o.mutant.shape, o.sites, o.verdict
    );
    if let Some(e) = o.verdict.error() {
        s.push_str(": ");
        s.push_str(e);
    }
    s
}

/// The `--mutants` report: mutant, base variant, case, sites, what, result; then every fault's, skip's and
/// failure's sentence.
pub fn render_mutant_table(outcomes: &[MutantOutcome]) -> String {
    let header = ["mutant", "base variant", "case", "sites", "what", "result"];
    let cells: Vec<[String; 6]> = outcomes
        .iter()
        .map(|o| {
            [
                o.mutant.name.to_string(),
                o.mutant.base_variant.to_string(),
                format!("{} {}", o.mutant.layout, o.mutant.shape),
                o.sites.to_string(),
                o.mutant.what.to_string(),
                o.verdict.to_string(),
            ]
        })
        .collect();
    let mut out = text_table(header, &cells);
    let notes: Vec<String> = outcomes
        .iter()
        .filter_map(|o| {
            o.verdict
                .error()
                .map(|e| format!("{} ({}): {e}\n", o.mutant.name, o.verdict))
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

/// The last line of the `--mutants` report.
pub fn mutant_summary(outcomes: &[MutantOutcome]) -> String {
    let count = |f: fn(&Verdict) -> bool| outcomes.iter().filter(|o| f(&o.verdict)).count();
    format!(
        "{} mutant(s): {} caught, {} missed, {} failed, {} skipped",
        outcomes.len(),
        count(Verdict::is_caught),
        count(|v| *v == Verdict::Missed),
        count(|v| matches!(v, Verdict::Failed { .. })),
        count(|v| matches!(v, Verdict::Skipped { .. })),
    )
}

pub(super) fn run_mutants_parent(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
    child: &ChildCommand,
) -> Result<ExitCode, ParityCliError> {
    let total = crate::check::mutants::all().len();
    let mut stderr = std::io::stderr();
    let outcomes = run_mutants(
        catalogue,
        child,
        args.seed,
        args.gpu,
        Duration::from_secs(args.timeout.max(1)),
        |i, o| {
            let _ = writeln!(stderr, "[{}/{total}] {}", i + 1, mutant_progress_line(o));
        },
    );
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(render_mutant_table(&outcomes).as_bytes());
    if let Some(path) = &args.json {
        let mut rows: Vec<ParityRow> = Vec::new();
        for o in &outcomes {
            for r in [&o.control, &o.row].into_iter().flatten() {
                if !rows.contains(r) {
                    rows.push(r.clone());
                }
            }
        }
        write_json(path, &rows)?;
    }
    let _ = writeln!(stdout, "{}", mutant_summary(&outcomes));
    Ok(if outcomes.iter().any(|o| o.verdict.is_bad()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
