//! The `--layout` argument of the subcommands that take one weight layout (bench times the variants on it, explain
//! explains the call for it), in a module of its own so that neither subcommand imports the other.

use clap::ValueEnum;

use crate::gpu::weights::Layout;

/// The weight layout the variants are timed on (bench), or the call is explained for (explain).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    Raw,
    Padded,
}

impl From<LayoutArg> for Layout {
    fn from(arg: LayoutArg) -> Layout {
        match arg {
            LayoutArg::Raw => Layout::Raw,
            LayoutArg::Padded => Layout::Padded,
        }
    }
}
