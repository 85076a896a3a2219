//! NVRTC → cubin, through cudarc's thin `result`/`sys` layers (the safe API
//! drops the program log and cannot return a cubin).
//!
//! Every compile passes `--gpu-architecture=<arch>` (a real `sm_*` target,
//! so NVRTC runs ptxas and a cubin comes back), `--fmad=false` (the kernels'
//! float arithmetic must match the CPU reference bit for bit, so no
//! FMUL+FADD→FFMA contraction) and `--ptxas-options=--verbose` (ptxas'
//! resource report lands in the program log; see [`super::report`]).

use super::report::{parse_ptxas_report, KernelResources};
use super::CompileError;
use cudarc::nvrtc::{result, sys};
use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;

/// The NVRTC major version mmqgen is pinned to (cudarc feature
/// `cuda-13000`; newer minors emit PTX the 580 driver rejects).
pub const REQUIRED_NVRTC_MAJOR: i32 = 13;

/// A compiled program: the cubin and what NVRTC said while producing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledCubin {
    /// The ELF cubin, loadable with `cuModuleLoadData`.
    pub cubin: Vec<u8>,
    /// The full NVRTC program log (front-end warnings, ptxas' report).
    pub log: String,
    /// The exact options passed to `nvrtcCompileProgram`.
    pub options: Vec<String>,
    /// The NVRTC that compiled it, `(major, minor)`.
    pub nvrtc_version: (i32, i32),
    /// ptxas' per-kernel resource report, parsed from `log`.
    pub report: Vec<KernelResources>,
}

/// Whether a `libnvrtc` can be loaded (checked once per process, with
/// cudarc's own candidate names, so a `true` here means cudarc's lazy loader
/// will not panic). It does not check `libnvrtc-builtins`; a missing builtins
/// library surfaces as [`CompileError::NvrtcBuiltinsMissing`] on compile.
pub fn nvrtc_available() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries `dlopen` on cudarc's candidate names and closes them.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

fn ensure_loaded() -> Result<(), CompileError> {
    if nvrtc_available() {
        Ok(())
    } else {
        Err(CompileError::NvrtcNotInstalled)
    }
}

fn status_name(r: sys::nvrtcResult) -> String {
    format!("{r:?}")
}

fn check(call: &'static str, r: sys::nvrtcResult) -> Result<(), CompileError> {
    r.result().map_err(|e| CompileError::NvrtcCall {
        call,
        status: status_name(e.0),
    })
}

/// The loaded NVRTC's version, `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32), CompileError> {
    ensure_loaded()?;
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: the library is present; both pointers are valid for writes.
    check("nvrtcVersion", unsafe {
        sys::nvrtcVersion(&mut major, &mut minor)
    })?;
    Ok((major, minor))
}

/// The real architectures the loaded NVRTC can compile for, as numbers
/// (`90` for sm_90). NVRTC 13.0 answers 75, 80, 86, 87, 88, 89, 90, 100,
/// 103, 110, 120, 121.
pub fn supported_archs() -> Result<Vec<u32>, CompileError> {
    ensure_loaded()?;
    let mut n: c_int = 0;
    // SAFETY: valid out-pointer.
    check("nvrtcGetNumSupportedArchs", unsafe {
        sys::nvrtcGetNumSupportedArchs(&mut n)
    })?;
    let mut archs = vec![0 as c_int; n.max(0) as usize];
    if !archs.is_empty() {
        // SAFETY: the buffer holds exactly the `n` entries NVRTC writes.
        check("nvrtcGetSupportedArchs", unsafe {
            sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
        })?;
    }
    Ok(archs.into_iter().map(|a| a.max(0) as u32).collect())
}

/// Splits `sm_90` / `sm_90a` / `sm_100f` into its number (`90`), checking
/// the form. Needs no NVRTC.
pub(crate) fn parse_arch(arch: &str) -> Result<u32, CompileError> {
    let invalid = |reason: &str| CompileError::InvalidArch {
        arch: arch.to_string(),
        reason: reason.to_string(),
    };
    if arch.starts_with("compute_") {
        return Err(invalid(
            "compute_* names a virtual (PTX-only) architecture; use a real one such as sm_90",
        ));
    }
    let Some(rest) = arch.strip_prefix("sm_") else {
        return Err(invalid("expected the form sm_<NN> such as sm_80 or sm_90"));
    };
    let rest = rest
        .strip_suffix('a')
        .or_else(|| rest.strip_suffix('f'))
        .unwrap_or(rest);
    if rest.len() < 2 || rest.len() > 3 || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("expected the form sm_<NN> such as sm_80 or sm_90"));
    }
    rest.parse::<u32>()
        .map_err(|_| invalid("expected the form sm_<NN> such as sm_80 or sm_90"))
}

/// Destroys the NVRTC program when dropped.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn program_log(prog: &Program) -> Result<String, CompileError> {
    // SAFETY: `prog` is a live program.
    let raw = unsafe { result::get_program_log(prog.0) }.map_err(|e| CompileError::NvrtcCall {
        call: "nvrtcGetProgramLog",
        status: status_name(e.0),
    })?;
    let bytes: Vec<u8> = raw
        .into_iter()
        .map(|c: c_char| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn program_cubin(prog: &Program) -> Result<Vec<u8>, CompileError> {
    let mut size = 0usize;
    // SAFETY: live, successfully compiled program; valid out-pointer.
    check("nvrtcGetCUBINSize", unsafe {
        sys::nvrtcGetCUBINSize(prog.0, &mut size)
    })?;
    let mut cubin = vec![0u8; size];
    if size > 0 {
        // SAFETY: the buffer is exactly the size NVRTC reported.
        check("nvrtcGetCUBIN", unsafe {
            sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast::<c_char>())
        })?;
    }
    Ok(cubin)
}

/// The line of an NVRTC log that best explains a failure: the first line
/// mentioning an error (front end: `prog.cu(3): error: ...`; ptxas:
/// `ptxas application ptx input, line 23; error   : ...`; driver:
/// `nvrtc: error: ...`), whitespace runs collapsed; else the first non-empty
/// line; else `None`.
pub(crate) fn first_error_line(log: &str) -> Option<String> {
    let lines = || log.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| {
            l.contains(": error")
                || l.contains("; error")
                || l.contains("catastrophic error")
                || l.contains("fatal")
        })
        .or_else(|| lines().next())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The options [`compile_cubin`] passes to NVRTC, in order.
pub(crate) fn compile_options(arch: &str, line_info: bool) -> Vec<String> {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "--fmad=false".to_string(),
        // One flag per --ptxas-options; --verbose puts ptxas' resource
        // report into the program log.
        "--ptxas-options=--verbose".to_string(),
        // NVRTC 12.9 and later keep a compilation cache of their own (in memory, and in the CUDA compute
        // cache on disk). A compile served from it never runs ptxas, so its log lacks the --verbose resource
        // report: that is why, on the H200, compiles after a process's first (the same source again, as
        // `run` compiles a variant for its check and again for parity) came back without registers and
        // spills. mmqgen keeps its own cubin cache (cache.rs, log included), so NVRTC's is turned off.
        "--no-cache".to_string(),
    ];
    if line_info {
        options.push("--generate-line-info".to_string());
    }
    options
}

/// Everything [`compile_cubin`] checks before it hands the program to NVRTC: the architecture's form, NVRTC's
/// presence and major version, that it can target the architecture, and no NUL byte in the source or name.
/// Returns the NVRTC version. None of it compiles anything, so a caller that compiles in a child process
/// ([`super::isolated`]) runs it first, in its own process, and keeps these typed errors.
pub(crate) fn preflight(
    source: &str,
    program_name: &str,
    arch: &str,
) -> Result<(i32, i32), CompileError> {
    let arch_number = parse_arch(arch)?;
    let version = nvrtc_version()?;
    if version.0 != REQUIRED_NVRTC_MAJOR {
        return Err(CompileError::WrongNvrtcVersion { found: version });
    }
    let supported = supported_archs()?;
    if !supported.contains(&arch_number) {
        return Err(CompileError::UnsupportedArch {
            arch: arch.to_string(),
            version,
            supported,
        });
    }
    let invalid = |what| CompileError::InvalidInput {
        program: program_name.to_string(),
        what,
    };
    if source.contains('\0') {
        return Err(invalid("source"));
    }
    if program_name.contains('\0') {
        return Err(invalid("name"));
    }
    Ok(version)
}

/// Compiles `source` for one real architecture (`"sm_80"`, `"sm_90"`, also
/// `"sm_90a"`-style suffixes) to a cubin.
///
/// `program_name` is the file name NVRTC uses in diagnostics
/// (`name.cu(12): error: ...`). `line_info` adds `--generate-line-info`
/// (source lines in profilers and SASS dumps; no effect on codegen).
///
/// Errors are typed: NVRTC missing, wrong NVRTC major, bad or unsupported
/// `arch`, NVRTC rejecting the program (with the full log), etc. Never
/// panics for a missing library.
pub fn compile_cubin(
    source: &str,
    program_name: &str,
    arch: &str,
    line_info: bool,
) -> Result<CompiledCubin, CompileError> {
    let version = preflight(source, program_name, arch)?;
    let invalid = |what| CompileError::InvalidInput {
        program: program_name.to_string(),
        what,
    };
    let c_source = CString::new(source).map_err(|_| invalid("source"))?;
    let c_name = CString::new(program_name).map_err(|_| invalid("name"))?;
    let prog = Program(
        result::create_program(&c_source, Some(&c_name)).map_err(|e| CompileError::NvrtcCall {
            call: "nvrtcCreateProgram",
            status: status_name(e.0),
        })?,
    );

    let options = compile_options(arch, line_info);
    // SAFETY: `prog` is live; the options contain no NUL bytes (the arch
    // was validated above), so cudarc's internal CString::new cannot panic.
    let compiled = unsafe { result::compile_program(prog.0, &options) };
    let log = program_log(&prog)?;
    if let Err(e) = compiled {
        let first = first_error_line(&log).unwrap_or_else(|| status_name(e.0));
        if e.0 == sys::nvrtcResult::NVRTC_ERROR_BUILTIN_OPERATION_FAILURE
            || log.contains("libnvrtc-builtins")
        {
            return Err(CompileError::NvrtcBuiltinsMissing {
                first_line: first,
                log,
            });
        }
        return Err(CompileError::Rejected {
            program: program_name.to_string(),
            status: status_name(e.0),
            first_error: first,
            log,
        });
    }
    let cubin = program_cubin(&prog)?;
    let report = parse_ptxas_report(&log);
    Ok(CompiledCubin {
        cubin,
        log,
        options,
        nvrtc_version: version,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::nvrtc_or_skip;

    const PROBE: &str = r#"
struct __align__(16) u4 { unsigned x, y, z, w; };
extern "C" __global__ void probe(const u4* __restrict__ src, int* __restrict__ out) {
    __shared__ int red[32];
    u4 v = src[threadIdx.x];
    red[threadIdx.x & 31] = (int)(v.x ^ v.y ^ v.z ^ v.w);
    __syncthreads();
    out[threadIdx.x] = red[(threadIdx.x + 1) & 31];
}
"#;

    #[test]
    fn arch_names_are_validated_without_nvrtc() {
        assert_eq!(parse_arch("sm_80").unwrap(), 80);
        assert_eq!(parse_arch("sm_90").unwrap(), 90);
        assert_eq!(parse_arch("sm_90a").unwrap(), 90);
        assert_eq!(parse_arch("sm_100f").unwrap(), 100);
        for bad in [
            "", "sm90", "sm_", "sm_9", "sm_9x", "SM_90", "sm_90ab", "sm_1000",
        ] {
            let e = parse_arch(bad).unwrap_err();
            assert!(matches!(e, CompileError::InvalidArch { .. }), "{bad}: {e}");
        }
        let e = parse_arch("compute_90").unwrap_err().to_string();
        assert!(e.contains("virtual"), "{e}");
    }

    #[test]
    fn options_pin_fmad_and_verbose_ptxas() {
        assert_eq!(
            compile_options("sm_90", true),
            [
                "--gpu-architecture=sm_90",
                "--fmad=false",
                "--ptxas-options=--verbose",
                "--no-cache",
                "--generate-line-info"
            ]
        );
        assert_eq!(compile_options("sm_80", false).len(), 4);
    }

    #[test]
    fn first_error_line_picks_the_error() {
        // Captured from NVRTC 13.0 (front-end error after a warning whose
        // variable was renamed to contain "error").
        let log = "bad.cu(1): warning #177-D: variable \"error_count\" was declared but never referenced\n\
                   \n\
                   bad.cu(1): error: identifier \"undefined_thing\" is undefined\n  p[0] = undefined_thing;\n";
        assert_eq!(
            first_error_line(log).unwrap(),
            "bad.cu(1): error: identifier \"undefined_thing\" is undefined"
        );
        // Captured from NVRTC 13.0 (ptxas error from bad inline asm).
        let log = "ptxas application ptx input, line 23; error   : Unknown modifier '.instr'\n\
                   ptxas fatal   : Ptx assembly aborted due to errors\n";
        assert_eq!(
            first_error_line(log).unwrap(),
            "ptxas application ptx input, line 23; error : Unknown modifier '.instr'"
        );
        assert_eq!(first_error_line("\n  \n"), None);
    }

    #[test]
    fn not_installed_message_is_one_actionable_sentence() {
        let msg = CompileError::NvrtcNotInstalled.to_string();
        assert!(
            msg.starts_with("NVRTC is not installed: libnvrtc.so.13"),
            "{msg}"
        );
        assert!(msg.contains("LD_LIBRARY_PATH"), "{msg}");
        assert!(!msg.contains('\n'));
        // Where the checkout already holds NVRTC (scripts/main.sh and .ci/run install it there), the sentence
        // says so and names the script that puts it on the loader path, instead of asking for an install.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        if root.join(".nvrtc/nvidia/cu13/lib/libnvrtc.so.13").is_file() {
            assert!(
                msg.contains(".nvrtc") && msg.contains(".ci/env.sh"),
                "{msg}"
            );
            assert!(!msg.contains("install nvidia-cuda-nvrtc"), "{msg}");
        } else {
            assert!(msg.contains("scripts/main.sh"), "{msg}");
        }
    }

    #[test]
    fn version_is_13() {
        if !nvrtc_or_skip("version_is_13") {
            return;
        }
        let (major, _minor) = nvrtc_version().unwrap();
        assert_eq!(major, REQUIRED_NVRTC_MAJOR);
        let archs = supported_archs().unwrap();
        assert!(archs.contains(&80) && archs.contains(&90), "{archs:?}");
    }

    #[test]
    fn compiles_sm90_cubin_with_report() {
        if !nvrtc_or_skip("compiles_sm90_cubin_with_report") {
            return;
        }
        let out = compile_cubin(PROBE, "probe.cu", "sm_90", false).unwrap();
        assert_eq!(&out.cubin[..4], b"\x7fELF", "not an ELF cubin");
        assert_eq!(out.options, compile_options("sm_90", false));
        assert_eq!(out.nvrtc_version.0, 13);
        assert!(
            out.log.contains("ptxas info    : Used"),
            "no ptxas report in log:\n{}",
            out.log
        );
        assert_eq!(out.report.len(), 1, "{:?}", out.report);
        let k = &out.report[0];
        assert_eq!(k.kernel, "probe");
        assert_eq!(k.arch, "sm_90");
        assert!(k.registers > 0);
        assert_eq!(k.shared_bytes, 128);
        assert_eq!(k.barriers, 1);
        assert_eq!(k.spill_stores_bytes, 0);
    }

    /// The same program compiled again in one process (as `run` does: once for its check, again for parity)
    /// still gets ptxas' report: NVRTC's own compilation cache, which would skip ptxas, is off. (On a machine
    /// without the CUDA driver NVRTC 13.0's cache did not engage even without `--no-cache`, so this guards
    /// only where it does, as on the GPU machines.)
    #[test]
    fn a_second_compile_of_the_same_program_keeps_the_report() {
        if !nvrtc_or_skip("a_second_compile_of_the_same_program_keeps_the_report") {
            return;
        }
        let source = format!("{PROBE}\n// second-compile probe\n");
        for round in 0..3 {
            let out = compile_cubin(&source, "again.cu", "sm_90", false).unwrap();
            assert_eq!(
                out.report.len(),
                1,
                "round {round}: no ptxas report in:\n{}",
                out.log
            );
        }
    }

    #[test]
    fn compiles_sm80_with_line_info() {
        if !nvrtc_or_skip("compiles_sm80_with_line_info") {
            return;
        }
        let plain = compile_cubin(PROBE, "probe.cu", "sm_80", false).unwrap();
        let lined = compile_cubin(PROBE, "probe.cu", "sm_80", true).unwrap();
        assert!(lined.options.iter().any(|o| o == "--generate-line-info"));
        assert_eq!(lined.report[0].arch, "sm_80");
        // sm_80 reports the kernel-parameter constant bank; sm_90 does not.
        assert!(lined.report[0].constant_bytes.is_some_and(|c| c > 0));
        assert!(
            lined.cubin.len() > plain.cubin.len(),
            "line info adds a section"
        );
    }

    #[test]
    fn rejected_program_keeps_full_log() {
        if !nvrtc_or_skip("rejected_program_keeps_full_log") {
            return;
        }
        let src =
            "extern \"C\" __global__ void bad(int* p) { int unused; p[0] = undefined_thing; }";
        let err = compile_cubin(src, "bad.cu", "sm_90", false).unwrap_err();
        let msg = err.to_string();
        assert_eq!(
            msg,
            "NVRTC rejected program 'bad.cu': bad.cu(1): error: identifier \"undefined_thing\" is undefined"
        );
        match err {
            CompileError::Rejected { status, log, .. } => {
                assert_eq!(status, "NVRTC_ERROR_COMPILATION");
                assert!(log.contains("1 error detected"), "{log}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn ptxas_errors_are_rejections_too() {
        if !nvrtc_or_skip("ptxas_errors_are_rejections_too") {
            return;
        }
        let src = "extern \"C\" __global__ void k() { asm volatile(\"bogus.instr;\"); }";
        let msg = compile_cubin(src, "asm.cu", "sm_90", false)
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("NVRTC rejected program 'asm.cu': ptxas application ptx input"),
            "{msg}"
        );
    }

    #[test]
    fn unsupported_arch_lists_the_supported_ones() {
        if !nvrtc_or_skip("unsupported_arch_lists_the_supported_ones") {
            return;
        }
        let msg = compile_cubin(PROBE, "probe.cu", "sm_70", false)
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("NVRTC 13.0 cannot target sm_70: it supports sm_75, sm_80"),
            "{msg}"
        );
    }

    #[test]
    fn nul_in_source_is_a_typed_error() {
        if !nvrtc_or_skip("nul_in_source_is_a_typed_error") {
            return;
        }
        let err = compile_cubin("int x;\0", "nul.cu", "sm_90", false).unwrap_err();
        assert!(
            matches!(err, CompileError::InvalidInput { what: "source", .. }),
            "{err}"
        );
    }
}
