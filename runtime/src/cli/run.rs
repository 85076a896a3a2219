//! `mmqgen run`, the main job: everything the machine allows, and a plain statement of what it skipped.
//!
//! - With NVRTC: compile every variant the embedded config selects, for each architecture it targets, and hold
//!   it to the rules of shipped variants (no spills, shared memory as the layout says).
//! - Always: the CPU reference of each numerics mode on a small shape, with its accuracy against f64.
//! - With a GPU: parity of the selected variants on the default shapes (each case in a fresh process), then
//!   their timing against cuBLAS (`mmqgen bench` on the same shapes).

use super::parity::{ChildCommand, ParityArgs};
use super::CliError;
use crate::codegen::{canonical_name, Arch, NumericsMode, VariantDescription};
use crate::compile::cache::CacheOutcome;
use crate::formats::input::shown_path;
use crate::gpu::weights::Layout;
use crate::select::Config;
use clap::Args;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct RunArgs {
    /// The selection config (default: the embedded one).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
}

/// The shapes the main job proves and times: prefill projections of a Llama-3-8B layer and a few decode sizes.
pub const DEFAULT_SHAPES: [(usize, usize, usize); 6] = [
    (4096, 512, 4096),
    (4096, 512, 14336),
    (14336, 512, 4096),
    (4096, 2048, 4096),
    (4096, 8, 4096),
    (4096, 128, 4096),
];

/// The variants the config picks for the default shapes in any of `layouts`, per architecture, without repeats.
fn selected_in(config: &Config, arch: Arch, layouts: &[Layout]) -> Vec<VariantDescription> {
    let mut chosen: Vec<VariantDescription> = Vec::new();
    for &layout in layouts {
        for (m, n, k) in DEFAULT_SHAPES {
            if let Ok(selection) = config.select(arch, layout, m as u64, n as u64, k as u64) {
                super::add_once(&mut chosen, selection.variant);
            }
        }
    }
    chosen
}

/// The variants the config picks for the default shapes in either layout (rules may name one).
fn selected(config: &Config, arch: Arch) -> Vec<VariantDescription> {
    selected_in(config, arch, &Layout::ALL)
}

pub fn run(args: &RunArgs, all: &[VariantDescription]) -> Result<ExitCode, CliError> {
    let config = super::config::load(args.config.as_deref(), all)?.0;
    let mut skipped: Vec<String> = Vec::new();
    let mut failures: Vec<String> = Vec::new();

    // What registering a matrix for the selection costs (docs/DESIGN.md D12), at a Llama-3-8B down projection's shape.
    println!("== Footprint of the selected variants (m = 4096, K = 14336), in the layout they are picked for");
    for arch in Arch::ALL {
        for layout in Layout::ALL {
            for variant in selected_in(&config, arch, &[layout]) {
                println!(
                    "{arch} {}",
                    crate::cli::config::footprint_line(&variant, layout, 4096, 14336)
                );
            }
        }
    }

    // What error their modes add on the activation side (docs/DESIGN.md D13).
    let mut modes: Vec<NumericsMode> = Vec::new();
    for arch in Arch::ALL {
        for variant in selected(&config, arch) {
            if !modes.contains(&variant.mode) {
                modes.push(variant.mode);
            }
        }
    }
    for mode in modes {
        println!("{}", crate::cli::config::accuracy_line(mode));
    }

    println!("\n== 1. Compile the selected variants with NVRTC");
    if crate::compile::nvrtc_available() {
        let version = crate::compile::nvrtc_version()?;
        // Each compile in a child process: a crash of NVRTC fails that variant, not the run.
        let compiler = super::compiler()?;
        // Through the on-disk cubin cache: a second run finds every cubin there and skips NVRTC. Without a
        // usable cache folder the cubins are compiled all the same, with one warning.
        let cache = match crate::compile::cache::CubinCache::from_env() {
            Ok(cache) => {
                println!(
                    "NVRTC {}.{}, cubin cache {}",
                    version.0,
                    version.1,
                    shown_path(cache.dir())
                );
                Some(cache)
            }
            Err(e) => {
                super::warn(&format!("{e}; compiling without a cubin cache"));
                println!("NVRTC {}.{}, no cubin cache", version.0, version.1);
                None
            }
        };
        let mut warned = false;
        for arch in Arch::ALL {
            for variant in selected(&config, arch) {
                match crate::compile::inspect::inspect_with(
                    &variant,
                    arch,
                    false,
                    cache.as_ref(),
                    &compiler,
                ) {
                    Ok(report) => {
                        let worst = report
                            .entries
                            .iter()
                            .map(|e| e.resources.registers)
                            .max()
                            .unwrap_or(0);
                        let cached = match &report.cache {
                            Some(CacheOutcome::Hit) => "cache hit, NVRTC skipped".to_string(),
                            Some(CacheOutcome::Miss) => "cache miss, compiled".to_string(),
                            Some(CacheOutcome::Rebuilt { reason }) => {
                                format!("cache entry rebuilt ({reason})")
                            }
                            Some(CacheOutcome::NotStored { reason }) => {
                                if !warned {
                                    warned = true;
                                    super::warn(&format!(
                                        "the cubin cache cannot keep what is compiled, so every run compiles \
                                         again: {reason}"
                                    ));
                                }
                                "compiled, not cached".to_string()
                            }
                            None => "no cache".to_string(),
                        };
                        println!(
                            "{arch} {:<24} {:>3} registers, {:>6} bytes of shared memory, {cached}: {}",
                            variant.name,
                            worst,
                            report.rendered.shared_bytes,
                            canonical_name(&variant)
                        );
                        failures.extend(report.problems());
                    }
                    // The cubin is fine; only its figures are missing (`mmqgen check` gates on them).
                    Err(e @ crate::compile::inspect::InspectError::NoPtxasReport { .. }) => {
                        println!("{arch} {:<24} compiled; {e}", variant.name);
                        skipped.push(format!("ptxas figures of {} on {arch}: {e}", variant.name));
                    }
                    Err(e) => failures.push(format!("{} on {arch}: {e}", variant.name)),
                }
            }
        }
    } else {
        skipped.push(
            "compiling with NVRTC: libnvrtc.so.13 is not on the loader path (`source .ci/env.sh` after \
             `bash .ci/run` installed it)"
                .into(),
        );
        println!("skipped: NVRTC not found");
    }

    println!("\n== 2. CPU reference, m = 256, n = 16, K = 2048, seed 7");
    let (m, n, k) = (256, 16, 2048);
    let raw = crate::reference::weights_q6k(m, k, 7);
    let x = crate::reference::activations(n, k, 8, 4);
    let f64_reference = crate::reference::f64_reference(&raw, m, n, k, &x);
    for mode in NumericsMode::ALL {
        let start = Instant::now();
        let acts = crate::reference::quantize_activations_for(&x, n, k, mode);
        let out = crate::reference::reference_matmul(&raw, m, n, k, &acts, mode);
        let nmse = crate::reference::nmse(&out, &f64_reference);
        println!(
            "{:<10} digest {}  NMSE vs f64 {nmse:.2e} ({})  {:.1} ms",
            mode.keyword(),
            crate::reference::digest(&out),
            if nmse <= crate::reference::NMSE_GATE {
                "within the 5e-4 gate"
            } else {
                "OVER the 5e-4 gate"
            },
            start.elapsed().as_secs_f64() * 1e3
        );
        if nmse > crate::reference::NMSE_GATE {
            failures.push(format!("{mode} NMSE {nmse:.2e} is over the gate"));
        }
    }

    println!("\n== 3. GPU: parity and timing of the selected variants");
    match crate::gpu::device::Gpu::open(0) {
        Err(e) => {
            skipped.push(format!("parity and timing on a GPU: {e}"));
            println!("skipped: {e}");
        }
        Ok(gpu) => {
            let (major, minor) = gpu.info().driver_version;
            println!(
                "{} ({}), CUDA driver API {major}.{minor}",
                gpu.info().name,
                gpu.arch()
            );
            let arch = crate::select::arch_from_str(gpu.arch()).ok_or_else(|| {
                crate::codegen::arch::unknown_gpu_sentence(gpu.info().compute_capability)
            })?;
            drop(gpu);
            let variants = selected(&config, arch);
            let mut words = vec!["parity".to_string()];
            for v in &variants {
                words.extend(["--variant".to_string(), v.name.to_string()]);
            }
            for (m, n, k) in DEFAULT_SHAPES {
                words.extend(["--shape".to_string(), format!("{m},{n},{k}")]);
            }
            let parity = super::parse_args::<ParityArgs>(words)?;
            let child = ChildCommand::current_exe(vec!["parity".into()])?;
            if super::parity::run(&parity, all, &child)? != ExitCode::SUCCESS {
                failures.push("parity failed for a selected variant (table above)".into());
            } else {
                // Timing only what proved bit-exact, against cuBLAS on the same shapes.
                let mut words = vec!["bench".to_string(), "--repeats".into(), "10".into()];
                for v in &variants {
                    words.extend(["--variant".to_string(), v.name.to_string()]);
                }
                for (m, n, k) in DEFAULT_SHAPES {
                    words.extend(["--shape".to_string(), format!("{m},{n},{k}")]);
                }
                let bench = super::parse_args::<super::bench::BenchArgs>(words)?;
                if super::bench::run(&bench, all)? != ExitCode::SUCCESS {
                    failures.push("timing failed for a selected variant (report above)".into());
                }
            }
        }
    }

    println!("\n== Summary");
    for s in &skipped {
        println!("skipped: {s}");
    }
    for f in &failures {
        println!("FAILED: {f}");
    }
    if failures.is_empty() {
        println!(
            "mmqgen run: everything this machine allows passed ({} step(s) skipped)",
            skipped.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}
