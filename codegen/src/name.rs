//! Canonical names (DECISIONS.md 7): every field that changes the generated source, spelled out in a fixed
//! order, CUTLASS-style, so that the name alone tells a reviewer the whole configuration. The declared name
//! and the architecture list are left out: neither changes the source.

use crate::description::VariantDescription;

/// `q6k_<engine>_<mode>_<nbj>x<tile_n>_w<warps_m>x<warps_n>_kdr<k>_ks<ksplit>_<fetch>_<expand>_cpa<a>_cpp<p>_s<stages>`.
pub fn canonical_name(desc: &VariantDescription) -> String {
    format!(
        "q6k_{}_{}_{}x{}_w{}x{}_kdr{}_ks{}_{}_{}_cpa{}_cpp{}_s{}",
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
