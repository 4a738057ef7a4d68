//! The static op record ([`OpDef`]) and the declarations it is built from: parameters,
//! affinity, lowerings, overloads, canonicalizers, and the registration records the
//! `register_*!` macros submit.

use super::{registry, AttrDef, BuiltinVariant, DeduceEnv, DeduceFn};
use crate::diag::Diagnostic;
use crate::effects::{Effect, RankRole, Side, SignalRole, StoreKind};
use crate::expr::{Attr, Call, Expr};
use crate::span::Span;
use crate::types::Type;

/// Which core may run an op in a mixed kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Affinity {
    /// Declared: vector lane only.
    Vector,
    /// Declared: cube lane only.
    Cube,
    /// No constraint: duplicated onto both lanes outside `split_aiv` regions.
    Shared,
    /// Derived from the memory space of the first tile argument (cube space → cube, else vector).
    FromFirstTileArg,
}

impl Affinity {
    /// Lowercase name for listings.
    pub fn name(self) -> &'static str {
        match self {
            Affinity::Vector => "vector",
            Affinity::Cube => "cube",
            Affinity::Shared => "shared",
            Affinity::FromFirstTileArg => "first-tile-arg",
        }
    }
}

/// One positional-or-keyword parameter of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamDef {
    /// Its DSL keyword name.
    pub name: &'static str,
    /// Whether it may be omitted (only trailing parameters may be).
    pub optional: bool,
    /// What the op does to it (static; [`OpDef::effects`] may refine it per call).
    pub effect: Effect,
    /// Whose memory it is: this rank's, or a peer's window region.
    pub side: Side,
    /// For a local GM store: bulk or scalar.
    pub store: StoreKind,
    /// A second keyword the DSL accepts for it (`shape=` for the size of
    /// `alloc_window_buffer`, whose shape form a canonicalizer rewrites).
    pub keyword_alias: Option<&'static str>,
}

impl ParamDef {
    /// A required parameter that is not a memory operand.
    pub const fn value(name: &'static str) -> ParamDef {
        ParamDef {
            name,
            optional: false,
            effect: Effect::None,
            side: Side::Local,
            store: StoreKind::None,
            keyword_alias: None,
        }
    }
    /// A required local memory operand with an effect.
    pub const fn mem(name: &'static str, effect: Effect) -> ParamDef {
        ParamDef {
            name,
            optional: false,
            effect,
            side: Side::Local,
            store: StoreKind::None,
            keyword_alias: None,
        }
    }
    /// An optional parameter.
    pub const fn optional(name: &'static str) -> ParamDef {
        ParamDef {
            name,
            optional: true,
            effect: Effect::None,
            side: Side::Local,
            store: StoreKind::None,
            keyword_alias: None,
        }
    }
    /// An optional local memory operand with an effect.
    pub const fn optional_mem(name: &'static str, effect: Effect) -> ParamDef {
        ParamDef {
            name,
            optional: true,
            effect,
            side: Side::Local,
            store: StoreKind::None,
            keyword_alias: None,
        }
    }
    /// The same operand, in a peer's window region (addressed through the call's peer index).
    pub const fn peer(self) -> ParamDef {
        ParamDef { side: Side::Peer, ..self }
    }
    /// The same parameter, also passed by the keyword `alias`.
    pub const fn or_keyword(self, alias: &'static str) -> ParamDef {
        ParamDef { keyword_alias: Some(alias), ..self }
    }
    /// Whether the keyword `k` names it.
    pub fn named(&self, k: &str) -> bool {
        self.name == k || self.keyword_alias == Some(k)
    }
    /// The same operand, written by a bulk (MTE3) store.
    pub const fn bulk_store(self) -> ParamDef {
        ParamDef { store: StoreKind::Bulk, ..self }
    }
    /// The same operand, written by a scalar store.
    pub const fn scalar_store(self) -> ParamDef {
        ParamDef { store: StoreKind::Scalar, ..self }
    }
}

/// Per-argument effects computed from the call (e.g. notify writes for Set, read-writes for
/// AtomicAdd). Returns one effect per argument.
pub type EffectsFn = fn(&Call) -> Vec<Effect>;

/// The reserved symbol a multi-block builtin kernel reads its block index from
/// (the trailing `__pypto_spmd_block_idx` parameter when emitted; a constant in a kernel
/// specialised to one block).
pub const BLOCK_IDX_SYM: &str = "__pld_block_idx";

/// The reserved symbol for the launched block count (the trailing `__pypto_spmd_block_num`
/// parameter when emitted).
pub const BLOCK_NUM_SYM: &str = "__pld_block_num";

/// The lowering stages an op may take part in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoweringKind {
    /// `ConvertTensorToTileOps`: a tensor-level op becomes tile-level ops.
    TensorToTile,
    /// `LowerCompositeOps`: an InCore collective expands into primitives.
    Composite,
    /// `LowerHostTensorCollectives`: a host collective becomes per-device builtin dispatches.
    HostBuiltin,
    /// `LowerL2TensorCollectives`: a chip-orchestration collective becomes one AIV task.
    ChipBuiltin,
    /// A host/chip `builtin.tensor.*` dispatch becomes a call of its kernel `Function` (the
    /// kernel codegen renders for the variant), built through the collective's composite
    /// lowering and the comm fences (`MaterializeBuiltinKernels`, and codegen's renderer).
    BuiltinKernel,
}

impl LoweringKind {
    /// Name used in listings.
    pub fn name(self) -> &'static str {
        match self {
            LoweringKind::TensorToTile => "tensor-to-tile",
            LoweringKind::Composite => "composite",
            LoweringKind::HostBuiltin => "host-builtin",
            LoweringKind::ChipBuiltin => "chip-builtin",
            LoweringKind::BuiltinKernel => "builtin-kernel",
        }
    }
}

/// A lowering function: replaces one call statement by the statements it pushes into the
/// builder. `results` are the values the original statement defined (empty for an `Eval`);
/// the lowering must define them (or leave them to a final `Assign`).
pub type LowerFn = fn(&mut crate::builder::Builder<'_>, &Call, &[crate::value::ValueId], Span) -> Lowered;

/// What a lowering returns: `Ok` once it defined the statement's results, or the diagnostic.
pub type Lowered = Result<(), Diagnostic>;

/// One lowering an op offers.
#[derive(Clone, Copy, Debug)]
pub struct Lowering {
    /// The stage it belongs to.
    pub kind: LoweringKind,
    /// The rewrite.
    pub run: LowerFn,
}

/// One op, declared once in its family file.
#[derive(Debug)]
pub struct OpDef {
    /// Canonical name (`pld.tensor.put`).
    pub name: &'static str,
    /// Family module name (`put_get`).
    pub family: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Other DSL spellings that resolve to this op (`pld.put`, `pl.load`).
    pub aliases: &'static [&'static str],
    /// Positional-or-keyword parameters, in IR order.
    pub params: &'static [ParamDef],
    /// Keyword-only attributes.
    pub attrs: &'static [AttrDef],
    /// Core affinity.
    pub affinity: Affinity,
    /// Pin to the AIV lane inside `split_aiv` regions (only `notify` sets it).
    pub no_duplicate: bool,
    /// Its part in the signal protocol (notify, blocking wait, deferred wait).
    pub signal_role: SignalRole,
    /// Its part in rank-uniform execution (a collective, the rank query, or neither).
    pub rank_role: RankRole,
    /// For a builtin collective dispatched to a prebuilt kernel: what its kernel variants are
    /// keyed by and which template vars they fill (codegen names variants from it).
    pub builtin_variant: Option<BuiltinVariant>,
    /// Only compiler passes may create it.
    pub internal: bool,
    /// Effects computed from the call, overriding the static per-parameter effects.
    pub effects: Option<EffectsFn>,
    /// Verifier and result type.
    pub deduce: DeduceFn,
    /// The lowerings it offers.
    pub lowerings: &'static [Lowering],
}

impl PartialEq for OpDef {
    fn eq(&self, other: &OpDef) -> bool {
        self.name == other.name
    }
}
impl Eq for OpDef {}
impl std::hash::Hash for OpDef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl OpDef {
    /// The declared attribute `name`.
    pub fn attr_def(&self, name: &str) -> Option<&'static AttrDef> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// The lowering of `kind`, if offered: declared in the record, or registered separately
    /// for this op with [`register_lowering!`](crate::register_lowering).
    pub fn lowering(&self, kind: LoweringKind) -> Option<&'static Lowering> {
        self.lowerings
            .iter()
            .find(|l| l.kind == kind)
            .or_else(|| self.registered_lowerings().find(|l| l.kind == kind))
    }

    /// Every lowering kind this op offers (declared and separately registered).
    pub fn lowering_kinds(&self) -> Vec<LoweringKind> {
        let mut kinds: Vec<LoweringKind> = self.lowerings.iter().map(|l| l.kind).collect();
        kinds.extend(self.registered_lowerings().map(|l| l.kind));
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// The lowerings registered apart from this record, found by its [`OpId`](super::OpId).
    fn registered_lowerings(&self) -> impl Iterator<Item = &'static Lowering> {
        let reg = registry();
        reg.id_of(self).into_iter().flat_map(move |id| reg.lowerings_by_id(id))
    }

    /// Minimum and maximum positional arity.
    pub fn arity(&self) -> (usize, usize) {
        let min = self.params.iter().filter(|p| !p.optional).count();
        (min, self.params.len())
    }

    /// Effect on each argument of `call`.
    pub fn arg_effects(&self, call: &Call) -> Vec<Effect> {
        match self.effects {
            Some(f) => f(call),
            None => {
                (0..call.args.len()).map(|i| self.params.get(i).map_or(Effect::None, |p| p.effect)).collect()
            }
        }
    }

    /// Whether the op exists only for its side effects (its result type is `Unknown`).
    pub fn is_side_effect_only(&self, call: &Call) -> bool {
        call.ty == Type::Unknown
    }
}

/// A DSL name that dispatches to one of several ops on its first argument's type
/// (`pld.remote_store` → tile or tensor form).
#[derive(Debug)]
pub struct Overload {
    /// The DSL name.
    pub name: &'static str,
    /// The candidate op names.
    pub candidates: &'static [&'static str],
    /// Picks the op for the first argument's type.
    pub pick: fn(&Type) -> &'static str,
}

/// Rewrites a call into its op's canonical form before deduction: it may move arguments
/// into attributes (`tile.cast(t, pl.FP32)` → `dtype=pl.FP32`), rename an attribute spelling,
/// or redirect the call to a sibling op (`tensor.add(t, 1.0)` → `tensor.adds`), returning the
/// op to build instead. Canonicalizers must be idempotent and never fail: anything they do
/// not recognise is left for the deducer to report. Redirects are followed once (the target
/// op's own canonicalizer runs, but a second redirect is not taken).
pub type CanonicalizeFn =
    fn(&mut Vec<Expr>, &mut Vec<(String, Attr)>, &DeduceEnv<'_>) -> Option<&'static str>;

/// A registration record; submitted by [`register_op!`](crate::register_op).
#[derive(Debug)]
pub struct OpReg {
    /// The op.
    pub def: &'static OpDef,
    /// Source file of the submission.
    pub file: &'static str,
    /// Source line of the submission.
    pub line: u32,
}

/// An overload registration record; submitted by [`register_overload!`](crate::register_overload).
#[derive(Debug)]
pub struct OverloadReg {
    /// The overload.
    pub def: &'static Overload,
    /// Source file.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
}

inventory::collect!(OpReg);
inventory::collect!(OverloadReg);
