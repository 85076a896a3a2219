//! One case in a child process: the arguments that start it, running it, and reading its row back.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use mmqgen_codegen::VariantDescription;

use super::args::{ChildCommand, LayoutChoice, ParityArgs, ParityCliError};
use super::find_variant;
use super::report::progress_line;
use crate::check::{
    run_case_with, GgufTensorRef, GgufWeights, ParityCase, ParityRow, ProvenOutput, Status,
    ROW_LINE_PREFIX,
};
use crate::gpu::device::Gpu;
use crate::gpu::weights::Layout;

pub(super) struct ChildSpec<'a> {
    pub(super) desc: &'a VariantDescription,
    pub(super) case: ParityCase,
    /// The GGUF tensor of the weights (the child gets `--gguf/--tensor/--tokens` instead of `--shape`).
    pub(super) gguf: Option<&'a GgufTensorRef>,
    pub(super) gpu: usize,
    pub(super) proven: Option<&'a (String, PathBuf)>,
    pub(super) save: Option<&'a Path>,
    /// `None` for a mutant: its source is compiled fresh in its own process.
    pub(super) cubin_cache: Option<&'a Path>,
    pub(super) timeout: Duration,
}

/// The child's arguments after the prefix.
pub(super) fn child_args(spec: &ChildSpec<'_>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["--child".into(), spec.desc.name.as_ref().into()];
    match spec.gguf {
        Some(g) => a.extend([
            "--gguf".into(),
            g.path.as_os_str().to_owned(),
            "--tensor".into(),
            g.tensor.as_str().into(),
            "--tokens".into(),
            spec.case.shape.n.to_string().into(),
        ]),
        None => a.extend(["--shape".into(), spec.case.shape.to_string().into()]),
    }
    a.extend([
        "--layout".into(),
        spec.case.layout.keyword().into(),
        "--seed".into(),
        spec.case.seed.to_string().into(),
        "--gpu".into(),
        spec.gpu.to_string().into(),
    ]);
    if let Some(dir) = spec.cubin_cache {
        a.extend(["--cubin-cache".into(), dir.as_os_str().to_owned()]);
    }
    if let Some(mutant) = &spec.case.mutant {
        a.extend(["--mutant".into(), mutant.into()]);
    }
    if let Some((who, path)) = spec.proven {
        a.extend([
            "--proven".into(),
            path.as_os_str().to_owned(),
            "--proven-variant".into(),
            who.into(),
        ]);
    }
    if let Some(path) = spec.save {
        a.extend(["--save-output".into(), path.as_os_str().to_owned()]);
    }
    a
}

pub(super) fn failed_row(spec: &ChildSpec<'_>, error: String, wall_ms: f64) -> ParityRow {
    let mut row = ParityRow::new(spec.desc, &spec.case);
    row.gguf = spec.gguf.cloned();
    row.status = Status::Failed;
    row.error = Some(error);
    row.wall_ms = wall_ms;
    row
}

/// The last non-empty line of a child's stderr, for a failed row.
pub fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

/// The row a child printed on stdout (the last line with the row prefix).
pub fn row_from_stdout(stdout: &str) -> Option<Result<ParityRow, String>> {
    stdout
        .lines()
        .rfind(|l| l.starts_with(ROW_LINE_PREFIX))
        .map(ParityRow::decode)
}

/// A pipe read to its end on a thread, into a shared buffer.
pub(super) struct Drained {
    text: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Drained {
    /// The text read so far, after waiting until `deadline` at most for the end of the pipe.
    fn finish(self, deadline: Instant) -> String {
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let bytes = self.text.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

pub(super) fn drain(pipe: Option<Box<dyn Read + Send>>) -> Drained {
    let text = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (tx, done) = std::sync::mpsc::channel();
    let shared = text.clone();
    std::thread::spawn(move || {
        if let Some(mut p) = pipe {
            let mut chunk = [0u8; 8192];
            loop {
                match p.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(k) => match shared.lock() {
                        Ok(mut b) => b.extend_from_slice(&chunk[..k]),
                        Err(_) => break,
                    },
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        }
        let _ = tx.send(());
    });
    Drained { text, done }
}

/// One variant on one case in a fresh process started from `child` (docs/DESIGN.md D11), compared with the CPU
/// reference: how `mmqgen tune` proves each candidate on a ragged shape before timing it. Returns the row and
/// its one-line summary.
pub fn prove_in_child(
    child: &ChildCommand,
    desc: &VariantDescription,
    case: ParityCase,
    gpu: usize,
    cubin_cache: Option<&Path>,
    timeout: Duration,
) -> (ParityRow, String) {
    let row = run_child_process(
        child,
        &ChildSpec {
            desc,
            case,
            gguf: None,
            gpu,
            proven: None,
            save: None,
            cubin_cache,
            timeout,
        },
    );
    let line = progress_line(&row);
    (row, line)
}

pub(super) fn run_child_process(child: &ChildCommand, spec: &ChildSpec<'_>) -> ParityRow {
    let start = Instant::now();
    let ms = |start: Instant| start.elapsed().as_secs_f64() * 1e3;
    let mut cmd = Command::new(&child.program);
    cmd.args(&child.prefix)
        .args(child_args(spec))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut proc = match cmd.spawn() {
        Ok(p) => p,
        Err(e) => {
            return failed_row(
                spec,
                format!(
                    "could not start the case's process {}: {e}",
                    child.program.display()
                ),
                ms(start),
            )
        }
    };
    // Drain both pipes on threads so that a chatty child never blocks on a full pipe. The text is shared, not
    // returned, so that a pipe still held open by something the child started cannot hold the parent up.
    let out_buf = drain(
        proc.stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err_buf = drain(
        proc.stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut timed_out = false;
    let status = loop {
        match proc.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if start.elapsed() >= spec.timeout => {
                timed_out = true;
                let _ = proc.kill();
                break proc.wait();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(e),
        }
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    let stdout = out_buf.finish(deadline);
    let stderr = err_buf.finish(deadline);
    let tail = last_line(&stderr)
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            return failed_row(
                spec,
                format!("waiting for the case's process failed: {e}"),
                ms(start),
            )
        }
    };
    if timed_out {
        return failed_row(
            spec,
            format!(
                "the case's process was killed after {} s{tail}",
                spec.timeout.as_secs()
            ),
            ms(start),
        );
    }
    match row_from_stdout(&stdout) {
        Some(Ok(row)) => row,
        Some(Err(e)) => failed_row(
            spec,
            format!("the case's process printed an unreadable result ({e}){tail}"),
            ms(start),
        ),
        None => {
            // Show the end of what a crashed child said, for the person reading the log.
            let lines: Vec<&str> = stderr.lines().collect();
            let shown = &lines[lines.len().saturating_sub(20)..];
            if !shown.is_empty() {
                let mut err = std::io::stderr();
                let _ = writeln!(err, "--- last lines of the failed case's stderr ---");
                for l in shown {
                    let _ = writeln!(err, "    {l}");
                }
            }
            failed_row(
                spec,
                format!("the case's process ended with {status} and printed no result{tail}"),
                ms(start),
            )
        }
    }
}

pub(super) fn read_f32_file(path: &Path) -> Result<Vec<f32>, ParityCliError> {
    let bytes = std::fs::read(path).map_err(|source| ParityCliError::Io {
        what: "reading the proven output",
        path: path.to_path_buf(),
        source,
    })?;
    if !bytes.len().is_multiple_of(4) {
        return Err(ParityCliError::Usage(format!(
            "the proven output {} is {} bytes, not a whole number of f32 values",
            path.display(),
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

pub(super) fn write_f32_file(path: &Path, values: &[f32]) -> Result<(), ParityCliError> {
    let mut bytes = Vec::with_capacity(values.len() * 4);
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).map_err(|source| ParityCliError::Io {
        what: "writing the output",
        path: path.to_path_buf(),
        source,
    })
}

/// The child: one case in this process; prints its row and exits 0 (pass or skipped) or 1.
pub(super) fn run_child(
    args: &ParityArgs,
    catalogue: &[VariantDescription],
) -> Result<ExitCode, ParityCliError> {
    let name = args.child.as_deref().unwrap_or_default();
    let desc = find_variant(catalogue, name)?;
    let gguf = match args.gguf_tensor() {
        Some(source) => Some(GgufWeights::load(&source)?),
        None => None,
    };
    let shape = match (&gguf, args.shapes.as_slice()) {
        (Some(weights), _) => weights.shape(args.gguf_tokens())?,
        (None, [one]) => *one,
        (None, _) => {
            return Err(ParityCliError::Usage(
                "--child needs exactly one --shape m,n,k, or --gguf FILE --tensor NAME".to_string(),
            ))
        }
    };
    let layout = match args.layout {
        LayoutChoice::Raw => Layout::Raw,
        LayoutChoice::Padded => Layout::Padded,
        LayoutChoice::Both => {
            return Err(ParityCliError::Usage(
                "--child needs --layout raw or --layout padded".to_string(),
            ))
        }
    };
    let case = ParityCase {
        shape,
        layout,
        seed: args.seed,
        mutant: args.mutant.clone(),
    };
    let proven = match &args.proven {
        Some(path) => Some(ProvenOutput {
            variant: args
                .proven_variant
                .clone()
                .unwrap_or_else(|| path.display().to_string()),
            output: read_f32_file(path)?,
        }),
        None => None,
    };
    let outcome = match Gpu::open(args.gpu) {
        Ok(gpu) => run_case_with(
            &gpu,
            desc,
            &case,
            gguf.as_ref(),
            proven.as_ref(),
            args.cubin_cache.as_deref(),
        ),
        Err(e) => {
            let mut row = ParityRow::new(desc, &case);
            row.gguf = gguf.as_ref().map(|g| g.source.clone());
            row.error = Some(e.to_string());
            crate::check::CaseOutcome { row, output: None }
        }
    };
    if let (Some(path), Some(output)) = (&args.save_output, &outcome.output) {
        write_f32_file(path, output)?;
    }
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{}", outcome.row.encode());
    let _ = stdout.flush();
    Ok(if outcome.row.status.is_bad() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
