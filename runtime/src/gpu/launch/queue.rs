//! Queueing a loaded variant's kernels: the activation quantizer, the matmul entry point and the combine, each
//! checked before anything is queued. The matmul's arguments are packed in the order its launch contract lists
//! them (docs/KERNELS.md), so that nothing here names an engine or a feature.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use mmqgen_codegen::launch::{
    KernelArg, QuantizerLaunch, RawRowsWeights, SharedMemory, TailSplit, WeightSource,
};
use mmqgen_codegen::{PADDED_BLOCK_BYTES, SUPERBLOCK_K};

use super::driver::{kernel_arg, launch, launch_maybe_programmatic};
use super::error::LaunchError;
use super::geometry::{combine_config, matmul_config, quantizer_config};
use super::loaded::{LoadedVariant, MatmulEntry};
use super::shape::{check_out, check_shape, check_x};
use crate::gpu::buffer::DeviceRef;
use crate::gpu::tensor_maps::{self, RingWeightsMap, TensorMaps};
use crate::gpu::weights::{Layout, PlaneKind, RegisteredWeights};
use crate::gpu::workspace::{Quantized, Workspace};

/// The values a call gives the matmul's parameters, each a local that outlives the launch (the driver copies
/// them); [`Self::pack`] lists their addresses in the contract's order.
struct ArgValues {
    weights: u64,
    plane: u64,
    x: Option<u64>,
    act_q: u64,
    act_d: u64,
    out: u64,
    workspace: u64,
    null: u64,
    m: i32,
    n: i32,
    k: i32,
    maps: Option<TensorMaps>,
    weights_map: Option<RingWeightsMap>,
    split: Option<(i32, i32)>,
}

impl ArgValues {
    /// The kernel parameters for `args`, or the argument this call has no value for.
    fn pack(&self, args: &[KernelArg]) -> Result<Vec<*mut std::ffi::c_void>, &'static str> {
        args.iter()
            .map(|arg| {
                Ok(match arg {
                    KernelArg::Weights => kernel_arg(&self.weights),
                    KernelArg::Plane { used: true } => kernel_arg(&self.plane),
                    KernelArg::Plane { used: false } | KernelArg::Workspace { used: false } => {
                        kernel_arg(&self.null)
                    }
                    KernelArg::Activations => kernel_arg(self.x.as_ref().ok_or("x")?),
                    KernelArg::ActivationQuants { .. } => kernel_arg(&self.act_q),
                    KernelArg::ActivationScales { .. } => kernel_arg(&self.act_d),
                    KernelArg::Out => kernel_arg(&self.out),
                    KernelArg::Workspace { used: true } => kernel_arg(&self.workspace),
                    KernelArg::M => kernel_arg(&self.m),
                    KernelArg::N => kernel_arg(&self.n),
                    KernelArg::K => kernel_arg(&self.k),
                    KernelArg::TensorMaps => kernel_arg(self.maps.as_ref().ok_or("maps")?),
                    KernelArg::WeightsMap => {
                        kernel_arg(self.weights_map.as_ref().ok_or("weights_map")?)
                    }
                    KernelArg::WholeTiles => {
                        kernel_arg(&self.split.as_ref().ok_or("whole_tiles")?.0)
                    }
                    KernelArg::TailSplit => kernel_arg(&self.split.as_ref().ok_or("tail_split")?.1),
                })
            })
            .collect()
    }
}

impl LoadedVariant {
    /// Queues the activation quantizer: `x` (`[n][K]` f32) into the workspace's `q` and `d`.
    pub fn quantize_activations(
        &self,
        x: &CudaSlice<f32>,
        n: usize,
        k: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        let (x, _x) = self.lend("the activations", x, stream)?;
        self.quantize_activations_ref(x, n, k, stream, ws)
    }

    /// `slice`, checked to live in this variant's context, as the [`DeviceRef`] the `_ref` calls take, with the
    /// guard that orders `stream`'s use of it: hold the guard until the work is queued.
    fn lend<'a, T>(
        &self,
        what: &'static str,
        slice: &'a CudaSlice<T>,
        stream: &'a CudaStream,
    ) -> Result<(DeviceRef<T>, SyncOnDrop<'a>), LaunchError> {
        self.same_context(what, slice.context())?;
        let (ptr, guard) = slice.device_ptr(stream);
        // SAFETY: a live slice of this variant's context, of its length, held while the guard is.
        Ok((unsafe { DeviceRef::from_raw(ptr, slice.len()) }, guard))
    }

    /// [`Self::lend`] for a slice the work writes.
    fn lend_mut<'a, T>(
        &self,
        what: &'static str,
        slice: &'a mut CudaSlice<T>,
        stream: &'a CudaStream,
    ) -> Result<(DeviceRef<T>, SyncOnDrop<'a>), LaunchError> {
        self.same_context(what, slice.context())?;
        let len = slice.len();
        let (ptr, guard) = slice.device_ptr_mut(stream);
        // SAFETY: a live slice of this variant's context, of its length, held while the guard is.
        Ok((unsafe { DeviceRef::from_raw(ptr, len) }, guard))
    }

    /// [`Self::quantize_activations`] on activations a caller lends by address.
    pub fn quantize_activations_ref(
        &self,
        x: DeviceRef<f32>,
        n: usize,
        k: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        let (_, ni, ki) = check_shape(1, n, k)?;
        self.same_context("the stream", stream.context())?;
        check_x(x, n, k)?;
        self.same_context("the workspace", ws.act_q.context())?;
        let layout = self.contract.activations;
        ws.check_activations(n, k, layout.group, layout.planes)?;
        let cfg = quantizer_config(n, k, layout.group)?;
        ws.quantized = None;
        let kernel = &self.quantize;
        let x_ptr = x.addr();
        let (act_q, _q) = ws.act_q.device_ptr_mut(stream);
        let (act_d, _d) = ws.act_d.device_ptr_mut(stream);
        let mut args = [
            kernel_arg(&x_ptr),
            kernel_arg(&act_q),
            kernel_arg(&act_d),
            kernel_arg(&ni),
            kernel_arg(&ki),
        ];
        // SAFETY: the argument list is the ABI of mmq_quantize_activations_g{G} and _i12 (docs/KERNELS.md); every
        // buffer was checked above to hold what the grid touches: x >= n*K, q >= n*K*planes, d >= n*K/G.
        launch(&kernel.info.name, cfg, || unsafe {
            launch_maybe_programmatic(false, &kernel.func, cfg, stream, &mut args)
        })?;
        ws.quantized = Some(self.quantized(n, k));
        Ok(())
    }

    /// Whether this variant's quantizer writes the activation scales chunk-major (`[K/G]` rows of
    /// [`tensor_maps::scale_row_stride`]`(n)` scales, so that the copy engine stages a chunk's tokens side by side)
    /// rather than token-major (`[n][K/G]`): docs/KERNELS.md.
    pub fn scales_by_chunk(&self) -> bool {
        self.contract.activations.by_chunk
    }

    /// What this variant's quantizer leaves in a workspace for `n` tokens of K, and so what its matmul expects
    /// there.
    fn quantized(&self, n: usize, k: usize) -> Quantized {
        Quantized::of(self.contract.activations, n, k)
    }

    /// Queues the whole matmul: the activation quantizer, the matmul entry point for the weights' layout, and
    /// the combine when the module has one. `x` is `[n][K]` f32, `out` `[n][m]` f32 (overwritten).
    pub fn matmul(
        &self,
        weights: &RegisteredWeights,
        x: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        let (x, _x) = self.lend("the activations", x, stream)?;
        let (out, _o) = self.lend_mut("the output", out, stream)?;
        self.matmul_ref(weights, x, out, n, stream, ws)
    }

    /// [`Self::matmul`] on activations and an output a caller lends by address (an engine's own buffers).
    pub fn matmul_ref(
        &self,
        weights: &RegisteredWeights,
        x: DeviceRef<f32>,
        out: DeviceRef<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        // Check everything before queueing anything.
        self.check_matmul(weights, out.len(), n, ws)?;
        let k = weights.k();
        check_x(x, n, k)?;
        match self.contract.quantizer {
            QuantizerLaunch::InMatmul => {
                // One launch: the kernel quantizes x itself and leaves q and d in the workspace for checks.
                ws.quantized = None;
                self.queue_matmul(weights, Some(x), out, n, stream, ws)?;
                ws.quantized = Some(self.quantized(n, k));
            }
            QuantizerLaunch::Separate => {
                self.quantize_activations_ref(x, n, k, stream, ws)?;
                self.queue_matmul(weights, None, out, n, stream, ws)?;
            }
        }
        if self.combine.is_some() {
            self.combine_ref(weights.m(), n, k, out, stream, ws)?;
        }
        Ok(())
    }

    fn check_matmul(
        &self,
        weights: &RegisteredWeights,
        out_len: usize,
        n: usize,
        ws: &Workspace,
    ) -> Result<(), LaunchError> {
        let (m, k) = (weights.m(), weights.k());
        check_shape(m, n, k)?;
        check_out(out_len, m, n)?;
        let layout = self.contract.activations;
        ws.check_activations(n, k, layout.group, layout.planes)?;
        ws.check_slots(&self.contract.schedule, m, n, k, self.resident_blocks)?;
        let mode = self.contract.mode;
        if self.contract.reads_scale_plane() && weights.plane_for(mode).is_none() {
            return Err(LaunchError::MissingPlane {
                variant: self.desc.name.to_string(),
                plane: PlaneKind::for_mode(mode),
                mode,
            });
        }
        if self.contract.weights == WeightSource::FoldedPlane
            && weights.plane(PlaneKind::Folded).is_none()
        {
            return Err(LaunchError::MissingPlane {
                variant: self.desc.name.to_string(),
                plane: PlaneKind::Folded,
                mode,
            });
        }
        Ok(())
    }

    /// Queues the matmul entry point (and the combine) on activations the workspace already holds quantized
    /// (by [`Self::quantize_activations`] for the same `n` and K).
    pub fn matmul_quantized(
        &self,
        weights: &RegisteredWeights,
        out: &mut CudaSlice<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        self.matmul_entry(weights, out, n, stream, ws)?;
        if self.combine.is_some() {
            self.combine(weights.m(), n, weights.k(), out, stream, ws)?;
        }
        Ok(())
    }

    /// Queues only the matmul entry point for the weights' layout (for split-K variants it writes the segment
    /// partials into the workspace, and [`Self::combine`] must follow). [`Self::matmul_quantized`] does both.
    /// A variant that quantizes inside its matmul (`quantizer = fused`) has no such entry: use [`Self::matmul`].
    pub fn matmul_entry(
        &self,
        weights: &RegisteredWeights,
        out: &mut CudaSlice<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        if self.contract.quantizer == QuantizerLaunch::InMatmul {
            return Err(LaunchError::FusedQuantizer {
                variant: self.desc.name.to_string(),
            });
        }
        let (out, _o) = self.lend_mut("the output", out, stream)?;
        self.queue_matmul(weights, None, out, n, stream, ws)
    }

    /// The matmul entry point on the workspace's quantized activations, or, for a matmul that quantizes them
    /// itself, on `x` (which its contract lists where the others take the plane, docs/KERNELS.md), whose
    /// quantization it writes into the workspace.
    fn queue_matmul(
        &self,
        weights: &RegisteredWeights,
        x: Option<DeviceRef<f32>>,
        out: DeviceRef<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
        ws: &mut Workspace,
    ) -> Result<(), LaunchError> {
        let (m, k) = (weights.m(), weights.k());
        let (mi, ni, ki) = check_shape(m, n, k)?;
        self.check_matmul(weights, out.len(), n, ws)?;
        self.same_context("the stream", stream.context())?;
        self.same_context("the weights", weights.context())?;
        self.same_context("the workspace", ws.act_q.context())?;
        if x.is_none() {
            ws.check_quantized(self.quantized(n, k))?;
        }
        let (cfg, split) = matmul_config(
            &self.contract,
            m,
            n,
            k,
            self.resident_blocks,
            self.call_shared_bytes(k)?,
        )?;
        let plane = if self.contract.reads_scale_plane() {
            weights.plane_for(self.contract.mode)
        } else {
            None
        };
        let (weights_ptr, _w) = match weights.plane(PlaneKind::Folded) {
            Some(folded) if self.contract.weights == WeightSource::FoldedPlane => {
                let (ptr, guard) = folded.device_ptr(stream);
                (ptr, Some(guard))
            }
            _ => weights.layout_ptr(stream),
        };
        let plane_view = plane.map(|p| p.device_ptr(stream));
        // A matmul that quantizes writes q and d; the others read them.
        let ((act_q, _q), (act_d, _d)) = if x.is_some() {
            (
                ws.act_q.device_ptr_mut(stream),
                ws.act_d.device_ptr_mut(stream),
            )
        } else {
            (ws.act_q.device_ptr(stream), ws.act_d.device_ptr(stream))
        };
        let segments_view = match (self.contract.uses_workspace(), ws.segments.as_mut()) {
            (true, Some(s)) => Some(s.device_ptr_mut(stream)),
            _ => None,
        };
        let (kernel, entry) = self.matmul_kernel(weights.layout(), weights_ptr, m, k);
        // The tensor maps, where the contract has boxes; weights the kernel copies itself, or reads through a map
        // of their own, leave the weights' map zero.
        let mapped_weights = match entry {
            MatmulEntry::Padded => Some(PADDED_BLOCK_BYTES),
            MatmulEntry::RawRows(RawRowsWeights::RowMap) => Some(Layout::Raw.block_bytes() as u32),
            MatmulEntry::RawRows(
                RawRowsWeights::EightBlockRows
                | RawRowsWeights::EightBlockRuns
                | RawRowsWeights::QuadRowBlocks,
            )
            | MatmulEntry::Raw => None,
        }
        .map(|block_bytes| tensor_maps::MappedWeights {
            address: weights_ptr,
            block_bytes,
        });
        let map_error = |e: tensor_maps::EncodeError| LaunchError::TensorMap {
            variant: self.desc.name.to_string(),
            map: e.map,
            code: e.code,
            m,
            n,
            k,
        };
        let maps = match &self.contract.tensor_maps {
            Some(boxes) => Some(
                tensor_maps::encode(boxes, mapped_weights, act_q, act_d, m, n, k)
                    .map_err(map_error)?,
            ),
            None => None,
        };
        let weights_map = match entry {
            MatmulEntry::RawRows(RawRowsWeights::EightBlockRows) => Some(
                tensor_maps::encode_eight_block_rows(weights_ptr, m * (k / SUPERBLOCK_K as usize))
                    .map_err(map_error)?,
            ),
            MatmulEntry::RawRows(RawRowsWeights::EightBlockRuns) => {
                Some(tensor_maps::encode_eight_block_runs(weights_ptr, m, k).map_err(map_error)?)
            }
            MatmulEntry::RawRows(RawRowsWeights::QuadRowBlocks) => {
                Some(tensor_maps::encode_quad_row_blocks(weights_ptr, m, k).map_err(map_error)?)
            }
            _ => None,
        };
        let values = ArgValues {
            weights: weights_ptr,
            plane: plane_view.as_ref().map_or(0, |(p, _)| *p),
            x: x.map(|x| x.addr()),
            act_q,
            act_d,
            out: out.addr(),
            workspace: segments_view.as_ref().map_or(0, |(p, _)| *p),
            null: 0,
            m: mi,
            n: ni,
            k: ki,
            maps,
            weights_map,
            // Both fit an int: the blocks do (the scheduler checked), and the split is at most tail_parts.
            split: split.map(|t: TailSplit| (t.whole_tiles as i32, t.split as i32)),
        };
        let mut args = values
            .pack(match entry {
                MatmulEntry::RawRows(_) => &self.contract.raw_rows_args,
                MatmulEntry::Raw | MatmulEntry::Padded => &self.contract.args,
            })
            .map_err(|argument| LaunchError::Argument {
                variant: self.desc.name.to_string(),
                argument,
            })?;
        // A matmul that quantizes follows whatever the stream ran before, which may still be writing x: queued
        // the ordinary way. Every other one is the quantizer's programmatic dependent (decode log 29).
        let programmatic =
            self.programmatic && self.contract.quantizer == QuantizerLaunch::Separate;
        // SAFETY: `args` is the contract's list, which is the entry point's parameter list (docs/KERNELS.md; the
        // test `launch_contract` compares them for every declared variant), pointing at `values`, which outlives
        // the call (which copies them); x, when listed, was checked to hold n*K values; check_matmul verified the
        // output (n*m), the quantized activations (n*K, n*K/G), the scheduler's workspace slots and the plane; the
        // weights hold m*K/256 blocks of their layout (by construction, or checked when borrowed).
        launch(&kernel.info.name, cfg, || unsafe {
            launch_maybe_programmatic(programmatic, &kernel.func, cfg, stream, args.as_mut_slice())
        })
    }

    /// How a call of `m x n x K` maps its tiles to blocks on this GPU (only a last-wave split splits any).
    pub fn tail_split(&self, m: usize, n: usize, k: usize) -> TailSplit {
        self.contract
            .schedule
            .tail_split(m, n, k, self.resident_blocks)
    }

    /// Dynamic shared memory of one matmul launch at K = `k`: the variant's fixed amount, or, where it grows with
    /// K, what this K needs, refused with a sentence when over the GPU's limit.
    pub fn call_shared_bytes(&self, k: usize) -> Result<u32, LaunchError> {
        if self.contract.shared != SharedMemory::GrowsWithK {
            return Ok(self.dynamic_shared);
        }
        let needed = self.contract.shared_bytes_at(k as u64);
        match u32::try_from(needed) {
            Ok(bytes) if bytes <= self.dynamic_shared => Ok(bytes),
            _ => Err(LaunchError::SharedMemoryForK {
                variant: self.desc.name.to_string(),
                k,
                needed,
                limit: self.dynamic_shared,
            }),
        }
    }

    /// Queues only the split-K combine: the workspace's segment partials into `out` (`[n][m]`).
    pub fn combine(
        &self,
        m: usize,
        n: usize,
        k: usize,
        out: &mut CudaSlice<f32>,
        stream: &Arc<CudaStream>,
        ws: &Workspace,
    ) -> Result<(), LaunchError> {
        let (out, _o) = self.lend_mut("the output", out, stream)?;
        self.combine_ref(m, n, k, out, stream, ws)
    }

    fn combine_ref(
        &self,
        m: usize,
        n: usize,
        k: usize,
        out: DeviceRef<f32>,
        stream: &Arc<CudaStream>,
        ws: &Workspace,
    ) -> Result<(), LaunchError> {
        let (mi, ni, ki) = check_shape(m, n, k)?;
        let Some(combine) = self.combine.as_ref() else {
            return Err(LaunchError::MissingKernel {
                variant: self.desc.name.to_string(),
                kernel: format!("{}_combine", self.canonical),
            });
        };
        check_out(out.len(), m, n)?;
        ws.check_slots(&self.contract.schedule, m, n, k, self.resident_blocks)?;
        self.same_context("the stream", stream.context())?;
        let Some(segments) = ws.segments.as_ref() else {
            return Err(LaunchError::Workspace(
                "the workspace holds no segment partials for the combine: make it for this split-K variant"
                    .into(),
            ));
        };
        let cfg = combine_config(m, n);
        let (segments_ptr, _s) = segments.device_ptr(stream);
        let out_ptr = out.addr();
        let mut args = [
            kernel_arg(&segments_ptr),
            kernel_arg(&out_ptr),
            kernel_arg(&mi),
            kernel_arg(&ni),
            kernel_arg(&ki),
        ];
        // SAFETY: the combine's ABI (docs/KERNELS.md), pointing at locals that outlive the call; the segments
        // hold nseg*n*m values and out n*m.
        launch(&combine.info.name, cfg, || unsafe {
            launch_maybe_programmatic(self.programmatic, &combine.func, cfg, stream, &mut args)
        })
    }
}
