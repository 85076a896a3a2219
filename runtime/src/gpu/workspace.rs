//! The workspace: device buffers between a variant's kernels, reused across calls so that a matmul allocates
//! nothing. The activations the quantizer writes and the matmul reads, and the f32 slots the tile scheduler asks
//! for (split-K partials, or the counters and sums of a last wave's split tiles: [`TileSchedule`]).

use std::sync::Arc;

use cudarc::driver::result::DriverError;
use cudarc::driver::{CudaSlice, CudaStream};
use mmqgen_codegen::launch::{counter_slots_to_zero, ActivationLayout, TileSchedule};
use mmqgen_codegen::VariantDescription;
use mmqgen_reference::activations::QuantizedActivations;

use super::device::{DeviceError, Gpu};
use super::launch::{check_shape, LaunchError, LoadedVariant, ShapeError};
use super::tensor_maps;

/// Bit pattern written into buffers before a launch so that an output the kernel never wrote is recognisable (a
/// quiet NaN no arithmetic produces: GPU arithmetic on NaN gives the canonical 0x7FFFFFFF).
pub const POISON_BITS: u32 = 0xFFC0_DEAD;
/// The poison byte for int8 activation quants: -128, which the quantizer never writes (it clamps to ±127).
pub const POISON_Q: i8 = i8::MIN;

/// Device buffers between the kernels, reused across calls: the quantized activations (`q [n][K]` int8,
/// `d [n][K/G]` f32, or `[K/G][round_up(n, 4)]` for a variant whose scales are chunk-major) and the slots its tile
/// scheduler asks for (split-K's segment partials `f32 [nseg][n][m]`, or a last wave's split tiles).
#[derive(Debug)]
pub struct Workspace {
    size: WorkspaceSize,
    pub(crate) act_q: CudaSlice<i8>,
    pub(crate) act_d: CudaSlice<f32>,
    pub(crate) segments: Option<CudaSlice<f32>>,
    /// What the activations `act_q`/`act_d` hold now.
    pub(crate) quantized: Option<Quantized>,
}

/// What a [`Workspace`] holds, in elements, and the shapes it was sized for (for messages and for a last wave's
/// split tiles, whose split depends on the GPU's SMs, read once here rather than at each call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkspaceSize {
    /// int8 activation quants.
    pub act_q: usize,
    /// f32 activation scales.
    pub act_d: usize,
    /// f32 slots the tile scheduler asks for: split-K's segment partials, or the split tiles' counters and sums
    /// ([`TileSchedule::max_workspace_slots`]).
    pub segments: usize,
    pub max_m: usize,
    pub max_n: usize,
    pub max_k: usize,
    /// The GPU's multiprocessors (0 when no variant sized for splits its tiles).
    pub multiprocessors: u32,
    /// The largest [`TileSchedule::counter_wave`] among the variants sized for (0 if none): how many counters a
    /// poisoned workspace keeps at zero.
    pub split_wave: u64,
}

impl WorkspaceSize {
    /// What any call of `desc` with `m <= max_m`, `n <= max_n`, `K <= max_k` needs, on a GPU of
    /// `multiprocessors` SMs.
    pub fn for_description(
        desc: &VariantDescription,
        max_m: usize,
        max_n: usize,
        max_k: usize,
        multiprocessors: u32,
    ) -> Result<WorkspaceSize, ShapeError> {
        check_shape(max_m, max_n, max_k)?;
        let activations = ActivationLayout::of(desc);
        let (group, planes) = (activations.group as usize, activations.planes as usize);
        let schedule = TileSchedule::of(desc);
        let resident = schedule.resident_blocks(multiprocessors.max(1));
        let segments = schedule.max_workspace_slots(max_m, max_n, max_k, resident)?;
        let split_wave = schedule.counter_wave(resident);
        Ok(WorkspaceSize {
            act_q: max_n * max_k * planes,
            // Room for either layout of the scales: chunk-major rows are n rounded up to 4.
            act_d: tensor_maps::scale_row_stride(max_n) * (max_k / group),
            segments,
            max_m,
            max_n,
            max_k,
            multiprocessors,
            split_wave,
        })
    }

    /// Room for both: each buffer and bound the larger of the two.
    pub fn max(self, other: WorkspaceSize) -> WorkspaceSize {
        WorkspaceSize {
            act_q: self.act_q.max(other.act_q),
            act_d: self.act_d.max(other.act_d),
            segments: self.segments.max(other.segments),
            max_m: self.max_m.max(other.max_m),
            max_n: self.max_n.max(other.max_n),
            max_k: self.max_k.max(other.max_k),
            multiprocessors: self.multiprocessors.max(other.multiprocessors),
            split_wave: self.split_wave.max(other.split_wave),
        }
    }

    /// Device bytes of a workspace of this size.
    pub fn bytes(&self) -> usize {
        self.act_q + 4 * self.act_d + 4 * self.segments
    }
}

/// The multiprocessors of `stream`'s GPU.
pub fn multiprocessors(stream: &Arc<CudaStream>) -> Result<u32, DeviceError> {
    stream
        .context()
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .map(|sms| sms.max(1) as u32)
        .map_err(|e| DeviceError::cuda("reading the multiprocessor count", e))
}

/// The activations a workspace holds: `n` tokens of K in groups of G, their scales token- or chunk-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Quantized {
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) group: u32,
    /// int8 planes per value (2 under `int12_per256`).
    pub(crate) planes: u32,
    pub(crate) by_chunk: bool,
}

impl Quantized {
    /// What a quantizer of `layout` leaves for `n` tokens of K.
    pub(crate) fn of(layout: ActivationLayout, n: usize, k: usize) -> Quantized {
        Quantized {
            n,
            k,
            group: layout.group,
            planes: layout.planes,
            by_chunk: layout.by_chunk,
        }
    }
}

impl Workspace {
    /// A workspace for any call of `variant` with `m <= max_m`, `n <= max_n`, `K <= max_k`.
    pub fn new(
        gpu: &Gpu,
        variant: &LoadedVariant,
        max_m: usize,
        max_n: usize,
        max_k: usize,
    ) -> Result<Workspace, LaunchError> {
        Self::for_description(gpu.stream(), variant.description(), max_m, max_n, max_k)
    }

    /// A workspace sized for `desc`'s activation group and split-K, on `stream`.
    pub fn for_description(
        stream: &Arc<CudaStream>,
        desc: &VariantDescription,
        max_m: usize,
        max_n: usize,
        max_k: usize,
    ) -> Result<Workspace, LaunchError> {
        let sms = multiprocessors(stream)?;
        let size = WorkspaceSize::for_description(desc, max_m, max_n, max_k, sms)?;
        Self::with_size(stream, size)
    }

    /// A workspace of `size` on `stream` (the union of several variants' needs: [`WorkspaceSize::max`]).
    pub fn with_size(
        stream: &Arc<CudaStream>,
        size: WorkspaceSize,
    ) -> Result<Workspace, LaunchError> {
        fn alloc_err(what: &'static str, len: usize) -> impl FnOnce(DriverError) -> DeviceError {
            move |e| {
                DeviceError::cuda(
                    format!("allocating the workspace's {what} ({len} elements)"),
                    e,
                )
            }
        }
        let act_q = stream
            .alloc_zeros::<i8>(size.act_q.max(1))
            .map_err(alloc_err("activation quants", size.act_q))?;
        let act_d = stream
            .alloc_zeros::<f32>(size.act_d.max(1))
            .map_err(alloc_err("activation scales", size.act_d))?;
        // Zeros: the split tiles' counters start at 0 (each call leaves them so: the last block resets the
        // arrivals, the part after a cut lowers its flag).
        let segments = match size.segments {
            0 => None,
            len => Some(
                stream
                    .alloc_zeros::<f32>(len)
                    .map_err(alloc_err("segment partials and split tiles' sums", len))?,
            ),
        };
        Ok(Workspace {
            size,
            act_q,
            act_d,
            segments,
            quantized: None,
        })
    }

    /// What this workspace holds.
    pub fn size(&self) -> WorkspaceSize {
        self.size
    }

    /// Whether this workspace can serve `desc` at this shape without growing.
    pub fn fits(&self, desc: &VariantDescription, m: usize, n: usize, k: usize) -> bool {
        let schedule = TileSchedule::of(desc);
        let resident = schedule.resident_blocks(self.size.multiprocessors);
        self.check_activations(
            n,
            k,
            desc.mode.activation_group(),
            desc.mode.activation_planes(),
        )
        .is_ok()
            && self.check_slots(&schedule, m, n, k, resident).is_ok()
    }

    /// The activation buffers hold `n` tokens of K in groups of `group`, `planes` int8 planes a value.
    pub(crate) fn check_activations(
        &self,
        n: usize,
        k: usize,
        group: u32,
        planes: u32,
    ) -> Result<(), LaunchError> {
        let g = group as usize;
        let quants = n * k * planes as usize;
        let scales = tensor_maps::scale_row_stride(n) * (k / g);
        if quants > self.act_q.len() || scales > self.act_d.len() {
            return Err(LaunchError::Workspace(format!(
                "the workspace holds {} activation quants and {} scales, but n = {n} tokens of K = {k} in groups \
                 of {g} need {} and {}: make a Workspace for the larger shape (it was made for n <= {}, K <= {})",
                self.act_q.len(),
                self.act_d.len(),
                quants,
                scales,
                self.size.max_n,
                self.size.max_k
            )));
        }
        Ok(())
    }

    pub(crate) fn check_quantized(&self, expected: Quantized) -> Result<(), LaunchError> {
        let Quantized {
            n,
            k,
            group,
            planes,
            by_chunk,
        } = expected;
        let layout = |by_chunk: bool| {
            if by_chunk {
                "chunk-major"
            } else {
                "token-major"
            }
        };
        match self.quantized {
            Some(q) if (q.n, q.k, q.group, q.planes) != (n, k, group, planes) => {
                Err(LaunchError::Workspace(format!(
                    "the workspace holds activations quantized for n = {}, K = {} in groups of {} ({} plane(s)), \
                     but this matmul is n = {n}, K = {k} in groups of {group} ({planes} plane(s)): quantize them \
                     first",
                    q.n, q.k, q.group, q.planes
                )))
            }
            Some(q) if q.by_chunk != by_chunk => Err(LaunchError::Workspace(format!(
                "the workspace holds activation scales laid out {}, but this variant reads them {}: quantize \
                 the activations with this variant first",
                layout(q.by_chunk),
                layout(by_chunk)
            ))),
            Some(_) => Ok(()),
            None => Err(LaunchError::Workspace(
                "the workspace holds no quantized activations: call quantize_activations first".into(),
            )),
        }
    }

    /// The scheduler's slots hold what a call of `m x n x K` needs.
    pub(crate) fn check_slots(
        &self,
        schedule: &TileSchedule,
        m: usize,
        n: usize,
        k: usize,
        resident: u64,
    ) -> Result<(), LaunchError> {
        let demand = schedule.workspace_demand(m, n, k, resident)?;
        let have = self.segments.as_ref().map_or(0, |s| s.len());
        if demand.slots > have {
            return Err(LaunchError::Workspace(format!(
                "the workspace holds {have} {}, but {} needs {}: make the Workspace for {} and a large enough \
                 shape (it was made for m <= {}, n <= {}, K <= {})",
                demand.holds,
                demand.call,
                demand.slots,
                demand.made_for,
                self.size.max_m,
                self.size.max_n,
                self.size.max_k
            )));
        }
        Ok(())
    }

    /// Copies the quantized activations back (after the quantizer ran for `n` tokens of K), waiting for the
    /// stream. They are the GPU's `q [n][K]` and `d [n][K/G]`, for comparing with the reference's.
    pub fn read_quantized(
        &self,
        stream: &Arc<CudaStream>,
    ) -> Result<QuantizedActivations, LaunchError> {
        let Some(Quantized {
            n,
            k,
            group,
            planes,
            by_chunk,
        }) = self.quantized
        else {
            return Err(LaunchError::Workspace(
                "the workspace holds no quantized activations to read: run the quantizer first"
                    .into(),
            ));
        };
        let g = group as usize;
        let q = read_prefix(
            stream,
            &self.act_q,
            n * k * planes as usize,
            "the activation quants",
        )?;
        let d = if by_chunk {
            // [K/G][stride], tokens at their scale_position, back to [n][K/G], the reference's layout.
            let stride = tensor_maps::scale_row_stride(n);
            let rows = read_prefix(
                stream,
                &self.act_d,
                stride * (k / g),
                "the activation scales",
            )?;
            (0..n)
                .flat_map(|t| (0..k / g).map(move |c| (t, c)))
                .map(|(t, c)| rows[c * stride + tensor_maps::scale_position(t)])
                .collect()
        } else {
            read_prefix(stream, &self.act_d, n * (k / g), "the activation scales")?
        };
        Ok(QuantizedActivations {
            q,
            d,
            n,
            k,
            group: g,
            planes: planes as usize,
        })
    }

    /// Fills the whole workspace with poison (quants [`POISON_Q`], scales and segments [`POISON_BITS`]) so that
    /// a value a kernel never wrote shows. Allocates host staging; for checks, not for the hot path.
    pub fn poison(&mut self, stream: &Arc<CudaStream>) -> Result<(), LaunchError> {
        self.quantized = None;
        let q = vec![POISON_Q; self.act_q.len()];
        stream
            .memcpy_htod(&q, &mut self.act_q)
            .map_err(|e| DeviceError::cuda("poisoning the activation quants", e))?;
        poison_f32(stream, &mut self.act_d, "the activation scales")?;
        if let Some(s) = self.segments.as_mut() {
            poison_f32(stream, s, "the segment partials")?;
            // The split tiles' counters (a call's first slots) must read zero when a call starts.
            let arrivals = counter_slots_to_zero(self.size.split_wave).min(s.len());
            if arrivals > 0 {
                let mut counts = s.slice_mut(..arrivals);
                stream
                    .memset_zeros(&mut counts)
                    .map_err(|e| DeviceError::cuda("zeroing the split tiles' counters", e))?;
            }
        }
        Ok(())
    }

    /// The scheduler's slots (split-K partials, or split tiles' counters and sums), when any variant sized for
    /// has them.
    pub fn segments(&self) -> Option<&CudaSlice<f32>> {
        self.segments.as_ref()
    }
}

/// Fills `buf` with [`POISON_BITS`].
pub fn poison_f32(
    stream: &Arc<CudaStream>,
    buf: &mut CudaSlice<f32>,
    what: &str,
) -> Result<(), DeviceError> {
    let host = vec![f32::from_bits(POISON_BITS); buf.len()];
    stream
        .memcpy_htod(&host, buf)
        .map_err(|e| DeviceError::cuda(format!("poisoning {what}"), e))
}

/// Copies the first `len` elements of `buf` back, waiting for the stream.
pub fn read_prefix<T: cudarc::driver::DeviceRepr + Default + Clone>(
    stream: &Arc<CudaStream>,
    buf: &CudaSlice<T>,
    len: usize,
    what: &'static str,
) -> Result<Vec<T>, LaunchError> {
    let view = buf.try_slice(0..len).ok_or_else(|| ShapeError::Buffer {
        buffer: what,
        len: buf.len(),
        shape: "reading it back".to_string(),
        needed: len,
    })?;
    let mut host = vec![T::default(); len];
    stream
        .memcpy_dtoh(&view, &mut host)
        .map_err(|e| DeviceError::cuda(format!("copying {what} back"), e))?;
    stream
        .synchronize()
        .map_err(|e| DeviceError::cuda(format!("waiting for the copy of {what}"), e))?;
    Ok(host)
}
