//! The op registry: ops as data, registered at link time.
//!
//! Each op family (in `pld-ops`, or any crate a downstream toolchain links) declares its ops
//! as `static` [`OpDef`] records and submits them with [`register_op!`](crate::register_op). The registry
//! materialises every submission once through the one machinery of [`crate::table`]: ops
//! sorted by name, each given a dense [`OpId`]; one DSL namespace in which op names, aliases
//! and overload names may not collide; lowerings keyed by (op, kind), canonicalizers and
//! private-signal rules ([`crate::auto_signal`]) by op, all required to name a registered op. Every duplicate names both definition sites,
//! and an empty registry is reported with the fix. Passes, codegen and the simulator see ops
//! only through these records, never by family.
//!
//! Split by concern: the op record and its declarations ([`opdef`]), attributes ([`attr`]),
//! deduction ([`deduce`](mod@deduce)), listings ([`listing`]), builtin variant keys ([`variant`]).

pub mod attr;
pub mod deduce;
pub mod listing;
pub mod opdef;
pub mod variant;

pub use crate::effects::{Effect, Side, SignalRole, StoreKind};
pub use crate::table::{Entry, OpId, RegistryError, Site};
pub use attr::{AbiEnumKind, AttrDef, AttrDefault, AttrType};
pub use deduce::{deduce, DeduceCx, DeduceEnv, DeduceFn, Target};
pub use listing::describe;
pub use opdef::{
    Affinity, CanonicalizeFn, EffectsFn, LowerFn, Lowered, Lowering, LoweringKind, OpDef, OpReg, Overload,
    OverloadReg, ParamDef,
};
pub use opdef::{BLOCK_IDX_SYM, BLOCK_NUM_SYM};
pub use variant::{BuiltinVariant, ReduceKey};

use crate::auto_signal::PrivateSignalFn;
use crate::diag::Diagnostic;
use crate::span::Span;
use crate::table::{entries, Table, TableKey};
use rustc_hash::FxHashMap;
use std::sync::LazyLock;

/// Registers a canonicalizer ([`CanonicalizeFn`]) for the op named `$op`.
#[macro_export]
macro_rules! register_canonicalize {
    ($op:expr, $run:path) => {
        $crate::register_entry!(&[$op], $run as $crate::registry::CanonicalizeFn);
    };
}

/// Registers a lowering of kind `$kind` for the op named `$op`.
#[macro_export]
macro_rules! register_lowering {
    ($op:expr, $kind:expr, $run:path) => {
        $crate::register_lowerings!(&[$op], $kind, $run);
    };
}

/// Registers one lowering of kind `$kind` for every op named in `$ops` (a
/// `&'static [&'static str]`): a family's ops that share a lowering, listed once.
#[macro_export]
macro_rules! register_lowerings {
    ($ops:expr, $kind:expr, $run:path) => {
        $crate::register_entry!($ops, $crate::registry::Lowering { kind: $kind, run: $run });
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

/// What a DSL name resolves to.
#[derive(Clone, Copy, Debug)]
enum DslName {
    /// An op, by canonical name or alias.
    Op(&'static OpDef),
    /// An overload.
    Overload(&'static Overload),
}

impl TableKey for (&'static str, LoweringKind) {
    fn op(&self) -> &'static str {
        self.0
    }
    fn describe(&self) -> String {
        format!("{} ({})", self.0, self.1.name())
    }
}

/// The materialised registry.
#[derive(Debug)]
pub struct Registry {
    /// Every op, sorted by name: the index is its [`OpId`].
    ops: Vec<&'static OpReg>,
    /// Record address → id: [`Registry::id_of`] hashes one integer, no name (a simulated
    /// kernel looks its ops up once per call).
    by_addr: FxHashMap<usize, OpId>,
    /// Op names, aliases and overload names: one namespace.
    names: Table<&'static str, DslName>,
    /// Separately registered lowerings per op, indexed by [`OpId`], in kind order.
    lowerings: Vec<Vec<&'static Lowering>>,
    canonicalizers: Table<&'static str, Entry<CanonicalizeFn>>,
    private_signals: Table<&'static str, Entry<PrivateSignalFn>>,
    errors: Vec<RegistryError>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::collect);

/// The global registry.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

impl Registry {
    fn collect() -> Registry {
        let site = |file, line| Site { file, line };
        let op_table = Table::collect(
            "op",
            inventory::iter::<OpReg>.into_iter().map(|r| (r.def.name, site(r.file, r.line), r)),
        );
        let mut errors = op_table.errors().to_vec();
        let ops: Vec<&'static OpReg> = op_table.iter().map(|(_, _, r)| r).collect();
        let by_addr: FxHashMap<usize, OpId> =
            ops.iter().enumerate().map(|(i, r)| (std::ptr::from_ref(r.def) as usize, OpId::new(i))).collect();
        let op_names = ops.iter().map(|r| (r.def.name, site(r.file, r.line), DslName::Op(r.def)));
        let aliases = ops
            .iter()
            .flat_map(|r| r.def.aliases.iter().map(move |a| (*a, site(r.file, r.line), DslName::Op(r.def))));
        let overloads = inventory::iter::<OverloadReg>
            .into_iter()
            .map(|o| (o.def.name, site(o.file, o.line), DslName::Overload(o.def)));
        let names = Table::collect("DSL name", op_names.chain(aliases).chain(overloads));
        errors.extend_from_slice(names.errors());
        let lowerings = Table::collect(
            "lowering",
            entries::<Lowering>().map(|e| ((e.op, e.value.kind), e.site, e.value)),
        );
        let canonicalizers = Table::collect("canonicalizer", entries::<CanonicalizeFn>().map(Entry::item));
        let private_signals = Table::collect("private signal", entries::<PrivateSignalFn>().map(Entry::item));
        for (what, table_errors, unknown) in [
            (
                "a lowering",
                lowerings.errors(),
                unknown_ops(&op_table, lowerings.iter().map(|(k, s, _)| (k.0, s))),
            ),
            (
                "a canonicalizer",
                canonicalizers.errors(),
                unknown_ops(&op_table, canonicalizers.iter().map(|(k, s, _)| (k, s))),
            ),
            (
                "a private signal",
                private_signals.errors(),
                unknown_ops(&op_table, private_signals.iter().map(|(k, s, _)| (k, s))),
            ),
        ] {
            errors.extend_from_slice(table_errors);
            errors.extend(unknown.into_iter().map(|(op, site)| RegistryError::UnknownOp {
                what,
                op: op.to_string(),
                site,
            }));
        }
        errors.extend(ops.iter().filter_map(|r| {
            inconsistency(r.def).map(|why| RegistryError::Inconsistent {
                op: r.def.name,
                site: site(r.file, r.line),
                why,
            })
        }));
        if ops.is_empty() {
            errors.push(RegistryError::Empty);
        }
        let mut by_id: Vec<Vec<&'static Lowering>> = vec![Vec::new(); ops.len()];
        for ((op, _), _, r) in lowerings.iter() {
            if let Ok(i) = ops.binary_search_by(|o| o.def.name.cmp(op)) {
                by_id[i].push(r);
            }
        }
        Registry { ops, by_addr, names, lowerings: by_id, canonicalizers, private_signals, errors }
    }

    /// `Ok` when the registrations are consistent — the op registry's own tables and every
    /// linked per-op table ([`crate::table::OpTableHook`]: emitters, simulator semantics) —
    /// else every problem found.
    pub fn check(&self) -> Result<(), Vec<RegistryError>> {
        let mut errors = self.errors.clone();
        for hook in crate::table::op_table_hooks() {
            errors.extend((hook.errors)());
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The dense id of the op with canonical name `name`.
    pub fn id(&self, name: &str) -> Option<OpId> {
        self.ops.binary_search_by(|r| r.def.name.cmp(name)).ok().map(OpId::new)
    }

    /// The dense id of `def`: found by the record's address (no name is hashed); a record
    /// that was never registered falls back to its canonical name.
    pub fn id_of(&self, def: &OpDef) -> Option<OpId> {
        let addr = std::ptr::from_ref(def) as usize;
        match self.by_addr.get(&addr) {
            Some(&id) => Some(id),
            None => self.id(def.name),
        }
    }

    /// The op with id `id`.
    ///
    /// # Panics
    /// When `id` was not assigned by this registry (ids come only from it).
    pub fn op(&self, id: OpId) -> &'static OpDef {
        self.ops[id.index()].def
    }

    /// The registration site of op `id`.
    pub fn site(&self, id: OpId) -> Option<Site> {
        self.ops.get(id.index()).map(|r| Site { file: r.file, line: r.line })
    }

    /// The op with canonical name or alias `name`.
    pub fn lookup(&self, name: &str) -> Option<&'static OpDef> {
        match self.names.get_by(name) {
            Some(DslName::Op(d)) => Some(d),
            _ => None,
        }
    }

    /// The overload with DSL name `name`.
    pub fn overload(&self, name: &str) -> Option<&'static Overload> {
        match self.names.get_by(name) {
            Some(DslName::Overload(o)) => Some(o),
            _ => None,
        }
    }

    /// The op named `name`, or a diagnostic suggesting the nearest registered name.
    pub fn lookup_or_error(&self, name: &str, span: Span) -> Result<&'static OpDef, Diagnostic> {
        if let Some(d) = self.lookup(name) {
            return Ok(d);
        }
        if self.ops.is_empty() {
            return Err(Diagnostic::error(span, RegistryError::Empty.to_string()));
        }
        let mut d =
            Diagnostic::error(span, format!("unknown op `{name}`")).with_code(crate::codes::UNKNOWN_OP);
        if let Some(best) = self.suggest(name) {
            d = d.with_help(format!("did you mean `{best}`?"));
        }
        Err(d)
    }

    /// The registered name (or alias, or overload name) closest to `name`, if reasonably close.
    pub fn suggest(&self, name: &str) -> Option<&'static str> {
        listing::nearest(name, self.names.keys())
    }

    /// Every op, sorted by name (the order of their ids), with its registration site.
    pub fn ops(&self) -> impl Iterator<Item = &'static OpReg> + '_ {
        self.ops.iter().copied()
    }

    /// The separately registered lowering of `kind` for `op`.
    pub fn lowering(&self, op: &str, kind: LoweringKind) -> Option<&'static Lowering> {
        self.lowerings_of(op).find(|l| l.kind == kind)
    }

    /// Every separately registered lowering of `op`, in kind order.
    pub fn lowerings_of<'s>(&'s self, op: &'s str) -> impl Iterator<Item = &'static Lowering> + 's {
        self.id(op).into_iter().flat_map(|id| self.lowerings_by_id(id))
    }

    /// Every separately registered lowering of op `id`, in kind order: a vector index.
    pub fn lowerings_by_id(&self, id: OpId) -> impl Iterator<Item = &'static Lowering> + '_ {
        self.lowerings.get(id.index()).into_iter().flatten().copied()
    }

    /// The canonicalizer registered for `op`, if any.
    pub fn canonicalizer(&self, op: &str) -> Option<CanonicalizeFn> {
        self.canonicalizers.get_by(op).map(|e| *e.value)
    }

    /// The private-signal rule registered for `op`, if any ([`crate::auto_signal`]).
    pub fn private_signal(&self, op: &str) -> Option<PrivateSignalFn> {
        self.private_signals.get_by(op).map(|e| *e.value)
    }

    /// Every registered canonicalizer, sorted by op name.
    pub fn canonicalizers(&self) -> impl Iterator<Item = Entry<CanonicalizeFn>> + '_ {
        self.canonicalizers.iter().map(|(_, _, r)| r)
    }

    /// Every overload, sorted by name.
    pub fn overloads(&self) -> impl Iterator<Item = &'static Overload> + '_ {
        self.names.iter().filter_map(|(_, _, n)| match n {
            DslName::Overload(o) => Some(o),
            DslName::Op(_) => None,
        })
    }

    /// Number of registered ops (ids run from 0 to `len() - 1`).
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether no op is registered.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// The `(op, site)` pairs of `entries` whose op is not in `ops`.
/// What an op record's fields contradict, if anything: a notifier must be pinned to one lane
/// (`no_duplicate`), because a notify duplicated onto both lanes of a mixed kernel would
/// deliver every credit twice. The signal role decides, not the op's name, so a new op that
/// notifies (a fused put+notify) gets the same rule.
fn inconsistency(def: &OpDef) -> Option<&'static str> {
    (def.signal_role == crate::effects::SignalRole::Notify && !def.no_duplicate)
        .then_some("it notifies (signal role Notify) but is not `no_duplicate`: duplicated onto both lanes of a mixed kernel it would deliver every credit twice")
}

fn unknown_ops(
    ops: &Table<&'static str, &'static OpReg>,
    entries: impl Iterator<Item = (&'static str, Site)>,
) -> Vec<(&'static str, Site)> {
    entries.filter(|(op, _)| ops.get(op).is_none()).collect()
}
