//! The stage engines' matmul (`mmq_main` in templates/kernel.cu.tera) composed of components: a tile scheduler
//! (templates/schedule/), a pipeline (templates/pipeline/), an epilogue (templates/epilogue/), the sums of the
//! numerics mode (templates/sums/) and the engine's window body. Which component fills each part is decided here,
//! once, from the description; the hub has no condition on it.
//!
//! A component is one template. Its rendered text holds sections, each starting at a line `//@ <slot>` and running
//! to the next such line (what comes before the first is dropped): each section is the text of the hub's slot of
//! that name, `{{- slot }}` there, from a line break on; a bare `//@` ending a section keeps a blank line after it.
//! Sections of the same slot from several components follow each other. A slot no component fills is empty.

use super::context::RenderContext;
use crate::description::*;
use crate::launch::{Decomposition, TileSchedule};

/// The line that starts a section.
const SECTION: &str = "//@ ";

/// Every slot some component fills: the names its templates' sections start with (each empty until a component of
/// this module fills it), so that a new slot is declared by the component that fills it.
pub(super) fn slots(templates: &[(&str, &'static str)]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = templates
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| line.strip_prefix(SECTION))
        .map(str::trim)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The components of `desc`'s module, in the order they are rendered: the helpers it calls, then its matmul's
/// (none for the streaming engines, whose templates are whole).
pub(super) fn components(desc: &VariantDescription, context: &RenderContext) -> Vec<&'static str> {
    let mut components = helpers(context);
    match (desc.engine, desc.ring_lanes) {
        (Engine::StreamDp4a, _) => {
            components.push("family/stream.cu.tera");
            return components;
        }
        (Engine::StreamRing, RingLanes::Fragments) => {
            components.push(if desc.warps_k > 1 {
                "fragments/k_groups.cu.tera"
            } else {
                "fragments/one_group.cu.tera"
            });
            components.push(if desc.warps_n > 1 {
                "fragments/token_pair.cu.tera"
            } else {
                "fragments/token_single.cu.tera"
            });
            components.push("family/ring_fragments.cu.tera");
            return components;
        }
        (Engine::StreamRing, lanes) => {
            let int12 = desc.mode == NumericsMode::Int12Per256;
            // The mode's numerics (records, chunk sums, the segment step), then the ring's schedule: the others'
            // sections hold their slots.
            components.push(if int12 {
                "ring/int12.cu.tera"
            } else {
                "ring/int_per32.cu.tera"
            });
            components.push(if desc.ksplit > 1 {
                "ring/split_k.cu.tera"
            } else {
                "ring/whole.cu.tera"
            });
            components.push(match (desc.token_unroll == 1, int12) {
                (true, false) => "ring/token_loop.cu.tera",
                (false, false) => "ring/tokens_unrolled.cu.tera",
                (true, true) => "ring/int12_token_loop.cu.tera",
                (false, true) => "ring/int12_tokens_unrolled.cu.tera",
            });
            components.push(if lanes == RingLanes::Rows {
                "ring/rows.cu.tera"
            } else {
                "ring/superblocks.cu.tera"
            });
            components.push(match (desc.quantizer, int12) {
                (Quantizer::Fused, _) => "ring/fused.cu.tera",
                (Quantizer::Separate, false) => "ring/separate.cu.tera",
                (Quantizer::Separate, true) => "ring/int12_separate.cu.tera",
            });
            components.push("family/ring.cu.tera");
            return components;
        }
        _ => {}
    }
    components.push("family/tile.cu.tera");
    components.extend(engine_math(desc.engine));
    components.extend([scheduler(desc), pipeline(desc), epilogue(desc)]);
    if desc.producer == Producer::Warpgroup {
        components.push("producer_warpgroup.cu.tera");
    }
    components.extend(sums(desc));
    components.push(engine_window(desc.engine));
    components.extend(stage_loads(desc));
    // The module's stage part last: it includes the hub whose slots the others fill.
    if !desc.engine.builds_rows_in_registers() {
        components.push("family/scales.cu.tera");
    }
    components.push("family/staged.cu.tera");
    components
}

/// The helper functions the module calls, in the order the prelude gives them (templates/helpers/).
fn helpers(c: &RenderContext) -> Vec<&'static str> {
    let (prefolded, regfold, stream, ring) = (c.prefolded, c.regfold, c.stream, c.stream_ring);
    let expands_blocks = !prefolded && !regfold && !stream && !ring;
    let needed = [
        // The f16 d of blocks read from global or staged memory.
        (
            !c.block_fetches.is_empty() || regfold || stream || ring,
            "helpers/f16_to_f32.cu.tera",
        ),
        // The register fold's byte shuffles (mma_k16_widen widens without them).
        (
            regfold && c.engine != "mma_k16_widen",
            "helpers/byte_perm.cu.tera",
        ),
        // Every engine that takes q6 from ql and qh itself (the register folds have their own).
        (
            !prefolded
                && !stream
                && c.engine != "mma_k32_regfold"
                && c.engine != "wgmma_k32_regfold",
            "helpers/q6_bytes.cu.tera",
        ),
        // The engines that expand staged blocks to q6 - 32, and the streaming engine where -32 is not taken out
        // through the activations' sums.
        (
            expands_blocks || (stream && !c.stream_offset_in_sums),
            "helpers/bytes_minus_32.cu.tera",
        ),
        (expands_blocks, "helpers/q6_minus_32.cu.tera"),
        (
            !c.cp_async_widths.is_empty() || prefolded || ring || c.tma_refill,
            "helpers/shared_address.cu.tera",
        ),
        // mbarriers: the ring's copies and the copy engine's stages.
        (ring || c.tma_refill, "helpers/mbarrier.cu.tera"),
        (
            (ring || c.tma_refill)
                && (c.ring_lanes_fragments || c.fold_warps > 0 || c.producer_warpgroup),
            "helpers/barrier_arrive.cu.tera",
        ),
        (
            (ring || c.tma_refill) && c.ring_lanes_fragments,
            "helpers/barrier_arrive_after_copies.cu.tera",
        ),
        (ring && !c.ring_lanes_fragments, "helpers/bulk_copy.cu.tera"),
        (
            c.tma_refill || c.ring_tensor_copies,
            "helpers/tensor_maps.cu.tera",
        ),
        (
            (c.tma_refill && c.window_token_box) || (c.ring_tensor_copies && c.ring_lanes_rows),
            "helpers/tensor_copy_3d.cu.tera",
        ),
        (
            c.tma_refill && c.cluster_rows * c.cluster_tokens > 1,
            "helpers/cluster.cu.tera",
        ),
        (
            c.tma_refill && (c.wgmma || c.ring_lanes_fragments),
            "helpers/scale_position.cu.tera",
        ),
        (!c.cp_async_widths.is_empty(), "helpers/cp_async.cu.tera"),
        (c.wgmma, "helpers/wgmma_shared.cu.tera"),
    ];
    needed
        .into_iter()
        .filter_map(|(needed, helper)| needed.then_some(helper))
        .collect()
}

/// The engine's instructions and helpers: its multiply, and for the mma.sync engines that load fragments with
/// ldmatrix, those loads and the fold or the multiplication of the planes.
fn engine_math(engine: Engine) -> Vec<&'static str> {
    match engine {
        Engine::Dp4a | Engine::StreamDp4a | Engine::StreamRing => vec![],
        Engine::MmaK16 => vec!["math/mma_k16.cu.tera"],
        Engine::MmaK16Widen => vec!["math/mma_k16.cu.tera", "math/ldmatrix.cu.tera"],
        Engine::MmaK32Fold => vec!["math/mma_k32.cu.tera"],
        Engine::MmaK32Regfold | Engine::MmaK32Prefolded => {
            vec!["math/mma_k32.cu.tera", "math/ldmatrix.cu.tera"]
        }
        Engine::WgmmaK32Prefolded | Engine::WgmmaK32Regfold | Engine::WgmmaF16Regfold => {
            vec!["math/wgmma.cu.tera"]
        }
    }
}

/// How a stage is loaded: the register engines' blocks; the threads' own copies of the weights (as blocks,
/// prefolded planes or expanded), their scales and the tokens, with the cp.async pipeline's refills; or the copy
/// engine's. The parts of a load come before the load, which holds their slots.
fn stage_loads(desc: &VariantDescription) -> Vec<&'static str> {
    let regfold = desc.engine.builds_rows_in_registers();
    let mut parts = Vec::new();
    if desc.refill != Refill::Tma {
        parts.push(if regfold {
            "stage/weights_blocks.cu.tera"
        } else if desc.engine.is_prefolded() {
            "stage/weights_prefolded.cu.tera"
        } else {
            "stage/weights_expand.cu.tera"
        });
        if !regfold {
            parts.push("stage/scales.cu.tera");
        }
        if desc.engine != Engine::WgmmaF16Regfold {
            parts.push("stage/tokens.cu.tera");
        }
    }
    if regfold {
        parts.push("stage/blocks.cu.tera");
    }
    match (desc.refill, desc.stages) {
        (Refill::Tma, _) => parts.push("stage/tma.cu.tera"),
        (_, 1) => parts.push("stage/load.cu.tera"),
        _ => parts.extend(["stage/load.cu.tera", "stage/cp_async_refill.cu.tera"]),
    }
    parts
}

/// The engine's work on a staged window (its body: what it computes from the stage into the mode's sums).
fn engine_window(engine: Engine) -> &'static str {
    match engine {
        Engine::Dp4a => "engine_dp4a.cu.tera",
        Engine::MmaK16 => "engine_mma_k16.cu.tera",
        Engine::MmaK32Fold => "engine_mma_k32_fold.cu.tera",
        // The chunk loop of the mma.sync engines that build their A fragments in registers (fold_registers.cu.tera
        // gives each its chunk_mmas and chunk_sum).
        Engine::MmaK32Regfold | Engine::MmaK16Widen => "engine_mma_k32_regfold.cu.tera",
        Engine::MmaK32Prefolded => "engine_mma_k32_prefolded.cu.tera",
        Engine::WgmmaK32Prefolded => "engine_wgmma_k32_prefolded.cu.tera",
        Engine::WgmmaK32Regfold => "engine_wgmma_k32_regfold.cu.tera",
        Engine::WgmmaF16Regfold => "engine_wgmma_f16_regfold.cu.tera",
        // The streaming engines' templates are whole (components() gives them none).
        Engine::StreamDp4a | Engine::StreamRing => "",
    }
}

/// The sums of the numerics mode (none for f32_per16, whose chunks add into the segment as they go), and the
/// warpgroup register engines' chunk sums under int_per32.
fn sums(desc: &VariantDescription) -> Vec<&'static str> {
    let split_sums = desc.mode == NumericsMode::IntPer256
        && (desc.engine == Engine::MmaK32Fold || desc.accumulator_sets == 2);
    match desc.mode {
        NumericsMode::F32Per16 => vec![],
        NumericsMode::IntPer32
            if matches!(
                desc.engine,
                Engine::WgmmaK32Regfold | Engine::WgmmaF16Regfold
            ) =>
        {
            vec!["sums/int_per32.cu.tera", "sums/wgmma_chunks.cu.tera"]
        }
        NumericsMode::IntPer32 => vec!["sums/int_per32.cu.tera"],
        NumericsMode::IntPer256 if split_sums => vec!["sums/int_per256_split.cu.tera"],
        NumericsMode::IntPer256 => vec!["sums/int_per256.cu.tera"],
        NumericsMode::Int12Per256 => vec!["sums/int12.cu.tera"],
    }
}

/// The epilogue: where each output's sums of finished segments go (a split K's go to the workspace).
fn epilogue(desc: &VariantDescription) -> &'static str {
    match (desc.ksplit, desc.totals) {
        (1, Totals::Registers) => "epilogue/registers.cu.tera",
        (1, Totals::Shared) => "epilogue/shared.cu.tera",
        (1, Totals::Output) => "epilogue/output.cu.tera",
        _ => "epilogue/split_k.cu.tera",
    }
}

/// The pipeline: one stage, cp.async stages, or the copy engine's.
fn pipeline(desc: &VariantDescription) -> &'static str {
    match (desc.refill, desc.stages) {
        (Refill::Tma, _) => "pipeline/tma.cu.tera",
        (_, 1) => "pipeline/single.cu.tera",
        _ => "pipeline/cp_async.cu.tera",
    }
}

/// The tile scheduler: whole tiles on the grid, split-K along z, a last-wave split, or clusters.
fn scheduler(desc: &VariantDescription) -> &'static str {
    match TileSchedule::of(desc).decomposition {
        Decomposition::SplitK { .. } => "schedule/split_k.cu.tera",
        Decomposition::LastWaveSplit { .. } => "schedule/last_wave.cu.tera",
        Decomposition::Whole if desc.cluster_blocks() > 1 => "schedule/cluster.cu.tera",
        Decomposition::Whole => "schedule/grid.cu.tera",
    }
}

/// The sections of a component's rendered text, as `(slot, text)`: the text starts with a line break (the slot
/// follows a trimmed tag) and ends without one; an empty section is empty.
pub(super) fn sections(rendered: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    for line in rendered.lines() {
        match line.strip_prefix(SECTION) {
            Some(name) => out.push((name.trim().to_string(), Vec::new())),
            None => {
                if let Some((_, lines)) = out.last_mut() {
                    lines.push(line);
                }
            }
        }
    }
    out.into_iter()
        .map(|(name, mut lines)| {
            // A bare `//@` ending a section keeps a blank line after it (what an included file's last line break
            // left there before).
            while lines.last().is_some_and(|line| line.trim().is_empty()) {
                lines.pop();
            }
            let blank_after = lines.last() == Some(&SECTION.trim_end());
            if blank_after {
                lines.pop();
            }
            let text = lines.join("\n");
            let text = text.trim_end();
            let text = match (text.is_empty(), blank_after) {
                (true, _) => String::new(),
                (false, false) => format!("\n{text}"),
                (false, true) => format!("\n{text}\n"),
            };
            (name, text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slots_are_the_components_sections() {
        let slots = slots(super::super::TEMPLATES);
        for slot in [
            "schedule_tiles",
            "pipeline_setup",
            "engine_window",
            "helpers",
            "family",
        ] {
            assert!(slots.contains(&slot), "{slot}: {slots:?}");
        }
    }

    #[test]
    fn sections_split_at_their_markers() {
        let rendered = "dropped\n//@ a\n    one\n\n    two\n\n//@ b\n//@ c\n\n    three\n//@\n\n";
        assert_eq!(
            sections(rendered),
            [
                ("a".to_string(), "\n    one\n\n    two".to_string()),
                ("b".to_string(), String::new()),
                ("c".to_string(), "\n\n    three\n".to_string()),
            ]
        );
    }
}
