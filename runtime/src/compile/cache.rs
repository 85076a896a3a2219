//! An on-disk cache of NVRTC cubins, so that a variant already compiled for an architecture costs a file read
//! instead of seconds of NVRTC.
//!
//! Why it is built this way:
//! - The key is a sha256 over everything that can change the cubin: the generated source, the program name
//!   (it is written into line info and the log), the exact NVRTC options, the NVRTC version, the architecture
//!   and this file's format version. A change to any of them is a different entry, never a stale hit.
//! - An entry is never trusted: its header repeats the key and carries the payload's length and sha256, and any
//!   mismatch (truncated, flipped byte, a file copied under another key, an older format) is recompiled and
//!   overwritten ([`CacheOutcome::Rebuilt`] says why).
//! - Writes go to a unique temporary file in the cache folder, are fsynced, then renamed over the entry: a
//!   reader, or a second process filling the same entry, sees the old entry or the new one, never half of one.
//!   Two processes that miss together both compile; the last rename wins and both entries are whole.
//! - An entry is read only when it is a regular file no larger than [`MAX_ENTRY_BYTES`] (checked before it is
//!   opened, and again on the open file): anything else in its place (a fifo, which would block the read; a
//!   link to `/dev/zero` or a sparse file of gigabytes, which would be read into memory) is corrupt, and rebuilt.
//! - A cache that cannot be written (the folder is a file, a link loop, read-only) costs the compile only: the
//!   cubin is returned with [`CacheOutcome::NotStored`] saying why, and callers warn once.
//! - Hits, misses and rebuilds are printed to stderr when `MMQGEN_LOG` lists `cache` (e.g. `MMQGEN_LOG=cache`);
//!   callers that want their own logging read the returned [`CacheOutcome`].
//!
//! Entry file `<key hex>.entry`: magic `MMQGCUBN`, format version (u32 LE), key (64 ASCII hex digits), payload
//! length (u64 LE), payload sha256 (32 bytes), then the payload: cubin length (u64 LE), the cubin, and the NVRTC
//! log (UTF-8), kept so that a hit gives back the same ptxas report as the compile did.

use crate::compile::isolated::Compiler;
use crate::compile::nvrtc::{compile_options, parse_arch};
use crate::compile::{nvrtc_version, parse_ptxas_report, CompileError, CompiledCubin};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped whenever the entry layout or the key's inputs change; part of both the key and the header.
pub const CACHE_FORMAT_VERSION: u32 = 1;

const MAGIC: &[u8; 8] = b"MMQGCUBN";
/// magic + version + key hex + payload length + payload sha256.
const HEADER_LEN: usize = 8 + 4 + 64 + 8 + 32;

/// The largest entry read: the largest kernel's cubin is under 1 MB and its log a few KB, so anything larger
/// is not an entry this cache wrote.
pub const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// What [`CubinCache::get_or_compile`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// A valid entry was read; NVRTC did not run.
    Hit,
    /// No entry; NVRTC ran and the entry was written.
    Miss,
    /// An entry was there but was not trusted (`reason` says why); NVRTC ran and the entry was overwritten.
    Rebuilt { reason: String },
    /// NVRTC ran, but the cache could not keep the cubin (`reason`: the folder cannot be made, read or
    /// written); the cubin is good, only the next run compiles it again.
    NotStored { reason: String },
}

impl fmt::Display for CacheOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheOutcome::Hit => f.write_str("hit"),
            CacheOutcome::Miss => f.write_str("miss"),
            CacheOutcome::Rebuilt { reason } => write!(f, "rebuilt ({reason})"),
            CacheOutcome::NotStored { reason } => write!(f, "not stored ({reason})"),
        }
    }
}

/// Everything that can go wrong; each displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// None of `MMQGEN_CACHE_DIR`, `XDG_CACHE_HOME`, `HOME` is set.
    #[error(
        "there is no cache folder: set MMQGEN_CACHE_DIR (or XDG_CACHE_HOME or HOME) to a writable folder"
    )]
    NoCacheDir,
    /// The compile itself failed (not cached).
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// Creating the folder, or writing or renaming an entry.
    #[error("{what} {}: {source} (set MMQGEN_CACHE_DIR to a writable folder)", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The sha256 identifying one cache entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey(pub [u8; 32]);

impl CacheKey {
    /// The 64 lowercase hex digits, as used for the file name and in the header.
    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The key of one compile. Every field is length-prefixed, so no two different inputs hash the same bytes.
pub fn cache_key(
    source: &str,
    program_name: &str,
    options: &[String],
    nvrtc_version: (i32, i32),
    arch: &str,
) -> CacheKey {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"mmqgen cubin cache");
    field(&CACHE_FORMAT_VERSION.to_le_bytes());
    field(source.as_bytes());
    field(program_name.as_bytes());
    field(&(options.len() as u64).to_le_bytes());
    for option in options {
        field(option.as_bytes());
    }
    field(&nvrtc_version.0.to_le_bytes());
    field(&nvrtc_version.1.to_le_bytes());
    field(arch.as_bytes());
    CacheKey(h.finalize().into())
}

/// The default cache folder, given a way to read environment variables: `$MMQGEN_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/mmqgen` (an absolute path, as the XDG spec requires), else `$HOME/.cache/mmqgen`.
pub fn default_cache_dir_with(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("MMQGEN_CACHE_DIR") {
        return Some(dir);
    }
    if let Some(xdg) = set("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("mmqgen"));
    }
    set("HOME").map(|home| home.join(".cache").join("mmqgen"))
}

/// Whether `MMQGEN_LOG` (a comma-separated list) asks for cache lines on stderr.
fn logging_enabled() -> bool {
    std::env::var("MMQGEN_LOG").is_ok_and(|v| {
        v.split(',')
            .map(str::trim)
            .any(|topic| topic == "cache" || topic == "all")
    })
}

/// A folder of verified cubin entries.
#[derive(Clone, Debug)]
pub struct CubinCache {
    dir: PathBuf,
}

impl CubinCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CubinCache { dir: dir.into() }
    }

    /// A cache in the default folder (see [`default_cache_dir_with`]).
    pub fn from_env() -> Result<Self, CacheError> {
        default_cache_dir_with(|name| std::env::var_os(name))
            .map(CubinCache::new)
            .ok_or(CacheError::NoCacheDir)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key under which `source` compiled for `arch` by NVRTC `nvrtc_version` is stored.
    pub fn key(
        &self,
        source: &str,
        program_name: &str,
        arch: &str,
        line_info: bool,
        nvrtc_version: (i32, i32),
    ) -> CacheKey {
        cache_key(
            source,
            program_name,
            &compile_options(arch, line_info),
            nvrtc_version,
            arch,
        )
    }

    /// The file an entry lives in.
    pub fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{}.entry", key.hex()))
    }

    /// [`crate::compile::compile_cubin`] through the cache: a valid entry is returned without running NVRTC;
    /// otherwise NVRTC runs and the entry is (re)written. Compile failures are not cached.
    pub fn get_or_compile(
        &self,
        source: &str,
        program_name: &str,
        arch: &str,
        line_info: bool,
    ) -> Result<(CompiledCubin, CacheOutcome), CacheError> {
        self.get_or_compile_by(source, program_name, arch, line_info, &Compiler::InProcess)
    }

    /// [`CubinCache::get_or_compile`] with `compiler` running NVRTC on a miss (in a child process, so that a
    /// crash of NVRTC is an error: [`Compiler::Child`]).
    pub fn get_or_compile_by(
        &self,
        source: &str,
        program_name: &str,
        arch: &str,
        line_info: bool,
        compiler: &Compiler,
    ) -> Result<(CompiledCubin, CacheOutcome), CacheError> {
        parse_arch(arch)?;
        let version = nvrtc_version()?;
        self.get_or_compile_with(
            source,
            program_name,
            arch,
            line_info,
            version,
            |source, program, arch, line_info| compiler.compile(source, program, arch, line_info),
        )
    }

    /// The same with the NVRTC version and the compiler given: tests count compiles with it, and a caller
    /// with its own compile step can reuse the cache. `compile` is called as `compile(source, program_name,
    /// arch, line_info)` only on a miss or a rebuild.
    pub fn get_or_compile_with<F>(
        &self,
        source: &str,
        program_name: &str,
        arch: &str,
        line_info: bool,
        nvrtc_version: (i32, i32),
        compile: F,
    ) -> Result<(CompiledCubin, CacheOutcome), CacheError>
    where
        F: FnOnce(&str, &str, &str, bool) -> Result<CompiledCubin, CompileError>,
    {
        let options = compile_options(arch, line_info);
        let key = cache_key(source, program_name, &options, nvrtc_version, arch);
        let path = self.entry_path(&key);
        let log = logging_enabled();

        let rebuild_reason = match read_entry(&path) {
            Ok(None) => None,
            Ok(Some(bytes)) => match decode_entry(&bytes, &key) {
                Ok((cubin, nvrtc_log)) => {
                    if log {
                        eprintln!(
                            "mmqgen cache: hit {program_name} {arch} {} ({} bytes of cubin)",
                            path.display(),
                            cubin.len()
                        );
                    }
                    let report = parse_ptxas_report(&nvrtc_log);
                    let compiled = CompiledCubin {
                        cubin,
                        log: nvrtc_log,
                        options,
                        nvrtc_version,
                        report,
                    };
                    return Ok((compiled, CacheOutcome::Hit));
                }
                Err(reason) => Some(reason),
            },
            Err(reason) => Some(reason),
        };

        let compiled = compile(source, program_name, arch, line_info)?;
        let outcome = match (
            self.write_entry(&key, &path, &compiled.cubin, &compiled.log),
            rebuild_reason,
        ) {
            (Err(e), _) => CacheOutcome::NotStored {
                reason: e.to_string(),
            },
            (Ok(()), None) => CacheOutcome::Miss,
            (Ok(()), Some(reason)) => CacheOutcome::Rebuilt { reason },
        };
        if log {
            eprintln!(
                "mmqgen cache: {outcome} {program_name} {arch} {}",
                path.display()
            );
        }
        Ok((compiled, outcome))
    }

    /// Writes an entry to a unique temporary file next to it, fsyncs it, and renames it into place.
    fn write_entry(
        &self,
        key: &CacheKey,
        path: &Path,
        cubin: &[u8],
        nvrtc_log: &str,
    ) -> Result<(), CacheError> {
        let io_err = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| CacheError::Io { what, path, source }
        };
        fs::create_dir_all(&self.dir)
            .map_err(io_err("cannot create the cache folder", &self.dir))?;
        let bytes = encode_entry(key, cubin, nvrtc_log);
        let tmp = self.dir.join(temp_name(key));
        let written = (|| -> io::Result<()> {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            file.write_all(&bytes)?;
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io_err("cannot write the cache entry", &tmp)(e));
        }
        if let Err(e) = fs::rename(&tmp, path) {
            let _ = fs::remove_file(&tmp);
            return Err(io_err("cannot move the cache entry into place at", path)(e));
        }
        // Make the rename itself durable; best effort (not every platform can open a folder).
        if let Ok(dir) = fs::File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

/// The bytes of the entry at `path`: `Ok(None)` when there is none, `Err(why it is corrupt)` when something
/// else than a regular file of at most [`MAX_ENTRY_BYTES`] is there or it cannot be read. The kind and size are
/// checked before the file is opened (opening a fifo blocks) and again on the open file.
fn read_entry(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let unreadable = |e: io::Error| format!("the entry could not be read: {e}");
    let usable = |meta: &fs::Metadata| {
        if !meta.is_file() {
            return Err(format!(
                "the entry is {}, not a regular file",
                if meta.is_dir() {
                    "a folder"
                } else if meta.file_type().is_symlink() {
                    "a link"
                } else {
                    "a device, fifo or socket"
                }
            ));
        }
        if meta.len() > MAX_ENTRY_BYTES {
            return Err(format!(
                "the entry is {} bytes, more than the {MAX_ENTRY_BYTES} an entry may have",
                meta.len()
            ));
        }
        Ok(meta.len())
    };
    match fs::metadata(path) {
        Ok(meta) => usable(&meta)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(e)),
    };
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(e)),
    };
    let len = usable(&file.metadata().map_err(unreadable)?)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    Ok(Some(bytes))
}

/// A name no other writer, thread or process, uses at the same time: pid, a per-process counter and the
/// clock. It starts with a dot and ends in `.tmp`, so it is never taken for an entry.
fn temp_name(key: &CacheKey) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        ".{}.{}.{n}.{nanos}.tmp",
        &key.hex()[..16],
        std::process::id()
    )
}

fn encode_entry(key: &CacheKey, cubin: &[u8], nvrtc_log: &str) -> Vec<u8> {
    let mut payload = Vec::with_capacity(8 + cubin.len() + nvrtc_log.len());
    payload.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    payload.extend_from_slice(cubin);
    payload.extend_from_slice(nvrtc_log.as_bytes());
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&CACHE_FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(key.hex().as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&payload));
    out.extend_from_slice(&payload);
    out
}

/// Checks an entry against the key it was looked up under; `Err` is the reason it cannot be trusted.
fn decode_entry(bytes: &[u8], key: &CacheKey) -> Result<(Vec<u8>, String), String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "the entry is truncated: {} bytes, shorter than the {HEADER_LEN}-byte header",
            bytes.len()
        ));
    }
    let (header, payload) = bytes.split_at(HEADER_LEN);
    if &header[..8] != MAGIC {
        return Err("the file is not an mmqgen cache entry (bad magic)".to_string());
    }
    let version = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
    if version != CACHE_FORMAT_VERSION {
        return Err(format!(
            "the entry has cache format version {version}, this mmqgen writes {CACHE_FORMAT_VERSION}"
        ));
    }
    let stored_key = &header[12..76];
    if stored_key != key.hex().as_bytes() {
        return Err(format!(
            "the entry was written under another key ({}), not {} (a foreign entry)",
            String::from_utf8_lossy(stored_key),
            key.hex()
        ));
    }
    let length = u64::from_le_bytes(header[76..84].try_into().expect("8 bytes"));
    if length != payload.len() as u64 {
        return Err(format!(
            "the entry is truncated or padded: its header promises {length} payload bytes, {} follow",
            payload.len()
        ));
    }
    if Sha256::digest(payload).as_slice() != &header[84..116] {
        return Err("the entry's payload does not match its sha256 (corrupt)".to_string());
    }
    let malformed = || "the entry's payload is malformed (cubin length out of range)".to_string();
    let cubin_len = payload
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(malformed)?;
    let rest = &payload[8..];
    let cubin_len = usize::try_from(cubin_len)
        .ok()
        .filter(|&n| n <= rest.len())
        .ok_or_else(malformed)?;
    let (cubin, log) = rest.split_at(cubin_len);
    let log = std::str::from_utf8(log)
        .map_err(|_| "the entry's NVRTC log is not UTF-8 (malformed)".to_string())?;
    Ok((cubin.to_vec(), log.to_string()))
}
