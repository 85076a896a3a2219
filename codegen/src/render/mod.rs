//! Rendering: a validated description -> one CUDA module (docs/KERNELS.md), through the tera templates in
//! `templates/` (embedded at build time). What the templates need is computed here, once, into one typed
//! `RenderContext`, and the module is composed of components (`components.rs`): which scheduler, pipeline,
//! epilogue, sums, engine body, helpers and stage loads a description takes is decided here, so that the templates
//! write the code without branching on it and the generated file holds only the parts the description selects.
//!
//! One job per module: `context` (what the templates read), `components` (which templates fill which slots), `abi`
//! (the entry points' declarations from the launch contract), `header` (the header's map of shared memory).

mod abi;
mod components;
mod context;
mod header;

use crate::arch::FeatureSet;
use crate::description::*;
use crate::features::features_used;
pub use crate::launch::{has_raw_rows_entry, KernelNames, STATIC_SHARED_LIMIT};
use crate::launch::{LaunchContract, SharedMemory};
use crate::layout::shared_layout;
use crate::name::canonical_name;
use crate::FieldError;

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
    /// The architecture features the module uses ([`crate::features::features_used`]).
    pub features: FeatureSet,
}

impl RenderedVariant {
    /// The NVRTC `--gpu-architecture` value for `arch`: the exact architecture (`sm_86` for an sm_86 GPU), with the
    /// arch-specific suffix where the module uses a feature that is arch-specific there (`sm_90a` for wgmma or
    /// setmaxnreg; the table in [`crate::arch`] says which). The one place a module's compile target is decided;
    /// every compile path of the runtime goes through it.
    pub fn nvrtc_arch(&self, arch: Arch) -> String {
        arch.nvrtc_target(self.features)
    }
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

/// The templates, embedded at build time (name, text): every file under templates/ (codegen/build.rs).
const TEMPLATES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// Renders a description into its CUDA module. Refuses invalid descriptions with the validator's sentences.
pub fn render(desc: &VariantDescription) -> Result<RenderedVariant, RenderError> {
    crate::plan::plan(desc).map_err(|errors| RenderError::Invalid {
        name: desc.name.to_string(),
        errors,
    })?;
    let canonical = canonical_name(desc);
    let layout = shared_layout(desc);
    let context = context::render_context(desc, &canonical, &layout);
    let template_error = |e: tera::Error| RenderError::Template(format!("{e:?}"));
    let mut tera_context = tera::Context::from_serialize(&context).map_err(template_error)?;
    let mut tera = tera::Tera::default();
    tera.add_raw_templates(TEMPLATES.to_vec())
        .map_err(template_error)?;
    // The matmul's components fill the hub's slots (components.rs).
    for slot in components::slots(TEMPLATES) {
        tera_context.insert(slot, "");
    }
    for component in components::components(desc, &context) {
        let rendered = tera
            .render(component, &tera_context)
            .map_err(template_error)?;
        for (slot, text) in components::sections(&rendered) {
            // A later component's section follows an earlier one's in the same slot.
            let earlier = tera_context
                .get(&slot)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            tera_context.insert(slot, &(earlier + &text));
        }
    }
    let raw_source = tera
        .render("module.cu.tera", &tera_context)
        .map_err(template_error)?;
    let contract = LaunchContract::of(desc);
    Ok(RenderedVariant {
        canonical,
        source: tidy(&raw_source),
        kernels: contract.kernels,
        shared_bytes: layout.total_bytes,
        dynamic_shared: contract.shared != SharedMemory::Static,
        threads: contract.threads,
        features: features_used(desc),
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
