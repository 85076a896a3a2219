//! The GPU: finding it, describing it, and turning every driver failure into one sentence.
//!
//! cudarc loads `libcuda` lazily and panics when it is missing or lacks a symbol, so [`Gpu::open`] checks that
//! the library can be loaded before touching it, checks the driver's CUDA version before creating a context
//! (an older driver could lack the symbols cudarc's `cuda-13000` bindings name), and catches any panic that
//! still escapes the driver bindings. A machine without a driver or a GPU gets a [`DeviceError`], never a panic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

use cudarc::driver::{result::DriverError, sys, CudaContext, CudaStream};
use mmqgen_codegen::{Arch, VariantDescription};

/// The oldest driver API version the cubins need, as `cuDriverGetVersion` spells it (13.0 = 13000, driver 580).
pub const REQUIRED_DRIVER_VERSION: i32 = 13000;

/// Shared memory a block may use without opting in (the launcher raises the function attribute above it).
pub const DEFAULT_SHARED_BYTES_PER_BLOCK: u32 = 48 * 1024;

/// Everything that can go wrong while finding or using the GPU. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// No `libcuda` could be loaded: there is no NVIDIA driver, or it is not on the loader path.
    #[error(
        "the CUDA driver library (libcuda.so.1) could not be loaded, so no GPU can be used \
         (install the NVIDIA driver, or add the folder holding libcuda.so.1 to LD_LIBRARY_PATH)"
    )]
    NoDriverLibrary,

    /// The driver loaded but reports no usable GPU.
    #[error("no CUDA GPU is visible: {reason}")]
    NoGpu { reason: String },

    /// A GPU ordinal past the visible ones was asked for.
    #[error(
        "GPU {ordinal} was asked for but only {count} CUDA GPU(s) are visible, so the ordinal must be below {count}"
    )]
    NoSuchOrdinal { ordinal: usize, count: usize },

    /// The driver is older than the CUDA version the cubins are built for.
    #[error(
        "the CUDA driver supports CUDA {}.{}, but mmqgen's NVRTC 13.0 cubins need a driver for CUDA {}.{} \
         or newer (NVIDIA driver 580 or later)",
        found.0, found.1, REQUIRED_DRIVER_VERSION / 1000, (REQUIRED_DRIVER_VERSION % 1000) / 10
    )]
    DriverTooOld { found: (i32, i32) },

    /// The variant does not declare the GPU's architecture.
    #[error(
        "variant '{variant}' is declared for {archs}, but GPU {ordinal} ({gpu}) is {arch}, so it cannot be run here"
    )]
    ArchNotInVariant {
        variant: String,
        archs: String,
        arch: String,
        gpu: String,
        ordinal: usize,
    },

    /// A driver call failed; `what` says what was being done.
    #[error("{what} failed with {}", describe_driver_error(*source))]
    Cuda {
        what: String,
        #[source]
        source: DriverError,
    },

    /// The driver bindings panicked (a symbol missing from an unexpected driver, say); the panic is caught.
    #[error("the CUDA driver bindings panicked while {what}: {message}")]
    Panicked { what: String, message: String },
}

impl DeviceError {
    /// Wraps a driver error with what was being done (`"copying the outputs back"`).
    pub fn cuda(what: impl Into<String>, source: DriverError) -> DeviceError {
        DeviceError::Cuda {
            what: what.into(),
            source,
        }
    }

    /// The driver's error code when this is a failed driver call.
    pub fn driver_error(&self) -> Option<DriverError> {
        match self {
            DeviceError::Cuda { source, .. } => Some(*source),
            _ => None,
        }
    }
}

/// `CUDA_ERROR_MISALIGNED_ADDRESS (misaligned address)`: the code's name and the driver's own words.
pub fn describe_driver_error(e: DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// Whether the kernel that failed left the context unusable (a fault inside a kernel is sticky: every later
/// call in this process fails with the same error; docs/DESIGN.md D11).
pub fn is_sticky_kernel_fault(e: DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        e.0,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
    )
}

/// What the driver says about one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    pub ordinal: usize,
    /// `NVIDIA H200`.
    pub name: String,
    /// `(9, 0)`.
    pub compute_capability: (u32, u32),
    /// `sm_90`: the architecture string NVRTC compiles for.
    pub arch: String,
    pub multiprocessors: u32,
    /// Shared memory per block without opting in (48 KiB).
    pub max_shared_per_block: u32,
    /// The most shared memory one block may opt into (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`;
    /// 227 KiB on an H200).
    pub max_shared_per_block_optin: u32,
    pub max_threads_per_block: u32,
    /// Device memory in bytes.
    pub total_memory: usize,
    /// The CUDA version the driver supports, `(13, 0)`.
    pub driver_version: (i32, i32),
    /// `CUDA_VISIBLE_DEVICES` as this process saw it, for messages.
    pub visible_devices: Option<String>,
}

impl GpuInfo {
    /// The codegen architecture this GPU is, when mmqgen knows it.
    pub fn known_arch(&self) -> Option<Arch> {
        Arch::from_compute_capability(self.compute_capability)
    }

    /// One line for logs: `GPU 0: NVIDIA H200 (sm_90, 132 SMs, 227 KiB opt-in shared memory, driver CUDA 13.0)`.
    pub fn summary(&self) -> String {
        format!(
            "GPU {}: {} ({}, {} SMs, {} KiB opt-in shared memory per block, {} GiB, driver CUDA {}.{})",
            self.ordinal,
            self.name,
            self.arch,
            self.multiprocessors,
            self.max_shared_per_block_optin / 1024,
            self.total_memory >> 30,
            self.driver_version.0,
            self.driver_version.1
        )
    }
}

/// An opened GPU: its primary context, the stream mmqgen launches on (the context's default stream), and what
/// the driver says about it.
#[derive(Clone, Debug)]
pub struct Gpu {
    info: GpuInfo,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

/// Whether `libcuda` can be loaded (checked once per process with cudarc's own candidate names, so `true` means
/// cudarc's lazy loader will find it).
pub fn driver_library_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries `dlopen` on cudarc's candidate names and closes them again.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs `f`, turning a panic of the driver bindings into [`DeviceError::Panicked`].
pub(crate) fn guard<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, DeviceError>,
) -> Result<T, DeviceError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(DeviceError::Panicked {
            what: what.to_string(),
            message: panic_message(payload),
        }),
    }
}

fn visible_devices() -> Option<String> {
    std::env::var("CUDA_VISIBLE_DEVICES").ok()
}

fn visible_devices_hint(v: &Option<String>) -> String {
    match v {
        Some(v) => format!("CUDA_VISIBLE_DEVICES is '{v}'"),
        None => "CUDA_VISIBLE_DEVICES is not set".to_string(),
    }
}

/// The driver's CUDA version, `(13, 0)`, without creating a context.
pub fn driver_version() -> Result<(i32, i32), DeviceError> {
    if !driver_library_present() {
        return Err(DeviceError::NoDriverLibrary);
    }
    guard("asking the driver for its version", || {
        let mut v: std::ffi::c_int = 0;
        // SAFETY: the library is present; the pointer is valid for one write.
        unsafe { sys::cuDriverGetVersion(&mut v) }
            .result()
            .map_err(|e| DeviceError::cuda("cuDriverGetVersion", e))?;
        Ok((v / 1000, (v % 1000) / 10))
    })
}

fn attribute(
    ctx: &CudaContext,
    attr: sys::CUdevice_attribute,
    name: &str,
) -> Result<u32, DeviceError> {
    let v = ctx
        .attribute(attr)
        .map_err(|e| DeviceError::cuda(format!("reading the device attribute {name}"), e))?;
    u32::try_from(v).map_err(|_| DeviceError::NoGpu {
        reason: format!("the driver reports {name} = {v}, which is not a count"),
    })
}

impl Gpu {
    /// Opens GPU `ordinal`: checks that the driver library loads, that it supports CUDA 13.0, that the GPU
    /// exists, then retains its primary context and reads what mmqgen needs to know about it.
    pub fn open(ordinal: usize) -> Result<Gpu, DeviceError> {
        if !driver_library_present() {
            return Err(DeviceError::NoDriverLibrary);
        }
        guard("opening the GPU", || Self::open_inner(ordinal))
    }

    fn open_inner(ordinal: usize) -> Result<Gpu, DeviceError> {
        let visible = visible_devices();
        // SAFETY: the library is present; cuInit takes no pointers.
        if let Err(e) = unsafe { sys::cuInit(0) }.result() {
            return Err(match e.0 {
                sys::CUresult::CUDA_ERROR_NO_DEVICE => DeviceError::NoGpu {
                    reason: format!(
                        "the driver initialised but found no device ({})",
                        visible_devices_hint(&visible)
                    ),
                },
                _ => DeviceError::NoGpu {
                    reason: format!(
                        "cuInit failed with {} ({})",
                        describe_driver_error(e),
                        visible_devices_hint(&visible)
                    ),
                },
            });
        }
        let driver_version = driver_version()?;
        if driver_version.0 * 1000 + driver_version.1 * 10 < REQUIRED_DRIVER_VERSION {
            return Err(DeviceError::DriverTooOld {
                found: driver_version,
            });
        }
        let count =
            CudaContext::device_count().map_err(|e| DeviceError::cuda("cuDeviceGetCount", e))?;
        let count = usize::try_from(count).unwrap_or(0);
        if count == 0 {
            return Err(DeviceError::NoGpu {
                reason: format!(
                    "the driver reports 0 devices ({})",
                    visible_devices_hint(&visible)
                ),
            });
        }
        if ordinal >= count {
            return Err(DeviceError::NoSuchOrdinal { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| DeviceError::cuda(format!("creating a context on GPU {ordinal}"), e))?;
        let name = ctx
            .name()
            .map_err(|e| DeviceError::cuda(format!("reading the name of GPU {ordinal}"), e))?;
        use sys::CUdevice_attribute::*;
        let major = attribute(
            &ctx,
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "compute capability major",
        )?;
        let minor = attribute(
            &ctx,
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "compute capability minor",
        )?;
        let multiprocessors = attribute(
            &ctx,
            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "multiprocessor count",
        )?;
        let max_shared_per_block = attribute(
            &ctx,
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            "max shared memory per block",
        )?;
        let max_shared_per_block_optin = attribute(
            &ctx,
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            "max opt-in shared memory per block",
        )?;
        let max_threads_per_block = attribute(
            &ctx,
            CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            "max threads per block",
        )?;
        let total_memory = ctx.total_mem().map_err(|e| {
            DeviceError::cuda(format!("reading the memory size of GPU {ordinal}"), e)
        })?;
        let stream = ctx.default_stream();
        Ok(Gpu {
            info: GpuInfo {
                ordinal,
                name,
                compute_capability: (major, minor),
                arch: format!("sm_{major}{minor}"),
                multiprocessors,
                max_shared_per_block,
                max_shared_per_block_optin,
                max_threads_per_block,
                total_memory,
                driver_version,
                visible_devices: visible,
            },
            ctx,
            stream,
        })
    }

    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// `sm_90`.
    pub fn arch(&self) -> &str {
        &self.info.arch
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream everything of mmqgen's runs on unless a caller passes another (the context's default stream).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits for everything queued on the GPU's stream; `what` names the work for the error sentence
    /// (`"the activation quantizer"`). A kernel fault (misaligned or illegal address) surfaces here.
    pub fn synchronize(&self, what: &str) -> Result<(), DeviceError> {
        synchronize(&self.stream, what)
    }

    /// The codegen architecture of this GPU, when the variant declares it; otherwise a sentence.
    pub fn check_variant_arch(&self, desc: &VariantDescription) -> Result<Arch, DeviceError> {
        match self.info.known_arch() {
            Some(arch) if desc.archs.contains(arch) => Ok(arch),
            _ => Err(DeviceError::ArchNotInVariant {
                variant: desc.name.to_string(),
                archs: desc.archs.to_string(),
                arch: self.info.arch.clone(),
                gpu: self.info.name.clone(),
                ordinal: self.info.ordinal,
            }),
        }
    }
}

/// Waits for `stream`; `what` names the work for the error sentence.
pub fn synchronize(stream: &CudaStream, what: &str) -> Result<(), DeviceError> {
    stream
        .synchronize()
        .map_err(|e| DeviceError::cuda(format!("waiting for {what}"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_sentences() {
        assert_eq!(
            DeviceError::NoGpu {
                reason: "the driver reports 0 devices (CUDA_VISIBLE_DEVICES is '')".into()
            }
            .to_string(),
            "no CUDA GPU is visible: the driver reports 0 devices (CUDA_VISIBLE_DEVICES is '')"
        );
        assert_eq!(
            DeviceError::DriverTooOld { found: (12, 4) }.to_string(),
            "the CUDA driver supports CUDA 12.4, but mmqgen's NVRTC 13.0 cubins need a driver for CUDA 13.0 \
             or newer (NVIDIA driver 580 or later)"
        );
        assert_eq!(
            DeviceError::NoSuchOrdinal { ordinal: 3, count: 1 }.to_string(),
            "GPU 3 was asked for but only 1 CUDA GPU(s) are visible, so the ordinal must be below 1"
        );
        let desc = VariantDescription {
            name: "old".into(),
            archs: mmqgen_codegen::ArchSet::EMPTY.with(Arch::Sm80),
            ..VariantDescription::DEFAULTS
        };
        let e = DeviceError::ArchNotInVariant {
            variant: desc.name.to_string(),
            archs: desc.archs.to_string(),
            arch: "sm_90".into(),
            gpu: "NVIDIA H200".into(),
            ordinal: 0,
        };
        assert_eq!(
            e.to_string(),
            "variant 'old' is declared for [sm_80], but GPU 0 (NVIDIA H200) is sm_90, so it cannot be run here"
        );
    }

    #[test]
    fn open_never_panics() {
        // Without a driver this is a typed error; with one it is a GPU. Either way no panic.
        match Gpu::open(0) {
            Ok(gpu) => {
                assert!(gpu.info().arch.starts_with("sm_"));
                assert!(gpu.info().max_shared_per_block_optin >= gpu.info().max_shared_per_block);
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
        if !driver_library_present() {
            assert!(matches!(Gpu::open(0), Err(DeviceError::NoDriverLibrary)));
            assert!(matches!(
                driver_version(),
                Err(DeviceError::NoDriverLibrary)
            ));
        }
    }

    #[test]
    fn gpu_reports_itself() {
        let Some(gpu) = crate::testing::gpu_or_skip("device::gpu_reports_itself") else {
            return;
        };
        let info = gpu.info();
        eprintln!("{}", info.summary());
        assert!(info.multiprocessors > 0);
        assert!(info.driver_version.0 >= 13);
        assert_eq!(
            info.arch,
            format!(
                "sm_{}{}",
                info.compute_capability.0, info.compute_capability.1
            )
        );
        gpu.synchronize("nothing").unwrap();
    }
}
