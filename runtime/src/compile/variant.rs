//! Compiling one variant for one architecture: the single path from a description (or its rendered module) to a
//! cubin that every caller takes: the library ([`crate::Mmq`]), the CLI's build, `check` and the tests.
//!
//! The NVRTC target is decided in one place, [`RenderedVariant::nvrtc_arch`]: a module that uses
//! architecture-specific instructions (wgmma, setmaxnreg) compiles for `sm_90a`, every other one for the plain
//! architecture. Nothing else spells a target, so the library cannot compile a module for a target it does not
//! run on (a `setmaxnreg` module built for plain `sm_90` is rejected by ptxas).

use crate::codegen::render::{render, RenderError, RenderedVariant};
use crate::codegen::{Arch, VariantDescription};
use crate::compile::cache::{CacheError, CacheOutcome, CubinCache};
use crate::compile::{compile_cubin, CompileError, CompiledCubin};

/// Why a variant could not be compiled. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum VariantCompileError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("compiling variant '{variant}' for {target} failed: {source}")]
    Compile {
        variant: String,
        target: String,
        #[source]
        source: Box<CompileError>,
    },
    #[error(transparent)]
    Cache(Box<CacheError>),
}

/// A variant's module compiled for one architecture.
#[derive(Debug)]
pub struct CompiledVariant {
    pub rendered: RenderedVariant,
    /// The NVRTC target it was compiled for (`sm_90a` for a wgmma module on sm_90).
    pub target: String,
    pub compiled: CompiledCubin,
    /// What the cache did; `None` when no cache was used.
    pub cache: Option<CacheOutcome>,
}

/// Renders `desc` and compiles it for `arch` (through `cache` when given).
pub fn compile_variant(
    desc: &VariantDescription,
    arch: Arch,
    cache: Option<&CubinCache>,
) -> Result<CompiledVariant, VariantCompileError> {
    let rendered = render(desc)?;
    let program = format!("{}.cu", rendered.canonical);
    compile_rendered(desc, rendered, &program, arch, cache, false)
}

/// Compiles an already rendered module of `desc` (its source possibly edited, e.g. a mutant) under the program
/// name `program`, for `arch`, with line info when asked (for Nsight Compute's source view).
pub fn compile_rendered(
    desc: &VariantDescription,
    rendered: RenderedVariant,
    program: &str,
    arch: Arch,
    cache: Option<&CubinCache>,
    line_info: bool,
) -> Result<CompiledVariant, VariantCompileError> {
    let target = rendered.nvrtc_arch(arch);
    let compile_error = |source| VariantCompileError::Compile {
        variant: desc.name.to_string(),
        target: target.clone(),
        source: Box::new(source),
    };
    let (compiled, outcome) = match cache {
        Some(cache) => {
            let (compiled, outcome) = cache
                .get_or_compile(&rendered.source, program, &target, line_info)
                .map_err(|e| match e {
                    CacheError::Compile(source) => compile_error(source),
                    other => VariantCompileError::Cache(Box::new(other)),
                })?;
            (compiled, Some(outcome))
        }
        None => (
            compile_cubin(&rendered.source, program, &target, line_info).map_err(compile_error)?,
            None,
        ),
    };
    Ok(CompiledVariant {
        rendered,
        target,
        compiled,
        cache: outcome,
    })
}
