//! The arguments of `mmqgen parity` and how a parent starts its children.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::check::{GgufTensorRef, GgufWeightsError, Shape};
use crate::gpu::weights::Layout;

/// Which weight layouts to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutChoice {
    Raw,
    Padded,
    Both,
}

impl LayoutChoice {
    pub fn layouts(self) -> Vec<Layout> {
        match self {
            LayoutChoice::Raw => vec![Layout::Raw],
            LayoutChoice::Padded => vec![Layout::Padded],
            LayoutChoice::Both => Layout::ALL.to_vec(),
        }
    }
}

pub(super) fn parse_shape(s: &str) -> Result<Shape, String> {
    s.parse()
}

/// Tokens (n) of a `--gguf` run when `--tokens` is not given.
pub const DEFAULT_GGUF_TOKENS: usize = 77;

pub(super) fn parse_tokens(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("n = 0: a matmul needs at least one token".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a whole number of tokens")),
    }
}

/// `mmqgen parity [--variant NAME]... [--shape m,n,k]... [--layout raw|padded|both] [--seed N] [--json FILE]`,
/// `mmqgen parity [--variant NAME]... --gguf FILE --tensor NAME [--tokens N] [--layout ...] [--seed N] ...`,
/// or `mmqgen parity --mutants [--seed N] [--json FILE]`
#[derive(Args, Clone, Debug)]
pub struct ParityArgs {
    // The field is `variant`, not `variants`: clap keys arguments by field name, and the `mmqgen` command has a
    // global `--variants FILE` (a clash panics when the arguments are read).
    /// A variant to check, by declared or canonical name (repeat for several; default: every variant known).
    #[arg(long = "variant", value_name = "NAME")]
    pub variant: Vec<String>,

    /// A shape m,n,k (weight rows, tokens, K) to check (repeat for several; default: 1000,77,2816, 64,1,256
    /// and 4097,513,4096, the last one sampled).
    #[arg(long = "shape", value_name = "M,N,K", value_parser = parse_shape)]
    pub shapes: Vec<Shape>,

    /// Take the weights from a q6_K tensor of this GGUF file (with --tensor) instead of seeded random blocks:
    /// m and K are the tensor's, n is --tokens; the activations stay seeded. Not with --shape.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tensor",
        conflicts_with = "shapes"
    )]
    pub gguf: Option<PathBuf>,

    /// The q6_K tensor of --gguf to check on, by name (`mmqgen gguf ls FILE` lists them).
    #[arg(long, value_name = "NAME", requires = "gguf")]
    pub tensor: Option<String>,

    /// Tokens (n) of a --gguf run (default 77).
    #[arg(long, value_name = "N", requires = "gguf", value_parser = parse_tokens)]
    pub tokens: Option<usize>,

    /// Weight layouts to check.
    #[arg(long, value_enum, default_value_t = LayoutChoice::Both)]
    pub layout: LayoutChoice,

    /// Seed of the weights, the activations and the sampled outputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Also write every row as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub gpu: usize,

    /// Seconds a case may take before its process is killed and the case fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub timeout: u64,

    /// Run every deliberate mutant (a bug planted in a variant's generated source, each on its own shape and
    /// layout) and report whether parity catches it; fails when any mutant is missed.
    #[arg(long, conflicts_with_all = ["variant", "shapes", "layout", "child", "gguf"])]
    pub mutants: bool,

    /// Internal: run one case in this process (VARIANT by declared or canonical name) and print its row.
    #[arg(long, value_name = "VARIANT", hide = true)]
    pub child: Option<String>,

    /// Internal (child): file of f32 outputs of a variant already proven on these inputs.
    #[arg(long, value_name = "FILE", hide = true, requires = "child")]
    pub proven: Option<PathBuf>,

    /// Internal (child): the name of the variant that wrote `--proven`.
    #[arg(long, value_name = "NAME", hide = true, requires = "proven")]
    pub proven_variant: Option<String>,

    /// Internal (child): write this case's f32 outputs to FILE.
    #[arg(long, value_name = "FILE", hide = true, requires = "child")]
    pub save_output: Option<PathBuf>,

    /// Internal (child): folder of compiled cubins shared by the cases of one run.
    #[arg(long, value_name = "DIR", hide = true, requires = "child")]
    pub cubin_cache: Option<PathBuf>,

    /// Internal (child): plant this mutant (runtime/src/check/mutants.rs) in the variant's source before compiling.
    #[arg(long, value_name = "NAME", hide = true, requires = "child")]
    pub mutant: Option<String>,
}

/// Why `mmqgen parity` could not run at all (a bad case is a row, not an error). Each displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum ParityCliError {
    #[error("no variant named '{name}': known variants are {known}")]
    UnknownVariant { name: String, known: String },
    #[error("there is no variant to check: the catalogue is empty")]
    EmptyCatalogue,
    #[error("{0}")]
    Usage(String),
    #[error(
        "could not find this program's own executable to run each case in a fresh process: {0}"
    )]
    CurrentExe(#[source] std::io::Error),
    #[error(transparent)]
    Weights(#[from] GgufWeightsError),
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// How the parent starts a child: the program and the arguments that reach the parity subcommand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildCommand {
    pub program: PathBuf,
    /// Everything before the child's own arguments: global options and the subcommand (`["parity"]`).
    pub prefix: Vec<OsString>,
}

impl ParityArgs {
    /// The GGUF tensor of `--gguf FILE --tensor NAME`, if given.
    pub fn gguf_tensor(&self) -> Option<GgufTensorRef> {
        match (&self.gguf, &self.tensor) {
            (Some(path), Some(tensor)) => Some(GgufTensorRef {
                path: path.clone(),
                tensor: tensor.clone(),
            }),
            _ => None,
        }
    }

    /// n of a `--gguf` run.
    pub fn gguf_tokens(&self) -> usize {
        self.tokens.unwrap_or(DEFAULT_GGUF_TOKENS)
    }
}

impl ChildCommand {
    /// This executable with the given prefix (global options the child needs, then the subcommand), e.g.
    /// `["--variants", "extra.toml", "parity"]`.
    pub fn current_exe(prefix: Vec<OsString>) -> Result<ChildCommand, ParityCliError> {
        let program = std::env::current_exe().map_err(ParityCliError::CurrentExe)?;
        Ok(ChildCommand { program, prefix })
    }
}
