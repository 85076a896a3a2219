//! The render context: everything the templates read, computed once from the description, its layout and its
//! launch contract (numbers, flags, keywords, and the few values a component's interface passes as text).

use super::{abi, header};
use crate::description::*;
use crate::fields::description_lines;
use crate::launch::{raw_rows_weights, LaunchContract, RawRowsWeights, SharedMemory};
use crate::layout::{
    ring_barrier_bytes, ring_fused_records_at_once, ring_record, ring_record_pieces_at_once,
    stream_offset_in_sums, stream_rows_at_once, FoldRing, Region, SharedLayout, PADDED_BLOCK_BYTES,
    RING_FRAGMENT_SUPERBLOCKS, STREAM_SUPERBLOCKS_PER_PASS,
};
use crate::CODEGEN_VERSION;
use mmqgen_formats::q6k;
use serde::Serialize;

/// One region of the shared-memory layout, as the templates name it.
#[derive(Serialize)]
pub(super) struct RegionContext {
    /// The region's name (`smem_weights`, ...); the template upper-cases it for the `_OFFSET` constant.
    name: &'static str,
    /// Byte offset inside one stage.
    offset: u32,
    /// Bytes of the region in one stage.
    bytes: u32,
    /// Bytes from one row (weight row, token or chunk) of the region to the next.
    row_stride: u32,
    /// Whether the generated code steps through the region by rows, so that its `_STRIDE` constant is used:
    /// the staged weight and activation rows (not in wgmma's core-matrix layout) and the staged scales. The
    /// `d` regions are indexed as plain arrays.
    stride_used: bool,
}

/// Byte offsets inside a q6_K block, from the format's one definition ([`mmqgen_formats::q6k`]); the generated
/// code names them `Q6K_QL`, `Q6K_QH`, `Q6K_SCALES` and `Q6K_D`.
#[derive(Serialize)]
pub(super) struct Q6kContext {
    /// `ql`, u8[128]: the low 4 bits of each weight.
    ql: usize,
    /// `qh`, u8[64]: the high 2 bits of each weight.
    qh: usize,
    /// `scales`, i8[16]: one per 16 weights.
    scales: usize,
    /// `d`, f16: the super-block scale.
    d: usize,
}

const Q6K: Q6kContext = Q6kContext {
    ql: q6k::QL_OFFSET,
    qh: q6k::QH_OFFSET,
    scales: q6k::SCALES_OFFSET,
    d: q6k::D_OFFSET,
};

/// One weight layout (docs/DESIGN.md D2): raw GGUF blocks or padded ones.
#[derive(Serialize)]
pub(super) struct LayoutContext {
    /// `raw` or `padded`: the suffix of the layout's entry point.
    name: &'static str,
    /// The CUDA struct that holds what differs between the layouts.
    struct_name: &'static str,
    /// Bytes from one block of a row to the next.
    block_bytes: u32,
    /// Alignment of a block in bytes: 2 for raw blocks, 16 for padded ones.
    alignment: u32,
    /// Whether the copy engine brings a stage's (or a ring's) blocks: padded blocks, and raw ones whose rows are
    /// 16-byte aligned (`raw_rows`).
    bulk_copies: bool,
    /// Bytes per load when reading 32 weight bytes of a block.
    run_width: u32,
    /// Scale arm read from the block (`narrow` or `wide`), or `plane`.
    fetch: &'static str,
    /// Bytes per copy when a block is staged as it is (`mma_k32_regfold`): cp.async 16 on the padded layout,
    /// 16-bit loads on the raw one.
    block_piece: u32,
    /// What the layout is, in a sentence for the source.
    about: String,
    /// The ring's blocks come by tensor copies ([`RawRowsWeights::is_rings`]), not bulk copies.
    tensor_copies: bool,
    /// After the contract's parameters: the entry point's own (the weights' map of a ring's `raw_rows` entry point),
    /// and the argument the entry point adds to its call of the body (that map, or none for the other layouts).
    entry_parameter: &'static str,
    main_argument: &'static str,
}

/// One cp.async width the module uses, and its cache policy (16-byte copies bypass L1).
#[derive(Serialize)]
pub(super) struct CpAsyncCopy {
    width: u32,
    /// `cg` or `ca`.
    cache: &'static str,
}

/// Everything the templates read, one field per name they use: numbers, flags and keywords, and the few values a
/// component's interface passes as text (the parameter lists of the launch contract, the scale a mode's sums take,
/// the word that holds a window's scale bytes): the templates write the code around them.
#[derive(Serialize)]
pub(super) struct RenderContext {
    /// [`CODEGEN_VERSION`], recorded in the header.
    pub(super) codegen_version: &'static str,
    /// The canonical name; the entry points are `<canonical>_raw`, `_padded` and `_combine`.
    pub(super) canonical: String,
    /// The header lines that record the description ([`description_lines`]).
    pub(super) description_lines: Vec<String>,
    /// The header's map of shared memory, as comment lines ([`header::shared_memory_lines`]).
    pub(super) shared_memory_lines: Vec<String>,
    /// The engine's keyword (`mma_k16`, ...).
    pub(super) engine: &'static str,
    /// The engine multiplies the folded `h`/`l` planes ([`Engine::is_fold`]).
    pub(super) folded: bool,
    /// The engine reads the planes folded at registration ([`Engine::is_prefolded`]).
    pub(super) prefolded: bool,
    /// The engine stages q6_K blocks as they are and builds its A fragments from them in registers
    /// ([`Engine::builds_rows_in_registers`]: the register folds and `mma_k16_widen`).
    pub(super) regfold: bool,
    /// Engine `stream_dp4a`.
    pub(super) stream: bool,
    /// Engine `stream_ring`.
    pub(super) stream_ring: bool,
    /// The matmul quantizes its own activations from `x` (`quantizer = fused`).
    pub(super) fused_quantizer: bool,
    /// A producer warpgroup issues the stages' copies (`producer = warpgroup`), of this many threads.
    pub(super) producer_warpgroup: bool,
    pub(super) producer_threads: u32,
    /// The ring engine's per-token, per-super-block activation record: its bytes, and where its `da` and
    /// offsets start ([`ring_record`]).
    pub(super) ring_record_bytes: u32,
    pub(super) ring_record_scales: u32,
    pub(super) ring_record_offsets: u32,
    /// The ring engine's mbarriers, in bytes ([`ring_barrier_bytes`]).
    pub(super) ring_barrier_bytes: u32,
    /// The pieces of token records a ring thread loads before it stores any ([`ring_record_pieces_at_once`]).
    pub(super) ring_record_pieces_at_once: u32,
    /// The records a fused ring's warp loads from `x` before it quantizes any ([`ring_fused_records_at_once`]).
    pub(super) ring_fused_records_at_once: u32,
    /// The engine multiplies with wgmma (`wgmma_k32_prefolded`, `wgmma_k32_regfold`; sm_90a).
    pub(super) wgmma: bool,
    /// The module reads q6_K blocks (every engine but the prefolded ones on the plane), so it names their
    /// byte offsets.
    pub(super) reads_blocks: bool,
    /// Byte offsets inside a q6_K block.
    pub(super) q6k: Q6kContext,
    /// Super-blocks per numerics segment ([`SEGMENT_SUPERBLOCKS`]).
    pub(super) superblocks_per_segment: u32,
    /// Super-blocks one warp of the streaming engine reads per pass ([`STREAM_SUPERBLOCKS_PER_PASS`]).
    pub(super) stream_superblocks_per_pass: u32,
    /// Rows one step of the streaming engine reads at once ([`stream_rows_at_once`]).
    pub(super) stream_rows_at_once: u32,
    /// The streaming engine takes `-32` out through the activations' sums ([`stream_offset_in_sums`]).
    pub(super) stream_offset_in_sums: bool,
    /// Passes the streaming engine keeps in flight.
    pub(super) stream_prefetch_steps: u32,
    /// `__launch_bounds__`' second argument when above 1.
    pub(super) blocks_per_sm: u32,
    /// Chunks the register-fold engine unrolls at a time; 0 = fully.
    pub(super) chunk_unroll: u32,
    /// The ring's token loop: 0 unrolled, 1 one token at a time (`token_unroll`).
    pub(super) token_unroll: u32,
    /// A ring warp's lanes take one super-block of 32 rows (`ring_lanes = rows`).
    pub(super) ring_lanes_rows: bool,
    /// A ring warp takes 16 rows of every super-block of a stage as mma fragments (`ring_lanes = fragments`).
    pub(super) ring_lanes_fragments: bool,
    /// Super-blocks of every row a stage of such a ring holds.
    pub(super) ring_fragment_superblocks: u32,
    /// Chunks of tokens one copy-engine box holds (the int12 engine: 2, in the 128-byte swizzle; [`token_box_chunks`]).
    pub(super) token_box_chunks: u32,
    /// A window's token boxes are one three-dimensional box ([`window_token_box`]).
    pub(super) window_token_box: bool,
    /// Groups of such a ring's warps along K (`warps_k`).
    pub(super) warps_k: u32,
    /// Blocks of a cluster along the rows (sharing each token box) and along the tokens (sharing each weight box).
    pub(super) cluster_rows: u32,
    pub(super) cluster_tokens: u32,

    /// A ring's launch bounds name its blocks an SM even when that is one ([`ring_names_blocks_per_sm`]).
    pub(super) ring_names_blocks_per_sm: bool,
    /// The numerics mode's keyword (`int_per32`, ...).
    pub(super) mode: &'static str,
    /// The scale fetch's keyword (`narrow`, `wide`, `plane`).
    pub(super) scale_fetch: &'static str,
    /// Activation group size G (32 or 256).
    pub(super) group: u32,
    /// The activation quantizer's entry point (`NumericsMode::quantizer_kernel`).
    pub(super) quantize_kernel: String,
    /// The quantizer's largest magnitude (127, or 2047 for the 12-bit mode).
    pub(super) activation_limit: u32,
    /// int8 activation planes per value (2 for the 12-bit mode, chunk-interleaved).
    pub(super) activation_planes: u32,
    /// Threads per block.
    pub(super) threads: u32,
    /// Threads of the warps that hold the tile's outputs (all but the fold warps).
    pub(super) tile_threads: u32,
    /// Warps of the fold warpgroup (`fold_warps`; 0 = each warp folds its own rows).
    pub(super) fold_warps: u32,
    /// Parts along K a tile of a part-full last wave may take (`tail_parts`; 1 = whole tiles only).
    pub(super) tail_parts: u32,
    /// The fold warpgroup's ring ([`crate::layout::FoldRing`]), with fold warps.
    pub(super) fold_ring: Option<FoldRing>,
    /// Registers a thread of the fold warps or the producer warpgroup, and a tile thread, keep after `setmaxnreg`
    /// ([`helper_registers`]).
    pub(super) helper_registers: u32,
    pub(super) tile_registers: u32,
    /// The step between one thread's outputs in shared totals and segments: the threads that hold outputs.
    pub(super) output_stride: &'static str,
    /// Weight rows per block.
    pub(super) nbj: u32,
    /// Tokens per block.
    pub(super) tile_n: u32,
    /// Warps along the rows.
    pub(super) warps_m: u32,
    /// Warps along the tokens.
    pub(super) warps_n: u32,
    /// Weight rows per warp.
    pub(super) rows_per_warp: u32,
    /// Tokens per warp.
    pub(super) tokens_per_warp: u32,
    /// 32-wide chunks per stage window.
    pub(super) kdr: u32,
    /// Windows per super-block (8 / kdr).
    pub(super) windows_per_superblock: u32,
    /// Split of K across blocks.
    pub(super) ksplit: u32,
    /// Shared-memory stages of the main loop.
    pub(super) stages: u32,
    /// Integer accumulator sets (the prefolded engines under `int_per256`, and `wgmma_k32_regfold` per chunk).
    pub(super) accumulator_sets: u32,
    /// H and L sums kept apart over a super-block (`int_per256` with the fold engine or two accumulator sets).
    pub(super) split_sums: bool,
    /// Outputs each lane owns.
    pub(super) outputs_per_lane: u32,
    /// Fragments of a warp tile along the rows: mma tiles of 16 rows, or dp4a lane rows of 8.
    pub(super) fragments_m: u32,
    /// Fragments of a warp tile along the tokens: mma tiles of 8 tokens, or dp4a lane columns of 4.
    pub(super) fragments_n: u32,
    /// Bytes of one stage.
    pub(super) stage_bytes: u32,
    /// Shared memory of the block in all.
    pub(super) total_bytes: u32,
    /// Bytes of the segment totals in shared memory (0 when they live in registers).
    pub(super) totals_bytes: u32,
    /// Segment totals live in shared memory.
    pub(super) shared_totals: bool,
    /// The output itself holds the segment totals (`totals = output`).
    pub(super) output_totals: bool,
    /// Bytes of the running segments in shared memory, after the totals (0 when they live in registers).
    pub(super) segment_bytes: u32,
    /// Running segments live in shared memory (`segment = shared`).
    pub(super) shared_segment: bool,
    /// How output `o`'s running segment is indexed: `o` in registers, `o * output_stride` in shared memory.
    pub(super) segment_slot: String,
    /// How output `o`'s sum of finished segments is indexed, the same way (`totals = registers` or `shared`).
    pub(super) total_slot: String,
    /// Refills are issued a slice per chunk (`refill = spread`).
    pub(super) spread_refill: bool,
    /// Padded stages arrive by bulk tensor copies on one mbarrier per stage (`refill = tma`).
    pub(super) tma_refill: bool,
    /// The stages' mbarriers and reader counts after the totals (`refill = tma`), else 0.
    pub(super) stage_barrier_bytes: u32,
    /// Shared memory over 48 KiB: declared dynamic.
    pub(super) dynamic_shared: bool,
    /// The regions of one stage, in layout order.
    pub(super) regions: Vec<RegionContext>,
    /// The regions each window's tokens are written into during the window before, after the stages (offsets
    /// from the start of shared memory, of buffer 0).
    pub(super) window_regions: Vec<RegionContext>,
    /// Buffers of the window regions, and the bytes of one.
    pub(super) window_buffers: u32,
    pub(super) window_buffer_bytes: u32,
    /// The raw and padded weight layouts.
    pub(super) layouts: Vec<LayoutContext>,
    /// The scale arms read from the blocks (`narrow`, `wide`), each once; empty for the register fold.
    pub(super) block_fetches: Vec<&'static str>,
    /// Whether `load_scale_bytes` is emitted: the wide arm (non-fold) or the int plane read without cp.async.
    pub(super) needs_scale_words: bool,
    /// 32-bit words holding a window's 2*kdr scale bytes.
    pub(super) scale_words: u32,
    /// The distinct cp.async widths the module uses, ascending.
    pub(super) cp_async_widths: Vec<u32>,
    /// cp.async width of the activation copies; 0 = off.
    pub(super) cp_async_activations: u32,
    /// cp.async width of the plane copies; 0 = off.
    pub(super) cp_async_plane: u32,
    /// Bytes per activation copy (the cp.async width, else 16).
    pub(super) activation_piece: u32,
    /// Bytes per prefolded weight copy (the cp.async width, else 16).
    pub(super) weight_piece: u32,
    /// Bytes per cp.async of activation scales; 0 = plain loads.
    pub(super) activation_scale_piece: u32,
    /// The activation copies fill whole rounds of THREADS (no guard on the last round).
    pub(super) activation_pieces_fill_threads: bool,
    /// The weight copies fill whole rounds of THREADS.
    pub(super) weight_pieces_fill_threads: bool,
    /// Floats per activation-scale copy.
    pub(super) activation_scale_piece_floats: u32,

    // The entry points' declarations and the matmul body's, from the launch contract ([`abi`]).
    /// The entry points' parameters, after `(`.
    pub(super) entry_parameters: String,
    /// The matmul body's parameters, after `(`, and the entry points' call of it.
    pub(super) main_parameters: String,
    pub(super) main_arguments: String,
    /// The parameters the matmul's body uses, by name (the ring's call).
    pub(super) used_arguments: String,
    /// `__launch_bounds__`' arguments, and the cluster's shape before it (or nothing).
    pub(super) launch_bounds: String,
    pub(super) cluster_dims: &'static str,

    // The tile scheduler's interface (docs/KERNELS.md, "The last wave").
    /// The K window at a position of the block's windows: `{{ k_window }}position{{ k_window_end }}` (the position
    /// itself unless the scheduler reorders a split tile's super-blocks).
    pub(super) k_window: &'static str,
    pub(super) k_window_end: &'static str,
    /// The matmul body's template parameter for a split tile's part, after `Layout` (or nothing).
    pub(super) split_part_parameter: &'static str,
    /// The scale a super-block's sums take into the running segment (the row's d, times the token's scale for the
    /// per-256 modes), as the engine gives d ([`output_scale`]); held in registers first (`output_scale_held`),
    /// `output_scale` names the held value, else it is the expression itself.
    pub(super) output_scale_value: String,
    pub(super) output_scale_held: bool,
    pub(super) output_scale: String,
    /// A wgmma's accumulator operands (`%0, %1, ...`, one an output) and their constraints as read-write int or
    /// float registers (`"+r"(acc[0]), ...`).
    pub(super) accumulator_operands: String,
    pub(super) int_accumulators_in_out: String,
    pub(super) float_accumulators_in_out: String,
    // Which share of a stage's copies a call makes: all of them, a slice of a spread refill, or the fold warps'.
    /// The first piece and the step between a thread's pieces.
    pub(super) slice_start: &'static str,
    pub(super) slice_step: &'static str,
    /// The block copier's parameters and the thread that copies (`load_stage_blocks`).
    pub(super) copy_share_parameters: &'static str,
    pub(super) copy_thread: &'static str,
    /// A stage load's slice parameters, the arguments that pass them on, and the first windows' whole slice.
    pub(super) slice_parameters: &'static str,
    pub(super) slice_arguments: &'static str,
    pub(super) first_slice_arguments: &'static str,
    /// The ring's matmul body's workspace parameter, on a line of its own, where its contract uses the workspace.
    pub(super) ring_segments_parameter: &'static str,
    /// The ring's matmul body's weights' map parameter, after `k`, where it has a `raw_rows` entry point.
    pub(super) ring_weights_map_parameter: &'static str,
    /// The ring's blocks may come by tensor copies (it has a `raw_rows` entry point): the copy helper and the
    /// branch that issues them.
    pub(super) ring_tensor_copies: bool,
    /// The cp.async copies the module makes, one a width ([`CpAsyncCopy`]).
    pub(super) cp_async_copies: Vec<CpAsyncCopy>,
    /// What a scale fetch arm stages for the engine and mode, as parameters and as the arguments of its call:
    /// each row's d (the folds), the f32 d*sc pairs (`f32_per16`), or the int8 scales and d.
    pub(super) staged_scale_parameters: &'static str,
    pub(super) staged_scale_arguments: &'static str,
    /// The window's 2 kdr scale bytes as one word of this type, its value from the little-endian `words`, and the
    /// load of `words` from the bytes.
    pub(super) scale_word_type: &'static str,
    pub(super) scale_word_value: &'static str,
    pub(super) scale_words_load: &'static str,
    /// The alignment of the stage engines' shared memory: what wgmma's swizzled boxes need (dynamic shared
    /// memory only), what the copy engine's boxes need, or 16 bytes.
    pub(super) shared_alignment: u32,
    /// The extent of the stage engines' static shared memory ([`SharedLayout`]): the whole layout where window
    /// buffers follow the stages, else the stages and what follows them.
    pub(super) static_shared_extent: String,
}

fn layouts(desc: &VariantDescription) -> Vec<LayoutContext> {
    // The raw layout is only 2-byte aligned, so it always takes the narrow arm (docs/DESIGN.md D2).
    let raw_fetch = match desc.scale_fetch {
        ScaleFetch::Plane => "plane",
        _ => "narrow",
    };
    let raw_rows = raw_rows_weights(desc);
    // A ring's body takes the weights' map, which only its raw_rows entry point has.
    let no_map = if raw_rows.is_some_and(RawRowsWeights::is_rings) {
        ", nullptr"
    } else {
        ""
    };
    let mut layouts = vec![
        LayoutContext {
            name: "raw",
            struct_name: "RawLayout",
            block_bytes: q6k::BLOCK_BYTES as u32,
            alignment: 2,
            bulk_copies: false,
            run_width: 2,
            fetch: raw_fetch,
            block_piece: 2,
            about: format!(
                "Raw GGUF blocks: {} bytes, only 2-byte aligned, so weight bytes are read 16 bits at a time.",
                q6k::BLOCK_BYTES
            ),
            tensor_copies: false,
            entry_parameter: "",
            main_argument: no_map,
        },
        LayoutContext {
            name: "padded",
            struct_name: "PaddedLayout",
            block_bytes: PADDED_BLOCK_BYTES,
            alignment: 16,
            bulk_copies: true,
            run_width: desc.expand.bytes(),
            fetch: desc.scale_fetch.keyword(),
            block_piece: 16,
            about: format!(
                "Padded blocks: {PADDED_BLOCK_BYTES} bytes, 16-byte aligned, so the declared load widths apply."
            ),
            tensor_copies: false,
            entry_parameter: "",
            main_argument: no_map,
        },
    ];
    let raw_rows_layout =
        |about: &str, tensor_copies, entry_parameter, main_argument| LayoutContext {
            name: "raw_rows",
            struct_name: "RawRowsLayout",
            block_bytes: q6k::BLOCK_BYTES as u32,
            alignment: 2,
            bulk_copies: true,
            run_width: 2,
            fetch: raw_fetch,
            block_piece: 2,
            about: about.to_string(),
            tensor_copies,
            entry_parameter,
            main_argument,
        };
    match raw_rows {
        Some(RawRowsWeights::RowMap) => layouts.push(raw_rows_layout(
            "Raw GGUF blocks in rows that start 16-byte aligned (K a multiple of 2048): a box of a row's block \
             starts at any 2-byte element, so a stage's blocks arrive by bulk tensor copies and land at the \
             stage's row stride as padded ones do.",
            false,
            "",
            "",
        )),
        Some(RawRowsWeights::EightBlockRuns) => layouts.push(raw_rows_layout(
            "Raw GGUF blocks in rows that start 16-byte aligned (K a multiple of 2048), read as runs of eight \
             (`weights_map`): a box of a super-block of the 32 rows starts at any 2-byte element, so each block \
             lands in a slot as a padded block does.",
            true,
            ",\n    const __grid_constant__ TensorMap weights_map",
            ", &weights_map",
        )),
        Some(RawRowsWeights::QuadRowBlocks) => layouts.push(raw_rows_layout(
            "Raw GGUF blocks in rows that start 16-byte aligned (K a multiple of 2048), read as whole rows \
             (`weights_map`): a box of a block of four rows starts at any 2-byte element, so each block lands in a \
             slot as a padded block does.",
            true,
            ",\n    const __grid_constant__ TensorMap weights_map",
            ", &weights_map",
        )),
        Some(RawRowsWeights::EightBlockRows) => layouts.push(raw_rows_layout(
            "Raw GGUF blocks of a 16-byte aligned tensor, read as rows of eight (`weights_map`): a box row starts at \
             any 2-byte element, so each block lands in a slot as a padded block does.",
            true,
            ",\n    const __grid_constant__ TensorMap weights_map",
            ", &weights_map",
        )),
        None => {}
    }
    layouts
}

/// Whether a ring of `threads` names one block an SM in its launch bounds (docs/PERF.md decode log 42): left out,
/// ptxas plans for several blocks an SM, which a ring's shared memory never allows, and holds it to fewer registers
/// than one block may have; from 512 threads that is at most 128 a thread (65536 an SM) either way, and naming it
/// only reorders the code.
fn ring_names_blocks_per_sm(threads: u32) -> bool {
    threads.saturating_mul(128) < 65536
}

/// Whether the generated code steps through region `name` by rows (see [`RegionContext::stride_used`]).
fn region_stride_used(desc: &VariantDescription, name: &str) -> bool {
    match name {
        // The per-window regions are indexed as plain arrays or core matrices.
        "smem_tokens_f16" | "smem_activation_d_by_chunk" => false,
        "smem_weights" => desc.engine != Engine::WgmmaK32Prefolded,
        "smem_activations" => !desc.engine.is_wgmma(),
        // The streaming engine's regions are one slice per warp.
        _ if desc.engine == Engine::StreamDp4a => true,
        // A ring that gives its lanes rows steps through its stage row by row.
        "smem_ring" => desc.ring_lanes == RingLanes::Rows,
        "smem_weight_sc" => true,
        // Only the plane's cp.async copies step through the chunks of the dsc region.
        "smem_weight_dsc" => desc.scale_fetch == ScaleFetch::Plane && desc.cp_async_plane.is_on(),
        _ => false,
    }
}

/// Computes everything the templates branch on, once.
pub(super) fn render_context(
    desc: &VariantDescription,
    canonical: &str,
    layout: &SharedLayout,
) -> RenderContext {
    // dp4a: lanes as 8 rows x 4 tokens; mma: fragments of 16 rows x 8 tokens (the validator's token unit can be
    // coarser, e.g. prefolded loads B fragments in pairs, but a fragment is still 8 tokens).
    let (tile_rows, tile_tokens) = match desc.engine {
        Engine::Dp4a => (8, 4),
        _ => (16, 8),
    };
    let rows_per_warp = desc.nbj / desc.warps_m;
    let tokens_per_warp = desc.tile_n / desc.warps_n;
    let group = desc.mode.activation_group();
    let folded = desc.engine.is_fold();
    let regfold = desc.engine.builds_rows_in_registers();
    let layouts = layouts(desc);
    let ring_tensor_copies = raw_rows_weights(desc).is_some_and(RawRowsWeights::is_rings);

    let cpa = desc.cp_async_activations.bytes();
    let cpp = desc.cp_async_plane.bytes();
    // Activation scales: the window's kdr floats per token are contiguous and 4*kdr-aligned (G = 32); one
    // float per token under G = 256.
    let activation_scale_piece = match (cpa, group) {
        (0, _) => 0,
        (_, 256) => 4,
        (bytes, _) => bytes.min(4 * desc.kdr),
    };
    // The register-fold engines copy the padded layout's blocks 16 bytes at a time with cp.async, unless the
    // copy engine stages them (refill = tma).
    let block_copies = if regfold && desc.refill != Refill::Tma {
        16
    } else {
        0
    };
    // A fragment ring's lanes copy its tokens 16 bytes at a time (decode log 48).
    let token_copies = if desc.ring_lanes == RingLanes::Fragments {
        16
    } else {
        0
    };
    let mut cp_async_widths: Vec<u32> =
        [cpa, cpp, activation_scale_piece, block_copies, token_copies]
            .into_iter()
            .filter(|w| *w > 0)
            .collect();
    cp_async_widths.sort_unstable();
    cp_async_widths.dedup();

    // mma_k32_regfold reads its scales straight from the staged blocks: no fetch arm.
    let block_fetches: Vec<&'static str> = if regfold || desc.engine == Engine::StreamRing {
        Vec::new()
    } else {
        let mut v: Vec<&'static str> = layouts
            .iter()
            .map(|l| l.fetch)
            .filter(|f| *f != "plane")
            .collect();
        v.dedup();
        v
    };
    // `load_scale_bytes` serves the wide arm (non-fold) and the int plane read without cp.async.
    let needs_scale_words = !folded
        && (block_fetches.contains(&"wide")
            || (desc.scale_fetch == ScaleFetch::Plane
                && desc.mode != NumericsMode::F32Per16
                && cpp == 0));
    let region_context = |r: &Region| RegionContext {
        name: r.name,
        offset: r.offset,
        bytes: r.bytes,
        row_stride: r.row_stride,
        stride_used: region_stride_used(desc, r.name),
    };
    let regions = layout.regions.iter().map(region_context).collect();
    let window_regions = layout.window_regions.iter().map(region_context).collect();
    // Activation rows, and prefolded weight rows, are copied as they are: cp.async at the declared width,
    // else 16-byte loads.
    let activation_piece = if cpa > 0 { cpa } else { 16 };
    let weight_piece = if cpp > 0 { cpp } else { 16 };
    // Copy loops run a fixed number of rounds of THREADS pieces; a partial last round needs a guard.
    let activation_pieces =
        desc.tile_n * desc.kdr * 32 * desc.mode.activation_planes() / activation_piece;
    let weight_pieces = 2 * desc.nbj * desc.kdr * 32 / weight_piece;
    let rows_at_once = stream_rows_at_once(desc.tile_n);
    let (helper_registers, tile_registers) = helper_registers(desc);
    // Shared totals and segments step by the threads that hold outputs.
    // With shared totals only int12's scales (two loads and a product an output) are worth the registers:
    // int_per32's row scales cost one load each, and holding them spills its widest tiles (prefill log 59). A shared
    // segment holds them all: the compiler cannot tell that its stores miss the stage.
    let output_scale_held = desc.segment == Segment::Shared
        || (desc.totals == Totals::Shared && desc.mode == NumericsMode::Int12Per256);
    let outputs_per_lane = rows_per_warp * tokens_per_warp / 32;
    let spread = desc.refill == Refill::Spread;
    let contract = LaunchContract::of(desc);
    // The ring engine's records and sums grow with K: its shared memory is sized at launch.
    let dynamic_shared = contract.shared != SharedMemory::Static;
    let split_tiles = matches!(
        contract.schedule.decomposition,
        crate::launch::Decomposition::LastWaveSplit { .. }
    );
    let output_stride = if desc.fold_warps > 0 {
        "TILE_THREADS"
    } else {
        "THREADS"
    };

    RenderContext {
        codegen_version: CODEGEN_VERSION,
        canonical: canonical.to_string(),
        description_lines: description_lines(desc),
        shared_memory_lines: header::shared_memory_lines(desc, layout, dynamic_shared)
            .into_iter()
            .map(|line| {
                if line.is_empty() {
                    "//".to_string()
                } else {
                    format!("// {line}")
                }
            })
            .collect(),
        engine: desc.engine.keyword(),
        folded,
        prefolded: desc.engine.is_prefolded(),
        regfold,
        stream: desc.engine == Engine::StreamDp4a,
        stream_ring: desc.engine == Engine::StreamRing,
        fused_quantizer: desc.quantizer == Quantizer::Fused,
        producer_warpgroup: desc.producer == Producer::Warpgroup,
        producer_threads: desc.producer_threads(),
        ring_record_bytes: ring_record(desc).bytes,
        ring_record_scales: ring_record(desc).scales,
        ring_record_offsets: ring_record(desc).offsets,
        ring_barrier_bytes: ring_barrier_bytes(desc),
        ring_record_pieces_at_once: ring_record_pieces_at_once(desc),
        ring_fused_records_at_once: ring_fused_records_at_once(desc),
        ring_fragment_superblocks: RING_FRAGMENT_SUPERBLOCKS,
        token_box_chunks: crate::layout::token_box_chunks(desc),
        window_token_box: crate::layout::window_token_box(desc),
        warps_k: desc.warps_k,
        cluster_rows: desc.cluster_rows,
        cluster_tokens: desc.cluster_tokens,
        wgmma: desc.engine.is_wgmma(),
        reads_blocks: !desc.engine.is_prefolded() || !block_fetches.is_empty(),
        q6k: Q6K,
        superblocks_per_segment: SEGMENT_SUPERBLOCKS,
        stream_superblocks_per_pass: STREAM_SUPERBLOCKS_PER_PASS,
        stream_rows_at_once: rows_at_once,
        stream_offset_in_sums: stream_offset_in_sums(desc.tile_n),
        // A few tokens' activations are few registers: they travel with the weights, steps ahead.
        // One row at a time leaves registers for a second pass in flight.
        stream_prefetch_steps: if rows_at_once == 1 { 2 } else { 1 },
        blocks_per_sm: desc.blocks_per_sm,
        chunk_unroll: desc.chunk_unroll,
        token_unroll: desc.token_unroll,
        ring_lanes_rows: desc.ring_lanes == RingLanes::Rows,
        ring_lanes_fragments: desc.ring_lanes == RingLanes::Fragments,
        ring_names_blocks_per_sm: ring_names_blocks_per_sm(desc.threads()),
        mode: desc.mode.keyword(),
        scale_fetch: desc.scale_fetch.keyword(),
        group,
        quantize_kernel: desc.mode.quantizer_kernel(),
        activation_limit: desc.mode.activation_limit(),
        activation_planes: desc.mode.activation_planes(),
        threads: desc.main_loop_threads(),
        tile_threads: desc.tile_threads(),
        fold_warps: desc.fold_warps,
        tail_parts: desc.tail_parts,
        fold_ring: layout.fold_ring.clone(),
        helper_registers,
        tile_registers,
        nbj: desc.nbj,
        tile_n: desc.tile_n,
        warps_m: desc.warps_m,
        warps_n: desc.warps_n,
        rows_per_warp,
        tokens_per_warp,
        kdr: desc.kdr,
        windows_per_superblock: 8 / desc.kdr,
        ksplit: desc.ksplit,
        stages: desc.stages,
        accumulator_sets: desc.accumulator_sets,
        // H and L kept apart over a super-block: the fold engine always, the prefolded one when asked.
        split_sums: desc.mode == NumericsMode::IntPer256
            && (desc.engine == Engine::MmaK32Fold || desc.accumulator_sets == 2),
        outputs_per_lane,
        fragments_m: rows_per_warp / tile_rows,
        fragments_n: tokens_per_warp / tile_tokens,
        stage_bytes: layout.stage_bytes,
        total_bytes: layout.total_bytes,
        totals_bytes: layout.totals_bytes,
        shared_totals: desc.totals == Totals::Shared,
        output_totals: desc.totals == Totals::Output,
        segment_bytes: layout.segment_bytes,
        shared_segment: desc.segment == Segment::Shared,
        segment_slot: match desc.segment {
            Segment::Registers => "o".to_string(),
            Segment::Shared => format!("o * {output_stride}"),
        },
        total_slot: match desc.totals {
            Totals::Shared => format!("o * {output_stride}"),
            Totals::Registers | Totals::Output => "o".to_string(),
        },
        output_stride,
        spread_refill: desc.refill == Refill::Spread,
        tma_refill: desc.refill == Refill::Tma,
        stage_barrier_bytes: layout.stage_barrier_bytes,
        dynamic_shared,
        regions,
        window_regions,
        window_buffers: layout.window_buffers,
        window_buffer_bytes: layout.window_buffer_bytes,
        layouts,
        block_fetches,
        needs_scale_words,
        scale_words: (2 * desc.kdr).div_ceil(4),
        cp_async_widths: cp_async_widths.clone(),
        cp_async_activations: cpa,
        cp_async_plane: cpp,
        activation_piece,
        weight_piece,
        activation_scale_piece,
        activation_pieces_fill_threads: activation_pieces.is_multiple_of(desc.main_loop_threads()),
        weight_pieces_fill_threads: weight_pieces.is_multiple_of(desc.main_loop_threads()),
        activation_scale_piece_floats: activation_scale_piece / 4,
        entry_parameters: abi::entry_parameters(&contract),
        main_parameters: abi::main_parameters(&contract),
        main_arguments: abi::main_arguments(&contract),
        used_arguments: abi::used_arguments(&contract),
        launch_bounds: abi::launch_bounds(desc, ring_names_blocks_per_sm(desc.threads())),
        cluster_dims: abi::cluster_dims(desc),
        k_window: if split_tiles { "k_window(" } else { "" },
        k_window_end: if split_tiles { ")" } else { "" },
        split_part_parameter: if split_tiles { ", bool SPLIT_PART" } else { "" },
        slice_start: if spread { "slice * THREADS" } else { "0" },
        slice_step: match (spread, desc.fold_warps) {
            (true, _) => "slices * THREADS",
            (false, 0) => "THREADS",
            (false, _) => "threads",
        },
        copy_share_parameters: match (spread, desc.fold_warps) {
            (true, _) => ", int slice, int slices",
            (false, 0) => "",
            (false, _) => ", int thread, int threads",
        },
        copy_thread: if desc.fold_warps > 0 {
            "thread"
        } else {
            "threadIdx.x"
        },
        slice_parameters: if spread {
            ",\n                                           int slice, int slices"
        } else {
            ""
        },
        slice_arguments: if spread { ", slice, slices" } else { "" },
        first_slice_arguments: if spread { ", 0, 1" } else { "" },
        ring_segments_parameter: if contract.uses_workspace() {
            "\n                                          float* __restrict__ segments,"
        } else {
            ""
        },
        ring_weights_map_parameter: if ring_tensor_copies {
            ", const TensorMap* weights_map"
        } else {
            ""
        },
        ring_tensor_copies,
        cp_async_copies: cp_async_widths
            .iter()
            .map(|&width| CpAsyncCopy {
                width,
                cache: if width == 16 { "cg" } else { "ca" },
            })
            .collect(),
        staged_scale_parameters: match (folded, desc.mode) {
            (true, _) => "float* d",
            (false, NumericsMode::F32Per16) => "ScalePair* dsc",
            (false, _) => "int8* sc, float* d",
        },
        staged_scale_arguments: match (folded, desc.mode) {
            (true, _) => "d",
            (false, NumericsMode::F32Per16) => "dsc",
            (false, _) => "sc, d",
        },
        scale_word_type: match desc.kdr {
            1 => "uint16",
            2 => "uint32",
            4 => "uint32x2",
            _ => "uint32x4",
        },
        scale_word_value: match desc.kdr {
            1 => "(uint16)words[0]",
            2 => "words[0]",
            4 => "uint32x2{words[0], words[1]}",
            _ => "uint32x4{words[0], words[1], words[2], words[3]}",
        },
        scale_words_load: match desc.kdr {
            1 => "words[0] = *(const uint16*)bytes;",
            2 => "words[0] = *(const uint32*)bytes;",
            4 => "const uint32x2 pair = *(const uint32x2*)bytes;\n    words[0] = pair.x; words[1] = pair.y;",
            _ => "const uint32x4 quad = *(const uint32x4*)bytes;\n    words[0] = quad.x; words[1] = quad.y; words[2] = quad.z; words[3] = quad.w;",
        },
        accumulator_operands: (0..outputs_per_lane)
            .map(|o| format!("%{o}"))
            .collect::<Vec<_>>()
            .join(", "),
        int_accumulators_in_out: (0..outputs_per_lane)
            .map(|o| format!("\"+r\"(acc[{o}])"))
            .collect::<Vec<_>>()
            .join(", "),
        float_accumulators_in_out: (0..outputs_per_lane)
            .map(|o| format!("\"+f\"(acc[{o}])"))
            .collect::<Vec<_>>()
            .join(", "),
        output_scale_value: output_scale(desc),
        output_scale_held,
        output_scale: if output_scale_held {
            "output_scale[o]".to_string()
        } else {
            output_scale(desc)
        },
        shared_alignment: match (desc.refill, desc.engine.is_wgmma()) {
            (Refill::Tma, true) if dynamic_shared => 1024,
            (Refill::Tma, _) => 128,
            _ => 16,
        },
        static_shared_extent: if !layout.window_regions.is_empty() {
            layout.total_bytes.to_string()
        } else if desc.totals == Totals::Shared
            || desc.segment == Segment::Shared
            || desc.refill == Refill::Tma
        {
            format!(
                "STAGES * STAGE_BYTES + {}",
                layout.totals_bytes + layout.segment_bytes + layout.stage_barrier_bytes
            )
        } else {
            "STAGES * STAGE_BYTES".to_string()
        },
    }
}

/// The scale of output `o`'s super-block sums: the row's d (a lambda of the row for the engines that read it from the
/// staged blocks or the fold warps, an array otherwise), times the token's activation scale for the per-256 modes
/// (staged at its scale_position by the copy engine).
fn output_scale(desc: &VariantDescription) -> String {
    let regfold = desc.engine.builds_rows_in_registers();
    match desc.mode {
        NumericsMode::F32Per16 => String::new(),
        NumericsMode::IntPer32 if regfold => "weight_d(row_of(o))".to_string(),
        NumericsMode::IntPer32 => "weight_d[row_of(o)]".to_string(),
        NumericsMode::IntPer256 => {
            "__fmul_rn(weight_d[row_of(o)], activation_d[token_of(o)])".to_string()
        }
        NumericsMode::Int12Per256 if desc.refill == Refill::Tma => {
            "__fmul_rn(weight_d(row_of(o)), activation_d[scale_position(token_of(o))])".to_string()
        }
        NumericsMode::Int12Per256 => {
            "__fmul_rn(weight_d(row_of(o)), activation_d[token_of(o)])".to_string()
        }
    }
}

/// Registers a thread of the helper warps (the fold warps, or the producer warpgroup) and of the tile's warps keep
/// after `setmaxnreg` (zeros without helpers). A block starts with 64K / threads each (its launch bounds name one
/// block an SM), rounded down to 8; the helpers keep what their work needs (a fold warp 16 registers of words a
/// fragment group and its temporaries; a producer thread [`PRODUCER_REGISTERS`]) and give the rest to the tile's
/// warps, whose sums it holds. Both are multiples of 8 in 24..=256, and the two sides together never ask for more
/// than the block started with.
fn helper_registers(desc: &VariantDescription) -> (u32, u32) {
    let helper = if let Some(rows_per_fold_warp) = desc.nbj.checked_div(desc.fold_warps) {
        let fold_groups = rows_per_fold_warp / 16;
        (48 + 24 * fold_groups).div_ceil(8) * 8
    } else if desc.producer == Producer::Warpgroup {
        PRODUCER_REGISTERS
    } else {
        return (0, 0);
    };
    let threads = desc.threads().max(1);
    let at_entry = (65536 / threads / 8 * 8).min(256);
    let helper_threads = threads - desc.tile_threads();
    let tile = ((at_entry * threads - helper * helper_threads) / desc.tile_threads().max(1) / 8
        * 8)
    .min(256);
    (helper, tile)
}

/// Registers a producer thread keeps: its one issuing thread only waits on mbarriers and issues tensor copies, which
/// fits the fewest `setmaxnreg` allows, and every register it gives up is the tile's: 240 a tile thread, enough for
/// 128 x 96 (docs/PERF.md log 89; 40 in log 79 left 232).
const PRODUCER_REGISTERS: u32 = 24;
