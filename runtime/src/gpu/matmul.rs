//! The API an inference engine links: open the GPU once ([`Mmq`]), register each q6_K matrix once
//! ([`Mmq::register`], [`Mmq::register_gguf`]), then call [`Q6kMatrix::matmul`] as often as needed. The variant
//! for each call comes from the selection config (the embedded `mmqgen.toml` unless another is given), is
//! JIT-compiled through the cubin cache on first use, and every variant of a mode gives the same bits.
//!
//! Calls may come from several threads, each with its own stream: each stream gets its own workspace, grown
//! only when a call needs more, so after warm-up a call allocates nothing.

use crate::codegen::render::{render, RenderError};
use crate::codegen::{Arch, VariantDescription};
use crate::compile::cache::{CacheError, CubinCache};
use crate::gpu::device::{DeviceError, Gpu};
use crate::gpu::launch::{
    check_shape, rendered_dynamic_shared, rendered_entry_points, LaunchError, LoadedVariant,
    ShapeError, Workspace,
};
use crate::gpu::weights::{planes_read, Layout, RegisteredWeights, WeightsError};
use crate::select::{arch_from_str, Config, ConfigError, SelectError};
use cudarc::driver::{CudaSlice, CudaStream};
use mmqgen_formats::{GgufError, GgufFile};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
    #[error(
        "this GPU is {0}, which mmqgen does not target: it generates code for sm_80 and sm_90"
    )]
    UnsupportedArch(String),
    #[error(
        "the matrix has K = {registered} but the activations were given for K = {given} (x must be [n][K], \
         out [n][m])"
    )]
    Mismatch { registered: usize, given: usize },
}

/// The GPU, the selection config and the variants compiled so far.
pub struct Mmq {
    gpu: Gpu,
    arch: Arch,
    config: Config,
    cache: CubinCache,
    loaded: Mutex<HashMap<String, Arc<LoadedVariant>>>,
}

impl Mmq {
    /// GPU `ordinal` with the embedded config over the project's catalogue.
    pub fn new(ordinal: usize) -> Result<Mmq, MmqError> {
        let catalogue = crate::catalogue::all();
        Mmq::with_config(ordinal, Config::embedded(&catalogue)?)
    }

    /// GPU `ordinal` with a given config (`Config::parse(text, &catalogue)`).
    pub fn with_config(ordinal: usize, config: Config) -> Result<Mmq, MmqError> {
        let gpu = Gpu::open(ordinal)?;
        let arch = arch_from_str(gpu.arch())
            .ok_or_else(|| MmqError::UnsupportedArch(gpu.arch().to_string()))?;
        Ok(Mmq {
            gpu,
            arch,
            config,
            cache: CubinCache::from_env()?,
            loaded: Mutex::new(HashMap::new()),
        })
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
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

    /// Registers GGUF-layout q6_K rows (`m` rows of `K / 256` 210-byte blocks) in `layout`, with every plane a
    /// variant the config can pick for this m and K reads.
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
        Ok(Q6kMatrix {
            mmq: self,
            weights,
            workspaces: Mutex::new(HashMap::new()),
        })
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

    /// The compiled variant, built on first use through the cubin cache.
    fn loaded(&self, desc: &VariantDescription) -> Result<Arc<LoadedVariant>, MmqError> {
        let key = crate::codegen::canonical_name(desc);
        let mut loaded = self
            .loaded
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(variant) = loaded.get(&key) {
            return Ok(variant.clone());
        }
        let rendered = render(desc)?;
        let (compiled, _outcome) = self.cache.get_or_compile(
            &rendered.source,
            &format!("{}.cu", rendered.canonical),
            self.arch.keyword(),
            false,
        )?;
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
}

/// One registered q6_K matrix and the per-stream workspaces of its calls.
pub struct Q6kMatrix<'m> {
    mmq: &'m Mmq,
    weights: RegisteredWeights,
    workspaces: Mutex<HashMap<usize, Arc<Mutex<Workspace>>>>,
}

impl Q6kMatrix<'_> {
    /// What this matrix holds on the device: the layout's bytes plus every plane the config's variants read
    /// (DECISIONS.md 12). Compare with [`Q6kMatrix::gguf_bytes`].
    pub fn device_bytes(&self) -> usize {
        self.weights.device_bytes()
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

    /// `out[n][m] = x[n][K] * W^T` on `stream`: activations quantized on the GPU, then the selected variant.
    /// Enqueues only (asynchronous like any CUDA launch); n >= 1, and `x`, `out` must hold n*K and n*m values.
    pub fn matmul(
        &self,
        x: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
        n: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<VariantDescription, MmqError> {
        let (m, k) = (self.weights.m(), self.weights.k());
        check_shape(m, n, k)?;
        if x.len() < n * k {
            return Err(MmqError::Mismatch {
                registered: k,
                given: x.len() / n,
            });
        }
        let desc = self.mmq.select(self.weights.layout(), m, n, k)?;
        let variant = self.mmq.loaded(&desc)?;
        let workspace = self.workspace(stream, &variant, n)?;
        let mut workspace = workspace
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        variant.matmul(&self.weights, x, out, n, stream, &mut workspace)?;
        Ok(desc)
    }

    /// This stream's workspace, replaced by a larger one when `n` or the variant's needs outgrow it.
    fn workspace(
        &self,
        stream: &Arc<CudaStream>,
        variant: &LoadedVariant,
        n: usize,
    ) -> Result<Arc<Mutex<Workspace>>, MmqError> {
        let key = stream.cu_stream() as usize;
        let mut map = self
            .workspaces
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(ws) = map.get(&key) {
            let fits = ws
                .lock()
                .map(|w| w.fits(variant.description(), self.weights.m(), n, self.weights.k()))
                .unwrap_or(false);
            if fits {
                return Ok(ws.clone());
            }
        }
        let ws = Arc::new(Mutex::new(Workspace::for_description(
            stream,
            variant.description(),
            self.weights.m(),
            n.next_power_of_two(),
            self.weights.k(),
        )?));
        map.insert(key, ws.clone());
        Ok(ws)
    }
}
