//! JIT compilation of rendered CUDA sources to cubins with NVRTC, plus the
//! two things we want to know about a cubin before launching it: ptxas'
//! resource report ([`report`]) and a SASS instruction census ([`sass`]); compiled cubins are kept on disk
//! ([`cache`]), [`inspect`] reports what a variant compiles to per architecture, and [`build`] renders, compiles
//! and loads one for a GPU.
//!
//! # Environment
//!
//! * `LD_LIBRARY_PATH` must hold the folder with `libnvrtc.so.13` **and**
//!   `libnvrtc-builtins.so.13.0` (the pip wheel `nvidia-cuda-nvrtc==13.0.88`
//!   puts both in `nvidia/cu13/lib`). cudarc `dlopen`s NVRTC by bare name,
//!   and NVRTC itself `dlopen`s its builtins by bare name, so the folder has
//!   to be on the loader path (an absolute-path `dlopen` of `libnvrtc.so.13`
//!   fails every compile with "failed to open libnvrtc-builtins.so.13.0").
//! * `cuobjdump` (for [`sass::sass_summary`]) is looked up at `$CUOBJDUMP`,
//!   then on `PATH`, then in the folder named by `$NVDISASM_PATH`.
//!   cuobjdump 13.5 disassembles sm_80/sm_90/sm_100/sm_120 cubins on its
//!   own; it needs no nvdisasm. If `NVDISASM_PATH` is set, cuobjdump runs
//!   `$NVDISASM_PATH/nvdisasm` instead of its built-in disassembler, and
//!   fails (exit status 1, no message) when that one fails.
//! * Tests: `MMQGEN_REQUIRE_NVRTC=1` / `MMQGEN_REQUIRE_CUOBJDUMP=1` turn a
//!   missing tool from a visible `SKIPPED:` line into a test failure.
//!   `source .ci/env.sh` sets all of the above.

pub mod build;
pub mod cache;
pub mod inspect;
pub mod isolated;
pub mod nvrtc;
pub mod report;
pub mod sass;
pub mod variant;

pub use nvrtc::{
    compile_cubin, nvrtc_available, nvrtc_version, supported_archs, CompiledCubin,
    REQUIRED_NVRTC_MAJOR,
};
pub use report::{parse_ptxas_report, KernelResources};
pub use sass::{find_cuobjdump, parse_sass, sass_dump, sass_summary, SassSummary, WidthCounts};
pub use variant::{compile_rendered, compile_variant, CompiledVariant, VariantCompileError};

use std::path::{Path, PathBuf};

/// What to do about a missing NVRTC, in one sentence: source the checkout's `.ci/env.sh` where NVRTC is already
/// in its `.nvrtc/` (the usual case: the library was there but `LD_LIBRARY_PATH` was not set), install it
/// otherwise. The checkout is this crate's own (its manifest folder's parent).
fn nvrtc_not_installed_sentence() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let installed = root.join(".nvrtc/nvidia/cu13/lib/libnvrtc.so.13");
    let root = root.canonicalize().unwrap_or(root);
    if installed.is_file() {
        format!(
            "NVRTC is not installed: libnvrtc.so.13 was not found on the loader path, but NVRTC 13.0 is in {}; \
             run `source {}` first, which puts it on LD_LIBRARY_PATH",
            root.join(".nvrtc").display(),
            root.join(".ci/env.sh").display()
        )
    } else {
        "NVRTC is not installed: libnvrtc.so.13 was not found on the loader path \
         (`bash scripts/main.sh` in the mmqgen checkout installs it into .nvrtc/, then `source .ci/env.sh` puts it \
         on LD_LIBRARY_PATH; or install nvidia-cuda-nvrtc==13.0.88 and add its lib folder to LD_LIBRARY_PATH)"
            .to_string()
    }
}

/// Everything that can go wrong while compiling a program or inspecting a
/// cubin. Each variant displays as one sentence; long tool output (the full
/// NVRTC log, cuobjdump's stderr) is kept in a field instead.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// No `libnvrtc` could be loaded; cudarc would panic on first use. The sentence points at the checkout's
    /// `.nvrtc/` when `scripts/main.sh` or `.ci/run` has installed NVRTC there.
    #[error("{}", nvrtc_not_installed_sentence())]
    NvrtcNotInstalled,

    /// A `libnvrtc` was loaded, but not one of the major version we pin.
    #[error(
        "NVRTC {}.{} was loaded but NVRTC {}.x is required \
         (put the lib folder of nvidia-cuda-nvrtc==13.0.88 first on LD_LIBRARY_PATH)",
        found.0, found.1, REQUIRED_NVRTC_MAJOR
    )]
    WrongNvrtcVersion {
        /// `(major, minor)` of the loaded library.
        found: (i32, i32),
    },

    /// NVRTC is loaded but cannot open `libnvrtc-builtins.so.*`.
    #[error(
        "NVRTC could not load its builtins library: {first_line} \
         (add the folder holding libnvrtc-builtins.so.13.0 to LD_LIBRARY_PATH)"
    )]
    NvrtcBuiltinsMissing {
        /// NVRTC's own complaint.
        first_line: String,
        /// The full program log.
        log: String,
    },

    /// The architecture string is not of the form `sm_<NN>[a|f]`.
    #[error("'{arch}' is not a GPU architecture that can be compiled to a cubin: {reason}")]
    InvalidArch {
        /// The string as given.
        arch: String,
        /// What is wrong with it.
        reason: String,
    },

    /// The architecture is well formed but this NVRTC cannot target it.
    #[error(
        "NVRTC {}.{} cannot target {arch}: it supports {}",
        version.0, version.1, format_archs(supported)
    )]
    UnsupportedArch {
        /// The architecture as given.
        arch: String,
        /// `(major, minor)` of the loaded NVRTC.
        version: (i32, i32),
        /// What it can target (`90` for sm_90).
        supported: Vec<u32>,
    },

    /// Source or program name contains an interior NUL byte.
    #[error("program '{program}' cannot be passed to NVRTC: its {what} contains a NUL byte")]
    InvalidInput {
        /// The program name as given.
        program: String,
        /// `"source"` or `"name"`.
        what: &'static str,
    },

    /// NVRTC (front end or ptxas) rejected the program; `log` is the full log.
    #[error("NVRTC rejected program '{program}': {first_error}")]
    Rejected {
        /// The program name as given.
        program: String,
        /// The NVRTC status name, e.g. `NVRTC_ERROR_COMPILATION`.
        status: String,
        /// The first error line of `log`, whitespace collapsed.
        first_error: String,
        /// The full program log.
        log: String,
    },

    /// Any other NVRTC call failed.
    #[error("NVRTC call {call} failed with {status}")]
    NvrtcCall {
        /// The NVRTC function.
        call: &'static str,
        /// The NVRTC status name.
        status: String,
    },

    /// The compiler died while it compiled the program (NVRTC 13.0 crashes inside `nvrtcCompileProgram` on
    /// some programs), in the child process that ran it ([`isolated`]), so the caller lives on.
    #[error("the compiler crashed (signal {signal}{}) while it compiled program '{program}'{}",
        signal_name(*signal).map_or(String::new(), |n| format!(", {n}")),
        if said.is_empty() { String::new() } else { format!(": {said}") })]
    Crashed {
        /// The program name as given.
        program: String,
        /// The signal that ended the compiler's process.
        signal: i32,
        /// The first line the compiler's process wrote to stderr (glibc's `munmap_chunk(): invalid pointer`),
        /// shortened; empty when it wrote nothing.
        said: String,
    },

    /// The child process that compiles ([`isolated`]) could not be run, ran too long, or did not answer as it
    /// should.
    #[error("the compiler's process for program '{program}' failed: {why}")]
    ChildFailed {
        /// The program name as given.
        program: String,
        /// What went wrong, one sentence.
        why: String,
    },

    /// Writing the temporary cubin, or spawning cuobjdump.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// `$CUOBJDUMP` names something that is not a file.
    #[error("CUOBJDUMP is set to '{}', which is not a file", path.display())]
    CuobjdumpMisconfigured {
        /// The value of `CUOBJDUMP`.
        path: PathBuf,
    },

    /// cuobjdump ran and exited unsuccessfully.
    #[error(
        "cuobjdump ({}) failed with {status}: {first_line}{hint}",
        tool.display()
    )]
    CuobjdumpFailed {
        /// The cuobjdump that ran.
        tool: PathBuf,
        /// Its exit status.
        status: String,
        /// The first non-empty stderr line, or `no message`.
        first_line: String,
        /// Empty, or a parenthesised hint starting with a space.
        hint: String,
        /// Its full stderr.
        stderr: String,
    },
}

/// The usual name of the signals a crashing compiler dies of.
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        _ => return None,
    })
}

fn format_archs(archs: &[u32]) -> String {
    archs
        .iter()
        .map(|a| format!("sm_{a}"))
        .collect::<Vec<_>>()
        .join(", ")
}
