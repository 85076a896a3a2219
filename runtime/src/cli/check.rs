//! `mmqgen check`: every variant through NVRTC for each of its architectures, with the ptxas report and a
//! SASS summary, failing on what shipped variants may not do.

use super::{CliError, Loaded};
use crate::codegen::{Arch, VariantDescription};
use crate::compile::inspect::inspect_with;
use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub struct CheckArgs {
    /// Only this architecture (sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, sm_120 or sm_121).
    #[arg(long)]
    arch: Option<String>,
    /// Only these variants (declared or canonical names).
    #[arg(long)]
    variant: Vec<String>,
    /// Skip the SASS summary even where cuobjdump is installed.
    #[arg(long)]
    no_sass: bool,
    /// Also write each module's whole SASS (`cuobjdump --dump-sass`) to DIR/<variant>.<arch>.sass, to diff
    /// between two descriptions or two versions of the templates.
    #[arg(long, value_name = "DIR", conflicts_with = "no_sass")]
    sass_dir: Option<std::path::PathBuf>,
}

fn parse_arch(text: &str) -> Result<Arch, CliError> {
    Arch::from_keyword(text).ok_or_else(|| {
        format!(
            "unknown architecture '{text}': mmqgen targets {}",
            crate::codegen::arch::supported_list()
        )
        .into()
    })
}

pub fn run(args: &CheckArgs, loaded: &Loaded) -> Result<ExitCode, CliError> {
    let only_arch = args.arch.as_deref().map(parse_arch).transpose()?;
    let chosen: Vec<&VariantDescription> = if args.variant.is_empty() {
        loaded.all.iter().collect()
    } else {
        args.variant
            .iter()
            .map(|n| loaded.find(n))
            .collect::<Result<_, _>>()?
    };
    if let Some(dir) = &args.sass_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("could not make the SASS folder {}: {e}", dir.display()))?;
    }
    // Each compile in a child process: a crash of NVRTC fails that variant, not the check.
    let compiler = super::compiler()?;
    let mut failures = Vec::new();
    println!(
        "{:<20} {:<6} {:<7} {:>5} {:>7} {:>6} {:>6} | {:<44} {:>6} {:>5} {:>5} {:>6} {:>6} {:>5} {:>5} {:>4}",
        "variant",
        "arch",
        "layout",
        "regs",
        "smem",
        "stack",
        "spill",
        "global loads u8/u16/u32/u64/u128",
        "ldgsts",
        "imma16",
        "imma32",
        "igmma",
        "hgmma",
        "dp4a",
        "i2f",
        "bar"
    );
    for desc in chosen {
        for arch in desc
            .archs
            .iter()
            .filter(|a| only_arch.is_none_or(|o| o == *a))
        {
            let report = match inspect_with(desc, arch, !args.no_sass, None, &compiler) {
                Ok(report) => report,
                Err(error) => {
                    println!("{:<20} {:<6} FAILED: {error}", desc.name, arch);
                    failures.push(format!("{} on {arch}: {error}", desc.name));
                    continue;
                }
            };
            for (entry, layout) in report
                .entries
                .iter()
                .zip(crate::compile::inspect::ENTRY_LAYOUTS)
            {
                let r = &entry.resources;
                let sass = match &entry.sass {
                    Some(s) => format!(
                        "{:<44} {:>6} {:>5} {:>5} {:>6} {:>6} {:>5} {:>5} {:>4}",
                        format!(
                            "{}/{}/{}/{}/{}",
                            s.ldg.b8, s.ldg.b16, s.ldg.b32, s.ldg.b64, s.ldg.b128
                        ),
                        s.ldgsts,
                        s.imma_16816_s8,
                        s.imma_16832_s8,
                        s.igmma_s8,
                        s.hgmma_f32,
                        s.idp4a,
                        s.int_to_float,
                        s.bar
                    ),
                    None => "(no cuobjdump: SASS summary skipped)".to_string(),
                };
                println!(
                    "{:<20} {:<6} {:<7} {:>5} {:>7} {:>6} {:>6} | {sass}",
                    report.name,
                    arch,
                    layout,
                    r.registers,
                    report.rendered.shared_bytes,
                    r.stack_frame_bytes,
                    r.spill_stores_bytes + r.spill_loads_bytes
                );
            }
            if let Some(dir) = &args.sass_dir {
                match &report.sass_dump {
                    Some(dump) => {
                        let path = dir.join(format!("{}.{arch}.sass", report.name));
                        std::fs::write(&path, dump)
                            .map_err(|e| format!("could not write {}: {e}", path.display()))?;
                    }
                    None => failures.push(format!(
                        "{} on {arch}: no SASS to write to {} (cuobjdump is not installed)",
                        report.name,
                        dir.display()
                    )),
                }
            }
            failures.extend(report.problems());
        }
    }
    if failures.is_empty() {
        println!("check: every variant compiled cleanly");
        Ok(ExitCode::SUCCESS)
    } else {
        for f in &failures {
            eprintln!("mmqgen check: {f}");
        }
        Ok(ExitCode::FAILURE)
    }
}
