//! Every variant the embedded default (and the embedded batch-invariant selection) names, compiled for the architecture of each rule that names it, through
//! the library's own compile path ([`mmqgen::compile::compile_variant`], what `Mmq` calls on first use): a pick
//! that only the CLI could build (a wgmma module compiled for plain `sm_90`, say) fails here, without a GPU. Each
//! (architecture, variant) is compiled for that exact architecture (`sm_86` code for an sm_86 GPU), with no spill
//! and no stack frame (unless the variant declares `allow_spills`), and its shared memory within the
//! architecture's limit; one line per pair is printed with
//! its registers, spills, shared memory and the SASS instructions that show its engine and copies.
//!
//! The cubins go through a cache under the target folder, shared with `compile_catalogue`, and the compiles run
//! on every core. NVRTC is mandatory in CI (`MMQGEN_REQUIRE_NVRTC=1`); elsewhere the test prints a visible
//! SKIPPED line.

use mmqgen::codegen::{ring_shared_bytes, Engine};
use mmqgen::compile::cache::CubinCache;
use mmqgen::compile::inspect::{inspect, VariantReport};
use mmqgen::compile::SassSummary;
use mmqgen::select::{Config, MAX_SHAPE_DIM};
use mmqgen::testing::visible;
use mmqgen::{Arch, VariantDescription};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One pick: its architecture, its variant and the largest K a rule gives it there (`None`: any).
struct Pick<'a> {
    arch: Arch,
    variant: &'a VariantDescription,
    k_max: Option<u64>,
}

/// The count of SASS opcodes starting with `prefix` (`UTMALDG`, `UBLKCP`), over both entries.
fn opcodes(report: &VariantReport, prefix: &str) -> u32 {
    report
        .entries
        .iter()
        .filter_map(|e| e.sass.as_ref())
        .flat_map(|s| &s.opcodes)
        .filter(|(op, _)| op.starts_with(prefix))
        .map(|(_, n)| n)
        .sum()
}

fn total(report: &VariantReport, count: impl Fn(&SassSummary) -> u32) -> u32 {
    report
        .entries
        .iter()
        .filter_map(|e| e.sass.as_ref())
        .map(count)
        .sum()
}

/// Checks one compiled pick; returns its printed line, or what is wrong with it.
fn check(pick: &Pick, report: &VariantReport) -> Result<String, String> {
    let at = format!("{} on {}", pick.variant.name, pick.arch);
    let mut wrong = report.problems();
    // The exact architecture, arch-specific exactly for the wgmma modules (sm_90 alone has wgmma).
    let suffix = if pick.variant.engine.is_wgmma() {
        "a"
    } else {
        ""
    };
    let target = report.rendered.nvrtc_arch(pick.arch);
    if target != format!("{}{suffix}", pick.arch.keyword()) {
        wrong.push(format!("{at}: compiled for {target}"));
    }
    for entry in &report.entries {
        if entry.resources.arch != target {
            wrong.push(format!(
                "{at}: ptxas compiled {} for {}",
                entry.kernel, entry.resources.arch
            ));
        }
        if let Some(sass) = &entry.sass {
            if sass.arch != pick.arch.keyword() && sass.arch != target {
                wrong.push(format!("{at}: the cubin holds code for {}", sass.arch));
            }
        }
    }
    // Shared memory: the layout's, or a ring's at the longest K its rules give it.
    let limit = pick.arch.max_shared_bytes_per_block();
    let shared = if pick.variant.engine == Engine::StreamRing {
        let k = pick.k_max.unwrap_or(MAX_SHAPE_DIM);
        let bytes = ring_shared_bytes(pick.variant, k);
        if bytes > u64::from(limit) {
            wrong.push(format!(
                "{at}: a ring needs {bytes} bytes of shared memory at K = {k}, more than {limit}"
            ));
        }
        bytes
    } else {
        u64::from(report.rendered.shared_bytes)
    };
    if shared > u64::from(limit) {
        wrong.push(format!(
            "{at}: {shared} bytes of shared memory, more than {limit}"
        ));
    }
    if !wrong.is_empty() {
        return Err(wrong.join("\n"));
    }
    let resources = report.entries.iter().map(|e| &e.resources);
    let registers = resources.clone().map(|r| r.registers).max().unwrap_or(0);
    let spills = resources
        .map(|r| r.spill_stores_bytes + r.spill_loads_bytes + r.stack_frame_bytes)
        .sum::<u32>();
    // A variant declared `allow_spills` (an sm_90 pick measured faster with its spills) says so on its line.
    let allowed = if pick.variant.allow_spills {
        " (allow_spills)"
    } else {
        ""
    };
    let k = match (pick.variant.engine, pick.k_max) {
        (Engine::StreamRing, Some(k)) => format!(" (K <= {k})"),
        _ => String::new(),
    };
    Ok(format!(
        "{:<7} {:<8} {:<31} {:>4} {:>6} {:>7}{k:<13} {:>6} | {:>5} {:>5} {:>5} {:>5} {:>6} {:>5} {:>6} {:>7} {:>5}{allowed}",
        pick.arch.keyword(),
        target,
        pick.variant.name,
        registers,
        spills,
        shared,
        limit,
        total(report, |s| s.imma_16816_s8),
        total(report, |s| s.imma_16832_s8),
        total(report, |s| s.igmma_s8 + s.hgmma_f32),
        total(report, |s| s.idp4a),
        total(report, |s| s.ldgsts),
        total(report, |s| s.ldsm),
        opcodes(report, "UBLKCP"),
        opcodes(report, "UTMALDG"),
        opcodes(report, "SYNCS"),
    ))
}

#[test]
fn every_default_pick_compiles_through_the_library_path() {
    let test = "every_default_pick_compiles_through_the_library_path";
    if !mmqgen::testing::nvrtc_or_skip(test) {
        return;
    }
    let catalogue = mmqgen::catalogue::all();
    let config = Config::embedded(&catalogue).expect("the embedded config parses");
    compile_picks(test, "default", &config, &Arch::ALL);
}

/// The same for the embedded batch-invariant selection (runtime/batch_invariant.toml: int12_per256 at every n on
/// sm_90), whose rings are checked at the longest K its rules give them.
#[test]
fn every_batch_invariant_pick_compiles_through_the_library_path() {
    let test = "every_batch_invariant_pick_compiles_through_the_library_path";
    if !mmqgen::testing::nvrtc_or_skip(test) {
        return;
    }
    let catalogue = mmqgen::catalogue::all();
    let config = Config::batch_invariant(&catalogue).expect("the batch-invariant config parses");
    compile_picks(test, "batch-invariant", &config, &[Arch::Sm90]);
}

/// Compiles and checks every (architecture, variant) that a rule of `config` (`what`: its name in messages) names,
/// and that it names a pick for each of `archs`.
fn compile_picks(test: &str, what: &str, config: &Config, archs: &[Arch]) {
    let with_sass = mmqgen::testing::cuobjdump_or_skip(test);
    let started = Instant::now();
    // One compile per (architecture, variant), with the largest K any of its rules there gives it.
    let mut picks: BTreeMap<(Arch, &str), Pick> = BTreeMap::new();
    for rule in &config.rules {
        let pick = picks
            .entry((rule.arch, &*rule.variant.name))
            .or_insert(Pick {
                arch: rule.arch,
                variant: &rule.variant,
                k_max: Some(0),
            });
        pick.k_max = match (pick.k_max, rule.k.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    let picks: Vec<Pick> = picks.into_values().collect();
    for &arch in archs {
        assert!(
            picks.iter().any(|p| p.arch == arch),
            "the {what} config names no pick for {arch}"
        );
    }
    let cache = CubinCache::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cubins"));
    // A thread a core, each taking the next pick.
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<String, String>)>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let at = next.fetch_add(1, Ordering::Relaxed);
                let Some(pick) = picks.get(at) else { break };
                let result = inspect(pick.variant, pick.arch, with_sass, Some(&cache))
                    .map_err(|e| format!("{} on {}: {e}", pick.variant.name, pick.arch))
                    .and_then(|report| check(pick, &report));
                results.lock().unwrap().push((at, result));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(at, _)| *at);
    visible(&format!(
        "{} {what} picks over {} architectures, compiled for their exact architecture (registers: the most of the \
         raw and padded entries; spills: spill and stack bytes; SASS: both entries)",
        picks.len(),
        archs.len()
    ));
    visible(
        "arch    target   variant                          regs spills  shared              limit | 16816 16832 \
         wgmma IDP4A LDGSTS  LDSM UBLKCP UTMALDG SYNCS",
    );
    let mut failures = Vec::new();
    for (_, result) in results {
        match result {
            Ok(line) => visible(&line),
            Err(e) => failures.push(e),
        }
    }
    visible(&format!(
        "compiled and checked in {:.1} s on {threads} thread(s)",
        started.elapsed().as_secs_f64()
    ));
    assert!(
        failures.is_empty(),
        "{what} picks that the library cannot compile cleanly:\n{}",
        failures.join("\n")
    );
}
