//! The matmul entry points' declarations, written from the launch contract ([`LaunchContract`]): the parameter list
//! the kernel declares is the list the launcher packs, so neither template nor launcher spells it with conditions.
//! The text keeps the line breaks the templates have always had.

use crate::description::*;
use crate::launch::{KernelArg, LaunchContract};

/// A continuation line of an entry point's parameters.
const ENTRY_INDENT: &str = "\n    ";

/// The parameters of an entry point, after its `(`: the first three on one line, the next six (to `k`) on the
/// next, the tensor maps on a line of their own, and the last wave's integers after them.
pub(super) fn entry_parameters(contract: &LaunchContract) -> String {
    parameters(contract, ENTRY_INDENT, &[3, 6], KernelArg::c_parameter)
}

/// The parameters of the matmul's body (`mmq_main`), after its `(`, continuation lines aligned under the first: two
/// a line, then `out` to `k`, the tensor maps (by address) on a line of their own, and the last wave's integers.
pub(super) fn main_parameters(contract: &LaunchContract) -> String {
    let indent = format!("\n{}", " ".repeat(41));
    let declared = |arg: KernelArg| match arg {
        KernelArg::TensorMaps => "const TensorMaps* maps",
        other => other.c_parameter(),
    };
    let mut text = parameters(contract, &indent, &[2, 2, 5], declared);
    // The first line follows the function's name directly.
    text.replace_range(..indent.len(), "");
    text
}

/// The entry point's call of the matmul's body: its parameters by name, the tensor maps by address.
pub(super) fn main_arguments(contract: &LaunchContract) -> String {
    contract
        .args
        .iter()
        .map(|arg| match arg {
            KernelArg::TensorMaps => "&maps",
            other => parameter_name(other.c_parameter()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The parameters the matmul's body uses, by name (the slots the contract marks unused left out).
pub(super) fn used_arguments(contract: &LaunchContract) -> String {
    contract
        .args
        .iter()
        .filter(|arg| {
            !matches!(
                arg,
                KernelArg::Plane { used: false } | KernelArg::Workspace { used: false }
            )
        })
        .map(|arg| parameter_name(arg.c_parameter()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `__launch_bounds__`' arguments: the block's threads (and the producer warpgroup's), and the blocks an SM must
/// hold where the description names them.
pub(super) fn launch_bounds(desc: &VariantDescription, ring_names_blocks_per_sm: bool) -> String {
    let blocks = desc.blocks_per_sm;
    let named = match desc.engine {
        Engine::StreamDp4a => blocks > 1,
        Engine::StreamRing if desc.ring_lanes == RingLanes::Fragments => true,
        Engine::StreamRing => blocks > 1 || ring_names_blocks_per_sm,
        _ if desc.producer == Producer::Warpgroup => {
            return "THREADS + PRODUCER_THREADS, 1".to_string();
        }
        _ => blocks > 1 || desc.fold_warps > 0,
    };
    if named {
        format!("THREADS, {blocks}")
    } else {
        "THREADS".to_string()
    }
}

/// What comes before `__launch_bounds__`: the cluster's shape, when the blocks form one.
pub(super) fn cluster_dims(desc: &VariantDescription) -> &'static str {
    if desc.cluster_blocks() > 1 {
        "__cluster_dims__(CLUSTER_ROWS, CLUSTER_TOKENS, 1) "
    } else {
        ""
    }
}

/// A declaration's name: its last word.
fn parameter_name(declaration: &'static str) -> &'static str {
    declaration.rsplit(' ').next().unwrap_or(declaration)
}

/// The parameters as `declared`, each line of `lines` parameters led by `indent`; the tensor maps on a line of their
/// own and what follows them on its line.
fn parameters(
    contract: &LaunchContract,
    indent: &str,
    lines: &[usize],
    declared: impl Fn(KernelArg) -> &'static str,
) -> String {
    let mut text = String::new();
    let mut args = contract.args.iter().copied().peekable();
    for (at, &count) in lines.iter().enumerate() {
        text.push_str(indent);
        let line: Vec<&str> = args.by_ref().take(count).map(&declared).collect();
        text.push_str(&line.join(", "));
        if at + 1 < lines.len() {
            text.push(',');
        }
    }
    for arg in args {
        if arg == KernelArg::TensorMaps {
            text.push(',');
            text.push_str(indent);
        } else {
            text.push_str(", ");
        }
        text.push_str(declared(arg));
    }
    text
}
