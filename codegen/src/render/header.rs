//! The header's map of shared memory: what a block's shared memory holds, region by region, as comment lines (the
//! prelude writes each after `// `). The layout's facts ([`SharedLayout`]) in words, one family of engines at a
//! time, so that the template holds no branch on them.

use crate::description::*;
use crate::layout::{Region, SharedLayout};

/// The lines of the shared-memory map, without their `// ` (an empty line is `//`).
pub(super) fn shared_memory_lines(
    desc: &VariantDescription,
    layout: &SharedLayout,
    dynamic_shared: bool,
) -> Vec<String> {
    let (stages, stage_bytes, total) = (desc.stages, layout.stage_bytes, layout.total_bytes);
    let mut lines: Vec<String> = Vec::new();
    let mut push = |text: String| lines.push(text);
    match (desc.engine, desc.ring_lanes) {
        (Engine::StreamRing, RingLanes::Fragments) if desc.warps_k > 1 => {
            push(format!(
                "Shared memory: {} rings (one a group of warps along K) of {stages} stage(s) of {stage_bytes} bytes \
                 (each warp's 16 rows",
                desc.warps_k
            ));
            push(format!(
                "of the stage's super-blocks, the tokens' values and scales for them) plus their mbarriers and \
                 counts, {total} bytes;"
            ));
            push(
                "the later groups' segment sums follow, sized from K by the launcher for each call (dynamic; \
                 docs/KERNELS.md)."
                    .to_string(),
            );
        }
        (Engine::StreamRing, RingLanes::Fragments) => {
            push(format!(
                "Shared memory: a ring of {stages} stage(s) of {stage_bytes} bytes (each warp's 16 rows of the \
                 stage's super-blocks, the"
            ));
            push(format!(
                "tokens' values and scales for them) plus its mbarriers and counts, {total} bytes in all, whatever \
                 K (dynamic;"
            ));
            push("docs/KERNELS.md).".to_string());
        }
        (Engine::StreamRing, lanes) => {
            push(format!(
                "Shared memory: a ring of {stages} stage(s) of {stage_bytes} bytes (one padded q6_K block per \
                 thread) plus its"
            ));
            push(format!(
                "mbarriers, {total} bytes in all; the tokens' records and the super-block sums follow, sized \
                 from K by"
            ));
            push("the launcher for each call (dynamic; docs/KERNELS.md).".to_string());
            if lanes == RingLanes::Rows {
                push(
                    "A stage's slots are row by row, each row's 16 bytes over (ring_lanes = rows)."
                        .to_string(),
                );
            }
        }
        _ => {
            let held = if desc.engine == Engine::StreamDp4a {
                "two activation windows and a scratch per warp, no staged weights".to_string()
            } else {
                staged_parts(desc, layout)
            };
            let kind = if dynamic_shared {
                " (dynamic: over 48 KiB, the launcher raises the limit)"
            } else {
                " (static)"
            };
            push(format!("Shared memory: {held} = {total} bytes{kind}."));
        }
    }
    for region in &layout.regions {
        lines.push(format!(
            "  {}: offset {}, {} bytes, {}",
            region.name,
            region.offset,
            region.bytes,
            stage_region_shape(desc, region)
        ));
    }
    if !layout.window_regions.is_empty() {
        lines.push(String::new());
        let after = if desc.totals == Totals::Shared {
            " and the totals"
        } else {
            ""
        };
        lines.push(format!(
            "{} window buffers of {} bytes after the stages{after}, each window's tokens written into one",
            layout.window_buffers, layout.window_buffer_bytes
        ));
        lines
            .push("during the window before it (offsets from the start, of buffer 0):".to_string());
        for region in &layout.window_regions {
            lines.push(format!(
                "  {}: offset {}, {} bytes, {}",
                region.name,
                region.offset,
                region.bytes,
                core_or_rows(region)
            ));
        }
    }
    lines
}

/// What a staged block's shared memory holds beside its stages.
fn staged_parts(desc: &VariantDescription, layout: &SharedLayout) -> String {
    let mut text = format!("{} stage(s) of {} bytes", desc.stages, layout.stage_bytes);
    if desc.totals == Totals::Shared {
        text += &format!(" + {} bytes of segment totals", layout.totals_bytes);
    }
    if desc.segment == Segment::Shared {
        text += &format!(" + {} bytes of running segments", layout.segment_bytes);
    }
    if desc.refill == Refill::Tma {
        text += &format!(" + {} bytes of stage mbarriers", layout.stage_barrier_bytes);
        if desc.producer != Producer::Warpgroup {
            text += " and reader counts";
        }
    }
    if !layout.window_regions.is_empty() {
        text += &format!(" + {} window buffers", layout.window_buffers);
    }
    if let Some(ring) = layout.fold_ring.as_ref().filter(|_| desc.fold_warps > 0) {
        text += &format!(" + {} bytes of the fold warpgroup's ring", ring.bytes);
    }
    text
}

/// How a stage region's rows are laid out.
fn stage_region_shape(desc: &VariantDescription, region: &Region) -> String {
    let wgmma = desc.engine.is_wgmma();
    if desc.engine == Engine::StreamDp4a {
        if region.name.starts_with("smem_activation") {
            format!("two windows, token rows of {} bytes", region.row_stride)
        } else {
            format!(
                "{} warp slices of {} bytes",
                desc.warps_m, region.row_stride
            )
        }
    } else if wgmma && region.row_stride == 16 {
        "8-row x 16-byte core matrices".to_string()
    } else if wgmma && desc.refill == Refill::Tma && region.name == "smem_activations" {
        "a box a chunk of 64-byte rows, 64-byte swizzled".to_string()
    } else {
        format!("rows of {} bytes", region.row_stride)
    }
}

/// A window buffer region: core matrices, or rows.
fn core_or_rows(region: &Region) -> String {
    if region.row_stride == 16 {
        "8-row x 16-byte core matrices".to_string()
    } else {
        format!("rows of {} bytes", region.row_stride)
    }
}
