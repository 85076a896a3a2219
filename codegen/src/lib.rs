//! mmqgen's code generator: description -> validation -> (feature `render`) CUDA source.
//!
//! The pipeline a variant goes through, one module per step:
//! - [`arch`]: the architectures, as the features and shared memory each has (the one table);
//! - [`description`]: the typed fields a person declares;
//! - [`engine`]: each engine's knobs, defaults and own rules;
//! - [`features`]: which of those features a description's module uses;
//! - [`fields`]: the field table, and turning written fields (macro or TOML) into a description, with sentences;
//! - [`mod@validate`]: which descriptions are legal;
//! - [`mod@plan`]: a legal description as a typed plan, the engine's part carrying only its own knobs;
//! - [`layout`]: the shared-memory layout, shared by the validator and the renderer;
//! - [`launch`]: the launch contract: grid, block, shared memory, workspace and the kernels' arguments, as data;
//! - [`name`]: the canonical name;
//! - [`spec_file`]: descriptions from TOML;
//! - [`sweep`]: sweeps, descriptions whose fields hold lists, expanded to their product;
//! - `render` (feature): the CUDA source, through the tera templates in `templates/`.

pub mod arch;
pub mod description;
pub mod engine;
pub mod features;
pub mod fields;
pub mod launch;
pub mod layout;
pub mod name;
pub mod plan;
#[cfg(feature = "render")]
pub mod render;
pub mod spec_file;
pub mod sweep;
pub mod validate;

pub use arch::{ArchFamily, Feature, FeatureSet, Support};
pub use description::*;
pub use fields::{FieldError, FieldValue};
pub use layout::{
    ring_max_k, ring_shared_bytes, shared_layout, stream_offset_in_sums, stream_rows_at_once,
    SharedLayout, PADDED_BLOCK_BYTES, RING_FRAGMENT_SUPERBLOCKS,
};
pub use name::canonical_name;
pub use plan::{plan, Plan};
pub use sweep::{expand_sweep, expand_sweep_within, Expansion, StaticSweep, SweepError};
pub use validate::validate;

/// Bumped whenever the templates or the renderer change what they emit; recorded in every generated header.
pub const CODEGEN_VERSION: &str = "mmqgen-codegen 0.1.0 (templates v4)";
