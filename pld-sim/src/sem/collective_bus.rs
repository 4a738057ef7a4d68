//! The collective family's bus-bandwidth factors (nccl-tests' definitions), by op name.
//!
//! Guarantees: every registered collective that moves data has a factor here, and the size a
//! call reports is its largest tensor argument's bytes — the nccl-tests size of each kind
//! (allreduce and broadcast: the buffer; allgather: the gathered output; reduce_scatter: the
//! scattered input; all_to_all: the whole exchanged buffer). A test keeps the table complete.
//! A call's table columns come from its op record and kwargs: the reduction from a
//! `ReduceOp` kwarg (`op`), the root from `root`, the algorithm from `mode` when the op takes
//! one, else `ring` for the ring builtins and `mesh` (every rank exchanges with every peer
//! directly) for the others.

use crate::cost::BusFactor;
use crate::timeline::CallInfo;
use pld_ir::registry::{AbiEnumKind, AttrType};
use pld_ir::{Attr, Call, DataType};
use pld_runtime_abi::ReduceOp;

/// (op name, factor) for every data-moving collective of the family.
const FACTORS: [(&str, BusFactor); 14] = [
    ("pld.tensor.allreduce", BusFactor::AllReduce),
    ("builtin.tensor.allreduce", BusFactor::AllReduce),
    ("builtin.tensor.allreduce_ring", BusFactor::AllReduce),
    ("pld.tensor.broadcast", BusFactor::One),
    ("builtin.tensor.broadcast", BusFactor::One),
    ("pld.tensor.reduce_scatter", BusFactor::Gather),
    ("builtin.tensor.reduce_scatter", BusFactor::Gather),
    ("pld.tensor.allgather", BusFactor::Gather),
    ("builtin.tensor.allgather", BusFactor::Gather),
    ("pld.tensor.all_to_all", BusFactor::Gather),
    ("builtin.tensor.all_to_all", BusFactor::Gather),
    ("pld.tensor.all_to_all_v", BusFactor::Gather),
    ("builtin.tensor.all_to_all_v", BusFactor::Gather),
    ("builtin.tensor.barrier", BusFactor::One),
];

/// The bus factor of collective `op` (`None` for a barrier and for unknown ops).
pub fn bus_factor(op: &str) -> Option<BusFactor> {
    if op.ends_with(".barrier") {
        return None;
    }
    FACTORS.iter().find(|(n, _)| *n == op).map(|(_, f)| *f)
}

/// The ring builtins (every other collective runs the mesh algorithm).
const RING: [&str; 1] = ["builtin.tensor.allreduce_ring"];

/// What call `call` is, its sized buffer being `count` elements of `dtype`: the reduction is
/// its `ReduceOp`-typed kwarg, the root its `root` kwarg, the algorithm its `mode` kwarg when
/// the op takes one.
pub fn describe(call: &Call, dtype: Option<DataType>, count: u64) -> CallInfo {
    let defs = call.callee.op().map_or(&[][..], |d| d.attrs);
    let redop = defs
        .iter()
        .find(|d| d.ty == AttrType::Enum(AbiEnumKind::ReduceOp))
        .and_then(|d| call.attr_int(d.name))
        .and_then(|v| ReduceOp::from_i64(v).ok())
        .map(|r| r.dsl_name().to_lowercase());
    let takes = |k: &str| defs.iter().any(|d| d.name == k);
    let root = if takes("root") { call.attr_int("root") } else { None };
    let algorithm = match call.attr("mode") {
        Some(Attr::Str(m)) if takes("mode") => m.clone(),
        _ if RING.contains(&call.callee.name()) => "ring".to_string(),
        _ => "mesh".to_string(),
    };
    CallInfo { dtype, count, redop, root, algorithm: Some(algorithm) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sem::{lookup, names, SemKind};

    #[test]
    fn every_data_moving_collective_has_a_factor() {
        for name in names() {
            if matches!(lookup(name), Some(SemKind::Collective { .. })) && !name.ends_with(".barrier") {
                assert!(bus_factor(name).is_some(), "collective {name} has no bus factor");
            }
        }
        assert_eq!(bus_factor("builtin.tensor.barrier"), None);
    }
}
