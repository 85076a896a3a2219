//! Compiling in a child process, so that a crash of the compiler does not take the caller down.
//!
//! Why: NVRTC 13.0 dies inside `nvrtcCompileProgram` on some programs (a segmentation fault, or glibc aborting
//! on a corrupted heap); the validator refuses the descriptions known to do it, but a crash in a library
//! kills whatever process called it. [`Compiler::Child`] runs each compile in a fresh process of a program that
//! answers [`CHILD_ARG`] ([`serve_if_asked`]): the `mmqgen` binary itself, or any binary whose `main` calls
//! [`serve_if_asked`] first (as [`crate::cli::main_with`] does). A crash there is a
//! [`CompileError::Crashed`], one sentence, and the caller carries on with the next program.
//!
//! What stays in the calling process: every check that compiles nothing (`nvrtc::preflight`: the
//! architecture, NVRTC's presence and version), so their typed errors are the same either way, and the cache
//! ([`super::cache`]), whose key needs only the NVRTC version.
//!
//! The exchange: the parent writes a request (the source, the program name, the architecture, line info) to the
//! child's stdin and reads one reply from its stdout (the cubin and NVRTC's log, or the typed refusal); each
//! field is a little-endian u64 length and its bytes, after a magic that names the format. The child writes
//! nothing else to stdout; what NVRTC or glibc write to stderr is kept for the sentence of a crash.

use super::nvrtc::{compile_cubin, compile_options, preflight};
use super::{parse_ptxas_report, CompileError, CompiledCubin};
use crate::formats::input::shown;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The first argument that makes a binary serve one compile request ([`serve_if_asked`]) instead of its own
/// command line.
pub const CHILD_ARG: &str = "__mmqgen-compile-child";

/// The longest a child may compile one program before it is killed: the largest kernels compile in seconds.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(600);

/// The most bytes of a request a child reads (the largest generated source is about 100 KB).
const MAX_REQUEST: u64 = 64 << 20;
/// The most bytes of a reply a parent reads (a cubin is at most a few MB).
const MAX_REPLY: u64 = 1 << 30;

const REQUEST_MAGIC: &[u8; 8] = b"MMQGCRQ1";
const REPLY_MAGIC: &[u8; 8] = b"MMQGCRP1";

/// How programs are compiled.
#[derive(Clone, Debug, Default)]
pub enum Compiler {
    /// In this process ([`compile_cubin`]): the fastest, and what a library does unless asked otherwise; a
    /// crash of NVRTC ends the process.
    #[default]
    InProcess,
    /// Each program in a child process ([`ChildCompiler`]): a crash is an error.
    Child(ChildCompiler),
}

impl Compiler {
    /// Compiles `source` for `arch` as [`compile_cubin`] does, in this process or in a child.
    pub fn compile(
        &self,
        source: &str,
        program_name: &str,
        arch: &str,
        line_info: bool,
    ) -> Result<CompiledCubin, CompileError> {
        match self {
            Compiler::InProcess => compile_cubin(source, program_name, arch, line_info),
            Compiler::Child(child) => child.compile(source, program_name, arch, line_info),
        }
    }
}

/// A program that serves compile requests ([`serve_if_asked`]), started once per compile.
#[derive(Clone, Debug)]
pub struct ChildCompiler {
    /// The program to start.
    pub program: PathBuf,
    /// Its arguments (for a binary that calls [`serve_if_asked`]: `[CHILD_ARG]`).
    pub args: Vec<OsString>,
    /// How long one compile may take before the child is killed.
    pub timeout: Duration,
}

impl ChildCompiler {
    /// This executable, started with [`CHILD_ARG`]: right for the `mmqgen` binary and for any binary whose
    /// `main` calls [`serve_if_asked`] first.
    pub fn current_exe() -> Result<ChildCompiler, CompileError> {
        let program = std::env::current_exe().map_err(|source| CompileError::Io {
            what: "cannot find this program's own executable to compile in a child process"
                .to_string(),
            source,
        })?;
        Ok(ChildCompiler {
            program,
            args: vec![CHILD_ARG.into()],
            timeout: CHILD_TIMEOUT,
        })
    }

    /// Compiles in a fresh child process; see the module docs.
    pub fn compile(
        &self,
        source: &str,
        program_name: &str,
        arch: &str,
        line_info: bool,
    ) -> Result<CompiledCubin, CompileError> {
        let version = preflight(source, program_name, arch)?;
        let failed = |why: String| CompileError::ChildFailed {
            program: program_name.to_string(),
            why,
        };
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                failed(format!(
                    "cannot start {}: {e}",
                    shown(&self.program.to_string_lossy())
                ))
            })?;
        // Read both pipes on their own threads while the request is written, so that no pipe fills up and
        // stalls either side.
        let reader = |pipe: Option<Box<dyn Read + Send>>, cap: u64| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(pipe) = pipe {
                    let _ = pipe.take(cap).read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = reader(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            MAX_REPLY,
        );
        let stderr = reader(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            64 << 10,
        );
        if let Some(mut stdin) = child.stdin.take() {
            // A child that died before reading its request closes the pipe; its exit status says why.
            let _ = stdin.write_all(&encode_request(source, program_name, arch, line_info));
        }
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(failed(format!(
                        "it did not finish within {} s, so it was stopped",
                        self.timeout.as_secs()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(failed(format!("cannot wait for it: {e}"))),
            }
        };
        let reply = stdout.join().unwrap_or_default();
        let said = stderr.join().unwrap_or_default();
        let first_said = String::from_utf8_lossy(&said)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(shown)
            .unwrap_or_default();
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(signal) = status.signal() {
                return Err(CompileError::Crashed {
                    program: program_name.to_string(),
                    signal,
                    said: first_said,
                });
            }
        }
        if !status.success() {
            return Err(failed(format!(
                "it ended with {status}{}",
                if first_said.is_empty() {
                    String::new()
                } else {
                    format!(" ({first_said})")
                }
            )));
        }
        match decode_reply(&reply) {
            Some(Reply::Compiled { cubin, log }) => Ok(CompiledCubin {
                report: parse_ptxas_report(&log),
                cubin,
                log,
                options: compile_options(arch, line_info),
                nvrtc_version: version,
            }),
            Some(Reply::Rejected {
                status,
                first_error,
                log,
            }) => Err(CompileError::Rejected {
                program: program_name.to_string(),
                status,
                first_error,
                log,
            }),
            Some(Reply::BuiltinsMissing { first_line, log }) => {
                Err(CompileError::NvrtcBuiltinsMissing { first_line, log })
            }
            Some(Reply::Other { message }) => Err(failed(message)),
            None => Err(failed(format!(
                "its answer was not a compile reply ({} bytes)",
                reply.len()
            ))),
        }
    }
}

/// In a binary's `main`, before anything else: when the first argument is [`CHILD_ARG`], serves one compile
/// request from stdin to stdout and returns the exit code; otherwise `None` (the binary goes on as usual).
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     if let Some(code) = mmqgen::compile::isolated::serve_if_asked() {
///         return code;
///     }
///     // ... the program itself
/// #   std::process::ExitCode::SUCCESS
/// }
/// ```
pub fn serve_if_asked() -> Option<ExitCode> {
    if std::env::args_os().nth(1).is_none_or(|a| a != CHILD_ARG) {
        return None;
    }
    Some(serve(
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
    ))
}

/// Reads one request from `input`, compiles it in this process and writes the reply to `output`.
fn serve(input: &mut impl Read, output: &mut impl Write) -> ExitCode {
    let mut request = Vec::new();
    if input
        .take(MAX_REQUEST + 1)
        .read_to_end(&mut request)
        .is_err()
        || request.len() as u64 > MAX_REQUEST
    {
        return ExitCode::from(2);
    }
    let Some((source, program, arch, line_info)) = decode_request(&request) else {
        return ExitCode::from(2);
    };
    let reply = match compile_cubin(&source, &program, &arch, line_info) {
        Ok(compiled) => Reply::Compiled {
            cubin: compiled.cubin,
            log: compiled.log,
        },
        Err(CompileError::Rejected {
            status,
            first_error,
            log,
            ..
        }) => Reply::Rejected {
            status,
            first_error,
            log,
        },
        Err(CompileError::NvrtcBuiltinsMissing { first_line, log }) => {
            Reply::BuiltinsMissing { first_line, log }
        }
        Err(other) => Reply::Other {
            message: other.to_string(),
        },
    };
    if output
        .write_all(&encode_reply(&reply))
        .and_then(|()| output.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

/// What a child answers.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Compiled {
        cubin: Vec<u8>,
        log: String,
    },
    Rejected {
        status: String,
        first_error: String,
        log: String,
    },
    BuiltinsMissing {
        first_line: String,
        log: String,
    },
    Other {
        message: String,
    },
}

fn push_field(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Reads the fields of a message after its magic; `None` for anything malformed.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn after(bytes: &'a [u8], magic: &[u8; 8]) -> Option<Fields<'a>> {
        bytes.strip_prefix(magic.as_slice()).map(Fields)
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let (len, rest) = self.0.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        let (field, rest) = (rest.get(..len)?, rest.get(len..)?);
        self.0 = rest;
        Some(field)
    }
    fn text(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

fn encode_request(source: &str, program: &str, arch: &str, line_info: bool) -> Vec<u8> {
    let mut out = REQUEST_MAGIC.to_vec();
    for field in [source.as_bytes(), program.as_bytes(), arch.as_bytes()] {
        push_field(&mut out, field);
    }
    push_field(&mut out, &[u8::from(line_info)]);
    out
}

fn decode_request(bytes: &[u8]) -> Option<(String, String, String, bool)> {
    let mut f = Fields::after(bytes, REQUEST_MAGIC)?;
    let (source, program, arch) = (f.text()?, f.text()?, f.text()?);
    let line_info = match f.bytes()? {
        [0] => false,
        [1] => true,
        _ => return None,
    };
    f.done().then_some((source, program, arch, line_info))
}

fn encode_reply(reply: &Reply) -> Vec<u8> {
    let mut out = REPLY_MAGIC.to_vec();
    let (tag, fields): (u8, Vec<&[u8]>) = match reply {
        Reply::Compiled { cubin, log } => (0, vec![cubin, log.as_bytes()]),
        Reply::Rejected {
            status,
            first_error,
            log,
        } => (
            1,
            vec![status.as_bytes(), first_error.as_bytes(), log.as_bytes()],
        ),
        Reply::BuiltinsMissing { first_line, log } => {
            (2, vec![first_line.as_bytes(), log.as_bytes()])
        }
        Reply::Other { message } => (3, vec![message.as_bytes()]),
    };
    push_field(&mut out, &[tag]);
    for field in fields {
        push_field(&mut out, field);
    }
    out
}

fn decode_reply(bytes: &[u8]) -> Option<Reply> {
    let mut f = Fields::after(bytes, REPLY_MAGIC)?;
    let reply = match f.bytes()? {
        [0] => Reply::Compiled {
            cubin: f.bytes()?.to_vec(),
            log: f.text()?,
        },
        [1] => Reply::Rejected {
            status: f.text()?,
            first_error: f.text()?,
            log: f.text()?,
        },
        [2] => Reply::BuiltinsMissing {
            first_line: f.text()?,
            log: f.text()?,
        },
        [3] => Reply::Other { message: f.text()? },
        _ => return None,
    };
    f.done().then_some(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::nvrtc_or_skip;

    /// A "compiler" that is `sh -c SCRIPT`: stands in for a child that crashes, hangs or says nothing.
    fn shell(script: &str) -> ChildCompiler {
        ChildCompiler {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            timeout: Duration::from_secs(20),
        }
    }

    const TINY: &str = "extern \"C\" __global__ void k(int* p) { p[threadIdx.x] = 1; }";

    #[test]
    fn requests_and_replies_read_back() {
        let request = encode_request("src\0x", "p.cu", "sm_90", true);
        assert_eq!(
            decode_request(&request),
            Some(("src\0x".into(), "p.cu".into(), "sm_90".into(), true))
        );
        assert_eq!(decode_request(&request[..request.len() - 1]), None);
        for reply in [
            Reply::Compiled {
                cubin: vec![0x7f, b'E', b'L', b'F', 0],
                log: "ptxas info".into(),
            },
            Reply::Rejected {
                status: "NVRTC_ERROR_COMPILATION".into(),
                first_error: "p.cu(1): error: nope".into(),
                log: "whole log".into(),
            },
            Reply::BuiltinsMissing {
                first_line: "failed to open".into(),
                log: String::new(),
            },
            Reply::Other {
                message: "x".into(),
            },
        ] {
            let bytes = encode_reply(&reply);
            assert_eq!(decode_reply(&bytes).as_ref(), Some(&reply));
            assert_eq!(decode_reply(&bytes[..bytes.len() - 1]), None);
        }
        // A length past the end, or trailing bytes, is malformed.
        let mut bad = REPLY_MAGIC.to_vec();
        bad.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode_reply(&bad), None);
        let mut trailing = encode_reply(&Reply::Other {
            message: "x".into(),
        });
        trailing.push(0);
        assert_eq!(decode_reply(&trailing), None);
    }

    #[test]
    fn serve_answers_a_request() {
        if !nvrtc_or_skip("serve_answers_a_request") {
            return;
        }
        let mut out = Vec::new();
        let request = encode_request(TINY, "tiny.cu", "sm_90", false);
        assert_eq!(serve(&mut request.as_slice(), &mut out), ExitCode::SUCCESS);
        match decode_reply(&out) {
            Some(Reply::Compiled { cubin, log }) => {
                assert_eq!(&cubin[..4], b"\x7fELF");
                assert!(log.contains("ptxas info"), "{log}");
            }
            other => panic!("{other:?}"),
        }
        let mut out = Vec::new();
        let bad = encode_request("this is not CUDA", "bad.cu", "sm_90", false);
        serve(&mut bad.as_slice(), &mut out);
        assert!(
            matches!(decode_reply(&out), Some(Reply::Rejected { .. })),
            "{out:?}"
        );
        assert_eq!(
            serve(&mut &b"garbage"[..], &mut Vec::new()),
            ExitCode::from(2)
        );
    }

    /// A child killed by a signal is one sentence naming the signal and what the child said, not the end of
    /// this process; one that hangs is stopped; one that answers nonsense is a failure, not a cubin.
    #[test]
    fn a_crashing_child_is_an_error_not_a_crash() {
        if !nvrtc_or_skip("a_crashing_child_is_an_error_not_a_crash") {
            return;
        }
        let e = shell("echo 'munmap_chunk(): invalid pointer' >&2; kill -SEGV $$")
            .compile(TINY, "tiny.cu", "sm_90", false)
            .unwrap_err();
        assert!(
            matches!(e, CompileError::Crashed { signal: 11, .. }),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "the compiler crashed (signal 11, SIGSEGV) while it compiled program 'tiny.cu': munmap_chunk(): \
             invalid pointer"
        );
        let e = shell("kill -ABRT $$")
            .compile(TINY, "tiny.cu", "sm_90", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("crashed (signal 6, SIGABRT)"), "{e}");

        let mut slow = shell("sleep 30");
        slow.timeout = Duration::from_millis(300);
        let t = Instant::now();
        let e = slow
            .compile(TINY, "tiny.cu", "sm_90", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did not finish within"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));

        let e = shell("cat >/dev/null; echo hello")
            .compile(TINY, "tiny.cu", "sm_90", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("was not a compile reply"), "{e}");
        let e = shell("exit 3")
            .compile(TINY, "tiny.cu", "sm_90", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("failed: it ended with exit status: 3"), "{e}");
        let missing = ChildCompiler {
            program: "/nonexistent/mmqgen".into(),
            args: vec![],
            timeout: CHILD_TIMEOUT,
        };
        let e = missing
            .compile(TINY, "tiny.cu", "sm_90", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot start /nonexistent/mmqgen"), "{e}");
    }

    /// The checks that compile nothing stay in this process, with their own errors.
    #[test]
    fn preflight_errors_are_the_same_in_a_child() {
        let e = shell("exit 0")
            .compile(TINY, "tiny.cu", "sm_9", false)
            .unwrap_err();
        assert!(matches!(e, CompileError::InvalidArch { .. }), "{e}");
    }
}
