//! Building a variant for a GPU: render its source, compile it with NVRTC (or take the cubin from the cache) and
//! load it ([`LoadedVariant`]), with how long that took for reports.

use std::path::Path;
use std::time::Instant;

use mmqgen_codegen::render::{render, RenderError, RenderedVariant};
use mmqgen_codegen::VariantDescription;

use crate::compile::cache::{CacheError, CacheOutcome, CubinCache};
use crate::compile::variant::{compile_rendered, CompiledVariant, VariantCompileError};
use crate::compile::CompileError;
use crate::gpu::device::Gpu;
use crate::gpu::launch::{EntryPoints, LaunchError, LoadedVariant};

/// Why a variant could not be built (rendered, compiled and loaded). Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("rendering variant '{variant}' failed: {source}")]
    Render {
        variant: String,
        #[source]
        source: RenderError,
    },
    #[error("compiling variant '{variant}' for {arch} failed: {source}")]
    Compile {
        variant: String,
        arch: String,
        #[source]
        source: Box<CompileError>,
    },
    #[error(transparent)]
    Cache(Box<CacheError>),
    #[error(transparent)]
    Load(#[from] Box<LaunchError>),
    #[error(
        "variant '{variant}' cannot be built for this GPU: it is {gpu_arch}, an architecture mmqgen does not \
         generate code for"
    )]
    UnknownArch { variant: String, gpu_arch: String },
}

impl From<LaunchError> for BuildError {
    fn from(e: LaunchError) -> BuildError {
        BuildError::Load(Box::new(e))
    }
}

/// How a variant was built, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildInfo {
    pub canonical: String,
    pub arch: String,
    /// Milliseconds spent rendering and compiling (0 for the compile when the cubin came from the cache).
    pub compile_ms: f64,
    pub from_cache: bool,
    pub cubin_bytes: usize,
}

/// The dynamic shared memory the renderer says its matmul kernels declare (0 when static).
pub fn rendered_dynamic_shared(rendered: &RenderedVariant) -> u32 {
    if rendered.dynamic_shared {
        rendered.shared_bytes
    } else {
        0
    }
}

/// The entry points the renderer names.
pub fn rendered_entry_points(rendered: &RenderedVariant) -> EntryPoints {
    EntryPoints {
        quantize: rendered.kernels.quantize.clone(),
        raw: rendered.kernels.raw.clone(),
        padded: rendered.kernels.padded.clone(),
        raw_rows: rendered.kernels.raw_rows.clone(),
        combine: rendered.kernels.combine.clone(),
    }
}

/// Renders `desc`, compiles it with NVRTC for this GPU's architecture (or takes the cubin from the
/// [`CubinCache`] in `cache_dir`, keyed by the source, options, NVRTC version and architecture) and loads it.
pub fn build_variant(
    gpu: &Gpu,
    desc: &VariantDescription,
    cache_dir: Option<&Path>,
) -> Result<(LoadedVariant, BuildInfo), BuildError> {
    let start = Instant::now();
    let rendered = render(desc).map_err(|source| BuildError::Render {
        variant: desc.name.to_string(),
        source,
    })?;
    build_rendered_since(gpu, desc, rendered, cache_dir, start)
}

/// The environment variable `mmqgen profile` sets to a folder of its own in the process it profiles: with line info
/// on, each compiled source is written there and compiled under that full path, which the line info records, so
/// that ncu's source page can show the generated CUDA beside the SASS.
pub const PROFILE_SOURCE_DIR_ENV: &str = "MMQGEN_PROFILE_SOURCE_DIR";

/// NVRTC's name for `rendered`'s program: `<canonical>.cu`, or its full path in [`PROFILE_SOURCE_DIR_ENV`]'s folder
/// once the source is written there (only with line info; a source that cannot be written keeps the short name).
fn program_name(rendered: &RenderedVariant, line_info: bool) -> String {
    let file = format!("{}.cu", rendered.canonical);
    let Some(dir) = std::env::var_os(PROFILE_SOURCE_DIR_ENV).filter(|_| line_info) else {
        return file;
    };
    let path = Path::new(&dir).join(&file);
    match std::fs::write(&path, &rendered.source) {
        Ok(()) => path.display().to_string(),
        Err(_) => file,
    }
}

/// Compiles an already rendered `desc` (its source possibly edited, e.g. a deliberate mutant from
/// [`crate::check::mutants`]) with NVRTC for this GPU's architecture, or takes the cubin from `cache_dir` (the key
/// hashes the source, so an edited source never meets the cubin of another), and loads it. `rendered` must come
/// from `render(desc)`: its entry points and shared memory are taken as they are.
pub fn build_rendered(
    gpu: &Gpu,
    desc: &VariantDescription,
    rendered: RenderedVariant,
    cache_dir: Option<&Path>,
) -> Result<(LoadedVariant, BuildInfo), BuildError> {
    build_rendered_since(gpu, desc, rendered, cache_dir, Instant::now())
}

/// [`build_rendered`], with `compile_ms` counted from `start` (so that [`build_variant`]'s includes the render).
fn build_rendered_since(
    gpu: &Gpu,
    desc: &VariantDescription,
    rendered: RenderedVariant,
    cache_dir: Option<&Path>,
    start: Instant,
) -> Result<(LoadedVariant, BuildInfo), BuildError> {
    let arch = gpu
        .info()
        .known_arch()
        .ok_or_else(|| BuildError::UnknownArch {
            variant: desc.name.to_string(),
            gpu_arch: gpu.arch().to_string(),
        })?;
    // `mmqgen profile` sets MMQGEN_LINE_INFO=1 in the process it profiles, so ncu can book stalls to lines.
    let line_info = std::env::var_os("MMQGEN_LINE_INFO").is_some_and(|v| v == "1");
    let program = program_name(&rendered, line_info);
    let cache = cache_dir.map(|dir| CubinCache::new(dir.to_path_buf()));
    let CompiledVariant {
        rendered,
        target,
        compiled,
        cache: outcome,
    } = compile_rendered(desc, rendered, &program, arch, cache.as_ref(), line_info).map_err(
        |e| match e {
            VariantCompileError::Render(source) => BuildError::Render {
                variant: desc.name.to_string(),
                source,
            },
            VariantCompileError::Compile {
                variant,
                target,
                source,
            } => BuildError::Compile {
                variant,
                arch: target,
                source,
            },
            VariantCompileError::Cache(e) => BuildError::Cache(e),
        },
    )?;
    let (arch, cubin, from_cache) = (target, compiled.cubin, outcome == Some(CacheOutcome::Hit));
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let loaded = LoadedVariant::load_with(
        gpu,
        desc,
        &cubin,
        rendered_entry_points(&rendered),
        rendered_dynamic_shared(&rendered),
    )?;
    Ok((
        loaded,
        BuildInfo {
            canonical: rendered.canonical,
            arch,
            compile_ms,
            from_cache,
            cubin_bytes: cubin.len(),
        },
    ))
}
