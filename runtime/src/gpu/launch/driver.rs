//! Queueing one kernel with the driver: the ordinary way or as the previous kernel's programmatic dependent (PDL),
//! a failed launch turned into one sentence naming the kernel and its geometry.

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig};

use super::error::LaunchError;
use crate::gpu::device::{guard, DeviceError};

/// One kernel parameter for `cuLaunchKernel*`: the address of the value the driver copies.
pub(crate) fn kernel_arg<T>(value: &T) -> *mut std::ffi::c_void {
    value as *const T as *mut std::ffi::c_void
}

/// Queues `func` as the previous kernel's programmatic dependent when `programmatic` (sm_90, where every kernel of
/// a module waits for its predecessor's results with `griddepcontrol.wait`, docs/KERNELS.md), else the ordinary
/// way.
///
/// # Safety
/// `args` must be the kernel's parameters, each pointing at a value of the parameter's type.
pub(crate) unsafe fn launch_maybe_programmatic(
    programmatic: bool,
    func: &CudaFunction,
    cfg: LaunchConfig,
    stream: &CudaStream,
    args: &mut [*mut std::ffi::c_void],
) -> Result<(), DriverError> {
    if programmatic {
        return launch_programmatic(func, cfg, stream, args);
    }
    stream.context().bind_to_thread()?;
    sys::cuLaunchKernel(
        func.cu_function(),
        cfg.grid_dim.0,
        cfg.grid_dim.1,
        cfg.grid_dim.2,
        cfg.block_dim.0,
        cfg.block_dim.1,
        cfg.block_dim.2,
        cfg.shared_mem_bytes,
        stream.cu_stream(),
        args.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()
}

/// `cuLaunchKernelEx` with programmatic stream serialization (PDL): the kernel's blocks may start, and load
/// what no earlier kernel writes, while the kernel before it in `stream` finishes; its `griddepcontrol.wait`
/// holds back everything after that until the earlier kernel is done and its writes are visible.
///
/// # Safety
/// `args` must be the kernel's parameters, each pointing at a value of the parameter's type.
unsafe fn launch_programmatic(
    func: &CudaFunction,
    cfg: LaunchConfig,
    stream: &CudaStream,
    args: &mut [*mut std::ffi::c_void],
) -> Result<(), DriverError> {
    stream.context().bind_to_thread()?;
    let mut attribute: sys::CUlaunchAttribute = std::mem::zeroed();
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attribute,
        numAttrs: 1,
    };
    sys::cuLaunchKernelEx(
        &config,
        func.cu_function(),
        args.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()
}

pub(crate) fn launch<T>(
    kernel: &str,
    cfg: LaunchConfig,
    f: impl FnOnce() -> Result<T, DriverError>,
) -> Result<(), LaunchError> {
    let result = guard("launching a kernel", || {
        f().map_err(|e| DeviceError::cuda("launch", e))
    });
    match result {
        Ok(_) => Ok(()),
        Err(DeviceError::Cuda { source, .. }) => Err(LaunchError::Launch {
            kernel: kernel.to_string(),
            grid: cfg.grid_dim,
            block: cfg.block_dim.0,
            shared: cfg.shared_mem_bytes,
            source,
        }),
        Err(e) => Err(e.into()),
    }
}
