//! Parses the resource report that `--ptxas-options=--verbose` appends to
//! the NVRTC program log. NVRTC 13.0 / ptxas 13.0 print, per entry function:
//!
//! ```text
//! ptxas info    : 0 bytes gmem
//! ptxas info    : Compiling entry function 'probe' for 'sm_90'
//! ptxas info    : Function properties for probe
//! ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 20 registers, used 1 barriers, 1152 bytes smem
//! ptxas info    : Compile time = 12.050 ms
//! ```
//!
//! The `Used` line lists only non-zero items besides registers and barriers
//! (`N bytes smem`, `N bytes cumulative stack size`, `N bytes cmem[K]`).
//! For sm_80 ptxas appends `N bytes cmem[0]` (kernel parameters); for sm_90
//! it prints no `cmem` at all. Non-entry (`__noinline__`) functions get a
//! `Function properties for` block without `Compiling entry function`; they
//! are not reported as kernels.

use serde::Serialize;

/// ptxas' resources for one entry function (`__global__` kernel).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KernelResources {
    /// The (mangled, for C++ linkage) symbol name, as cuModuleGetFunction wants it.
    pub kernel: String,
    /// The target ptxas compiled for, e.g. `sm_90`.
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Named barriers used.
    pub barriers: u32,
    /// Static shared memory (`__shared__` arrays), bytes per block.
    pub shared_bytes: u32,
    /// Local-memory stack frame, bytes per thread.
    pub stack_frame_bytes: u32,
    /// Register spill stores, bytes per thread.
    pub spill_stores_bytes: u32,
    /// Register spill loads, bytes per thread.
    pub spill_loads_bytes: u32,
    /// Stack including called functions, bytes per thread (0 when not printed).
    pub cumulative_stack_bytes: u32,
    /// Sum of the per-kernel `cmem[K]` banks ptxas printed; `None` when it
    /// printed none (always the case for sm_90 with ptxas 13.0).
    pub constant_bytes: Option<u32>,
}

/// The text after `ptxas info    :` or `ptxas         .`, if the line is
/// one of those.
fn payload(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("ptxas")?.trim_start();
    if let Some(r) = rest.strip_prefix("info") {
        Some(r.trim_start().strip_prefix(':')?.trim())
    } else {
        Some(rest.strip_prefix('.')?.trim())
    }
}

/// `"'name' for 'sm_90'"` → `("name", "sm_90")`.
fn quoted_pair(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('\'')?;
    let (name, rest) = s.split_once('\'')?;
    let arch = rest.trim().strip_prefix("for")?.trim().trim_matches('\'');
    Some((name, arch))
}

/// `"472 bytes spill stores"` → `(472, "spill stores")`.
fn bytes_item(item: &str) -> Option<(u32, &str)> {
    let (n, rest) = item.trim().split_once(' ')?;
    let n = n.parse().ok()?;
    Some((n, rest.trim().strip_prefix("bytes")?.trim()))
}

/// Parses every entry function's resources from an NVRTC/ptxas log, in the
/// order ptxas compiled them. Lines it does not recognise are ignored, so
/// front-end warnings in the same log are harmless; a log without
/// `--verbose` output gives an empty vector.
pub fn parse_ptxas_report(log: &str) -> Vec<KernelResources> {
    let mut kernels: Vec<KernelResources> = Vec::new();
    // Index into `kernels` of the entry being reported, and whether the
    // current "Function properties" block belongs to it.
    let mut current: Option<usize> = None;
    let mut props_for_current = false;

    for line in log.lines() {
        let Some(p) = payload(line) else { continue };
        if let Some(rest) = p.strip_prefix("Compiling entry function") {
            if let Some((name, arch)) = quoted_pair(rest.trim()) {
                kernels.push(KernelResources {
                    kernel: name.to_string(),
                    arch: arch.to_string(),
                    ..Default::default()
                });
                current = Some(kernels.len() - 1);
                props_for_current = false;
            }
        } else if let Some(name) = p.strip_prefix("Function properties for") {
            let name = name.trim();
            props_for_current = current.is_some_and(|i| kernels[i].kernel == name);
        } else if let Some(used) = p.strip_prefix("Used ") {
            let Some(k) = current.map(|i| &mut kernels[i]) else {
                continue;
            };
            for item in used.split(',').map(str::trim) {
                if let Some(n) = item.strip_suffix(" registers") {
                    k.registers = n.trim().parse().unwrap_or(0);
                } else if let Some(n) = item
                    .strip_prefix("used ")
                    .and_then(|s| s.strip_suffix(" barriers"))
                {
                    k.barriers = n.trim().parse().unwrap_or(0);
                } else if let Some((n, what)) = bytes_item(item) {
                    match what {
                        "smem" => k.shared_bytes = n,
                        "cumulative stack size" => k.cumulative_stack_bytes = n,
                        w if w.starts_with("cmem[") => {
                            *k.constant_bytes.get_or_insert(0) += n;
                        }
                        _ => {}
                    }
                }
            }
        } else if props_for_current && p.contains("bytes stack frame") {
            let k = &mut kernels[current.expect("props_for_current implies current")];
            for (n, what) in p.split(',').filter_map(bytes_item) {
                match what {
                    "stack frame" => k.stack_frame_bytes = n,
                    "spill stores" => k.spill_stores_bytes = n,
                    "spill loads" => k.spill_loads_bytes = n,
                    _ => {}
                }
            }
        }
    }
    kernels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from NVRTC 13.0.88, `--gpu-architecture=sm_90 --fmad=false
    /// --ptxas-options=--verbose`, a probe kernel (LDG.128, cp.async, dp4a).
    const SM90_PROBE: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'probe' for 'sm_90'
ptxas info    : Function properties for probe
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 20 registers, used 1 barriers, 1152 bytes smem
ptxas info    : Compile time = 12.050 ms
";

    /// Same source, sm_80: ptxas adds the parameter bank `cmem[0]`.
    const SM80_PROBE: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'probe' for 'sm_80'
ptxas info    : Function properties for probe
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 20 registers, used 1 barriers, 1152 bytes smem, 392 bytes cmem[0]
ptxas info    : Compile time = 4.384 ms
";

    /// Captured from NVRTC 13.0.88, sm_90, `--ptxas-options=--maxrregcount=32`
    /// on a register-hungry kernel plus a template kernel calling a
    /// `__noinline__` helper: spills, C++ mangled names, a non-entry block.
    const SM90_SPILLS: &str = "\
ptxas info    : Overriding maximum register limit 256 for 'heavy' with  32 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z2tkILi3EEvPfPKf' with  32 of maxrregcount option
ptxas info    : 1024 bytes gmem
ptxas info    : Compiling entry function 'heavy' for 'sm_90'
ptxas info    : Function properties for heavy
ptxas         .     256 bytes stack frame, 472 bytes spill stores, 452 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size
ptxas info    : Compile time = 42.795 ms
ptxas info    : Compiling entry function '_Z2tkILi3EEvPfPKf' for 'sm_90'
ptxas info    : Function properties for _Z2tkILi3EEvPfPKf
ptxas         .     128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 128 bytes cumulative stack size
ptxas info    : Compile time = 10.813 ms
ptxas info    : Function properties for _Z6helperPKfi
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
";

    /// sm_80 of the same, with `--warn-on-spills` and user `__constant__`
    /// data (module-level `cmem[3]`, not attributed to a kernel).
    const SM80_SPILLS_WARN: &str = "\
ptxas info    : Overriding maximum register limit 256 for 'heavy' with  32 of maxrregcount option
ptxas warning : Registers are spilled to local memory in function 'heavy', 456 bytes spill stores, 444 bytes spill loads
ptxas info    : 1024 bytes gmem, 256 bytes cmem[3], 8 bytes cmem[4]
ptxas info    : Compiling entry function 'heavy' for 'sm_80'
ptxas info    : Function properties for heavy
ptxas         .     248 bytes stack frame, 456 bytes spill stores, 444 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 248 bytes cumulative stack size, 368 bytes cmem[0]
ptxas info    : Compile time = 22.060 ms
";

    /// A front-end warning precedes the report in the same log.
    const WARNING_THEN_REPORT: &str = "\
w.cu(1): warning #177-D: variable \"unused\" was declared but never referenced
  extern \"C\" __global__ void w(int* p) { int unused; p[0] = 1; }
                                             ^

Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"

ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'w' for 'sm_90'
ptxas info    : Function properties for w
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 2.192 ms
";

    #[test]
    fn sm90_probe() {
        assert_eq!(
            parse_ptxas_report(SM90_PROBE),
            [KernelResources {
                kernel: "probe".into(),
                arch: "sm_90".into(),
                registers: 20,
                barriers: 1,
                shared_bytes: 1152,
                constant_bytes: None,
                ..Default::default()
            }]
        );
    }

    #[test]
    fn sm80_probe_has_param_bank() {
        let r = parse_ptxas_report(SM80_PROBE);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].arch, "sm_80");
        assert_eq!(r[0].shared_bytes, 1152);
        assert_eq!(r[0].constant_bytes, Some(392));
    }

    #[test]
    fn spills_mangled_names_and_helper_block() {
        let r = parse_ptxas_report(SM90_SPILLS);
        assert_eq!(r.len(), 2, "the __noinline__ helper is not a kernel: {r:?}");
        assert_eq!(
            r[0],
            KernelResources {
                kernel: "heavy".into(),
                arch: "sm_90".into(),
                registers: 32,
                barriers: 1,
                shared_bytes: 0,
                stack_frame_bytes: 256,
                spill_stores_bytes: 472,
                spill_loads_bytes: 452,
                cumulative_stack_bytes: 256,
                constant_bytes: None,
            }
        );
        assert_eq!(r[1].kernel, "_Z2tkILi3EEvPfPKf");
        assert_eq!(r[1].stack_frame_bytes, 128);
        assert_eq!(r[1].spill_stores_bytes, 0);
        assert_eq!(r[1].barriers, 0);
    }

    #[test]
    fn warning_lines_and_module_cmem_are_ignored() {
        let r = parse_ptxas_report(SM80_SPILLS_WARN);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].spill_stores_bytes, 456);
        assert_eq!(r[0].spill_loads_bytes, 444);
        assert_eq!(r[0].stack_frame_bytes, 248);
        assert_eq!(
            r[0].constant_bytes,
            Some(368),
            "cmem[3]/[4] are module-level"
        );

        let r = parse_ptxas_report(WARNING_THEN_REPORT);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].kernel.as_str(), r[0].registers), ("w", 8));
    }

    #[test]
    fn no_report_is_empty() {
        assert!(parse_ptxas_report("").is_empty());
        assert!(parse_ptxas_report("bad.cu(1): error: nope\n").is_empty());
    }
}
