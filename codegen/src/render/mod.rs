//! Rendering: a validated description -> one CUDA module (docs/KERNELS.md), through the tera templates in
//! `templates/` (embedded at build time). Everything the templates branch on is computed here, once, so the
//! templates stay layout and the generated file holds only the arms the description selects.

use crate::description::*;
use crate::layout::{
    shared_layout, stream_offset_in_sums, stream_rows_at_once, STREAM_SUPERBLOCKS_PER_PASS,
};
use crate::name::canonical_name;
use crate::validate::validate;
use crate::{FieldError, CODEGEN_VERSION};
use serde::Serialize;

/// A rendered variant: its source and the names of its entry points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedVariant {
    pub canonical: String,
    pub source: String,
    pub kernels: KernelNames,
    /// Shared memory one block uses (the layout's total).
    pub shared_bytes: u32,
    /// True when `shared_bytes` is over 48 KiB: dynamic shared memory, the launcher raises the limit.
    pub dynamic_shared: bool,
    pub threads: u32,
    /// Whether the module uses sm_90a-only instructions (wgmma), so it must be compiled for `sm_90a`.
    pub needs_arch_specific: bool,
}

impl RenderedVariant {
    /// The NVRTC `--gpu-architecture` value for `arch`: `sm_90a` where the module uses wgmma.
    pub fn nvrtc_arch(&self, arch: Arch) -> String {
        self.nvrtc_target(arch.keyword())
    }

    /// The same for an architecture written as text (`sm_90`, as a GPU reports it).
    pub fn nvrtc_target(&self, arch: &str) -> String {
        if self.needs_arch_specific {
            format!("{arch}a")
        } else {
            arch.to_string()
        }
    }
}

/// Entry points of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelNames {
    pub quantize: String,
    pub raw: String,
    pub padded: String,
    pub combine: Option<String>,
}

/// Why a description could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("variant '{name}' is invalid: field `{field}`: {message}", field = .errors[0].field, message = .errors[0].message)]
    Invalid {
        name: String,
        errors: Vec<FieldError>,
    },
    #[error("template error (a bug in mmqgen's templates): {0}")]
    Template(String),
}

/// Shared memory a block can get without raising the function attribute.
pub const STATIC_SHARED_LIMIT: u32 = 48 * 1024;

/// The templates, embedded at build time (name, text).
macro_rules! embedded_templates {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../templates/", $name)))),*]
    };
}
const TEMPLATES: &[(&str, &str)] = embedded_templates![
    "module.cu.tera",
    "prelude.cu.tera",
    "quantize_activations.cu.tera",
    "scales.cu.tera",
    "stage.cu.tera",
    "load_stage.cu.tera",
    "stage_scales.cu.tera",
    "kernel.cu.tera",
    "engine_dp4a.cu.tera",
    "engine_mma_k16.cu.tera",
    "engine_mma_k32_fold.cu.tera",
    "engine_mma_k32_prefolded.cu.tera",
    "engine_mma_k32_regfold.cu.tera",
    "fold_registers.cu.tera",
    "engine_wgmma_k32_prefolded.cu.tera",
    "chunk_scales.cu.tera",
    "superblock_end.cu.tera",
    "stream.cu.tera",
];

#[derive(Serialize)]
struct RegionContext {
    name: &'static str,
    constant: String,
    offset: u32,
    bytes: u32,
    row_stride: u32,
    /// Whether the generated code steps through the region by rows, so that its `_STRIDE` constant is used:
    /// the staged weight and activation rows (not in wgmma's core-matrix layout) and the staged scales. The
    /// `d` regions are indexed as plain arrays.
    stride_used: bool,
}

#[derive(Serialize)]
struct LayoutContext {
    name: &'static str,
    struct_name: &'static str,
    comment: &'static str,
    block_bytes: u32,
    run_width: u32,
    /// Scale arm read from the block (`narrow` or `wide`), or `plane`.
    fetch: &'static str,
    fold_fetch: &'static str,
    /// Bytes per copy when a block is staged as it is (`mma_k32_regfold`): cp.async 16 on the padded layout,
    /// 16-bit loads on the raw one.
    block_piece: u32,
}

/// The lines of the header that record the full description.
pub fn description_lines(desc: &VariantDescription) -> Vec<String> {
    vec![
        format!("engine               = {}", desc.engine),
        format!("mode                 = {}", desc.mode),
        format!("kdr                  = {}", desc.kdr),
        format!("nbj                  = {}", desc.nbj),
        format!("tile_n               = {}", desc.tile_n),
        format!("warps_m x warps_n    = {} x {}", desc.warps_m, desc.warps_n),
        format!("ksplit               = {}", desc.ksplit),
        format!("scale_fetch          = {}", desc.scale_fetch),
        format!("expand               = {}", desc.expand),
        format!("cp_async_activations = {}", desc.cp_async_activations),
        format!("cp_async_plane       = {}", desc.cp_async_plane),
        format!("stages               = {}", desc.stages),
        format!("accumulator_sets     = {}", desc.accumulator_sets),
        format!("totals               = {}", desc.totals),
        format!("refill               = {}", desc.refill),
        format!("blocks_per_sm        = {}", desc.blocks_per_sm),
        format!(
            "chunk_unroll         = {}",
            match desc.chunk_unroll {
                0 => "full".to_string(),
                n => n.to_string(),
            }
        ),
    ]
}

fn layouts(desc: &VariantDescription) -> Vec<LayoutContext> {
    // The raw layout is only 2-byte aligned, so it always takes the narrow arm (DECISIONS.md 2).
    let raw_fetch = match desc.scale_fetch {
        ScaleFetch::Plane => "plane",
        _ => "narrow",
    };
    vec![
        LayoutContext {
            name: "raw",
            struct_name: "RawLayout",
            comment: "Raw GGUF blocks: 210 bytes, only 2-byte aligned, so weight bytes are read 16 bits at a time.",
            block_bytes: 210,
            run_width: 2,
            fetch: raw_fetch,
            fold_fetch: raw_fetch,
            block_piece: 2,
        },
        LayoutContext {
            name: "padded",
            struct_name: "PaddedLayout",
            comment: "Padded blocks: 224 bytes, 16-byte aligned, so the declared load widths apply.",
            block_bytes: 224,
            run_width: desc.expand.bytes(),
            fetch: desc.scale_fetch.keyword(),
            fold_fetch: desc.scale_fetch.keyword(),
            block_piece: 16,
        },
    ]
}

/// The statement that stores the window's scale words into a row's `sc` bytes in shared memory.
fn store_scale_words(kdr: u32) -> &'static str {
    match kdr {
        1 => "*(uint16*)sc = (uint16)words[0];",
        2 => "*(uint32*)sc = words[0];",
        4 => "*(uint32x2*)sc = uint32x2{words[0], words[1]};",
        _ => "*(uint32x4*)sc = uint32x4{words[0], words[1], words[2], words[3]};",
    }
}

/// Renders a description into its CUDA module. Refuses invalid descriptions with the validator's sentences.
pub fn render(desc: &VariantDescription) -> Result<RenderedVariant, RenderError> {
    validate(desc).map_err(|errors| RenderError::Invalid {
        name: desc.name.to_string(),
        errors,
    })?;
    let canonical = canonical_name(desc);
    let layout = shared_layout(desc);
    let dynamic_shared = layout.total_bytes > STATIC_SHARED_LIMIT;
    // dp4a: lanes as 8 rows x 4 tokens; mma: fragments of 16 rows x 8 tokens (the validator's token unit can be
    // coarser, e.g. prefolded loads B fragments in pairs, but a fragment is still 8 tokens).
    let (tile_rows, tile_tokens) = match desc.engine {
        Engine::Dp4a => (8, 4),
        _ => (16, 8),
    };
    let rows_per_warp = desc.nbj / desc.warps_m;
    let tokens_per_warp = desc.tile_n / desc.warps_n;
    let group = desc.mode.activation_group();
    let fold = desc.engine.is_fold();
    let layouts = layouts(desc);

    let cpa = desc.cp_async_activations.bytes();
    let cpp = desc.cp_async_plane.bytes();
    // Activation scales: the window's kdr floats per token are contiguous and 4*kdr-aligned (G = 32); one
    // float per token under G = 256.
    let activation_scale_piece = match (cpa, group) {
        (0, _) => 0,
        (_, 256) => 4,
        (bytes, _) => bytes.min(4 * desc.kdr),
    };
    let mut cp_async_widths: Vec<u32> = [cpa, cpp, activation_scale_piece]
        .into_iter()
        .filter(|w| *w > 0)
        .collect();
    cp_async_widths.sort_unstable();
    cp_async_widths.dedup();

    let regfold = desc.engine == Engine::MmaK32Regfold;
    // mma_k32_regfold reads its scales straight from the staged blocks: no fetch arm.
    let block_fetches: Vec<&str> = if regfold {
        Vec::new()
    } else {
        let mut v: Vec<&str> = layouts
            .iter()
            .map(|l| l.fetch)
            .filter(|f| *f != "plane")
            .collect();
        v.dedup();
        v
    };
    let fold_block_fetches = block_fetches.clone();
    let scale_params = if fold {
        "float* d"
    } else if desc.mode == NumericsMode::F32Per16 {
        "ScalePair* dsc"
    } else {
        "int8* sc, float* d"
    };
    let scale_args = if fold {
        "d"
    } else if desc.mode == NumericsMode::F32Per16 {
        "dsc"
    } else {
        "sc, d"
    };
    // `load_scale_bytes` serves the wide arm (non-fold) and the int plane read without cp.async.
    let needs_scale_words = !fold
        && (block_fetches.contains(&"wide")
            || (desc.scale_fetch == ScaleFetch::Plane
                && desc.mode != NumericsMode::F32Per16
                && cpp == 0));
    let scale_bytes_load = match desc.kdr {
        1 => "16-bit",
        2 => "32-bit",
        4 => "64-bit",
        _ => "128-bit",
    };

    let regions: Vec<RegionContext> = layout
        .regions
        .iter()
        .map(|r| RegionContext {
            name: r.name,
            constant: r.name.to_uppercase(),
            offset: r.offset,
            bytes: r.bytes,
            row_stride: r.row_stride,
            stride_used: match r.name {
                "smem_weights" | "smem_activations" => desc.engine != Engine::WgmmaK32Prefolded,
                // The streaming engine's regions are one slice per warp.
                _ if desc.engine == Engine::StreamDp4a => true,
                "smem_weight_sc" => true,
                // Only the plane's cp.async copies step through the chunks of the dsc region.
                "smem_weight_dsc" => {
                    desc.scale_fetch == ScaleFetch::Plane && desc.cp_async_plane.is_on()
                }
                _ => false,
            },
        })
        .collect();
    let mut kernel_list = vec![
        format!("mmq_quantize_activations_g{group}"),
        format!("{canonical}_raw"),
        format!("{canonical}_padded"),
    ];
    let combine = (desc.ksplit > 1).then(|| format!("{canonical}_combine"));
    kernel_list.extend(combine.clone());

    let mut ctx = tera::Context::new();
    ctx.insert("codegen_version", CODEGEN_VERSION);
    ctx.insert("canonical", &canonical);
    ctx.insert("description_lines", &description_lines(desc));
    ctx.insert("kernels", &kernel_list.join(", "));
    ctx.insert("engine", desc.engine.keyword());
    ctx.insert("folded", &fold);
    ctx.insert("prefolded", &desc.engine.is_prefolded());
    ctx.insert("regfold", &regfold);
    let stream = desc.engine == Engine::StreamDp4a;
    ctx.insert("stream", &stream);
    ctx.insert("stream_superblocks_per_pass", &STREAM_SUPERBLOCKS_PER_PASS);
    let rows_at_once = stream_rows_at_once(desc.tile_n);
    ctx.insert("stream_rows_at_once", &rows_at_once);
    ctx.insert("stream_offset_in_sums", &stream_offset_in_sums(desc.tile_n));
    // One row at a time leaves registers for a second pass in flight.
    ctx.insert(
        "stream_prefetch_steps",
        &(if rows_at_once == 1 { 2 } else { 1 }),
    );

    ctx.insert("blocks_per_sm", &desc.blocks_per_sm);
    ctx.insert("chunk_unroll", &desc.chunk_unroll);
    let wgmma = desc.engine == Engine::WgmmaK32Prefolded;
    ctx.insert("wgmma", &wgmma);
    // wgmma's accumulator operands, one per output of the lane: "+r"(superblock_sum[0]), ...
    let outputs_per_lane = rows_per_warp * tokens_per_warp / 32;
    ctx.insert(
        "wgmma_registers",
        &(0..outputs_per_lane)
            .map(|i| format!("%{i}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    ctx.insert("mode", desc.mode.keyword());
    ctx.insert("scale_fetch", desc.scale_fetch.keyword());
    ctx.insert("group", &group);
    ctx.insert("threads", &desc.threads());
    ctx.insert("nbj", &desc.nbj);
    ctx.insert("tile_n", &desc.tile_n);
    ctx.insert("warps_m", &desc.warps_m);
    ctx.insert("warps_n", &desc.warps_n);
    ctx.insert("rows_per_warp", &rows_per_warp);
    ctx.insert("tokens_per_warp", &tokens_per_warp);
    ctx.insert("kdr", &desc.kdr);
    ctx.insert("windows_per_superblock", &(8 / desc.kdr));
    ctx.insert("ksplit", &desc.ksplit);
    ctx.insert("stages", &desc.stages);
    // H and L kept apart over a super-block: the fold engine always, the prefolded one when asked.
    let split_sums = desc.mode == NumericsMode::IntPer256
        && (desc.engine == Engine::MmaK32Fold || desc.accumulator_sets == 2);
    ctx.insert("split_sums", &split_sums);
    ctx.insert("outputs_per_lane", &outputs_per_lane);
    ctx.insert("lane_rows", &(rows_per_warp / tile_rows));
    ctx.insert("lane_tokens", &(tokens_per_warp / tile_tokens));
    ctx.insert("fragments_m", &(rows_per_warp / tile_rows));
    ctx.insert("fragments_n", &(tokens_per_warp / tile_tokens));
    ctx.insert("stage_bytes", &layout.stage_bytes);
    ctx.insert("total_bytes", &layout.total_bytes);
    ctx.insert("totals_bytes", &layout.totals_bytes);
    ctx.insert("shared_totals", &(desc.totals == Totals::Shared));
    let spread_refill = desc.refill == Refill::Spread;
    ctx.insert("spread_refill", &spread_refill);
    ctx.insert(
        "slice_start",
        if spread_refill {
            "slice * THREADS"
        } else {
            "0"
        },
    );
    ctx.insert(
        "slice_step",
        if spread_refill {
            "slices * THREADS"
        } else {
            "THREADS"
        },
    );
    ctx.insert("dynamic_shared", &dynamic_shared);
    ctx.insert("regions", &regions);
    ctx.insert("layouts", &layouts);
    ctx.insert("block_fetches", &block_fetches);
    ctx.insert("fold_block_fetches", &fold_block_fetches);
    ctx.insert("scale_params", scale_params);
    ctx.insert("scale_args", scale_args);
    ctx.insert("needs_scale_words", &needs_scale_words);
    ctx.insert("scale_words", &(2 * desc.kdr).div_ceil(4));
    ctx.insert("scale_bytes_load", scale_bytes_load);
    ctx.insert("store_scale_words", store_scale_words(desc.kdr));
    ctx.insert("cp_async_widths", &cp_async_widths);
    ctx.insert("cp_async_activations", &cpa);
    ctx.insert("cp_async_plane", &cpp);
    // Activation rows, and prefolded weight rows, are copied as they are: cp.async at the declared width,
    // else 16-byte loads.
    let activation_piece = if cpa > 0 { cpa } else { 16 };
    let weight_piece = if cpp > 0 { cpp } else { 16 };
    ctx.insert("activation_piece", &activation_piece);
    ctx.insert("weight_piece", &weight_piece);
    ctx.insert("activation_scale_piece", &activation_scale_piece);
    // Copy loops run a fixed number of rounds of THREADS pieces; a partial last round needs a guard.
    let activation_pieces = desc.tile_n * desc.kdr * 32 / activation_piece;
    let weight_pieces = 2 * desc.nbj * desc.kdr * 32 / weight_piece;
    ctx.insert(
        "activation_pieces_fill_threads",
        &activation_pieces.is_multiple_of(desc.threads()),
    );
    ctx.insert(
        "weight_pieces_fill_threads",
        &weight_pieces.is_multiple_of(desc.threads()),
    );
    ctx.insert(
        "activation_scale_piece_floats",
        &(activation_scale_piece / 4),
    );

    let mut tera = tera::Tera::default();
    tera.add_raw_templates(TEMPLATES.to_vec())
        .map_err(|e| RenderError::Template(format!("{e:?}")))?;
    let raw_source = tera
        .render("module.cu.tera", &ctx)
        .map_err(|e| RenderError::Template(format!("{e:?}")))?;
    Ok(RenderedVariant {
        canonical: canonical.clone(),
        source: tidy(&raw_source),
        kernels: KernelNames {
            quantize: format!("mmq_quantize_activations_g{group}"),
            raw: format!("{canonical}_raw"),
            padded: format!("{canonical}_padded"),
            combine,
        },
        shared_bytes: layout.total_bytes,
        dynamic_shared,
        threads: desc.threads(),
        needs_arch_specific: wgmma,
    })
}

/// Trailing blanks off every line and at most one empty line in a row: what template whitespace leaves.
fn tidy(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut blank_run = 0;
    for line in source.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_start_matches('\n').to_string()
}
