//! `mmqgen q6k ...` and `mmqgen gguf ...`: the format tools, thin wrappers over `mmqgen_formats`.

use super::CliError;
use crate::formats::{dequantize_rows, quantize_rows, GgufFile};
use clap::Subcommand;
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

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()).into())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()).into())
}

pub fn run_q6k(command: Q6kCommand) -> Result<ExitCode, CliError> {
    match command {
        Q6kCommand::Dequantize { input, output } => {
            let values =
                dequantize_rows(&read(&input)?).map_err(|e| format!("{}: {e}", input.display()))?;
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            write(&output, &bytes)?;
            eprintln!("{} weights written to {}", values.len(), output.display());
        }
        Q6kCommand::Quantize { input, output } => {
            let bytes = read(&input)?;
            if bytes.len() % 4 != 0 {
                return Err(format!(
                    "{} is {} bytes, not a whole number of little-endian f32 values (4 bytes each)",
                    input.display(),
                    bytes.len()
                )
                .into());
            }
            let values: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            let blocks = quantize_rows(&values).map_err(|e| format!("{}: {e}", input.display()))?;
            write(&output, &blocks)?;
            eprintln!(
                "{} blocks written to {}",
                blocks.len() / 210,
                output.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_gguf(command: GgufCommand) -> Result<ExitCode, CliError> {
    match command {
        GgufCommand::Ls { file } => {
            let bytes = read(&file)?;
            let gguf = GgufFile::parse(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
            println!("{}", gguf.summary());
            for line in gguf.describe_tensors() {
                println!("{line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
