//! `mmqgen profile --variant NAME --shape m,n,k`: one kernel launch under Nsight Compute (`ncu`), read as the
//! seed's r41-r43 read it: the throughput plane (L1TEX, L2, DRAM, issue slots) beside the stall plane (long
//! scoreboard, barrier, MIO throttle, no-eligible cycles, achieved occupancy), then the lines of the generated CUDA
//! and of the SASS the stall samples are booked to.
//!
//! The profiler never touches the GPU itself. It runs this binary's parity child (`parity --child NAME --shape
//! m,n,k --layout L`, one case in one process) under `ncu --clock-control none`, with `MMQGEN_LINE_INFO=1` in
//! the child's environment so NVRTC compiles the kernel with line info, and profiles the first launch of the
//! variant's `<canonical>_<layout>` kernel. Pass 1 collects a fixed metric list (`--csv --page raw`: a header
//! row of metric names, a units row, one row per launch); pass 2 (`--section SourceCounters --page source
//! --print-source cuda,sass --csv`) the per-instruction stall samples, each under its CUDA line: the child writes
//! the generated source into a temporary folder named by `MMQGEN_PROFILE_SOURCE_DIR` and compiles it under that
//! path, which the line info records and ncu reads back. Where `ncu` is not on PATH, or cannot read
//! the counters (ERR_NVGPUCTRPERM, a library that does not load), the run fails with one sentence.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Args;
use mmqgen_codegen::{canonical_name, VariantDescription};

use super::parity::{find_variant, LayoutChoice};
use super::CliError;
use crate::check::Shape;
use crate::compile::build::PROFILE_SOURCE_DIR_ENV;
use crate::measure::profile::{
    parse_raw_csv, parse_source_page, render_planes, render_source_page, METRICS,
};

/// The environment variable the compile path reads: `1` compiles with line info (`-lineinfo`).
pub const LINE_INFO_ENV: &str = "MMQGEN_LINE_INFO";

/// Stall-sampled CUDA and SASS lines printed by pass 2 (of each).
const TOP_SOURCE_LINES: usize = 10;

/// `mmqgen profile --variant NAME --shape m,n,k [--layout raw|padded] [--seed N] [--no-source]`
#[derive(Args, Clone, Debug)]
pub struct ProfileArgs {
    /// The variant to profile, by declared or canonical name.
    #[arg(long = "variant", value_name = "NAME")]
    pub variant: String,

    /// The shape m,n,k (weight rows, tokens, K) of the profiled launch.
    #[arg(long = "shape", value_name = "M,N,K", value_parser = |s: &str| s.parse::<Shape>())]
    pub shape: Shape,

    /// The weight layout whose kernel is profiled (`both` is not one kernel).
    #[arg(long, value_enum, default_value_t = LayoutChoice::Padded)]
    pub layout: LayoutChoice,

    /// Seed of the weights and activations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Skip the second ncu pass (CUDA and SASS lines by stall samples).
    #[arg(long)]
    pub no_source: bool,
}

/// Finds `program` in the directories of `path` (a PATH-style list); `None` when no directory holds it.
pub fn find_on_path(program: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// The sentence for an `ncu` that is not on PATH.
pub const NCU_MISSING: &str =
    "ncu (Nsight Compute) is not on PATH: install Nsight Compute (it ships with \
    the CUDA toolkit) or put its folder on PATH to profile a variant";

/// Locates ncu through `lookup` (the real PATH in [`run`], an injected one in tests).
pub fn locate_ncu(lookup: impl Fn(&str) -> Option<PathBuf>) -> Result<PathBuf, CliError> {
    lookup("ncu").ok_or_else(|| NCU_MISSING.into())
}

/// The first line in which ncu says it could not profile (an `==ERROR==` line, or a known counter failure;
/// ERR_NVGPUCTRPERM and LibraryNotLoaded are the usual ones).
pub fn ncu_error(stdout: &str, stderr: &str) -> Option<String> {
    let all = || stderr.lines().chain(stdout.lines()).map(str::trim);
    all()
        // ncu also says `==ERROR== The application returned an error code (1).` when the profiled child exits
        // non-zero (a failed parity case): that is not a profiling failure, the counters may still be there.
        .find(|l| l.starts_with("==ERROR==") && !l.contains("application returned an error code"))
        .or_else(|| {
            all().find(|l| {
                l.contains("ERR_NVGPUCTRPERM")
                    || l.contains("LibraryNotLoaded")
                    || l.contains("does not have permission")
            })
        })
        .map(|l| l.trim_start_matches("==ERROR==").trim().to_string())
}

/// The ncu command line of one pass: `ncu <options> <exe> <prefix> --child NAME --shape m,n,k --layout L`.
fn ncu_command(
    ncu: &Path,
    options: &[&str],
    kernel: &str,
    child_prefix: &[OsString],
    args: &ProfileArgs,
    layout: &str,
) -> Result<Command, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("could not find this program's own executable to profile: {e}"))?;
    let mut cmd = Command::new(ncu);
    cmd.args([
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--kernel-name",
        &format!("regex:^{kernel}$"),
        "--launch-count",
        "1",
    ])
    .args(options)
    .arg(exe)
    .args(child_prefix)
    .arg("--child")
    .arg(&args.variant)
    .args(["--shape", &args.shape.to_string(), "--layout", layout])
    .args(["--seed", &args.seed.to_string()])
    .env(LINE_INFO_ENV, "1");
    Ok(cmd)
}

/// Pass 2's options: the source page with `print` (`sass`, or `cuda,sass` for the CUDA lines beside it), as CSV.
fn source_page(print: &str) -> [&str; 7] {
    [
        "--section",
        "SourceCounters",
        "--page",
        "source",
        "--print-source",
        print,
        "--csv",
    ]
}

/// Runs one ncu pass; ncu's refusals become one sentence.
fn run_pass(mut cmd: Command) -> Result<String, CliError> {
    let out = cmd
        .output()
        .map_err(|e| format!("could not start ncu (Nsight Compute): {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if let Some(message) = ncu_error(&stdout, &stderr) {
        return Err(
            format!("ncu could not profile the kernel (reading counters): {message}").into(),
        );
    }
    Ok(stdout)
}

/// Runs `mmqgen profile` with `catalogue` (the binary's variants, plus any `--variants FILE`); ncu runs this
/// binary's `parity` child with `child_prefix` (the `--variants` files, then `parity`).
pub fn run(
    args: &ProfileArgs,
    catalogue: &[VariantDescription],
    child_prefix: &[OsString],
) -> Result<ExitCode, CliError> {
    run_with_lookup(args, catalogue, child_prefix, |program| {
        find_on_path(program, std::env::var_os("PATH").as_deref())
    })
}

/// [`run`] with an explicit way of finding ncu.
pub fn run_with_lookup(
    args: &ProfileArgs,
    catalogue: &[VariantDescription],
    child_prefix: &[OsString],
    lookup: impl Fn(&str) -> Option<PathBuf>,
) -> Result<ExitCode, CliError> {
    let desc = find_variant(catalogue, &args.variant)?;
    let layout = match args.layout {
        LayoutChoice::Raw => "raw",
        LayoutChoice::Padded => "padded",
        LayoutChoice::Both => {
            return Err("profile takes one layout: --layout raw or --layout padded".into())
        }
    };
    let ncu = locate_ncu(lookup)?;
    let kernel = format!("{}_{layout}", canonical_name(desc));

    // One ncu pass over the child's launch of the kernel, with these options (and the folder the child writes its
    // source to, for the source page's CUDA lines).
    let pass = |options: &[&str], source_dir: Option<&Path>| -> Result<String, CliError> {
        let mut cmd = ncu_command(&ncu, options, &kernel, child_prefix, args, layout)?;
        if let Some(dir) = source_dir {
            cmd.env(PROFILE_SOURCE_DIR_ENV, dir);
        }
        run_pass(cmd)
    };
    let stdout = pass(
        &["--csv", "--page", "raw", "--metrics", &METRICS.join(",")],
        None,
    )?;
    let Some(kernel_metrics) = parse_raw_csv(&stdout).into_iter().next() else {
        return Err(format!(
            "ncu profiled no launch of {kernel} (variant {}, shape {}): the case may have been skipped on this \
             GPU; run `mmqgen parity --variant {} --shape {} --layout {layout}` to see why",
            args.variant, args.shape, args.variant, args.shape
        )
        .into());
    };
    println!(
        "mmqgen profile: {} ({}), shape {}, layout {layout}, ncu --clock-control none, line info on",
        args.variant,
        canonical_name(desc),
        args.shape
    );
    print!("{}", render_planes(&kernel_metrics));

    if !args.no_source {
        // The child writes the generated source into a folder of this run's, under the name its line info
        // records, so that ncu can print the CUDA lines beside the SASS; where that page gives no SASS lines
        // (the folder could not be made, or ncu did not find the file), a second pass asks for the SASS alone.
        let source_dir =
            std::env::temp_dir().join(format!("mmqgen-profile-source-{}", std::process::id()));
        let mut with_cuda = None;
        if std::fs::create_dir_all(&source_dir).is_ok() {
            let result = pass(&source_page("cuda,sass"), Some(&source_dir));
            let _ = std::fs::remove_dir_all(&source_dir);
            with_cuda =
                parse_source_page(&result?, TOP_SOURCE_LINES).filter(|p| !p.sass.is_empty());
        }
        let (page, stdout) = match with_cuda {
            Some(page) => (Some(page), String::new()),
            None => {
                let stdout = pass(&source_page("sass"), None)?;
                (parse_source_page(&stdout, TOP_SOURCE_LINES), stdout)
            }
        };
        println!();
        match page {
            Some(page) if !page.sass.is_empty() => print!("{}", render_source_page(&page)),
            _ => {
                // When the page does not parse, relay ncu's own lines (less its `==PROF==` chatter) rather than
                // guess.
                println!("ncu's source page did not parse as expected; its lines follow:");
                for line in stdout
                    .lines()
                    .filter(|l| !l.starts_with("==PROF=="))
                    .take(60)
                {
                    println!("{line}");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::profile::RAW_SAMPLE;

    #[test]
    fn missing_ncu_is_one_sentence() {
        let dir = std::env::temp_dir().join(format!("mmqgen-profile-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = std::env::join_paths([&dir]).unwrap();
        assert_eq!(find_on_path("ncu", Some(&path)), None);
        let err = locate_ncu(|p| find_on_path(p, Some(&path))).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("ncu (Nsight Compute) is not on PATH: "));
        assert!(!text.contains('\n'));
        assert_eq!(find_on_path("ncu", None), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn finds_a_program_on_path() {
        let dir = std::env::temp_dir().join(format!("mmqgen-profile-full-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ncu"), "").unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent-mmqgen"), &dir]).unwrap();
        assert_eq!(find_on_path("ncu", Some(&path)), Some(dir.join("ncu")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn relays_ncu_counter_errors() {
        let stderr =
            "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have \
            permission to access NVIDIA GPU Performance Counters on the target device 0.\n";
        let message = ncu_error("", stderr).unwrap();
        assert!(message.starts_with("ERR_NVGPUCTRPERM - The user does not have permission"));
        let lib = ncu_error("Failed to load library: LibraryNotLoaded (libcuda.so)", "").unwrap();
        assert!(lib.contains("LibraryNotLoaded"));
        assert_eq!(ncu_error(RAW_SAMPLE, ""), None);
        let child_failed = "==ERROR== The application returned an error code (1).\n";
        assert_eq!(ncu_error(RAW_SAMPLE, child_failed), None);
    }
}
