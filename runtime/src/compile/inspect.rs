//! What a variant compiles to, per architecture: the ptxas resource report of each entry point and, where
//! cuobjdump is installed, a SASS summary. `mmqgen check` prints it; tests assert on it (the engine's
//! instruction is there, widths are real, shipped variants do not spill, shared memory matches the layout).

use crate::codegen::render::{render, RenderError, RenderedVariant};
use crate::codegen::{Arch, VariantDescription};
use crate::compile::cache::{CacheError, CacheOutcome, CubinCache};
use crate::compile::isolated::Compiler;
use crate::compile::variant::{compile_variant, CompiledVariant, VariantCompileError};
use crate::compile::CompiledCubin;
use crate::compile::{parse_sass, sass_dump, CompileError, KernelResources, SassSummary};

/// The layouts of [`VariantReport::entries`], in order.
pub const ENTRY_LAYOUTS: [&str; 3] = ["raw", "padded", "raw_rows"];

/// One entry point's report on one architecture.
#[derive(Clone, Debug)]
pub struct EntryReport {
    pub kernel: String,
    pub resources: KernelResources,
    /// None where cuobjdump is absent.
    pub sass: Option<SassSummary>,
}

/// A variant on one architecture.
#[derive(Clone, Debug)]
pub struct VariantReport {
    pub name: String,
    pub canonical: String,
    pub arch: Arch,
    pub rendered: RenderedVariant,
    /// The matmul entry points: raw, padded, then raw_rows where the variant has it ([`ENTRY_LAYOUTS`]).
    pub entries: Vec<EntryReport>,
    pub allow_spills: bool,
    /// Whether the cubin came from the cache (None when no cache was used).
    pub cache: Option<CacheOutcome>,
    /// The module's whole `cuobjdump --dump-sass`, when the SASS was read (the summaries are made from it).
    pub sass_dump: Option<String>,
}

/// A reason the check fails for a variant.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("ptxas reported no entry point named '{kernel}' (its report names: {reported})")]
    MissingKernel { kernel: String, reported: String },
    /// The module compiled, but NVRTC's log holds no ptxas report at all. Seen on the H200's NVRTC 13.0 for
    /// compiles after a process's first in `mmqgen run`: NVRTC (12.9 and later) served them from its own
    /// compilation cache, so ptxas never ran. The compile options now turn that cache off (`--no-cache`,
    /// compile/nvrtc.rs); should a log still lack the report, `run` says so and `check` fails.
    #[error(
        "NVRTC's log for '{kernel}' holds no ptxas report, so its registers and spills are unknown"
    )]
    NoPtxasReport { kernel: String },
}

impl VariantReport {
    /// Problems the catalogue may not have: spills or a stack frame in a shipped variant (docs/DESIGN.md D10),
    /// static shared memory other than the layout's figure.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for entry in &self.entries {
            let r = &entry.resources;
            if !self.allow_spills
                && (r.spill_stores_bytes > 0 || r.spill_loads_bytes > 0 || r.stack_frame_bytes > 0)
            {
                problems.push(format!(
                    "{} on {}: {} bytes of stack frame and {}/{} bytes of spill stores/loads, but shipped variants may not \
                     spill (declare allow_spills: true for an experiment)",
                    entry.kernel, self.arch, r.stack_frame_bytes, r.spill_stores_bytes, r.spill_loads_bytes
                ));
            }
            let expected_static = if self.rendered.dynamic_shared {
                0
            } else {
                self.rendered.shared_bytes
            };
            if r.shared_bytes != expected_static {
                problems.push(format!(
                    "{} on {}: ptxas reports {} bytes of static shared memory, the layout says {}",
                    entry.kernel, self.arch, r.shared_bytes, expected_static
                ));
            }
        }
        problems
    }
}

/// Renders and compiles `desc` for `arch` (through `cache` when given); with `with_sass`, also disassembles
/// (when cuobjdump exists).
pub fn inspect(
    desc: &VariantDescription,
    arch: Arch,
    with_sass: bool,
    cache: Option<&CubinCache>,
) -> Result<VariantReport, InspectError> {
    let CompiledVariant {
        rendered,
        compiled,
        cache: outcome,
        ..
    } = compile_variant(desc, arch, cache).map_err(|e| match e {
        VariantCompileError::Render(e) => InspectError::Render(e),
        VariantCompileError::Compile { source, .. } => InspectError::Compile(*source),
        VariantCompileError::Cache(e) => InspectError::Cache(*e),
    })?;
    report(desc, arch, with_sass, rendered, compiled, outcome)
}

/// [`inspect`] with `compiler` running NVRTC: the CLI compiles in a child process ([`Compiler::Child`]), so
/// that a crash of NVRTC is one failed variant and not the end of the command.
pub fn inspect_with(
    desc: &VariantDescription,
    arch: Arch,
    with_sass: bool,
    cache: Option<&CubinCache>,
    compiler: &Compiler,
) -> Result<VariantReport, InspectError> {
    if matches!(compiler, Compiler::InProcess) {
        return inspect(desc, arch, with_sass, cache);
    }
    // The steps of compile::variant::compile_rendered (the target from the rendered module, the program named
    // after the canonical name, no line info), with the compile handed to `compiler`.
    let rendered = render(desc)?;
    let program = format!("{}.cu", rendered.canonical);
    let target = rendered.nvrtc_arch(arch);
    let (compiled, outcome) = match cache {
        Some(cache) => {
            let (compiled, outcome) =
                cache.get_or_compile_by(&rendered.source, &program, &target, false, compiler)?;
            (compiled, Some(outcome))
        }
        None => (
            compiler.compile(&rendered.source, &program, &target, false)?,
            None,
        ),
    };
    report(desc, arch, with_sass, rendered, compiled, outcome)
}

/// The report of a compiled module: each entry point's resources, and the SASS when asked for.
fn report(
    desc: &VariantDescription,
    arch: Arch,
    with_sass: bool,
    rendered: RenderedVariant,
    compiled: CompiledCubin,
    outcome: Option<CacheOutcome>,
) -> Result<VariantReport, InspectError> {
    let sass_dump = if with_sass {
        sass_dump(&compiled.cubin)?
    } else {
        None
    };
    let sass = sass_dump.as_deref().map(parse_sass);
    let find = |kernel: &String| {
        compiled
            .report
            .iter()
            .find(|r| &r.kernel == kernel)
            .cloned()
    };
    let mut entries = Vec::new();
    let raw_rows = rendered.kernels.raw_rows.as_ref();
    for (kernel, twin) in [
        Some((&rendered.kernels.raw, &rendered.kernels.padded)),
        Some((&rendered.kernels.padded, &rendered.kernels.raw)),
        raw_rows.map(|r| (r, &rendered.kernels.padded)),
    ]
    .into_iter()
    .flatten()
    {
        // Where both layouts run the same code (the prefolded engine), NVVM may merge the two entry points and
        // ptxas then reports one of them: the other has the same resources.
        let resources = find(kernel)
            .or_else(|| (desc.engine.is_prefolded()).then(|| find(twin)).flatten())
            .ok_or_else(|| {
                if compiled.report.is_empty() {
                    return InspectError::NoPtxasReport {
                        kernel: kernel.clone(),
                    };
                }
                InspectError::MissingKernel {
                    kernel: kernel.clone(),
                    reported: compiled
                        .report
                        .iter()
                        .map(|r| format!("'{}' for {}", r.kernel, r.arch))
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            })?;
        let sass = sass
            .as_ref()
            .and_then(|all| all.iter().find(|s| s.function == *kernel).cloned());
        entries.push(EntryReport {
            kernel: kernel.clone(),
            resources,
            sass,
        });
    }
    Ok(VariantReport {
        name: desc.name.to_string(),
        canonical: rendered.canonical.clone(),
        arch,
        rendered,
        entries,
        allow_spills: desc.allow_spills,
        cache: outcome,
        sass_dump,
    })
}
