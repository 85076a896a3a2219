//! The engines that stage each row's q6_K block as it is and build their A fragments from it in registers:
//! `mma_k32_regfold` and `mma_k16_widen` (mma.sync), `wgmma_f16_regfold`, and the rules they share with
//! `wgmma_k32_regfold` (whose own knobs live in [`super::wgmma_regfold`]). Whole blocks a window, 16-byte pieces,
//! and a pipeline of at least two stages.

use super::Written;
use crate::description::*;
use crate::fields::FieldError;
use crate::validate::{require, require_fields, require_int_per32};

/// The knobs of the mma.sync register engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterRows {
    /// Chunks a step of the chunk loop unrolls; 0 = fully.
    pub chunk_unroll: u32,
    /// `burst`, `spread` or `tma` for `mma_k32_regfold`; `tma` for `mma_k16_widen`.
    pub refill: Refill,
}

/// The knobs of `mma_k32_regfold` (`mma_k16_widen` has them, its refill always `tma`).
pub const KNOBS: &[&str] = &["chunk_unroll", "refill"];

impl RegisterRows {
    pub fn of(desc: &VariantDescription) -> RegisterRows {
        RegisterRows {
            chunk_unroll: desc.chunk_unroll,
            refill: desc.refill,
        }
    }
}

/// Whole blocks a window (kdr 8), 16-byte pieces (uint4), two stages at least; `mma_k16_widen` only by the copy
/// engine; the int8 engines' tokens by cp.async 16 unless the copy engine brings them; a warpgroup's 64 rows.
pub(super) fn fill_defaults(desc: &mut VariantDescription, written: &Written) {
    if !written("kdr") {
        desc.kdr = 8;
    }
    if !written("expand") {
        desc.expand = ExpandWidth::Uint4;
    }
    if !written("stages") {
        desc.stages = 2;
    }
    if desc.engine == Engine::MmaK16Widen && !written("refill") {
        desc.refill = Refill::Tma;
    }
    if !written("cp_async_activations")
        && desc.engine != Engine::WgmmaF16Regfold
        && desc.refill != Refill::Tma
    {
        desc.cp_async_activations = CpAsync::B16;
    }
}

/// The modes: `wgmma_k32_regfold` runs the accurate modes, the others `int_per32` only.
pub(super) fn modes(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    if desc.engine == Engine::WgmmaK32Regfold {
        require(
            errors,
            matches!(desc.mode, NumericsMode::IntPer32 | NumericsMode::Int12Per256),
            "mode",
            format!(
                "engine wgmma_k32_regfold implements modes int_per32 and int12_per256 (the accurate modes); got {}",
                desc.mode
            ),
        );
    } else {
        require_int_per32(desc, errors);
    }
}

pub(super) fn rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        desc.kdr == 8,
        "kdr",
        format!(
            "engine {} stages whole q6_K blocks (each chunk reads bytes spread over its \
             block): kdr must be 8; got {}",
            desc.engine, desc.kdr
        ),
    );
    require_fields(
        errors,
        &[
            ("scale_fetch", desc.scale_fetch == ScaleFetch::Narrow),
            ("expand", desc.expand == ExpandWidth::Uint4),
        ],
        format!(
            "engine {} copies whole blocks in 16-byte pieces and reads the scales from them: \
             scale_fetch must be narrow and expand uint4; got {} and {}",
            desc.engine, desc.scale_fetch, desc.expand
        ),
    );
    require(
        errors,
        desc.stages >= 2,
        "stages",
        format!(
            "engine {} pipelines its weight copies: stages must be at least 2; got {}",
            desc.engine, desc.stages
        ),
    );
    // The f16 engine brings its tokens through registers; with refill = tma the copy engine stages them;
    // otherwise the int8 engines stage them with cp.async.
    let (tokens_arrive, cp_async_tokens) = if desc.engine == Engine::WgmmaF16Regfold {
        (
            "loads each window's tokens into registers during the window before and converts them to \
             f16 itself",
            CpAsync::Off,
        )
    } else if desc.refill == Refill::Tma {
        (
            "with refill = tma takes each window's tokens and scales from the copy engine",
            CpAsync::Off,
        )
    } else {
        ("stages its tokens with cp.async", CpAsync::B16)
    };
    require(
        errors,
        desc.cp_async_activations == cp_async_tokens,
        "cp_async_activations",
        format!(
            "engine {} {tokens_arrive}: cp_async_activations must be {cp_async_tokens}; got {}",
            desc.engine, desc.cp_async_activations
        ),
    );
    if desc.engine == Engine::WgmmaF16Regfold {
        // With warps_m a multiple of 4 this also makes the tokens per warp a multiple of 16, which the
        // 16-byte loads of a lane's activation scales need.
        require(
            errors,
            desc.tile_n
                .saturating_mul(8)
                .is_multiple_of(desc.threads().max(1)),
            "tile_n",
            format!(
                "engine {} has every thread load an equal share of a window's tile_n x 8 activation \
                 scales: tile_n x 8 must be a multiple of the block's {} threads; got tile_n = {}",
                desc.engine,
                desc.threads(),
                desc.tile_n
            ),
        );
    }
    if desc.engine == Engine::MmaK16Widen {
        require(
            errors,
            desc.refill == Refill::Tma,
            "refill",
            format!(
                "engine mma_k16_widen pairs its token fragments the way the copy engine stages them: refill must \
                 be tma; got {}",
                desc.refill
            ),
        );
    }
}

/// `chunk_unroll` belongs to the mma.sync register engines, the only ones whose chunk loop is not always
/// unrolled fully.
pub(super) fn knob_rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        matches!(desc.chunk_unroll, 0 | 1 | 2 | 4)
            && (desc.chunk_unroll == 0 || desc.engine.is_mma_sync_in_registers()),
        "chunk_unroll",
        format!(
            "chunk_unroll must be full, or 1, 2 or 4 with engine mma_k32_regfold or mma_k16_widen (the only \
             engines whose chunk loop is not always unrolled fully); got {} with engine {}",
            desc.chunk_unroll, desc.engine
        ),
    );
}
