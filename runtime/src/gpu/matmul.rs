//! The API an inference engine links: open the GPU once ([`Mmq`]), register each q6_K matrix once, then call
//! [`Q6kMatrix::matmul`] as often as needed. A matrix is registered from host bytes ([`Mmq::register`],
//! [`Mmq::register_gguf`]: mmqgen uploads its own copy, raw or padded) or borrowed where the engine already
//! holds its GGUF blocks on the GPU ([`Mmq::register_device`], [`Mmq::register_device_ptr`]: no copy, no
//! read-back). The variant for each call comes from the selection config (the embedded `mmqgen.toml` unless
//! another is given), is JIT-compiled through the cubin cache on first use, and every variant of a mode gives
//! the same bits.
//!
//! Calls may come from several threads, each with its own stream: each stream gets one workspace, shared by
//! every matrix called on it, grown only when a call needs more. [`Mmq::reserve`] sizes it once for the largest
//! shape, after which calls allocate nothing, free nothing and never wait for the GPU, so they may be captured in
//! a CUDA graph; a call that would have to grow a workspace while its stream is capturing is refused instead. A
//! workspace that is outgrown is kept until the `Mmq` is dropped, since a graph captured earlier may still use it.

use crate::codegen::render::RenderError;
use crate::codegen::{Arch, VariantDescription};
use crate::compile::cache::{CacheError, CubinCache};
use crate::compile::variant::{compile_variant, CompiledVariant, VariantCompileError};
use crate::gpu::buffer::DeviceRef;
use crate::gpu::device::{DeviceError, Gpu};
use crate::gpu::launch::{
    check_shape, multiprocessors, rendered_dynamic_shared, rendered_entry_points, LaunchError,
    LoadedVariant, ShapeError, Workspace, WorkspaceSize,
};
use crate::gpu::weights::{planes_read, Layout, RegisteredWeights, WeightsError};
use crate::select::{Config, ConfigError, SelectError};
use cudarc::driver::sys::{self, CUdeviceptr, CUstream};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use mmqgen_formats::{GgufError, GgufFile};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Why a registration or a matmul was refused; each message is one sentence.
#[derive(Debug, thiserror::Error)]
pub enum MmqError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Select(#[from] SelectError),
    #[error(transparent)]
    Weights(#[from] WeightsError),
    #[error(transparent)]
    Gguf(#[from] GgufError),
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Compile(#[from] VariantCompileError),
    /// A GPU whose compute capability is not in mmqgen's architecture table ([`crate::codegen::arch`]).
    #[error("{}", crate::codegen::arch::unknown_gpu_sentence(*compute_capability))]
    UnsupportedArch {
        /// `sm_70`.
        arch: String,
        compute_capability: (u32, u32),
    },
    #[error(
        "the matrix has K = {registered} but the activations were given for K = {given} (x must be [n][K], \
         out [n][m])"
    )]
    Mismatch { registered: usize, given: usize },
    /// Memory of another GPU or context was passed.
    #[error(
        "the {what} live in another CUDA context than GPU {ordinal}'s primary context, which mmqgen runs on: \
         pass memory and streams of that context"
    )]
    WrongContext { what: &'static str, ordinal: usize },
    /// The call needs a larger workspace, and its stream is capturing a CUDA graph.
    #[error(
        "this call (m = {m}, n = {n}, K = {k}) needs a larger workspace than its stream has, and the stream is \
         capturing a CUDA graph, where mmqgen allocates nothing: call reserve for the largest m, n and K before \
         capturing"
    )]
    WouldAllocateWhileCapturing { m: usize, n: usize, k: usize },
}

/// Selections remembered per shape before the memo is cleared (engines call a few hundred distinct shapes).
const MAX_REMEMBERED_PICKS: usize = 4096;

/// A call's shape as the selection sees it: the weights' layout, m, n and K, and whether their base is 16-byte
/// aligned (`Config::select_raw_at`).
type CallShape = (Layout, usize, usize, usize, bool);

/// A stream's workspace and the ones it outgrew (kept alive: a captured graph may still use them).
struct StreamWorkspace {
    current: Arc<Mutex<Workspace>>,
    outgrown: Vec<Arc<Mutex<Workspace>>>,
}

/// The GPU, the selection config, the variants compiled so far and each stream's workspace.
pub struct Mmq {
    gpu: Gpu,
    arch: Arch,
    config: Config,
    cache: CubinCache,
    loaded: Mutex<HashMap<String, Arc<LoadedVariant>>>,
    /// The variant each (layout, m, n, K) selected, so that a call after the first costs one lookup.
    picks: Mutex<HashMap<CallShape, Arc<LoadedVariant>>>,
    /// Keyed by the stream's `CUstream`.
    workspaces: Mutex<HashMap<usize, StreamWorkspace>>,
    multiprocessors: u32,
    /// Whether a rule of this architecture for raw weights picks a variant that reads a plane: only then does a
    /// borrowed registration look for one (a call on device pointers registers its weights each time).
    raw_rules_read_planes: bool,
}

/// Locks `mutex`, taking the data of a poisoned one (a panicking caller cannot leave these maps half-written:
/// every update is one insert).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Mmq {
    /// GPU `ordinal` with the embedded config over the project's catalogue.
    pub fn new(ordinal: usize) -> Result<Mmq, MmqError> {
        let catalogue = crate::catalogue::all();
        Mmq::with_config(ordinal, Config::embedded(&catalogue)?)
    }

    /// GPU `ordinal` with the embedded batch-invariant config ([`crate::select::BATCH_INVARIANT_CONFIG`]): one
    /// numerics mode, `int12_per256`, at every token count on sm_90, so that a token's output row has the same
    /// bits whatever else shares its call. Not the default: it has not been timed against it. It has rules for
    /// sm_90 only; on another architecture every call is refused with [`MmqError::Select`].
    pub fn batch_invariant(ordinal: usize) -> Result<Mmq, MmqError> {
        let catalogue = crate::catalogue::all();
        Mmq::with_config(ordinal, Config::batch_invariant(&catalogue)?)
    }

    /// GPU `ordinal` (its primary context, the one the CUDA runtime uses) with a given config
    /// (`Config::parse(text, &catalogue)`).
    pub fn with_config(ordinal: usize, config: Config) -> Result<Mmq, MmqError> {
        let gpu = Gpu::open(ordinal)?;
        let arch = gpu
            .info()
            .known_arch()
            .ok_or_else(|| MmqError::UnsupportedArch {
                arch: gpu.arch().to_string(),
                compute_capability: gpu.info().compute_capability,
            })?;
        // mmqgen orders its own work by stream: its buffers need no cudarc events, whose record and wait calls
        // would cost every call host time. Registration waits for its uploads instead.
        // SAFETY: only changes whether cudarc records events for buffers allocated in this context from now on.
        unsafe { gpu.context().disable_event_tracking() };
        let multiprocessors = multiprocessors(gpu.stream())?;
        let raw_rules_read_planes = config
            .rules
            .iter()
            .filter(|r| r.arch == arch && r.takes_layout(Layout::Raw))
            .any(|r| !planes_read(&r.variant).is_empty());
        Ok(Mmq {
            gpu,
            arch,
            config,
            cache: CubinCache::from_env()?,
            loaded: Mutex::new(HashMap::new()),
            picks: Mutex::new(HashMap::new()),
            workspaces: Mutex::new(HashMap::new()),
            multiprocessors,
            raw_rules_read_planes,
        })
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The architecture code is compiled for on this GPU.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The variant the config picks for a shape on this GPU, for weights registered in `layout`.
    pub fn select(
        &self,
        layout: Layout,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<VariantDescription, MmqError> {
        Ok(self
            .config
            .select(self.arch, layout, m as u64, n as u64, k as u64)?
            .variant
            .clone())
    }

    /// Registers GGUF-layout q6_K rows (`m` rows of `K / 256` 210-byte blocks) from host memory in `layout`
    /// (mmqgen's own copy on the GPU), with every plane a variant the config can pick for this m and K reads.
    /// Returns once the copy is on the GPU.
    pub fn register(
        &self,
        raw: &[u8],
        m: usize,
        k: usize,
        layout: Layout,
    ) -> Result<Q6kMatrix<'_>, MmqError> {
        let mut weights = RegisteredWeights::register(&self.gpu, raw, m, k, layout)?;
        for variant in self
            .config
            .variants_for(self.arch, layout, m as u64, k as u64)
        {
            for plane in planes_read(variant) {
                weights.add_plane_kind(raw, plane)?;
            }
        }
        // Calls on other streams read what this stream uploaded: wait for it here, once.
        self.gpu.synchronize("uploading the weights")?;
        Ok(Q6kMatrix { mmq: self, weights })
    }

    /// Registers the q6_K tensor `name` of a parsed GGUF file (a 2-D tensor of ggml shape [K, m]).
    pub fn register_gguf(
        &self,
        file: &GgufFile<'_>,
        name: &str,
        layout: Layout,
    ) -> Result<Q6kMatrix<'_>, MmqError> {
        let tensor = file.q6k_tensor(name)?;
        self.register(tensor.bytes(), tensor.rows(), tensor.k(), layout)
    }

    /// Borrows `m` GGUF rows of `K / 256` q6_K blocks that the caller already holds on this GPU (a cudarc slice
    /// or view of at least `m * K/256 * 210` bytes at an even address), in the raw layout: no copy, no read-back,
    /// nothing allocated. The matrix borrows `weights`, which must not change while it is used. Refused with a
    /// sentence when a variant the config can pick for this m and K reads a precomputed plane (the embedded
    /// default's raw picks read none).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let (m, k, n) = (4096, 4096, 8);
    /// # let gguf_bytes = vec![0u8; m * k / 256 * 210];
    /// let mmq = mmqgen::Mmq::new(0)?; // GPU 0's primary context, the embedded selection
    /// let stream = mmq.gpu().context().new_stream()?;
    /// // The engine's own copy of the tensor, as it loaded it (here from host bytes; any cudarc slice or view).
    /// let blocks = stream.clone_htod(&gguf_bytes)?;
    /// let w = mmq.register_device(&blocks, m, k)?; // borrowed in place: nothing copied or allocated
    /// mmq.reserve(&stream, m, 512, k)?; // optional: calls up to n = 512 allocate nothing (graph capture)
    /// let x = stream.alloc_zeros::<f32>(n * k)?; // [n][K] activations
    /// let mut out = stream.alloc_zeros::<f32>(n * m)?; // [n][m] output
    /// let variant = w.matmul(&x, &mut out, n, &stream)?; // enqueued on `stream`; returns the variant that ran
    /// # Ok(())
    /// # }
    /// ```
    pub fn register_device<'a, W: DevicePtr<u8>>(
        &'a self,
        weights: &'a W,
        m: usize,
        k: usize,
    ) -> Result<Q6kMatrix<'a>, MmqError> {
        self.same_context("weights", weights.stream())?;
        let (addr, _read) = weights.device_ptr(self.gpu.stream());
        // SAFETY: a live allocation of this context of weights.len() bytes, borrowed for 'a by the matrix.
        unsafe { self.register_device_ptr(addr, weights.len(), m, k) }
    }

    /// [`Mmq::register_device`] from a raw device address and the bytes there (the C ABI's path).
    ///
    /// # Safety
    /// `addr` must be device memory of this GPU's primary context holding `bytes` bytes, which stay valid and
    /// unchanged for as long as the returned matrix (or any work queued with it) is used.
    pub unsafe fn register_device_ptr(
        &self,
        addr: CUdeviceptr,
        bytes: usize,
        m: usize,
        k: usize,
    ) -> Result<Q6kMatrix<'_>, MmqError> {
        let weights = RegisteredWeights::borrow_raw(
            self.gpu.stream(),
            DeviceRef::from_raw(addr, bytes),
            m,
            k,
        )?;
        if self.raw_rules_read_planes {
            if let Some(plane) = self
                .config
                .variants_for(self.arch, Layout::Raw, m as u64, k as u64)
                .into_iter()
                .flat_map(planes_read)
                .next()
            {
                return Err(WeightsError::BorrowedPlane { plane }.into());
            }
        }
        Ok(Q6kMatrix { mmq: self, weights })
    }

    /// Sizes `stream`'s workspace for every call up to `max_m x max_n x max_k` that the config can route, so
    /// that such calls allocate nothing afterwards (and may be captured in a CUDA graph). Returns what the
    /// stream's workspace now holds; call it again to raise the bounds.
    pub fn reserve(
        &self,
        stream: &Arc<CudaStream>,
        max_m: usize,
        max_n: usize,
        max_k: usize,
    ) -> Result<WorkspaceSize, MmqError> {
        self.same_context("stream", stream)?;
        check_shape(max_m, max_n, max_k)?;
        let size = self.workspace_size(max_m, max_n, max_k)?;
        let mut map = lock(&self.workspaces);
        let key = stream.cu_stream() as usize;
        if let Some(ws) = map.get(&key) {
            let have = lock(&ws.current).size();
            if have.max(size) == have {
                return Ok(have);
            }
        }
        self.refuse_while_capturing(stream, max_m, max_n, max_k)?;
        let grown = match map.get(&key) {
            Some(ws) => lock(&ws.current).size().max(size),
            None => size,
        };
        let workspace = Arc::new(Mutex::new(Workspace::with_size(stream, grown)?));
        match map.get_mut(&key) {
            Some(ws) => {
                let old = std::mem::replace(&mut ws.current, workspace);
                ws.outgrown.push(old);
            }
            None => {
                map.insert(
                    key,
                    StreamWorkspace {
                        current: workspace,
                        outgrown: Vec::new(),
                    },
                );
            }
        }
        Ok(grown)
    }

    /// Device bytes of every workspace this `Mmq` holds (each stream's, and the ones they outgrew).
    pub fn workspace_bytes(&self) -> usize {
        lock(&self.workspaces)
            .values()
            .flat_map(|ws| std::iter::once(&ws.current).chain(&ws.outgrown))
            .map(|w| lock(w).size().bytes())
            .sum()
    }

    /// `out[n][m] = x[n][K] * W^T` for raw GGUF blocks at `weights`, activations at `x` and an output at `out`,
    /// all device memory the caller owns, on the caller's stream: nothing is copied, the call only enqueues
    /// (no host synchronization, no device-to-host copy), and after [`Mmq::reserve`] it allocates nothing.
    /// Returns the variant that ran.
    ///
    /// # Safety
    /// `weights` (`weight_bytes` bytes), `x` (`n * K` f32) and `out` (`n * m` f32) must be device memory of this
    /// GPU's primary context, and `stream` a stream of that context (or null for its legacy default stream),
    /// valid until the queued work is done; the weights and `x` must not change, and `out` must not be read or
    /// written by anything else, until then.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn matmul_device_ptrs(
        &self,
        weights: CUdeviceptr,
        weight_bytes: usize,
        m: usize,
        k: usize,
        x: CUdeviceptr,
        n: usize,
        out: CUdeviceptr,
        stream: CUstream,
    ) -> Result<Arc<LoadedVariant>, MmqError> {
        check_shape(m, n, k)?;
        let matrix = self.register_device_ptr(weights, weight_bytes, m, k)?;
        let stream = self.gpu.context().wrap_borrowed_stream(stream);
        // check_shape keeps m, n and K below 2^31, so the products fit.
        let (x, out) = (
            DeviceRef::from_raw(x, n * k),
            DeviceRef::from_raw(out, n * m),
        );
        matrix.call(x, out, n, &stream)
    }

    /// The compiled variant, built on first use through the cubin cache.
    fn loaded(&self, desc: &VariantDescription) -> Result<Arc<LoadedVariant>, MmqError> {
        let key = crate::codegen::canonical_name(desc);
        let mut loaded = lock(&self.loaded);
        if let Some(variant) = loaded.get(&key) {
            return Ok(variant.clone());
        }
        let CompiledVariant {
            rendered, compiled, ..
        } = compile_variant(desc, self.arch, Some(&self.cache))?;
        let variant = Arc::new(LoadedVariant::load_with(
            &self.gpu,
            desc,
            &compiled.cubin,
            rendered_entry_points(&rendered),
            rendered_dynamic_shared(&rendered),
        )?);
        loaded.insert(key, variant.clone());
        Ok(variant)
    }

    /// The loaded variant the config picks for this shape of `weights`, remembered per shape: on raw blocks whose
    /// base is not 16-byte aligned, past the rules whose variants would read them by tensor copies
    /// ([`crate::select::Config::select_raw_at`]).
    fn pick(&self, weights: &RegisteredWeights, n: usize) -> Result<Arc<LoadedVariant>, MmqError> {
        let (layout, m, k) = (weights.layout(), weights.m(), weights.k());
        let unaligned = weights
            .borrowed_address()
            .filter(|address| !address.is_multiple_of(16));
        // Every base that is not 16-byte aligned reaches the same maps (none), so one pick serves them all.
        let key = (layout, m, n, k, unaligned.is_none());
        if let Some(variant) = lock(&self.picks).get(&key) {
            return Ok(variant.clone());
        }
        let desc = match (layout, unaligned) {
            (Layout::Raw, Some(address)) => self
                .config
                .select_raw_at(self.arch, address, m as u64, n as u64, k as u64)?
                .variant
                .clone(),
            _ => self.select(layout, m, n, k)?,
        };
        let variant = self.loaded(&desc)?;
        let mut picks = lock(&self.picks);
        if picks.len() >= MAX_REMEMBERED_PICKS {
            picks.clear();
        }
        picks.insert(key, variant.clone());
        Ok(variant)
    }

    /// What a workspace needs for every call up to `max_m x max_n x max_k` that some rule of this
    /// architecture can take: each rule's variant at the largest shape inside both its bounds and these.
    fn workspace_size(
        &self,
        max_m: usize,
        max_n: usize,
        max_k: usize,
    ) -> Result<WorkspaceSize, MmqError> {
        let mut size = WorkspaceSize::default();
        for rule in self.config.rules.iter().filter(|r| r.arch == self.arch) {
            let top = |bounds: &crate::select::Bounds, max: usize| {
                let hi = bounds.max.map_or(max, |b| (b as usize).min(max));
                (bounds.min as usize <= hi).then_some(hi)
            };
            let (Some(m), Some(n), Some(k)) = (
                top(&rule.m, max_m),
                top(&rule.tokens, max_n),
                top(&rule.k, max_k),
            ) else {
                continue;
            };
            // K below 256 is no matrix; a rule that starts there still takes K = 256.
            let k = k - k % 256;
            if k == 0 {
                continue;
            }
            size = size.max(WorkspaceSize::for_description(
                &rule.variant,
                m,
                n,
                k,
                self.multiprocessors,
            )?);
        }
        Ok(size)
    }

    /// `stream`'s workspace, grown (never shrunk) when `variant` at this shape needs more.
    fn workspace(
        &self,
        stream: &Arc<CudaStream>,
        variant: &LoadedVariant,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<Arc<Mutex<Workspace>>, MmqError> {
        let key = stream.cu_stream() as usize;
        if let Some(ws) = lock(&self.workspaces).get(&key) {
            if lock(&ws.current).fits(variant.description(), m, n, k) {
                return Ok(ws.current.clone());
            }
        }
        // Grow to the next power of two in n, and at least to what the stream had, so that growing is rare.
        let (mut max_m, mut max_n, mut max_k) = (m, n.next_power_of_two(), k);
        if let Some(ws) = lock(&self.workspaces).get(&key) {
            let had = lock(&ws.current).size();
            (max_m, max_n, max_k) = (
                max_m.max(had.max_m),
                max_n.max(had.max_n),
                max_k.max(had.max_k),
            );
        }
        self.refuse_while_capturing(stream, m, n, k)?;
        self.reserve(stream, max_m, max_n, max_k)?;
        let map = lock(&self.workspaces);
        let ws = map.get(&key).expect("reserve made this stream's workspace");
        if !lock(&ws.current).fits(variant.description(), m, n, k) {
            // The rule that picked the variant bounds its shapes, so the reserve covers it; should a
            // hand-made config break that, size for the variant itself.
            let size = lock(&ws.current).size().max(WorkspaceSize::for_description(
                variant.description(),
                max_m,
                max_n,
                max_k,
                self.multiprocessors,
            )?);
            drop(map);
            return self.replace_workspace(stream, size);
        }
        Ok(ws.current.clone())
    }

    fn replace_workspace(
        &self,
        stream: &Arc<CudaStream>,
        size: WorkspaceSize,
    ) -> Result<Arc<Mutex<Workspace>>, MmqError> {
        let workspace = Arc::new(Mutex::new(Workspace::with_size(stream, size)?));
        let mut map = lock(&self.workspaces);
        let ws = map
            .get_mut(&(stream.cu_stream() as usize))
            .expect("replaced after reserve");
        let old = std::mem::replace(&mut ws.current, workspace.clone());
        ws.outgrown.push(old);
        Ok(workspace)
    }

    /// Refuses to allocate while `stream` captures a graph (an allocation would not belong to the graph, and a
    /// graph replayed later must not depend on it).
    fn refuse_while_capturing(
        &self,
        stream: &Arc<CudaStream>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<(), MmqError> {
        // SAFETY: queries the capture status of a stream of this context.
        let status = unsafe { cudarc::driver::result::stream::is_capturing(stream.cu_stream()) }
            .map_err(|e| DeviceError::cuda("asking whether the stream is capturing a graph", e))?;
        if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Err(MmqError::WouldAllocateWhileCapturing { m, n, k });
        }
        Ok(())
    }

    fn same_context(&self, what: &'static str, stream: &Arc<CudaStream>) -> Result<(), MmqError> {
        if **stream.context() == **self.gpu.context() {
            Ok(())
        } else {
            Err(MmqError::WrongContext {
                what,
                ordinal: self.gpu.info().ordinal,
            })
        }
    }
}

/// One registered q6_K matrix: mmqgen's copy from host bytes, or an engine's blocks borrowed for `'m`.
pub struct Q6kMatrix<'m> {
    mmq: &'m Mmq,
    weights: RegisteredWeights,
}

impl Q6kMatrix<'_> {
    /// What this matrix's calls read on the device: the layout's bytes plus every plane the config's variants
    /// read (docs/DESIGN.md D12). Compare with [`Q6kMatrix::gguf_bytes`].
    pub fn device_bytes(&self) -> usize {
        self.weights.device_bytes()
    }

    /// What mmqgen allocated for this matrix: [`Q6kMatrix::device_bytes`] for host bytes; for borrowed weights
    /// only the planes built for them (none with the embedded default).
    pub fn allocated_bytes(&self) -> usize {
        self.weights.allocated_bytes()
    }

    /// The same matrix's bytes in a GGUF file (210 bytes per 256 weights).
    pub fn gguf_bytes(&self) -> usize {
        crate::gpu::weights::gguf_bytes(self.m(), self.k())
    }

    pub fn m(&self) -> usize {
        self.weights.m()
    }

    pub fn k(&self) -> usize {
        self.weights.k()
    }

    pub fn layout(&self) -> Layout {
        self.weights.layout()
    }

    /// Whether the weights are the caller's, used in place.
    pub fn is_borrowed(&self) -> bool {
        self.weights.is_borrowed()
    }

    /// `out[n][m] = x[n][K] * W^T` on `stream`: activations quantized on the GPU, then the selected variant.
    /// Enqueues only (asynchronous like any CUDA launch); n >= 1, and `x`, `out` must hold n*K and n*m values.
    /// Takes cudarc slices or views of this GPU (a candle tensor's storage, say).
    pub fn matmul<X: DevicePtr<f32>, O: DevicePtrMut<f32>>(
        &self,
        x: &X,
        out: &mut O,
        n: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<VariantDescription, MmqError> {
        let (m, k) = (self.m(), self.k());
        check_shape(m, n, k)?;
        if x.len() < n * k {
            return Err(MmqError::Mismatch {
                registered: k,
                given: x.len() / n,
            });
        }
        self.mmq.same_context("activations", x.stream())?;
        self.mmq.same_context("output", out.stream())?;
        self.mmq.same_context("stream", stream)?;
        let (x_len, out_len) = (x.len(), out.len());
        let (x_addr, _read) = x.device_ptr(stream);
        let (out_addr, _write) = out.device_ptr_mut(stream);
        // SAFETY: live buffers of this context of their lengths, borrowed until the work is queued; cudarc's
        // guards order the stream after their earlier users.
        let (x, out) = unsafe {
            (
                DeviceRef::from_raw(x_addr, x_len),
                DeviceRef::from_raw(out_addr, out_len),
            )
        };
        Ok(self.call(x, out, n, stream)?.description().clone())
    }

    /// [`Q6kMatrix::matmul`] on activations and an output the caller lends by address.
    ///
    /// # Safety
    /// As [`DeviceRef::from_raw`]: `x` and `out` are memory of this GPU's primary context, valid and used by
    /// nothing else until the work queued on `stream` is done.
    pub unsafe fn matmul_ref(
        &self,
        x: DeviceRef<f32>,
        out: DeviceRef<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<VariantDescription, MmqError> {
        self.mmq.same_context("stream", stream)?;
        Ok(self.call(x, out, n, stream)?.description().clone())
    }

    fn call(
        &self,
        x: DeviceRef<f32>,
        out: DeviceRef<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<Arc<LoadedVariant>, MmqError> {
        let (m, k) = (self.m(), self.k());
        check_shape(m, n, k)?;
        let variant = self.mmq.pick(&self.weights, n)?;
        let workspace = self.mmq.workspace(stream, &variant, m, n, k)?;
        let mut workspace = lock(&workspace);
        variant.matmul_ref(&self.weights, x, out, n, stream, &mut workspace)?;
        Ok(variant)
    }
}
