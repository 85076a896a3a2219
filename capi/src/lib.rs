//! The C ABI (`include/mmqgen.h`): a handle per GPU, a reserve call, and a q6_K matmul on device pointers an
//! engine owns, on the engine's stream.
//!
//! Every entry point catches panics (none crosses the boundary), checks its pointers and integers before
//! anything reaches the library, and turns a refusal into a status code plus one sentence in a thread-local
//! buffer ([`mmqgen_last_error`]). The library underneath is the Rust API ([`mmqgen_runtime::Mmq`]): the same
//! selection, compile path and kernels.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use cudarc::driver::sys::{CUdeviceptr, CUstream};
use mmqgen_runtime::device::DeviceError;
use mmqgen_runtime::launch::LaunchError;
use mmqgen_runtime::select::Config;
use mmqgen_runtime::weights::WeightsError;
use mmqgen_runtime::{Mmq, MmqError};

/// `MMQGEN_ABI_VERSION` of `mmqgen.h`.
pub const ABI_VERSION: u32 = 1;

/// `mmqgen_status` of `mmqgen.h`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    InvalidArgument = 1,
    NoGpu = 2,
    Unsupported = 3,
    Config = 4,
    Compile = 5,
    Capturing = 6,
    Cuda = 7,
    Internal = 8,
}

/// `mmqgen_handle`: an opened GPU.
pub struct Handle {
    mmq: Mmq,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keeps `sentence` as this thread's last error (a NUL inside it ends the C string there).
fn set_last_error(sentence: &str) {
    let bytes: Vec<u8> = sentence.bytes().take_while(|&b| b != 0).collect();
    let text = CString::new(bytes).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The status a library error maps to.
fn status_of(error: &MmqError) -> Status {
    match error {
        MmqError::Device(e) | MmqError::Launch(LaunchError::Device(e)) => match e {
            DeviceError::NoDriverLibrary
            | DeviceError::NoGpu { .. }
            | DeviceError::NoSuchOrdinal { .. }
            | DeviceError::DriverTooOld { .. } => Status::NoGpu,
            _ => Status::Cuda,
        },
        MmqError::Config(_) => Status::Config,
        MmqError::Select(_) | MmqError::UnsupportedArch { .. } => Status::Unsupported,
        MmqError::Weights(WeightsError::BorrowedPlane { .. }) => Status::Unsupported,
        MmqError::Weights(WeightsError::Device(_)) => Status::Cuda,
        MmqError::Weights(_)
        | MmqError::Shape(_)
        | MmqError::Mismatch { .. }
        | MmqError::WrongContext { .. }
        | MmqError::Gguf(_)
        | MmqError::Launch(LaunchError::Shape(_)) => Status::InvalidArgument,
        MmqError::Render(_) | MmqError::Cache(_) | MmqError::Compile(_) => Status::Compile,
        MmqError::WouldAllocateWhileCapturing { .. } => Status::Capturing,
        MmqError::Launch(_) => Status::Cuda,
    }
}

/// Runs an entry point: clears the thread's last error, catches a panic, records the sentence of a refusal.
fn entry(name: &str, body: impl FnOnce() -> Result<(), (Status, String)>) -> c_int {
    set_last_error("");
    let status = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => Status::Ok,
        Ok(Err((status, sentence))) => {
            set_last_error(&sentence);
            status
        }
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_string());
            set_last_error(&format!("{name} failed inside mmqgen (a bug): {message}"));
            Status::Internal
        }
    };
    status as c_int
}

fn library(error: MmqError) -> (Status, String) {
    (status_of(&error), error.to_string())
}

fn invalid(sentence: String) -> (Status, String) {
    (Status::InvalidArgument, sentence)
}

/// A dimension as the library takes it: at least `min`, at most 2^31 - 1.
fn dimension(name: &str, value: i64, min: i64) -> Result<usize, (Status, String)> {
    if value < min || value > i32::MAX as i64 {
        return Err(invalid(format!(
            "{name} = {value} is outside what a matmul can have: it must be at least {min} and below 2^31"
        )));
    }
    Ok(value as usize)
}

/// The handle behind a pointer, refused when null.
///
/// # Safety
/// `handle` is null or a pointer mmqgen_open returned and mmqgen_close has not taken.
unsafe fn handle_ref<'a>(handle: *const Handle) -> Result<&'a Handle, (Status, String)> {
    handle
        .as_ref()
        .ok_or_else(|| invalid("the handle is NULL: open one with mmqgen_open".to_string()))
}

#[no_mangle]
pub extern "C" fn mmqgen_abi_version() -> u32 {
    ABI_VERSION
}

#[no_mangle]
pub extern "C" fn mmqgen_version() -> *const c_char {
    static VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => panic!("the version holds no NUL"),
        };
    VERSION.as_ptr()
}

#[no_mangle]
pub extern "C" fn mmqgen_last_error() -> *const c_char {
    // The pointer stays valid until this thread's next call replaces the string.
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// # Safety
/// `config_path` is null or a NUL-terminated string; `handle` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn mmqgen_open(
    ordinal: c_int,
    config_path: *const c_char,
    handle: *mut *mut Handle,
) -> c_int {
    entry("mmqgen_open", || {
        let out = handle.as_mut().ok_or_else(|| {
            invalid(
                "the handle pointer is NULL: pass the address of an mmqgen_handle *".to_string(),
            )
        })?;
        *out = std::ptr::null_mut();
        if ordinal < 0 {
            return Err(invalid(format!(
                "GPU ordinal {ordinal} is negative: CUDA device ordinals start at 0"
            )));
        }
        let catalogue = mmqgen_runtime::catalogue::all();
        let config = match config_path.as_ref() {
            None => Config::embedded(&catalogue),
            Some(_) => {
                let path = CStr::from_ptr(config_path).to_str().map_err(|_| {
                    (
                        Status::Config,
                        "the config path is not UTF-8: pass a UTF-8 path to a mmqgen.toml"
                            .to_string(),
                    )
                })?;
                let text = mmqgen_runtime::formats::input::read_text_capped(
                    Path::new(path),
                    mmqgen_runtime::formats::input::CONFIG_FILE,
                )
                .map_err(|e| (Status::Config, format!("the config cannot be read: {e}")))?;
                Config::parse(&text, &catalogue)
            }
        }
        .map_err(|e| (Status::Config, e.to_string()))?;
        let mmq = Mmq::with_config(ordinal as usize, config).map_err(library)?;
        *out = Box::into_raw(Box::new(Handle { mmq }));
        Ok(())
    })
}

/// # Safety
/// `handle` is null or a pointer mmqgen_open returned, closed once, with no call in flight.
#[no_mangle]
pub unsafe extern "C" fn mmqgen_close(handle: *mut Handle) {
    if !handle.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(handle))));
    }
}

/// # Safety
/// `handle` as for [`mmqgen_close`], open; `stream` a stream of the handle's GPU context (or null);
/// `workspace_bytes` null or writable.
#[no_mangle]
pub unsafe extern "C" fn mmqgen_reserve(
    handle: *mut Handle,
    stream: CUstream,
    max_m: i64,
    max_n: i64,
    max_k: i64,
    workspace_bytes: *mut usize,
) -> c_int {
    entry("mmqgen_reserve", || {
        let handle = handle_ref(handle)?;
        let (m, n, k) = (
            dimension("max_m", max_m, 1)?,
            dimension("max_n", max_n, 1)?,
            dimension("max_k", max_k, 256)?,
        );
        let stream = handle.mmq.gpu().context().wrap_borrowed_stream(stream);
        let size = handle.mmq.reserve(&stream, m, n, k).map_err(library)?;
        if let Some(out) = workspace_bytes.as_mut() {
            *out = size.bytes();
        }
        Ok(())
    })
}

/// # Safety
/// As `mmqgen.h` says: device pointers of the handle's GPU, valid until the queued work is done.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mmqgen_q6k_matmul(
    handle: *mut Handle,
    weights: *const c_void,
    weight_bytes: usize,
    m: i64,
    k: i64,
    x: *const f32,
    n: i64,
    out: *mut f32,
    stream: CUstream,
) -> c_int {
    entry("mmqgen_q6k_matmul", || {
        let handle = handle_ref(handle)?;
        for (name, null) in [
            ("weights", weights.is_null()),
            ("x", x.is_null()),
            ("out", out.is_null()),
        ] {
            if null {
                return Err(invalid(format!(
                    "{name} is NULL: pass device memory of the handle's GPU"
                )));
            }
        }
        let (m, n, k) = (
            dimension("m", m, 1)?,
            dimension("n", n, 1)?,
            dimension("K", k, 256)?,
        );
        let variant = handle
            .mmq
            .matmul_device_ptrs(
                weights as CUdeviceptr,
                weight_bytes,
                m,
                k,
                x as CUdeviceptr,
                n,
                out as CUdeviceptr,
                stream,
            )
            .map_err(library)?;
        drop(variant);
        Ok(())
    })
}
