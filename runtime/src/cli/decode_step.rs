//! `mmqgen bench --decode-step`: the arguments' side of [`crate::measure::bench::decode_step`]. Progress goes to
//! stderr, the markdown block to stdout; `--json FILE` writes one JSON object per token count.

use std::io::Write;
use std::process::ExitCode;

use super::bench::{BenchArgs, JsonFile};
use super::CliError;
use crate::codegen::VariantDescription;
use crate::measure::bench::decode_step::{
    parse_tokens, run_decode_step, DecodeStepConfig, DEFAULT_STEP_TOKENS, LLAMA3_8B_LAYERS,
};
use crate::Mmq;

/// `--tokens 1,8,32`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenList(pub Vec<usize>);

pub fn parse_token_list(s: &str) -> Result<TokenList, String> {
    parse_tokens(s).map(TokenList)
}

/// The decode step the arguments describe.
pub fn config(args: &BenchArgs) -> DecodeStepConfig {
    DecodeStepConfig {
        tokens: args
            .tokens
            .as_ref()
            .map_or(DEFAULT_STEP_TOKENS.to_vec(), |t| t.0.clone()),
        layout: args.layout.into(),
        warmup: args.warmup,
        repeats: args.repeats,
        seed: args.seed,
        layers: LLAMA3_8B_LAYERS,
    }
}

pub fn run(args: &BenchArgs, all: &[VariantDescription]) -> Result<ExitCode, CliError> {
    let cfg = config(args);
    cfg.check()?;
    let (selection, source) = super::config::load(args.config.as_deref(), all)?;
    // Open the JSON file before the run: a path that cannot be written should not cost a whole run.
    let mut json = JsonFile::create(args.json.as_deref())?;
    if cfg!(debug_assertions) {
        eprintln!(
            "decode step: WARNING: this mmqgen is an unoptimized build; generating 6 GB of weights on the CPU takes \
             much longer (GPU times are unaffected): use cargo build --release"
        );
    }
    let mmq = Mmq::with_config(args.gpu, selection)?;
    eprintln!("decode step: {cfg}, picks of {source}");
    let mut stderr = std::io::stderr();
    let report = run_decode_step(&mmq, &source, &cfg, &mut |line: &str| {
        let _ = writeln!(stderr, "{line}");
    })?;
    let mut failed = false;
    if let Some(json) = json.as_mut() {
        failed |= !json.write_lines(&report.json_lines());
    }
    for n in report.notes() {
        eprintln!("mmqgen bench: {n}");
    }
    print!("{}", report.markdown());
    failed |= !report.is_clean();
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::bench::tests::parse;
    use crate::gpu::weights::Layout;

    #[test]
    fn the_decode_step_takes_tokens_a_layout_and_a_config() {
        let a = parse(&["--decode-step"]).unwrap();
        assert!(a.decode_step);
        let c = config(&a);
        assert_eq!(c, DecodeStepConfig::default());
        let a = parse(&[
            "--decode-step",
            "--tokens",
            "1,8,32",
            "--layout",
            "raw",
            "--config",
            "mine.toml",
            "--repeats",
            "10",
        ])
        .unwrap();
        let c = config(&a);
        assert_eq!(
            (c.tokens, c.layout, c.repeats),
            (vec![1, 8, 32], Layout::Raw, 10)
        );
        assert_eq!(a.config.as_deref(), Some(std::path::Path::new("mine.toml")));
    }

    #[test]
    fn bad_decode_step_arguments_are_refused_with_a_sentence() {
        let e = parse(&["--decode-step", "--tokens", "1,eight"]).unwrap_err();
        assert!(e.contains("'eight' is not a token count"), "{e}");
        let e = parse(&["--decode-step", "--tokens", "0"]).unwrap_err();
        assert!(e.contains("1 to 256"), "{e}");
        assert!(
            parse(&["--tokens", "8"]).is_err(),
            "--tokens needs --decode-step"
        );
        for other in [
            &["--shape", "4096,1,4096"][..],
            &["--prefill"],
            &["--picks"],
            &["--variant", "r41"],
            &["--ab", "r41", "r56"],
        ] {
            let mut argv = vec!["--decode-step"];
            argv.extend_from_slice(other);
            assert!(parse(&argv).is_err(), "{argv:?}");
        }
        assert!(
            parse(&["--config", "mine.toml"]).is_err(),
            "--config needs --picks or --decode-step"
        );
        assert!(parse(&["--picks", "--config", "mine.toml"]).is_ok());
    }
}
