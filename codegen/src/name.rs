//! Canonical names (docs/DESIGN.md D7): every field that changes the generated source, spelled out in a fixed
//! order, CUTLASS-style, so that the name alone tells a reviewer the whole configuration. The declared name
//! and the architecture list are left out: neither changes the source.

use crate::description::{Engine, Producer, Quantizer, RingLanes, Segment, VariantDescription};

/// `q6k_<engine>_<mode>_<nbj>x<tile_n>_w<warps_m>x<warps_n>_kdr<k>_ks<ksplit>_<fetch>_<expand>_cpa<a>_cpp<p>_s<stages>`,
/// then `_acc<sets>` for the prefolded and wgmma engines, the only ones with a choice of accumulator sets, and for
/// `mma_k32_prefolded`, `mma_k32_regfold` and `mma_k16_widen`, the engines with a choice of refill, `_burst`, `_spread` or `_tma` (the validator holds every
/// other engine at the default, so leaving these out of their names loses nothing), then `_totreg` or
/// `_totsmem` where K is not split, then `_fq` where the matmul quantizes its own activations, then `_u<chunks>`
/// where the chunk loop is not unrolled fully, then `_tu<tokens>` where the ring's token loop is not, then `_lr`
/// where a ring warp's lanes take rows, then `_b<blocks>` where a number of blocks per SM is asked for.
pub fn canonical_name(desc: &VariantDescription) -> String {
    let accumulators = match desc.engine {
        Engine::MmaK32Prefolded => format!("_acc{}_{}", desc.accumulator_sets, desc.refill),
        Engine::WgmmaK32Prefolded | Engine::WgmmaK32Regfold => {
            format!("_acc{}", desc.accumulator_sets)
        }
        Engine::MmaK32Regfold | Engine::MmaK16Widen => format!("_{}", desc.refill),
        _ => String::new(),
    };
    // Only an unsplit K keeps totals, so only there is their place a choice.
    let totals = if desc.ksplit == 1 {
        format!("_tot{}", desc.totals.short_keyword())
    } else {
        String::new()
    };
    // Only a segment moved to shared memory is named; registers, the default, are not.
    let segment = match desc.segment {
        Segment::Registers => "",
        Segment::Shared => "_segsmem",
    };
    // Only a requested occupancy changes the source (`__launch_bounds__`), so only then is it named.
    let occupancy = if desc.blocks_per_sm > 1 {
        format!("_b{}", desc.blocks_per_sm)
    } else {
        String::new()
    };
    // Only the ring may quantize its own activations; the default, a separate quantizer, is not named.
    let quantizer = match desc.quantizer {
        Quantizer::Separate => "",
        Quantizer::Fused => "_fq",
    };
    // Only the register-fold engine may unroll its chunk loop partly; a full unroll is not named.
    let unroll = if desc.chunk_unroll > 0 {
        format!("_u{}", desc.chunk_unroll)
    } else {
        String::new()
    };
    // Only the ring may run its tokens one at a time; the unrolled default is not named.
    let token_unroll = if desc.token_unroll > 0 {
        format!("_tu{}", desc.token_unroll)
    } else {
        String::new()
    };
    // Only the ring may give a warp's lanes rows or fragments; the default, consecutive items, is not named.
    let ring_lanes = match desc.ring_lanes {
        RingLanes::Superblocks => "",
        RingLanes::Rows => "_lr",
        RingLanes::Fragments => "_lf",
    };
    // Only a fragment ring may split K between its warps; one group is not named.
    let warps_k = if desc.warps_k > 1 {
        format!("_wk{}", desc.warps_k)
    } else {
        String::new()
    };
    // Only a cluster of blocks changes the launch and the copies; one block is not named.
    let cluster = if desc.cluster_blocks() > 1 {
        format!("_c{}x{}", desc.cluster_rows, desc.cluster_tokens)
    } else {
        String::new()
    };
    // Only the int12 tiles may have a producer warpgroup; the tile's own refills are not named.
    let producer = match desc.producer {
        Producer::None => "",
        Producer::Warpgroup => "_pwg",
    };
    // Only a tile whose rows a fold warpgroup folds names its fold warps; lanes folding their own rows are not named.
    let fold_warps = if desc.fold_warps > 0 {
        format!("_fw{}", desc.fold_warps)
    } else {
        String::new()
    };
    // Only a variant whose last wave's tiles may split along K names its parts; whole tiles are not named.
    let tail_parts = if desc.tail_parts > 1 {
        format!("_tp{}", desc.tail_parts)
    } else {
        String::new()
    };
    format!(
        "q6k_{}_{}_{}x{}_w{}x{}_kdr{}_ks{}_{}_{}_cpa{}_cpp{}_s{}{accumulators}{totals}{segment}{quantizer}{unroll}{token_unroll}{ring_lanes}{warps_k}{occupancy}{cluster}{fold_warps}{producer}{tail_parts}",
        desc.engine,
        desc.mode,
        desc.nbj,
        desc.tile_n,
        desc.warps_m,
        desc.warps_n,
        desc.kdr,
        desc.ksplit,
        desc.scale_fetch,
        desc.expand,
        desc.cp_async_activations.bytes(),
        desc.cp_async_plane.bytes(),
        desc.stages
    )
}
