//! What a builtin collective's kernel variant is keyed by (codegen.md §5.5), declared on its op
//! record ([`OpDef::builtin_variant`](super::OpDef::builtin_variant)) so codegen names variants
//! and fills the family's C++ template vars without knowing any op by name.
//!
//! Guarantees: a variant name is the op name, then one part per key this record declares, in
//! the fixed order reduce op, root, dtype (`builtin.tensor.allreduce__sum__fp32`,
//! `builtin.tensor.broadcast__root0__fp32`); the template vars a key brings are listed with it.

/// How a builtin collective's variants depend on its reduce op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKey {
    /// Not keyed by a reduce op.
    None,
    /// Keyed by the reduce op (`__sum`); the templates read `op_cpp` (`ReduceOp::kSum`).
    Op,
    /// Keyed by the reduce op; the templates read `op_cpp` and the kernel template the reduce
    /// op's tile instruction, `reduce_inst` (`TADD`).
    OpAndInstruction,
}

/// The keys of one builtin collective's variants, beyond its dtype (every variant is keyed by
/// its dtype and its templates read `dtype_cpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BuiltinVariant {
    /// Whether it is keyed by the reduce op, and what of it the templates read.
    pub reduce: ReduceKey,
    /// Keyed by the root rank (`__root0`); the templates read `root_cpp`.
    pub root: bool,
    /// The host passes a core count (`scalar(2)`) and the kernel launches that many blocks;
    /// the templates read `launch_core_count_method`.
    pub core_count: bool,
}

impl BuiltinVariant {
    /// Keyed by dtype only.
    pub const BY_DTYPE: BuiltinVariant =
        BuiltinVariant { reduce: ReduceKey::None, root: false, core_count: false };

    /// Also keyed by the reduce op.
    pub const fn by_reduce_op(self) -> BuiltinVariant {
        BuiltinVariant { reduce: ReduceKey::Op, ..self }
    }
    /// Also keyed by the reduce op, whose tile instruction the kernel template reads.
    pub const fn by_reduce_inst(self) -> BuiltinVariant {
        BuiltinVariant { reduce: ReduceKey::OpAndInstruction, ..self }
    }
    /// Also keyed by the root rank.
    pub const fn by_root(self) -> BuiltinVariant {
        BuiltinVariant { root: true, ..self }
    }
    /// Launched on the core count the host passes.
    pub const fn with_core_count(self) -> BuiltinVariant {
        BuiltinVariant { core_count: true, ..self }
    }

    /// The listing's spelling: the keys joined by `+` (`reduce-op+dtype`), then
    /// `+core-count` when the host passes one.
    pub fn listing(self) -> String {
        let keys = [
            (self.reduce == ReduceKey::Op, "reduce-op"),
            (self.reduce == ReduceKey::OpAndInstruction, "reduce-op-inst"),
            (self.root, "root"),
            (true, "dtype"),
            (self.core_count, "core-count"),
        ];
        keys.iter().filter(|(on, _)| *on).map(|(_, k)| *k).collect::<Vec<_>>().join("+")
    }
}
