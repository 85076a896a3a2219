//! `mmqgen q6k ...` and `mmqgen gguf ...`: the format tools, thin wrappers over `mmqgen_formats`.

use super::CliError;
use crate::formats::input::{open_capped, read_prefix, shown_path, GGUF_HEADER, Q6K_INPUT};
use crate::formats::{
    dequantize_rows, quantize_rows, FormatError, GgufFile, BLOCK_BYTES, BLOCK_WEIGHTS,
};
use clap::Subcommand;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum Q6kCommand {
    /// Raw GGUF q6_K blocks (210 bytes each) to little-endian f32.
    Dequantize {
        #[arg(long)]
        input: PathBuf,
        #[arg(long)]
        output: PathBuf,
    },
    /// Little-endian f32 rows of 256 to GGUF q6_K blocks, byte-identical to ggml's reference quantizer.
    Quantize {
        #[arg(long)]
        input: PathBuf,
        #[arg(long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum GgufCommand {
    /// List the tensors of a .gguf file: name, type, shape, bytes.
    Ls { file: PathBuf },
}

/// A converted file being written: into a temporary file beside the output, renamed over it once whole, so
/// that a failed or interrupted conversion leaves whatever was at the output untouched. An output that exists
/// and is not a regular file (`/dev/null`, a fifo) is written straight; a link is followed, so the file it
/// points to is replaced and the link stays.
struct Output {
    /// The output as the user named it, for sentences.
    named: PathBuf,
    /// Where the finished file goes.
    target: PathBuf,
    /// The temporary file, until it is renamed (removed if the conversion stops before).
    temp: Option<PathBuf>,
    file: std::io::BufWriter<std::fs::File>,
}

impl Output {
    fn create(path: &Path) -> Result<Output, CliError> {
        let cannot = |e: std::io::Error| -> CliError {
            format!("cannot write {}: {e}", shown_path(path)).into()
        };
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let target = if is_link {
            // A dangling link names the file to create: resolve it by hand, as canonicalize cannot.
            std::fs::canonicalize(path)
                .or_else(|_| {
                    std::fs::read_link(path)
                        .map(|to| path.parent().unwrap_or(Path::new("")).join(to))
                })
                .unwrap_or_else(|_| path.to_path_buf())
        } else {
            path.to_path_buf()
        };
        if std::fs::metadata(&target).is_ok_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&target)
                .map_err(cannot)?;
            return Ok(Output {
                named: path.to_path_buf(),
                target,
                temp: None,
                file: std::io::BufWriter::new(file),
            });
        }
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let folder = target.parent().unwrap_or(Path::new(""));
        let temp = folder.join(format!(".mmqgen-{}-{n}.tmp", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(cannot)?;
        Ok(Output {
            named: path.to_path_buf(),
            target,
            temp: Some(temp),
            file: std::io::BufWriter::new(file),
        })
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        self.file
            .write_all(bytes)
            .map_err(|e| format!("cannot write {}: {e}", shown_path(&self.named)).into())
    }

    /// Flushes the file and moves it into place.
    fn finish(mut self) -> Result<(), CliError> {
        let named = shown_path(&self.named);
        // A full disk may show only at the flush or the fsync: the file is moved into place only after both.
        let written = self.file.flush().and_then(|()| match self.temp {
            Some(_) => self.file.get_ref().sync_all(),
            None => Ok(()),
        });
        written.map_err(|e| format!("cannot write {named}: {e}"))?;
        if let Some(temp) = self.temp.take() {
            if let Err(e) = std::fs::rename(&temp, &self.target) {
                let _ = std::fs::remove_file(&temp);
                return Err(format!("cannot write {named}: {e}").into());
            }
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(temp) = &self.temp {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Refuses an output that is the input itself, under any name (another spelling, a link, a hard link): the same
/// device and inode. Checked before anything is written, so the input is never truncated.
fn refuse_same_file(input: &Path, output: &Path) -> Result<(), CliError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(output)) {
            if a.dev() == b.dev() && a.ino() == b.ino() {
                return Err(format!(
                    "--output {} is the input {} itself: writing it would destroy the input; name another file",
                    shown_path(output),
                    shown_path(input)
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Blocks converted per read: the input is streamed, never held whole.
const CHUNK_BLOCKS: usize = 4096;

/// `input`'s sentence prefix for errors about its contents.
fn about(input: &Path, e: impl std::fmt::Display) -> CliError {
    format!("{}: {e}", shown_path(input)).into()
}

pub fn run_q6k(command: Q6kCommand) -> Result<ExitCode, CliError> {
    match command {
        Q6kCommand::Dequantize { input, output } => {
            let mut file = open_capped(&input, Q6K_INPUT)?;
            if file.len % BLOCK_BYTES as u64 != 0 {
                return Err(about(
                    &input,
                    FormatError::BlockBytes {
                        len: usize::try_from(file.len).unwrap_or(usize::MAX),
                    },
                ));
            }
            refuse_same_file(&input, &output)?;
            let mut out = Output::create(&output)?;
            let mut buf = vec![0u8; CHUNK_BLOCKS * BLOCK_BYTES];
            let mut read = 0u64;
            loop {
                let n = file.read_chunk(&mut buf)?;
                if n == 0 {
                    break;
                }
                read += n as u64;
                if read > file.len {
                    return Err(file.changed(read).into());
                }
                let values = dequantize_rows(&buf[..n]).map_err(|e| about(&input, e))?;
                let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                out.write_all(&bytes)?;
            }
            if read != file.len {
                return Err(file.changed(read).into());
            }
            out.finish()?;
            eprintln!(
                "{} weights written to {}",
                read / BLOCK_BYTES as u64 * BLOCK_WEIGHTS as u64,
                shown_path(&output)
            );
        }
        Q6kCommand::Quantize { input, output } => {
            let mut file = open_capped(&input, Q6K_INPUT)?;
            if file.len % 4 != 0 {
                return Err(format!(
                    "{} is {} bytes, not a whole number of little-endian f32 values (4 bytes each)",
                    shown_path(&input),
                    file.len
                )
                .into());
            }
            let row_bytes = 4 * BLOCK_WEIGHTS as u64;
            if file.len % row_bytes != 0 {
                return Err(about(
                    &input,
                    FormatError::WeightCount {
                        len: usize::try_from(file.len / 4).unwrap_or(usize::MAX),
                    },
                ));
            }
            refuse_same_file(&input, &output)?;
            let mut out = Output::create(&output)?;
            let mut buf = vec![0u8; CHUNK_BLOCKS * 4 * BLOCK_WEIGHTS];
            let mut read = 0u64;
            let mut blocks = 0usize;
            loop {
                let n = file.read_chunk(&mut buf)?;
                if n == 0 {
                    break;
                }
                read += n as u64;
                if read > file.len || n % (4 * BLOCK_WEIGHTS) != 0 {
                    return Err(file.changed(read).into());
                }
                let values: Vec<f32> = buf[..n]
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                // Indices in sentences count from the start of the file, not of this piece.
                let first = blocks * BLOCK_WEIGHTS;
                let bytes = quantize_rows(&values).map_err(|e| {
                    about(
                        &input,
                        match e {
                            FormatError::NonFinite { index, value } => FormatError::NonFinite {
                                index: index + first,
                                value,
                            },
                            FormatError::ScaleOverflow { block, amax } => {
                                FormatError::ScaleOverflow {
                                    block: block + blocks,
                                    amax,
                                }
                            }
                            other => other,
                        },
                    )
                })?;
                blocks += n / (4 * BLOCK_WEIGHTS);
                out.write_all(&bytes)?;
            }
            if read != file.len {
                return Err(file.changed(read).into());
            }
            out.finish()?;
            eprintln!("{blocks} blocks written to {}", shown_path(&output));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_gguf(command: GgufCommand) -> Result<ExitCode, CliError> {
    match command {
        GgufCommand::Ls { file } => {
            // Only the header, metadata and tensor table are read, however large the file.
            let (bytes, len) = read_prefix(&file, GGUF_HEADER)?;
            let gguf = GgufFile::parse_prefix(&bytes, len).map_err(|e| about(&file, e))?;
            println!("{}", gguf.summary());
            for line in gguf.describe_tensors() {
                println!("{line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
