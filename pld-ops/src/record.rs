//! How a `pld-ops` record is written: [`op`] starts it, builder methods state what differs
//! from the defaults, and [`OpSpec::deduce`] finishes it — the only way to get the
//! [`OpDef`], so every registered record has a deducer and the defaults are stated once here.
//! The parameter constructors name what an op does with an operand (`reads("tile")`,
//! `writes("dst").peer()`), and the attributes several families share live here too.

use pld_ir::registry::{AbiEnumKind, AttrDefault, AttrType, DeduceFn, EffectsFn};
use pld_ir::{
    Affinity, AttrDef, BuiltinVariant, DeduceCx, Diagnostic, Effect, OpDef, ParamDef, RankRole, SignalRole,
    Type,
};

/// An op record being written: [`op`] states what every record has (name, family, summary),
/// the methods state what differs from the defaults (no aliases, parameters or attributes,
/// SHARED, duplicated onto both lanes, no signal role, neither a collective nor a rank query,
/// not a builtin collective with kernel variants, user-facing, static per-parameter effects, no inline lowerings), and [`OpSpec::deduce`] finishes the record with its deducer.
/// The record inside is private and its deducer a placeholder until then, so no registered
/// record can lack one.
pub(crate) struct OpSpec(OpDef);

/// Starts the record of op `name` in `family`, described by `summary` in `pld ops`.
pub(crate) const fn op(name: &'static str, family: &'static str, summary: &'static str) -> OpSpec {
    OpSpec(OpDef {
        name,
        family,
        summary,
        aliases: &[],
        params: &[],
        attrs: &[],
        affinity: Affinity::Shared,
        no_duplicate: false,
        signal_role: SignalRole::None,
        rank_role: RankRole::None,
        builtin_variant: None,
        internal: false,
        effects: None,
        deduce: unfinished,
        lowerings: &[],
    })
}

/// The deducer of an [`OpSpec`] not yet finished by [`OpSpec::deduce`] (never registered).
fn unfinished(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Err(cx.error(format!("{} has no deducer", cx.def.name)))
}

/// The builder methods that set one field of the record.
macro_rules! setters {
    ($($(#[$doc:meta])* $field:ident: $ty:ty = $value:expr;)*) => {$(
        $(#[$doc])*
        pub(crate) const fn $field(self, $field: $ty) -> OpSpec {
            OpSpec(OpDef { $field: $value, ..self.0 })
        }
    )*};
}

impl OpSpec {
    setters! {
        /// Other DSL spellings of the op.
        aliases: &'static [&'static str] = aliases;
        /// Its positional-or-keyword parameters, in IR order.
        params: &'static [ParamDef] = params;
        /// Its keyword-only attributes.
        attrs: &'static [AttrDef] = attrs;
        /// The core it runs on, when not SHARED.
        affinity: Affinity = affinity;
        /// Its part in the signal protocol.
        signal_role: SignalRole = signal_role;
        /// Effects computed from the call, refining the static per-parameter ones.
        effects: EffectsFn = Some(effects);
    }
    /// Pinned to the AIV lane inside `split_aiv` regions.
    pub(crate) const fn no_duplicate(self) -> OpSpec {
        OpSpec(OpDef { no_duplicate: true, ..self.0 })
    }
    /// A collective: every rank must reach it the same number of times, in the same order.
    pub(crate) const fn collective(self) -> OpSpec {
        OpSpec(OpDef { rank_role: RankRole::Collective, ..self.0 })
    }
    /// Its result is the calling rank's index.
    pub(crate) const fn rank_index(self) -> OpSpec {
        OpSpec(OpDef { rank_role: RankRole::RankIndex, ..self.0 })
    }
    /// A builtin collective whose kernel variants are keyed by `keys` (codegen.md §5.5).
    pub(crate) const fn builtin_variant(self, keys: BuiltinVariant) -> OpSpec {
        OpSpec(OpDef { builtin_variant: Some(keys), ..self.0 })
    }
    /// Created only by compiler passes.
    pub(crate) const fn internal(self) -> OpSpec {
        OpSpec(OpDef { internal: true, ..self.0 })
    }
    /// The finished record, with the deducer that verifies a call and gives its result type.
    pub(crate) const fn deduce(self, deduce: DeduceFn) -> OpDef {
        OpDef { deduce, ..self.0 }
    }
}

/// Parameter constructors named for what the op does with the operand (`reads("tile")`).
macro_rules! param_kinds {
    ($($(#[$doc:meta])* $f:ident = $ctor:ident($($effect:ident)?);)*) => {$(
        $(#[$doc])*
        pub(crate) const fn $f(name: &'static str) -> ParamDef {
            ParamDef::$ctor(name $(, Effect::$effect)?)
        }
    )*};
}

param_kinds! {
    /// A required parameter that is not a memory operand (a shape, an index, a scalar).
    value = value();
    /// An optional parameter that is not a memory operand.
    optional = optional();
    /// A local memory operand the op only reads.
    reads = mem(Read);
    /// A local memory operand the op only writes.
    writes = mem(Write);
    /// A local memory operand the op reads and writes.
    updates = mem(ReadWrite);
    /// An optional local memory operand the op only reads.
    optional_reads = optional_mem(Read);
    /// An optional local memory operand the op only writes.
    optional_writes = optional_mem(Write);
    /// An optional local memory operand the op reads and writes.
    optional_updates = optional_mem(ReadWrite);
}

/// The `atomic` keyword of a store into GM (`None_` by default, `AtomicType.Add` to accumulate).
pub(crate) const ATOMIC_OPT: AttrDef =
    AttrDef::with_default("atomic", AttrType::Enum(AbiEnumKind::AtomicType), AttrDefault::Int(0));
