//! The architecture table (codegen/src/arch.rs) against its two sources of truth here: the generated modules (a
//! description's features are exactly the instructions its source uses) and NVRTC 13.0 (every feature's probe
//! compiles where, and only where, the table says, on the target it says).
//!
//! NVRTC is mandatory in CI (`MMQGEN_REQUIRE_NVRTC=1`); elsewhere the NVRTC test prints a visible SKIPPED line.

use mmqgen::codegen::arch::{Feature, FeatureSet, Support};
use mmqgen::codegen::features::features_used;
use mmqgen::codegen::render::render;
use mmqgen::codegen::spec_file::spec_from_toml_str;
use mmqgen::compile::{compile_cubin, supported_archs};
use mmqgen::{Arch, VariantDescription};

/// The source without its comments: markers are looked for in code only.
fn code_of(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find("/*") {
        code.push_str(&rest[..at]);
        rest = rest[at..]
            .find("*/")
            .map_or("", |end| &rest[at + end + 2..]);
    }
    code.push_str(rest);
    code.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The features whose markers the module's code holds, but programmatic dependent launch, which the kernels use
/// only where the architecture has it.
fn features_in(source: &str) -> FeatureSet {
    let code = code_of(source);
    Feature::ALL
        .into_iter()
        .filter(|f| *f != Feature::GridDependencyControl)
        .filter(|f| f.markers().iter().any(|m| code.contains(m)))
        .collect()
}

/// The catalogue, and every variant and sweep point of the repository's variant files.
fn every_declared_description() -> Vec<VariantDescription> {
    let mut all = mmqgen::catalogue::all();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for folder in ["examples/sweeps", "docs/runs"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            // Run records hold rules and results too; only the files that are variant files count.
            let Ok(spec) = spec_from_toml_str(&text) else {
                continue;
            };
            all.extend(spec.variants);
            for sweep in spec.sweeps {
                all.extend(sweep.descriptions());
            }
        }
    }
    all
}

/// What is wrong with `desc`'s module, and the features its source uses.
fn check_module(desc: &VariantDescription) -> (Vec<String>, FeatureSet) {
    let mut wrong = Vec::new();
    let rendered = render(desc).unwrap_or_else(|e| panic!("{}: {e}", desc.name));
    let named = features_used(desc);
    let found = features_in(&rendered.source);
    if named != found {
        wrong.push(format!(
            "{}: the description names {named}, the source uses {found}",
            desc.name
        ));
    }
    if rendered.features != named {
        wrong.push(format!(
            "{}: the rendered module records {}",
            desc.name, rendered.features
        ));
    }
    // The generated kernels wait for their predecessor only where the architecture has griddepcontrol.
    let first = Arch::ALL
        .into_iter()
        .find(|a| a.has(Feature::GridDependencyControl))
        .map(|a| a.compute_capability())
        .unwrap();
    let guard = format!("#if __CUDA_ARCH__ >= {}", first.0 * 100 + first.1 * 10);
    let code = code_of(&rendered.source);
    let lines: Vec<&str> = code.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        if line.contains("griddepcontrol.") {
            let opened = lines[..at]
                .iter()
                .map(|l| l.trim())
                .rev()
                .find(|l| l.starts_with("#if") || l.starts_with("#endif"));
            if opened != Some(guard.as_str()) {
                wrong.push(format!(
                    "{}: griddepcontrol on line {} is not under `{guard}`",
                    desc.name,
                    at + 1
                ));
            }
        }
    }
    (wrong, found)
}

#[test]
fn every_module_uses_the_features_its_description_names() {
    let all = every_declared_description();
    assert!(all.len() > 200, "{} descriptions", all.len());
    // Two threads, as CI has two cores.
    let results: Vec<(Vec<String>, FeatureSet)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|half| {
                let all = &all;
                scope.spawn(move || {
                    all.iter()
                        .skip(half)
                        .step_by(2)
                        .map(check_module)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let wrong: Vec<String> = results.iter().flat_map(|(w, _)| w.clone()).collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The descriptions exercise every feature but programmatic dependent launch (guarded, never required).
    let seen = results
        .iter()
        .fold(FeatureSet::EMPTY, |all, (_, found)| all.union(*found));
    for feature in Feature::ALL {
        assert_eq!(
            seen.contains(feature),
            feature != Feature::GridDependencyControl,
            "{feature}"
        );
    }
}

/// A kernel using `feature` and nothing newer.
fn probe(feature: Feature) -> String {
    let body = match feature {
        Feature::Dp4a => "out[0] = __dp4a(in[0], in[1], in[2]);",
        Feature::CpAsync => {
            r#"asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(shared(s)), "l"(in));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;");
  out[0] = s[0];"#
        }
        Feature::MmaS8K16 => {
            r#"int d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
      : "r"(in[0]), "r"(in[1]), "r"(in[2]), "r"(in[3]), "r"(in[4]), "r"(in[5]), "r"(in[6]));
  out[0] = d0 + d1 + d2 + d3;"#
        }
        Feature::MmaS8K32 => {
            r#"int d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
      : "r"(in[0]), "r"(in[1]), "r"(in[2]), "r"(in[3]), "r"(in[4]), "r"(in[5]), "r"(in[6]), "r"(in[7]),
        "r"(in[8]), "r"(in[9]));
  out[0] = d0 + d1 + d2 + d3;"#
        }
        Feature::Ldmatrix => {
            r#"s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  unsigned a, b, c, d;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
      : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(shared(s)));
  out[0] = a + b + c + d;"#
        }
        Feature::MbarrierTx => {
            r#"asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(shared(&bar)));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" :: "r"(shared(&bar)));
  unsigned done;
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
      : "=r"(done) : "r"(shared(&bar)));
  out[0] = done;"#
        }
        Feature::BulkCopy => {
            r#"asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
      :: "r"(shared(s)), "l"(in), "r"(shared(&bar)) : "memory");
  out[0] = s[0];"#
        }
        Feature::TensorCopy => {
            r#"asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      :: "r"(shared(s)), "l"(map), "r"(in[0]), "r"(in[1]), "r"(shared(&bar)) : "memory");
  out[0] = s[0];"#
        }
        Feature::Clusters => {
            r#"unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(shared(s)), "r"(in[0]));
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  out[0] = remote;"#
        }
        Feature::TensorCopyMulticast => {
            r#"asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
      :: "r"(shared(s)), "l"(map), "r"(in[0]), "r"(in[1]), "r"(shared(&bar)), "h"((unsigned short)in[2]) : "memory");
  out[0] = s[0];"#
        }
        Feature::Wgmma => {
            r#"asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");"#
        }
        Feature::Setmaxnreg => {
            r#"if (threadIdx.x < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  }
  out[threadIdx.x] = in[threadIdx.x];"#
        }
        Feature::GridDependencyControl => {
            r#"asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  out[0] = in[0];"#
        }
    };
    format!(
        r#"__device__ __forceinline__ unsigned shared(const void* p) {{ return (unsigned)__cvta_generic_to_shared(p); }}
extern "C" __global__ void probe(int* out, const int* in, const void* map) {{
  __shared__ __align__(128) int s[64];
  __shared__ unsigned long long bar;
  (void)map; (void)s; (void)bar;
  {body}
}}
"#
    )
}

/// What NVRTC made of a probe: refused, compiled with ptxas' advisory that the target is the wrong one for the
/// instruction (it accepts `.multicast::cluster` anywhere from sm_90 but advises the arch-specific targets), or
/// compiled cleanly.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Refused,
    Advised,
    Clean,
}

fn compile(feature: Feature, target: &str) -> Outcome {
    match compile_cubin(&probe(feature), "probe.cu", target, false) {
        Err(_) => Outcome::Refused,
        Ok(c) if c.log.contains("Advisory") => Outcome::Advised,
        Ok(_) => Outcome::Clean,
    }
}

#[test]
fn arch_table_matches_nvrtc() {
    if !mmqgen::testing::nvrtc_or_skip("arch_table_matches_nvrtc") {
        return;
    }
    let supported = supported_archs().unwrap();
    let jobs: Vec<(Arch, Feature)> = Arch::ALL
        .into_iter()
        .flat_map(|a| Feature::ALL.into_iter().map(move |f| (a, f)))
        .collect();
    for arch in Arch::ALL {
        let (major, minor) = arch.compute_capability();
        assert!(
            supported.contains(&(major * 10 + minor)),
            "NVRTC does not compile for {arch} ({supported:?})"
        );
    }
    // Two threads, as CI has two cores: each takes every other (architecture, feature) pair.
    let wrong: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|half| {
                let jobs = &jobs;
                scope.spawn(move || {
                    let mut wrong = Vec::new();
                    for &(arch, feature) in jobs.iter().skip(half).step_by(2) {
                        let plain = compile(feature, arch.keyword());
                        let specific = arch
                            .spec()
                            .arch_specific_target
                            .then(|| compile(feature, &format!("{}a", arch.keyword())));
                        let fits = match arch.support(feature) {
                            Support::Plain => {
                                plain == Outcome::Clean
                                    && specific.as_ref().is_none_or(|s| *s == Outcome::Clean)
                            }
                            Support::ArchSpecific => {
                                plain != Outcome::Clean && specific == Some(Outcome::Clean)
                            }
                            Support::Absent => {
                                plain != Outcome::Clean
                                    && specific.as_ref().is_none_or(|s| *s != Outcome::Clean)
                            }
                        };
                        if !fits {
                            wrong.push(format!(
                                "{arch} {feature}: the table says {:?}; NVRTC: {plain:?} for {arch}, {specific:?} for \
                                 its `a` target",
                                arch.support(feature)
                            ));
                        }
                    }
                    wrong
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
