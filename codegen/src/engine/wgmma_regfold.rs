//! `wgmma_k32_regfold`: the register fold feeding Hopper's int8 warpgroup MMA. The one engine that runs mode
//! `int12_per256`, and the owner of the knobs of its copy-engine pipeline: the producer warpgroup, the fold
//! warps, thread-block clusters and the last wave's split (`tail_parts`). Each knob's rule is here, and so is the
//! sentence another engine gets for it.

use crate::description::*;
use crate::fields::FieldError;
use crate::validate::{one_of, require};

/// Tile warps times blocks per SM from which the int12 copy-engine tile with totals in the output crashes NVRTC
/// 13.0 (the rule in this module says which shapes).
pub const CRASHING_WARPS: u32 = 16;
/// The legal nonzero `fold_warps`: one or two warpgroups.
pub const FOLD_WARPS: [u32; 2] = [4, 8];
/// The most parts along K a tile of the last wave may take (`tail_parts`).
pub const MAX_TAIL_PARTS: u32 = 4;
/// The legal `cluster_rows` and `cluster_tokens` values: blocks of a thread-block cluster along each axis.
pub const CLUSTER_BLOCKS: [u32; 3] = [1, 2, 4];
/// Blocks a cluster may have in all (the portable cluster size).
pub const MAX_CLUSTER_BLOCKS: u32 = 8;

/// The knobs of `wgmma_k32_regfold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaRegfold {
    /// 1, or 2 (a set per chunk parity) under `int_per32`.
    pub accumulator_sets: u32,
    /// `burst`, or `tma` (under `int12_per256`).
    pub refill: Refill,
    /// Warps that fold every row into shared memory for the tile's warps (0: each warp folds its own rows).
    pub fold_warps: u32,
    pub producer: Producer,
    pub cluster_rows: u32,
    pub cluster_tokens: u32,
    /// Parts along K a tile of a part-full last wave may take (the tile scheduler's last-wave split).
    pub tail_parts: u32,
}

/// The knobs of `wgmma_k32_regfold`.
pub const KNOBS: &[&str] = &[
    "accumulator_sets",
    "refill",
    "fold_warps",
    "producer",
    "cluster_rows",
    "cluster_tokens",
    "tail_parts",
];

impl WgmmaRegfold {
    pub fn of(desc: &VariantDescription) -> WgmmaRegfold {
        WgmmaRegfold {
            accumulator_sets: desc.accumulator_sets,
            refill: desc.refill,
            fold_warps: desc.fold_warps,
            producer: desc.producer,
            cluster_rows: desc.cluster_rows,
            cluster_tokens: desc.cluster_tokens,
            tail_parts: desc.tail_parts,
        }
    }
}

/// Mode `int12_per256` is this engine's for prefill and `stream_ring`'s for decode: refused on the others, and here
/// outside the pipelines that run it (the ring's own rule is in its module).
pub(super) fn int12_rule(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    if desc.mode == NumericsMode::Int12Per256 && desc.engine != Engine::StreamRing {
        require(
            errors,
            // (The register folds and stream_dp4a refuse it in their own sentence.)
            desc.engine.builds_rows_in_registers() || desc.engine == Engine::StreamDp4a,
            "mode",
            format!(
                "mode int12_per256 (12-bit activations in two int8 planes) is implemented by engine \
                 wgmma_k32_regfold (prefill tiles) and by engine stream_ring with ring_lanes = superblocks or rows \
                 (decode); engine {} does not implement it: use int_per32",
                desc.engine
            ),
        );
    }
    if desc.mode == NumericsMode::Int12Per256 && desc.engine == Engine::WgmmaK32Regfold {
        require(
            errors,
            // (The other register-fold engines refuse every mode but int_per32 above, in their own sentence.)
            matches!(desc.refill, Refill::Burst | Refill::Tma)
                && desc.ksplit == 1
                && desc.accumulator_sets == 1,
            "mode",
            format!(
                "mode int12_per256 multiplies its two activation planes by the fold's two weight planes with wgmma, \
                 which engine wgmma_k32_regfold does with refill = burst or tma, ksplit = 1 and accumulator_sets = 1 (its \
                 three sums are not h and l sets); got engine {}, refill = {}, ksplit = {}, accumulator_sets = {}",
                desc.engine, desc.refill, desc.ksplit, desc.accumulator_sets
            ),
        );
    }
}

/// A shape of this engine that NVRTC cannot compile.
pub(super) fn crash_rule(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    // NVRTC 13.0 (13.0.88) dies inside nvrtcCompileProgram (a segmentation fault, or glibc aborting on a
    // corrupted heap) on this engine's int12 copy-engine tile with its totals in the output once the tile's
    // warps get 128 registers or fewer each. Of the 36 such shapes tried on 2026-12-07 (16 or 32 warps, or 8
    // warps at 2 or 3 blocks per SM; 64 x 32 to 128 x 128; 2 or 3 stages; either segment; clusters), 24
    // crashed it, 6 spilled and 6 compiled; none of the 65 with fewer warps crashed, nor any with refill =
    // burst or totals elsewhere. Which of the 36 crash follows no field we could find, so all are refused.
    let tile_warps = desc.warps_m.saturating_mul(desc.warps_n);
    require(
        errors,
        !(desc.engine == Engine::WgmmaK32Regfold
            && desc.mode == NumericsMode::Int12Per256
            && desc.refill == Refill::Tma
            && desc.totals == Totals::Output
            && tile_warps.saturating_mul(desc.blocks_per_sm) >= CRASHING_WARPS),
        "totals",
        format!(
            "totals = output on engine wgmma_k32_regfold under mode int12_per256 with refill = tma crashes NVRTC 13.0 \
             once warps_m x warps_n x blocks_per_sm reaches {CRASHING_WARPS} (128 registers a thread or fewer); got \
             {} x {} x {}: use totals = registers or shared, or fewer warps or blocks per SM",
            desc.warps_m, desc.warps_n, desc.blocks_per_sm
        ),
    );
}

/// The rules of this engine's knobs, for every description (another engine gets the same sentence).
pub(super) fn knob_rules(desc: &VariantDescription, errors: &mut Vec<FieldError>) {
    require(
        errors,
        CLUSTER_BLOCKS.contains(&desc.cluster_rows)
            && CLUSTER_BLOCKS.contains(&desc.cluster_tokens)
            && desc.cluster_blocks() <= MAX_CLUSTER_BLOCKS
            && (desc.cluster_blocks() == 1
                || (desc.engine == Engine::WgmmaK32Regfold
                    && desc.refill == Refill::Tma
                    && desc.ksplit == 1
                    && desc.kdr.is_multiple_of(desc.cluster_rows))),
        "cluster_rows",
        format!(
            "cluster_rows x cluster_tokens blocks form a thread-block cluster sharing each stage's token boxes (along \
             the rows, each block issuing kdr / cluster_rows of them) and weight box (along the tokens, the blocks \
             taking turns), multicast by the copy engine: each must be {}, their product at most \
             {MAX_CLUSTER_BLOCKS}, and a cluster needs engine wgmma_k32_regfold, refill = tma, ksplit = 1 and kdr a \
             multiple of cluster_rows; got {} x {} with engine {}, refill = {}, ksplit = {}, kdr = {}",
            one_of(&CLUSTER_BLOCKS),
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.engine,
            desc.refill,
            desc.ksplit,
            desc.kdr
        ),
    );
    require(
        errors,
        desc.fold_warps == 0
            || (FOLD_WARPS.contains(&desc.fold_warps)
                && desc.engine == Engine::WgmmaK32Regfold
                && desc.mode == NumericsMode::Int12Per256
                && desc.refill == Refill::Tma
                && desc.kdr == 8
                && desc.stages >= 2
                && desc.ksplit == 1
                && desc.warps_m.saturating_mul(desc.warps_n) == 8
                && desc.cluster_blocks() == 1
                && desc.nbj.is_multiple_of(16 * desc.fold_warps)),
        "fold_warps",
        format!(
            "fold_warps adds warps that fold every row of the tile into shared memory for the other warps' \
             wgmmas: it must be 0, {}, and more than 0 needs engine wgmma_k32_regfold, mode int12_per256, refill \
             = tma, kdr = 8, stages >= 2, ksplit = 1, two warpgroups (warps_m x warps_n = 8), no cluster and nbj a \
             multiple of 16 x fold_warps (whole fragment groups a fold warp); got fold_warps = {} with engine {}, \
             mode {}, refill = {}, kdr = {}, stages = {}, ksplit = {}, warps_m x warps_n = {} x {}, cluster {} x \
             {}, nbj = {}",
            one_of(&FOLD_WARPS),
            desc.fold_warps,
            desc.engine,
            desc.mode,
            desc.refill,
            desc.kdr,
            desc.stages,
            desc.ksplit,
            desc.warps_m,
            desc.warps_n,
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.nbj
        ),
    );
    require(
        errors,
        desc.producer == Producer::None
            || (desc.engine == Engine::WgmmaK32Regfold
                && desc.mode == NumericsMode::Int12Per256
                && desc.refill == Refill::Tma
                && desc.ksplit == 1
                && desc.warps_m.saturating_mul(desc.warps_n) == 8
                && desc.warps_k == 1
                && desc.cluster_blocks() == 1
                && desc.fold_warps == 0
                && desc.quantizer == Quantizer::Separate
                && desc.blocks_per_sm == 1),
        "producer",
        format!(
            "producer = warpgroup adds four warps that refill the stages while the tile's two warpgroups take \
             their registers (setmaxnreg): it needs engine wgmma_k32_regfold, mode int12_per256, refill = tma, \
             ksplit = 1, warps_m x warps_n = 8 with warps_k = 1, no cluster, no fold warps, \
             quantizer = separate and blocks_per_sm = 1; got producer = {} with engine {}, mode {}, refill = {}, \
             ksplit = {}, warps_m x warps_n x warps_k = {} x {} x {}, cluster {} x {}, \
             fold_warps = {}, quantizer = {}, blocks_per_sm = {}",
            desc.producer,
            desc.engine,
            desc.mode,
            desc.refill,
            desc.ksplit,
            desc.warps_m,
            desc.warps_n,
            desc.warps_k,
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.fold_warps,
            desc.quantizer,
            desc.blocks_per_sm
        ),
    );
    require(
        errors,
        (1..=MAX_TAIL_PARTS).contains(&desc.tail_parts)
            && (desc.tail_parts == 1
                || (desc.engine == Engine::WgmmaK32Regfold
                    && desc.refill == Refill::Tma
                    && desc.ksplit == 1
                    && desc.totals != Totals::Output
                    && desc.segment == Segment::Registers
                    && desc.quantizer == Quantizer::Separate
                    && desc.cluster_blocks() == 1
                    && desc.fold_warps == 0)),
        "tail_parts",
        format!(
            "tail_parts is how many parts along K a tile of a part-full last wave may take: it must be 1 to \
             {MAX_TAIL_PARTS}, and more than 1 needs engine wgmma_k32_regfold, refill = tma, ksplit = 1, totals = \
             registers or shared, segment = registers, quantizer = separate, no cluster and no fold warps; got tail_parts = {} \
             with engine {}, refill = {}, ksplit = {}, totals = {}, segment = {}, quantizer = {}, cluster {} x {}, \
             fold_warps = {}",
            desc.tail_parts,
            desc.engine,
            desc.refill,
            desc.ksplit,
            desc.totals,
            desc.segment,
            desc.quantizer,
            desc.cluster_rows,
            desc.cluster_tokens,
            desc.fold_warps
        ),
    );
}
