//! How a run fails: [`BenchError`] when it cannot start, [`Fail`] for one step on the GPU (`Fatal` when the
//! CUDA context is gone and nothing later can run).

use cudarc::driver::result::DriverError;

use crate::gpu::device::{is_sticky_kernel_fault, DeviceError};
use crate::gpu::launch::LaunchError;

/// Why a run could not start. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("{0}")]
    Setup(String),
}

/// Whether a driver error left the context unusable.
pub(super) fn sticky(e: Option<DriverError>) -> bool {
    e.is_some_and(is_sticky_kernel_fault)
}

/// A failure while running something on the GPU: `Fatal` when the context is gone.
#[derive(Debug)]
pub(super) enum Fail {
    Local(String),
    Fatal(String),
}

impl Fail {
    pub(super) fn device(e: DeviceError) -> Fail {
        if sticky(e.driver_error()) {
            Fail::Fatal(e.to_string())
        } else {
            Fail::Local(e.to_string())
        }
    }

    pub(super) fn launch(e: LaunchError) -> Fail {
        if sticky(e.driver_error()) {
            Fail::Fatal(e.to_string())
        } else {
            Fail::Local(e.to_string())
        }
    }

    pub(super) fn driver(what: &str, e: DriverError) -> Fail {
        Fail::device(DeviceError::cuda(what, e))
    }

    pub(super) fn context(self, what: &str) -> Fail {
        match self {
            Fail::Local(s) => Fail::Local(format!("{what}: {s}")),
            Fail::Fatal(s) => Fail::Fatal(format!("{what}: {s}")),
        }
    }
}

pub(super) fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

pub(super) fn fail_text(f: Fail) -> String {
    match f {
        Fail::Local(s) | Fail::Fatal(s) => s,
    }
}

pub(super) enum WeightsErrorKind {
    Fatal(String),
    Local,
}

pub(super) fn classify_weights(e: &crate::gpu::weights::WeightsError) -> WeightsErrorKind {
    match e {
        crate::gpu::weights::WeightsError::Device(d) if sticky(d.driver_error()) => {
            WeightsErrorKind::Fatal(format!("registering the weights: {e}"))
        }
        _ => WeightsErrorKind::Local,
    }
}
