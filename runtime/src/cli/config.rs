//! `mmqgen config check [FILE]` and `mmqgen explain`: the selection config ([`crate::select`]) made
//! readable, so that a person can see why a shape gets its variant before trusting a tuned file.

use super::layout_arg::LayoutArg;
use super::CliError;
use crate::codegen::VariantDescription;
use crate::formats::input::{read_text_capped, shown, shown_path, CONFIG_FILE};
use crate::gpu::weights::Layout;
use crate::select::{arch_from_str, Config};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Report token-count gaps, dead rules, overlaps and numerics-mode mixes of a selection config (default:
    /// the embedded one); fails on gaps and dead rules. The verdict and the problems come first; the rules and
    /// the informational findings (overlaps, numerics mixes) with --verbose.
    Check {
        /// The config file (TOML, `[[rule]]` tables); the embedded default when left out.
        file: Option<PathBuf>,
        /// Also list every rule and every informational finding.
        #[arg(long, short)]
        verbose: bool,
    },
}

#[derive(Args)]
pub struct ExplainArgs {
    /// The GPU architecture (sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, sm_120 or sm_121).
    #[arg(long)]
    arch: String,
    /// Weight rows.
    #[arg(long)]
    m: u64,
    /// Tokens.
    #[arg(long)]
    n: u64,
    /// The reduction length K.
    #[arg(long)]
    k: u64,
    /// The layout the weights are registered in (rules may name one).
    #[arg(long, value_enum, default_value_t = LayoutArg::Padded)]
    layout: LayoutArg,
    /// The device address raw weights start at (0x-prefixed hex or decimal), as the library picks for them: where
    /// it is not 16-byte aligned (a view into a buffer), the rules whose variant reads raw blocks by tensor copies
    /// are passed over. Only with --layout raw.
    #[arg(long)]
    address: Option<String>,
    /// The selection config (default: the embedded one).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Also give every other rule's verdict (why it did not take the shape).
    #[arg(long)]
    all: bool,
}

/// Reads and parses `file`, or the embedded default; the string names the source for messages. Every command
/// that takes a config file reads it here: a regular file within [`CONFIG_FILE`]'s cap, or one sentence.
pub(crate) fn load(
    file: Option<&Path>,
    all: &[VariantDescription],
) -> Result<(Config, String), CliError> {
    match file {
        None => {
            let config =
                Config::embedded(all).map_err(|e| format!("the embedded default config: {e}"))?;
            Ok((config, "the embedded default config".to_string()))
        }
        Some(path) => {
            let text = read_text_capped(path, CONFIG_FILE)?;
            let config =
                Config::parse(&text, all).map_err(|e| format!("{}: {e}", shown_path(path)))?;
            Ok((config, shown_path(path)))
        }
    }
}

/// `mmqgen config ...`; `all` is the catalogue plus `--variants` extras.
pub fn run_config(
    command: &ConfigCommand,
    all: &[VariantDescription],
) -> Result<ExitCode, CliError> {
    match command {
        ConfigCommand::Check { file, verbose } => {
            let (config, source) = load(file.as_deref(), all)?;
            let findings = config.check();
            let (problems, notes): (Vec<_>, Vec<_>) = findings.iter().partition(|f| f.is_problem());
            // The answer first: the verdict, then what is wrong; what is only worth knowing comes on request.
            if problems.is_empty() {
                println!(
                    "{source}: {} rules: ok: no gaps over n = 1..={} on {} and no dead rules",
                    config.rules.len(),
                    crate::select::CHECK_MAX_TOKENS,
                    archs()
                );
            } else {
                println!(
                    "{source}: {} rules: {} problem{}:",
                    config.rules.len(),
                    problems.len(),
                    if problems.len() == 1 { "" } else { "s" }
                );
                for finding in &problems {
                    println!("  {finding}");
                }
            }
            if *verbose {
                println!("rules:");
                for rule in &config.rules {
                    println!("  {}: {}", rule.label(), rule.summary());
                }
                for finding in &notes {
                    println!("{finding}");
                }
            } else if !notes.is_empty() {
                println!(
                    "and {} informational finding{} (overlaps, numerics mixes): --verbose lists {} and every rule",
                    notes.len(),
                    if notes.len() == 1 { "" } else { "s" },
                    if notes.len() == 1 { "it" } else { "them" }
                );
            }
            if !problems.is_empty() {
                return Err(format!(
                    "{source} has {} problem{} (gaps over n = 1..={} on {}, dead rules, or K beyond what a variant fits)",
                    problems.len(),
                    if problems.len() == 1 { "" } else { "s" },
                    crate::select::CHECK_MAX_TOKENS,
                    archs()
                )
                .into());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Every architecture mmqgen targets, for sentences: `sm_75, sm_80, ... and sm_121`.
fn archs() -> String {
    crate::codegen::arch::supported_list()
}

/// `mmqgen explain`: the chosen variant (declared and canonical name), the rule, and every rule's verdict.
pub fn run_explain(args: &ExplainArgs, all: &[VariantDescription]) -> Result<ExitCode, CliError> {
    let arch = arch_from_str(&args.arch).ok_or_else(|| {
        format!(
            "unknown architecture '{}': mmqgen targets {}",
            shown(&args.arch),
            crate::codegen::arch::supported_list()
        )
    })?;
    // The shape check every command shares: a shape no kernel can run has no variant to explain.
    crate::check::Shape::checked(args.m, args.n, args.k).map_err(|e| {
        format!(
            "the shape m = {}, n = {}, k = {} is not valid: {e}",
            args.m, args.n, args.k
        )
    })?;
    let layout: Layout = args.layout.into();
    let address = match (&args.address, layout) {
        (None, _) => None,
        (Some(text), Layout::Raw) => Some(parse_address(text)?),
        (Some(_), Layout::Padded) => return Err(
            "--address applies to raw weights, which the library reads where an engine put them: \
                        give --layout raw with it (padded weights are mmqgen's own aligned copy)"
                .into(),
        ),
    };
    let (config, source) = load(args.config.as_deref(), all)?;
    println!("config: {source}");
    let explanation = match address {
        Some(address) => config.explain_raw_at(arch, address, args.m, args.n, args.k),
        None => config.explain(arch, layout, args.m, args.n, args.k),
    };
    if args.all {
        print!("{explanation}");
    } else {
        print!("{}", explanation.winner());
    }
    let chosen = match address {
        Some(address) => config.select_raw_at(arch, address, args.m, args.n, args.k),
        None => config.select(arch, layout, args.m, args.n, args.k),
    };
    let Ok(chosen) = chosen else {
        // One sentence, not every rule's summary (a large config's would fill the screen): --all has them.
        return Err(format!(
            "no rule of {source} matches {arch} with {layout} weights, m = {}, n = {}, k = {}{}",
            args.m,
            args.n,
            args.k,
            if args.all {
                " (each rule's reason is above)"
            } else {
                "; --all gives each rule's reason"
            }
        )
        .into());
    };
    println!("{}", footprint_line(chosen.variant, layout, args.m, args.k));
    println!("{}", accuracy_line(chosen.variant.mode));
    Ok(ExitCode::SUCCESS)
}

/// `--address`: 0x-prefixed hex or decimal, or one sentence.
fn parse_address(text: &str) -> Result<u64, CliError> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| {
        format!(
            "--address '{}' is not an address: give a 64-bit device address in hex (0x7f0000000102) or decimal",
            shown(text)
        )
        .into()
    })
}

/// One line on the error the chosen variant's mode adds on the activation side (docs/DESIGN.md D13), measured here by
/// the CPU reference (`default_cap_nmse`).
pub fn accuracy_line(mode: crate::codegen::NumericsMode) -> String {
    let nmse = crate::reference::default_cap_nmse(mode);
    let cap = crate::reference::DEFAULT_ACTIVATION_NMSE_CAP;
    format!(
        "accuracy: mode {mode} adds NMSE {nmse:.1e} on the activation side at 16 outlier channels per 4096 \
         (NUMERICS.md 6; the embedded default's cap is {cap:.1e}: {})",
        if nmse <= cap { "within" } else { "over, an explicit choice only" }
    )
}

/// One line on what the chosen variant costs on the device in `layout` (docs/DESIGN.md D12).
pub fn footprint_line(
    variant: &crate::codegen::VariantDescription,
    layout: Layout,
    m: u64,
    k: u64,
) -> String {
    let (m, k) = (m as usize, k as usize);
    let gguf = crate::gpu::weights::gguf_bytes(m, k);
    let device = crate::gpu::weights::device_footprint([variant], m, k, layout);
    format!(
        "footprint: {} reads {:.1} MiB on the device in the {layout} layout ({:.2}x the GGUF tensor's {:.1} MiB, \
         {:.2} bytes per weight)",
        variant.name,
        device as f64 / 1048576.0,
        device as f64 / gguf.max(1) as f64,
        gguf as f64 / 1048576.0,
        device as f64 / (m * k).max(1) as f64
    )
}
