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

fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, CliError> {
    std::fs::File::create(path)
        .map(std::io::BufWriter::new)
        .map_err(|e| format!("cannot write {}: {e}", shown_path(path)).into())
}

fn write_all(out: &mut impl Write, path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    out.write_all(bytes)
        .map_err(|e| format!("cannot write {}: {e}", shown_path(path)).into())
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
            let mut out = create(&output)?;
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
                write_all(&mut out, &output, &bytes)?;
            }
            if read != file.len {
                return Err(file.changed(read).into());
            }
            out.flush()
                .map_err(|e| format!("cannot write {}: {e}", shown_path(&output)))?;
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
            let mut out = create(&output)?;
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
                write_all(&mut out, &output, &bytes)?;
            }
            if read != file.len {
                return Err(file.changed(read).into());
            }
            out.flush()
                .map_err(|e| format!("cannot write {}: {e}", shown_path(&output)))?;
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
