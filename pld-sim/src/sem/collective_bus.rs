//! The collective family's bus-bandwidth factors (nccl-tests' definitions), by op name.
//!
//! Guarantees: every registered collective that moves data has a factor here, and the size a
//! call reports is its largest tensor argument's bytes — the nccl-tests size of each kind
//! (allreduce and broadcast: the buffer; allgather: the gathered output; reduce_scatter: the
//! scattered input; all_to_all: the whole exchanged buffer). A test keeps the table complete.

use crate::cost::BusFactor;

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
