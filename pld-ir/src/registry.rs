//! The op registry: ops as data, registered at link time.
//!
//! Each op family (in `pld-ops`, or any crate a downstream toolchain links) declares its ops
//! as `static` [`OpDef`] records and submits them with [`register_op!`](crate::register_op). The registry
//! materialises every submission once into a sorted map; duplicate names are recorded with
//! both definition sites, and an empty registry is reported with the fix. Passes, codegen
//! and the simulator see ops only through these records, never by family.

use crate::diag::Diagnostic;
pub use crate::effects::{Effect, Side, SignalRole, StoreKind};
use crate::expr::{Attr, Call, Expr, ExprKind};
use crate::func::FunctionKind;
use crate::span::Span;
use crate::types::Type;
use crate::value::Values;
use pld_runtime_abi::{AtomicType, NotifyOp, ReduceOp, WaitCmp};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

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
}

impl ParamDef {
    /// A required parameter that is not a memory operand.
    pub const fn value(name: &'static str) -> ParamDef {
        ParamDef { name, optional: false, effect: Effect::None, side: Side::Local, store: StoreKind::None }
    }
    /// A required local memory operand with an effect.
    pub const fn mem(name: &'static str, effect: Effect) -> ParamDef {
        ParamDef { name, optional: false, effect, side: Side::Local, store: StoreKind::None }
    }
    /// An optional parameter.
    pub const fn optional(name: &'static str) -> ParamDef {
        ParamDef { name, optional: true, effect: Effect::None, side: Side::Local, store: StoreKind::None }
    }
    /// An optional local memory operand with an effect.
    pub const fn optional_mem(name: &'static str, effect: Effect) -> ParamDef {
        ParamDef { name, optional: true, effect, side: Side::Local, store: StoreKind::None }
    }
    /// The same operand, in a peer's window region (addressed through the call's peer index).
    pub const fn peer(self) -> ParamDef {
        ParamDef { side: Side::Peer, ..self }
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

/// The ABI enums an integer attribute may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbiEnumKind {
    /// `pld.NotifyOp`.
    NotifyOp,
    /// `pld.WaitCmp`.
    WaitCmp,
    /// `pld.AtomicType`.
    AtomicType,
    /// `pld.ReduceOp`.
    ReduceOp,
}

impl AbiEnumKind {
    /// Every ABI enum.
    pub const ALL: &'static [AbiEnumKind] =
        &[AbiEnumKind::NotifyOp, AbiEnumKind::WaitCmp, AbiEnumKind::AtomicType, AbiEnumKind::ReduceOp];

    /// The enum's DSL name (`NotifyOp`).
    pub fn name(self) -> &'static str {
        match self {
            AbiEnumKind::NotifyOp => NotifyOp::ENUM_NAME,
            AbiEnumKind::WaitCmp => WaitCmp::ENUM_NAME,
            AbiEnumKind::AtomicType => AtomicType::ENUM_NAME,
            AbiEnumKind::ReduceOp => ReduceOp::ENUM_NAME,
        }
    }

    /// `(member, value)` pairs in value order.
    pub fn members(self) -> &'static [(&'static str, i32)] {
        match self {
            AbiEnumKind::NotifyOp => NotifyOp::MEMBERS,
            AbiEnumKind::WaitCmp => WaitCmp::MEMBERS,
            AbiEnumKind::AtomicType => AtomicType::MEMBERS,
            AbiEnumKind::ReduceOp => ReduceOp::MEMBERS,
        }
    }

    /// The enum named `name`.
    pub fn from_name(name: &str) -> Option<AbiEnumKind> {
        AbiEnumKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The DSL member spelling of `value`, if valid.
    pub fn member_name(self, value: i64) -> Option<&'static str> {
        self.members().iter().find(|(_, v)| i64::from(*v) == value).map(|(n, _)| *n)
    }

    /// The value of member `member`.
    pub fn value_of(self, member: &str) -> Option<i64> {
        self.members().iter().find(|(n, _)| *n == member).map(|(_, v)| i64::from(*v))
    }

    /// `NotifyOp.AtomicAdd or NotifyOp.Set`: the valid members, for diagnostics.
    pub fn describe_members(self) -> String {
        let names: Vec<String> =
            self.members().iter().map(|(n, _)| format!("{}.{}", self.name(), n)).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

/// The value type of a keyword attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttrType {
    /// Integer.
    Int,
    /// Boolean (integers 0/1 are accepted).
    Bool,
    /// String.
    Str,
    /// Data type.
    DType,
    /// Integer payload of an ABI enum, range-checked.
    Enum(AbiEnumKind),
    /// List of integers.
    Ints,
}

impl AttrType {
    /// An integer value of this type as the DSL spells it: an ABI enum's member name
    /// (`AtomicAdd`), else the number.
    pub fn spell_int(self, v: i64) -> String {
        match self {
            AttrType::Enum(kind) => kind.member_name(v).map_or_else(|| v.to_string(), str::to_owned),
            _ => v.to_string(),
        }
    }

    /// Name for diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Int => "int",
            AttrType::Bool => "bool",
            AttrType::Str => "str",
            AttrType::DType => "DataType",
            AttrType::Enum(k) => k.name(),
            AttrType::Ints => "list[int]",
        }
    }
}

/// A constant default of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttrDefault {
    /// Integer default.
    Int(i64),
    /// Boolean default.
    Bool(bool),
    /// String default.
    Str(&'static str),
}

impl AttrDefault {
    /// Integer value (booleans as 0/1).
    pub fn as_int(self) -> Option<i64> {
        match self {
            AttrDefault::Int(v) => Some(v),
            AttrDefault::Bool(b) => Some(i64::from(b)),
            AttrDefault::Str(_) => None,
        }
    }
    /// As an [`Attr`] value.
    pub fn to_attr(self) -> Attr {
        match self {
            AttrDefault::Int(v) => Attr::Int(v),
            AttrDefault::Bool(b) => Attr::Bool(b),
            AttrDefault::Str(s) => Attr::Str(s.to_string()),
        }
    }
}

/// One keyword-only attribute of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttrDef {
    /// Keyword name.
    pub name: &'static str,
    /// Value type.
    pub ty: AttrType,
    /// Default when omitted; `None` with `required` false means "absent is meaningful".
    pub default: Option<AttrDefault>,
    /// Whether omitting it is an error (`missing kwarg '<k>' on <op>`).
    pub required: bool,
}

impl AttrDef {
    /// A required attribute.
    pub const fn required(name: &'static str, ty: AttrType) -> AttrDef {
        AttrDef { name, ty, default: None, required: true }
    }
    /// An attribute with a default.
    pub const fn with_default(name: &'static str, ty: AttrType, default: AttrDefault) -> AttrDef {
        AttrDef { name, ty, default: Some(default), required: false }
    }
    /// An optional attribute without a default.
    pub const fn optional(name: &'static str, ty: AttrType) -> AttrDef {
        AttrDef { name, ty, default: None, required: false }
    }
}

/// The compilation target, for target-gated rules (BF16 atomic add is A2/A3 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Target {
    /// Ascend910B (A2/A3): the default.
    #[default]
    A2A3,
    /// A5.
    A5,
}

impl Target {
    /// `a2a3` / `a5`.
    pub fn name(self) -> &'static str {
        match self {
            Target::A2A3 => "a2a3",
            Target::A5 => "a5",
        }
    }
    /// Parses `a2a3` / `a5`.
    pub fn from_name(s: &str) -> Option<Target> {
        match s {
            "a2a3" => Some(Target::A2A3),
            "a5" => Some(Target::A5),
            _ => None,
        }
    }
}

/// Where a call is being built: what the deducer may consult besides its arguments.
#[derive(Clone, Copy, Debug)]
pub struct DeduceEnv<'a> {
    /// The value arena of the enclosing function, to type `Var` arguments.
    pub values: &'a Values,
    /// The compilation target.
    pub target: Target,
    /// The kind of the enclosing function, when known.
    pub func_kind: Option<FunctionKind>,
}

impl<'a> DeduceEnv<'a> {
    /// An environment over `values` with the default target.
    pub fn new(values: &'a Values) -> DeduceEnv<'a> {
        DeduceEnv { values, target: Target::default(), func_kind: None }
    }
}

/// Everything a deducer sees about one call.
pub struct DeduceCx<'a> {
    /// The op.
    pub def: &'static OpDef,
    /// Positional arguments.
    pub args: &'a [Expr],
    /// Their types: borrowed from the value table or the call for variables and nested calls
    /// (no deep copy per deduction), computed only for other expressions.
    pub arg_types: Vec<Cow<'a, Type>>,
    /// Keyword attributes as written.
    pub attrs: &'a [(String, Attr)],
    /// The call's span.
    pub span: Span,
    /// The environment.
    pub env: &'a DeduceEnv<'a>,
}

impl DeduceCx<'_> {
    /// An error at the call, prefixed by nothing (deducers write the op name themselves).
    pub fn error(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.span, message)
    }

    /// An error at argument `i` (falls back to the call's span).
    pub fn arg_error(&self, i: usize, message: impl Into<String>) -> Diagnostic {
        let span = self.args.get(i).map_or(self.span, |a| a.span.or(self.span));
        Diagnostic::error(span, message)
    }

    /// The type of argument `i` (`Unknown` when absent).
    pub fn ty(&self, i: usize) -> &Type {
        self.arg_types.get(i).map_or(&Type::Unknown, |t| t.as_ref())
    }

    /// Argument `i`, if present.
    pub fn arg(&self, i: usize) -> Option<&Expr> {
        self.args.get(i)
    }

    /// Number of positional arguments.
    pub fn arity(&self) -> usize {
        self.args.len()
    }

    /// The attribute as written.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The integer attribute, falling back to the declared default.
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        self.attr(name)
            .and_then(Attr::as_int)
            .or_else(|| self.def.attr_def(name).and_then(|a| a.default).and_then(AttrDefault::as_int))
    }

    /// The boolean attribute, falling back to the declared default.
    pub fn attr_bool(&self, name: &str) -> Option<bool> {
        self.attr_int(name).map(|v| v != 0)
    }

    /// The string attribute, falling back to the declared default.
    pub fn attr_str(&self, name: &str) -> Option<String> {
        match self.attr(name) {
            Some(Attr::Str(s)) => Some(s.clone()),
            Some(_) => None,
            None => match self.def.attr_def(name).and_then(|a| a.default) {
                Some(AttrDefault::Str(s)) => Some(s.to_string()),
                _ => None,
            },
        }
    }
}

/// A deducer: verifies a call and computes its result type.
pub type DeduceFn = fn(&DeduceCx<'_>) -> Result<Type, Diagnostic>;

/// Per-argument effects computed from the call (e.g. notify writes for Set, read-writes for
/// AtomicAdd). Returns one effect per argument.
pub type EffectsFn = fn(&Call) -> Vec<Effect>;

/// Internal call attribute (never a DSL kwarg: the frontend rejects unknown kwargs) that a
/// builtin kernel renderer sets on the collective call it expands: the tile width, in elements,
/// the seed gives the host builtin ("the host builtin uses 256-element chunks"), in place of
/// the InCore lowering's UB-bounded chunk.
pub const BUILTIN_TILE_ELEMS_ATTR: &str = "__builtin_tile_elems";

/// The host builtin mesh allreduce's tile, in elements (seed: "the host builtin uses
/// 256-element chunks"; with several blocks, "Blocks own 256-element tiles block-cyclically"):
/// the one value the rendered builtin kernel and the simulator's model of it both use.
pub const BUILTIN_MESH_TILE: i64 = 256;

/// Bytes of one UB chunk of the InCore collective lowerings (seed: "processed in UB chunks of
/// at most 16 KiB"): the mesh allreduce's chunk and the reduce_scatter's (D-ops-12), which the
/// simulator's model of the host reduce_scatter kernel also uses.
pub const UB_CHUNK_BYTES: i64 = 16384;

/// The staging tile of a `[rows, cols]` put/get inside a collective (D-ops-13): at most one
/// UB chunk — at most `UB_CHUNK_BYTES / elem_bytes` columns, and as many whole rows of that
/// width as fit, at least one. pto-isa slides a transfer through a smaller stage, so every
/// collective's kernel fits UB however long its rows.
pub fn ub_stage(rows: i64, cols: i64, elem_bytes: i64) -> (i64, i64) {
    let per = (UB_CHUNK_BYTES / elem_bytes.max(1)).max(1);
    let c = cols.clamp(1, per);
    (rows.clamp(1, (per / c).max(1)), c)
}

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
}

impl LoweringKind {
    /// Name used in listings.
    pub fn name(self) -> &'static str {
        match self {
            LoweringKind::TensorToTile => "tensor-to-tile",
            LoweringKind::Composite => "composite",
            LoweringKind::HostBuiltin => "host-builtin",
            LoweringKind::ChipBuiltin => "chip-builtin",
        }
    }
}

/// A lowering function: replaces one call statement by the statements it pushes into the
/// builder. `results` are the values the original statement defined (empty for an `Eval`);
/// the lowering must define them (or leave them to a final `Assign`).
pub type LowerFn =
    fn(&mut crate::builder::Builder<'_>, &Call, &[crate::value::ValueId], Span) -> Result<(), Diagnostic>;

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
        self.lowerings.iter().find(|l| l.kind == kind).or_else(|| registry().lowering(self.name, kind))
    }

    /// Every lowering kind this op offers (declared and separately registered).
    pub fn lowering_kinds(&self) -> Vec<LoweringKind> {
        let mut kinds: Vec<LoweringKind> = self.lowerings.iter().map(|l| l.kind).collect();
        kinds.extend(registry().lowerings_of(self.name).map(|l| l.kind));
        kinds.sort();
        kinds.dedup();
        kinds
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

/// A canonicalizer registered for one op; submitted by [`register_canonicalize!`](crate::register_canonicalize).
#[derive(Debug)]
pub struct CanonicalizeReg {
    /// The op it canonicalizes.
    pub op: &'static str,
    /// The rewrite.
    pub run: CanonicalizeFn,
    /// Source file.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
}

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

/// A lowering registered apart from its op's record, so lowering code can live in its own
/// file; submitted by [`register_lowering!`](crate::register_lowering).
#[derive(Debug)]
pub struct LoweringReg {
    /// The op it lowers.
    pub op: &'static str,
    /// The lowering.
    pub lowering: Lowering,
    /// Source file.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
}

inventory::collect!(OpReg);
inventory::collect!(OverloadReg);
inventory::collect!(LoweringReg);
inventory::collect!(CanonicalizeReg);

/// Registers a canonicalizer ([`CanonicalizeFn`]) for the op named `$op`.
#[macro_export]
macro_rules! register_canonicalize {
    ($op:expr, $run:path) => {
        $crate::inventory::submit! {
            $crate::registry::CanonicalizeReg { op: $op, run: $run, file: file!(), line: line!() }
        }
    };
}

/// Registers a lowering of kind `$kind` for the op named `$op`.
#[macro_export]
macro_rules! register_lowering {
    ($op:expr, $kind:expr, $run:path) => {
        $crate::inventory::submit! {
            $crate::registry::LoweringReg {
                op: $op,
                lowering: $crate::registry::Lowering { kind: $kind, run: $run },
                file: file!(),
                line: line!(),
            }
        }
    };
}

/// Registers one or more `static` [`OpDef`]s.
#[macro_export]
macro_rules! register_op {
    ($($def:path),+ $(,)?) => {
        $( $crate::inventory::submit! {
            $crate::registry::OpReg { def: &$def, file: file!(), line: line!() }
        } )+
    };
}

/// Registers a `static` [`Overload`].
#[macro_export]
macro_rules! register_overload {
    ($def:path) => {
        $crate::inventory::submit! {
            $crate::registry::OverloadReg { def: &$def, file: file!(), line: line!() }
        }
    };
}

/// A problem with the set of registrations.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two submissions share a name.
    #[error("op `{name}` is registered twice: at {first} and at {second}")]
    Duplicate {
        /// The name.
        name: String,
        /// `file:line` of the first submission (in sorted order).
        first: String,
        /// `file:line` of the second.
        second: String,
    },
    /// A lowering names an op nobody registered.
    #[error("a lowering is registered for unknown op `{op}` at {site}")]
    LoweringForUnknownOp {
        /// The op name.
        op: String,
        /// `file:line` of the registration.
        site: String,
    },
    /// Nothing is registered.
    #[error("no op families registered; is `pld-ops` linked? add `use pld_ops as _;` to the binary or test")]
    Empty,
}

/// The materialised registry.
#[derive(Debug)]
pub struct Registry {
    ops: BTreeMap<&'static str, &'static OpReg>,
    aliases: BTreeMap<&'static str, &'static OpDef>,
    overloads: BTreeMap<&'static str, &'static Overload>,
    lowerings: BTreeMap<(&'static str, LoweringKind), &'static LoweringReg>,
    canonicalizers: BTreeMap<&'static str, &'static CanonicalizeReg>,
    errors: Vec<RegistryError>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::collect);

/// The global registry.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

impl Registry {
    fn collect() -> Registry {
        let mut regs: Vec<&'static OpReg> = inventory::iter::<OpReg>.into_iter().collect();
        regs.sort_by_key(|r| (r.def.name, r.file, r.line));
        let mut ops: BTreeMap<&'static str, &'static OpReg> = BTreeMap::new();
        let mut errors = Vec::new();
        for r in regs {
            if let Some(prev) = ops.get(r.def.name) {
                errors.push(RegistryError::Duplicate {
                    name: r.def.name.to_string(),
                    first: format!("{}:{}", prev.file, prev.line),
                    second: format!("{}:{}", r.file, r.line),
                });
                continue;
            }
            ops.insert(r.def.name, r);
        }
        let mut aliases = BTreeMap::new();
        for r in ops.values() {
            for a in r.def.aliases {
                aliases.insert(*a, r.def);
            }
        }
        let mut overloads = BTreeMap::new();
        for o in inventory::iter::<OverloadReg> {
            overloads.insert(o.def.name, o.def);
        }
        let mut lowerings = BTreeMap::new();
        let mut lregs: Vec<&'static LoweringReg> = inventory::iter::<LoweringReg>.into_iter().collect();
        lregs.sort_by_key(|r| (r.op, r.lowering.kind, r.file, r.line));
        for r in lregs {
            let key = (r.op, r.lowering.kind);
            if let Some(prev) = lowerings.get(&key) {
                let prev: &&LoweringReg = prev;
                errors.push(RegistryError::Duplicate {
                    name: format!("{} ({} lowering)", r.op, r.lowering.kind.name()),
                    first: format!("{}:{}", prev.file, prev.line),
                    second: format!("{}:{}", r.file, r.line),
                });
                continue;
            }
            if !ops.contains_key(r.op) {
                errors.push(RegistryError::LoweringForUnknownOp {
                    op: r.op.to_string(),
                    site: format!("{}:{}", r.file, r.line),
                });
            }
            lowerings.insert(key, r);
        }
        let mut canonicalizers: BTreeMap<&'static str, &'static CanonicalizeReg> = BTreeMap::new();
        let mut cregs: Vec<&'static CanonicalizeReg> =
            inventory::iter::<CanonicalizeReg>.into_iter().collect();
        cregs.sort_by_key(|r| (r.op, r.file, r.line));
        for r in cregs {
            if let Some(prev) = canonicalizers.get(r.op) {
                errors.push(RegistryError::Duplicate {
                    name: format!("{} (canonicalizer)", r.op),
                    first: format!("{}:{}", prev.file, prev.line),
                    second: format!("{}:{}", r.file, r.line),
                });
                continue;
            }
            canonicalizers.insert(r.op, r);
        }
        if ops.is_empty() {
            errors.push(RegistryError::Empty);
        }
        Registry { ops, aliases, overloads, lowerings, canonicalizers, errors }
    }

    /// `Ok` when the registrations are consistent, else every problem found.
    pub fn check(&self) -> Result<(), Vec<RegistryError>> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors.clone())
        }
    }

    /// The op with canonical name or alias `name`.
    pub fn lookup(&self, name: &str) -> Option<&'static OpDef> {
        self.ops.get(name).map(|r| r.def).or_else(|| self.aliases.get(name).copied())
    }

    /// The overload with DSL name `name`.
    pub fn overload(&self, name: &str) -> Option<&'static Overload> {
        self.overloads.get(name).copied()
    }

    /// The op named `name`, or a diagnostic suggesting the nearest registered name.
    pub fn lookup_or_error(&self, name: &str, span: Span) -> Result<&'static OpDef, Diagnostic> {
        if let Some(d) = self.lookup(name) {
            return Ok(d);
        }
        if self.ops.is_empty() {
            return Err(Diagnostic::error(span, RegistryError::Empty.to_string()));
        }
        let mut d = Diagnostic::error(span, format!("unknown op `{name}`"));
        if let Some(best) = self.suggest(name) {
            d = d.with_note(format!("did you mean `{best}`?"));
        }
        Err(d)
    }

    /// The registered name (or alias) closest to `name`, if reasonably close.
    pub fn suggest(&self, name: &str) -> Option<&'static str> {
        let candidates = self
            .ops
            .keys()
            .copied()
            .chain(self.aliases.keys().copied())
            .chain(self.overloads.keys().copied());
        let (best, dist) = candidates.map(|c| (c, edit_distance(name, c))).min_by_key(|&(c, d)| (d, c))?;
        (dist <= name.len().max(3) / 3 + 2).then_some(best)
    }

    /// Every op, sorted by name, with its registration site.
    pub fn ops(&self) -> impl Iterator<Item = &'static OpReg> + '_ {
        self.ops.values().copied()
    }

    /// The separately registered lowering of `kind` for `op`.
    pub fn lowering(&self, op: &str, kind: LoweringKind) -> Option<&'static Lowering> {
        self.lowerings_of(op).find(|l| l.kind == kind)
    }

    /// Every separately registered lowering of `op`.
    pub fn lowerings_of<'s>(&'s self, op: &'s str) -> impl Iterator<Item = &'static Lowering> + 's {
        // Keys sort by (op, kind) and `TensorToTile` is the smallest kind, so the op's
        // lowerings are the run starting at (op, TensorToTile): O(log n), not a scan.
        self.lowerings
            .range((op, LoweringKind::TensorToTile)..)
            .take_while(move |((o, _), _)| *o == op)
            .map(|(_, r)| &r.lowering)
    }

    /// The canonicalizer registered for `op`, if any.
    pub fn canonicalizer(&self, op: &str) -> Option<CanonicalizeFn> {
        self.canonicalizers.get(op).map(|r| r.run)
    }

    /// Every registered canonicalizer, sorted by op name.
    pub fn canonicalizers(&self) -> impl Iterator<Item = &'static CanonicalizeReg> + '_ {
        self.canonicalizers.values().copied()
    }

    /// Every overload, sorted by name.
    pub fn overloads(&self) -> impl Iterator<Item = &'static Overload> + '_ {
        self.overloads.values().copied()
    }

    /// Number of registered ops.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether no op is registered.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The sorted listing checked in as a golden: one line per op.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for r in self.ops() {
            out.push_str(&describe(r.def));
            out.push('\n');
        }
        out
    }
}

/// One line describing an op: name, family, affinity, flags, params and kwargs.
pub fn describe(d: &OpDef) -> String {
    let params: Vec<String> = d
        .params
        .iter()
        .map(|p| if p.optional { format!("{}?", p.name) } else { p.name.to_string() })
        .collect();
    let attrs: Vec<String> = d
        .attrs
        .iter()
        .map(|a| {
            let mut s = format!("{}: {}", a.name, a.ty.name());
            if let Some(def) = a.default {
                match def {
                    AttrDefault::Int(v) => s.push_str(&format!(" = {}", a.ty.spell_int(v))),
                    AttrDefault::Bool(b) => s.push_str(&format!(" = {b}")),
                    AttrDefault::Str(v) => s.push_str(&format!(" = {v:?}")),
                }
            } else if a.required {
                s.push_str(" (required)");
            }
            s
        })
        .collect();
    let mut flags = vec![d.affinity.name().to_string()];
    if d.no_duplicate {
        flags.push("no_duplicate".into());
    }
    if d.internal {
        flags.push("internal".into());
    }
    for k in d.lowering_kinds() {
        flags.push(k.name().into());
    }
    format!("{} [{}] ({}) {{{}}} {}", d.name, d.family, params.join(", "), attrs.join(", "), flags.join(" "))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Validates a call's arity and attributes against `def`, then runs its deducer.
///
/// Generic checks (in order): positional arity, unknown attribute, attribute value type,
/// ABI enum range, missing required attribute. Op-specific rules are the deducer's.
pub fn deduce(
    def: &'static OpDef,
    args: &[Expr],
    attrs: &[(String, Attr)],
    span: Span,
    env: &DeduceEnv<'_>,
) -> Result<Type, Diagnostic> {
    let (min, max) = def.arity();
    if args.len() < min || args.len() > max {
        let expect = if min == max { format!("{min}") } else { format!("{min} to {max}") };
        return Err(Diagnostic::error(
            span,
            format!(
                "{} takes {expect} positional argument{}, but got {}",
                def.name,
                if max == 1 { "" } else { "s" },
                args.len()
            ),
        ));
    }
    for (k, v) in attrs {
        let Some(a) = def.attr_def(k) else {
            let known: Vec<&str> = def.attrs.iter().map(|a| a.name).collect();
            let mut d = Diagnostic::error(span, format!("unknown kwarg '{k}' for operator '{}'", def.name));
            d = d.with_note(if known.is_empty() {
                format!("{} takes no keyword attributes", def.name)
            } else {
                format!("known kwargs: {}", known.join(", "))
            });
            return Err(d);
        };
        check_attr_value(def, a, v, span)?;
    }
    for a in def.attrs {
        if a.required && !attrs.iter().any(|(k, _)| k == a.name) {
            return Err(Diagnostic::error(span, format!("missing kwarg '{}' on {}", a.name, def.name)));
        }
    }
    let arg_types = args.iter().map(|e| arg_type(e, env.values)).collect();
    let cx = DeduceCx { def, args, arg_types, attrs, span, env };
    (def.deduce)(&cx).map_err(|d| d.or_span(span))
}

/// The type of argument `e`, borrowed where the IR stores it (a variable's declared type, a
/// nested call's carried type), else computed as [`Expr::ty`] does.
fn arg_type<'a>(e: &'a Expr, values: &'a Values) -> Cow<'a, Type> {
    match &e.kind {
        ExprKind::Var(v) => Cow::Borrowed(values.ty(*v)),
        ExprKind::Call(c) => Cow::Borrowed(&c.ty),
        _ => Cow::Owned(e.ty(values)),
    }
}

fn check_attr_value(def: &OpDef, a: &AttrDef, v: &Attr, span: Span) -> Result<(), Diagnostic> {
    let ok = matches!(
        (a.ty, v),
        (AttrType::Int | AttrType::Enum(_), Attr::Int(_))
            | (AttrType::Bool, Attr::Bool(_) | Attr::Int(0 | 1))
            | (AttrType::Str, Attr::Str(_))
            | (AttrType::DType, Attr::DType(_))
            | (AttrType::Ints, Attr::Ints(_))
    );
    if !ok {
        return Err(Diagnostic::error(
            span,
            format!(
                "kwarg '{}' for operator '{}' has incompatible type: expected {}, got {}",
                a.name,
                def.name,
                a.ty.name(),
                v.kind_name()
            ),
        ));
    }
    if let (AttrType::Enum(kind), Attr::Int(n)) = (a.ty, v) {
        if kind.member_name(*n).is_none() {
            return Err(Diagnostic::error(
                span,
                format!("{} {} must be {} (got int {n})", def.name, a.name, kind.describe_members()),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn enum_member_descriptions() {
        assert_eq!(AbiEnumKind::NotifyOp.describe_members(), "NotifyOp.AtomicAdd or NotifyOp.Set");
        assert_eq!(
            AbiEnumKind::ReduceOp.describe_members(),
            "ReduceOp.Sum, ReduceOp.Max, ReduceOp.Min or ReduceOp.Prod"
        );
        assert_eq!(AbiEnumKind::AtomicType.value_of("None_"), Some(0));
    }
}
