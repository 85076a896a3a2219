//! The classic engines, `dp4a`, `mma_k16` and `mma_k32_fold`: they stage each window's weights and activations in
//! shared memory, with plain loads or cp.async, and expand the weights from there. Their knobs are how they stage;
//! they keep every global default and have no rule of their own beyond the families' (docs/DESIGN.md D2-D4).

use crate::description::*;

/// How a classic engine stages a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    pub scale_fetch: ScaleFetch,
    pub expand: ExpandWidth,
    pub cp_async_activations: CpAsync,
    pub cp_async_plane: CpAsync,
}

/// The knobs of a classic engine.
pub const KNOBS: &[&str] = &[
    "scale_fetch",
    "expand",
    "cp_async_activations",
    "cp_async_plane",
];

impl Staging {
    pub fn of(desc: &VariantDescription) -> Staging {
        Staging {
            scale_fetch: desc.scale_fetch,
            expand: desc.expand,
            cp_async_activations: desc.cp_async_activations,
            cp_async_plane: desc.cp_async_plane,
        }
    }
}
