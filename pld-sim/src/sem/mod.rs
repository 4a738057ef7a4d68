//! Op semantics, registered by op name.
//!
//! Each family module submits its ops with [`crate::register_semantics!`] (ordinary ops, run where
//! they are called) or [`crate::register_collective!`] (protocol ops that expand into a [`Micro`]
//! program per rank — run inline on a core, or, when called from the host, dispatched to every
//! rank's queue). The simulator never names an op outside these modules; an op that reaches
//! it without semantics is a runtime report naming the op. Guarantees: registrations name the
//! op's canonical registry name and are looked up by its dense [`pld_ir::OpId`] (a vector
//! index, no name hashed per call); duplicates and semantics for ops the registry does not
//! know are registry errors (`Registry::check`), never silently merged or dead.

pub mod array;
pub mod collective;
pub mod collective_bus;
pub mod core;
pub mod put_get;
pub mod remote;
pub mod system;
pub mod tensor;

use crate::micro::Micro;
use crate::report::Fault;
use crate::value::{TRef, Tile, Val};
pub use crate::world::Park;
use crate::world::{Access, World};
use pld_ir::table::OpTable;
use pld_ir::{Call, OpDef, Span};
use std::sync::{Arc, LazyLock};

/// Where an op runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The host orchestrator.
    Host,
    /// A chip orchestrator.
    Chip,
    /// A core running a kernel.
    Core,
}

/// What an op evaluation asks of the executing thread.
pub enum Flow {
    /// Finished with a value.
    Val(Val),
    /// Blocked: re-run the op when the cell changes.
    Park(Park),
    /// Run this micro program, then continue; the call's value is the given one.
    Micro(Vec<Micro>, Val),
    /// Register a deferred completion condition of the current task; continue.
    Defer(Park),
}

/// The context an op runs in.
pub struct OpCx<'a> {
    /// World state.
    pub world: &'a mut World,
    /// The call being evaluated.
    pub call: &'a Call,
    /// Its span.
    pub span: Span,
    /// Level of the caller.
    pub level: Level,
    /// Global rank (meaningless on the host).
    pub rank: usize,
    /// Current comm domain on the host (for `alloc_window_buffer`).
    pub domain: usize,
    /// Name of the running function, for reports.
    pub who: &'a str,
    /// Mixed-kernel group of the running lane, if it is one.
    pub group: Option<&'a str>,
}

impl<'a> OpCx<'a> {
    /// An access of this call's rank to the region `offs`/`shape` of `view` (of `peer`'s copy
    /// when set), reported as op `op` of the running function at this call.
    pub fn access<'v>(
        &self,
        view: &'v TRef,
        peer: Option<i64>,
        offs: &'v [i64],
        shape: &'v [i64],
        op: &'v str,
    ) -> Access<'v>
    where
        'a: 'v,
    {
        Access { g: self.rank, view, peer, offs, shape, span: self.span, op, who: self.who }
    }

    /// The op name.
    pub fn name(&self) -> &str {
        self.call.callee.name()
    }

    /// A runtime error at this call.
    pub fn err(&self, msg: impl Into<String>) -> Fault {
        Fault::runtime(self.span, format!("{}: {}", self.name(), msg.into()))
    }

    /// Integer attribute (with the op's declared default).
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        self.call.attr_int(name)
    }

    /// Argument `i` as a tensor.
    pub fn tensor<'v>(&self, args: &'v [Val], i: usize) -> Result<&'v TRef, Fault> {
        match args.get(i) {
            Some(Val::Tensor(t)) => Ok(t),
            Some(v) => Err(self.err(format!("argument {i} must be a tensor, got {}", v.kind()))),
            None => Err(self.err(format!("missing argument {i}"))),
        }
    }

    /// Argument `i` as a tile.
    pub fn tile<'v>(&self, args: &'v [Val], i: usize) -> Result<&'v Arc<Tile>, Fault> {
        match args.get(i) {
            Some(Val::Tile(t)) => Ok(t),
            Some(v) => Err(self.err(format!("argument {i} must be a tile, got {}", v.kind()))),
            None => Err(self.err(format!("missing argument {i}"))),
        }
    }

    /// Argument `i` as an integer scalar.
    pub fn int(&self, args: &[Val], i: usize) -> Result<i64, Fault> {
        args.get(i)
            .and_then(Val::as_i64)
            .ok_or_else(|| self.err(format!("argument {i} must be an integer scalar")))
    }

    /// Argument `i` as a float scalar.
    pub fn float(&self, args: &[Val], i: usize) -> Result<f64, Fault> {
        args.get(i).and_then(Val::as_f64).ok_or_else(|| self.err(format!("argument {i} must be a scalar")))
    }

    /// Argument `i` as a tuple of integers.
    pub fn ints(&self, args: &[Val], i: usize) -> Result<Vec<i64>, Fault> {
        ints_of(args.get(i)).ok_or_else(|| self.err(format!("argument {i} must be a tuple of integers")))
    }

    /// [`OpCx::ints`] held inline up to four integers (offsets, shapes): no allocation.
    pub fn dims(&self, args: &[Val], i: usize) -> Result<crate::value::Dims, Fault> {
        let dims = match args.get(i) {
            Some(Val::Tuple(items)) => items.iter().map(Val::as_i64).collect(),
            Some(other) => other.as_i64().map(|x| smallvec::smallvec![x]),
            None => None,
        };
        dims.ok_or_else(|| self.err(format!("argument {i} must be a tuple of integers")))
    }
}

/// A tuple (or single integer) as integers.
pub fn ints_of(v: Option<&Val>) -> Option<Vec<i64>> {
    match v? {
        Val::Tuple(items) => items.iter().map(Val::as_i64).collect(),
        other => other.as_i64().map(|x| vec![x]),
    }
}

/// An ordinary op semantics function.
pub type OpFn = fn(&mut OpCx<'_>, &[Val]) -> Result<Flow, Fault>;
/// A protocol op: builds the micro program of one rank.
pub type CollFn = fn(&mut OpCx<'_>, &[Val]) -> Result<Vec<Micro>, Fault>;

/// An ordinary op that may take its arguments' storage: the interpreter passes them
/// mutably, and an argument moved in at its last use (docs/DECISIONS.md D-sim-33) is held
/// only there, so the op may reuse it for its result (`Arc::try_unwrap`). It never parks.
pub type OwningFn = fn(&mut OpCx<'_>, &mut [Val]) -> Result<Flow, Fault>;

/// The kinds of semantics.
#[derive(Clone, Copy)]
pub enum SemKind {
    /// Run where called.
    Op(OpFn),
    /// Run where called, possibly reusing an argument's storage.
    Owning(OwningFn),
    /// Expand to a per-rank micro program; the call's value is argument `result_arg`
    /// (window-as-result), and a host call dispatches it to every rank.
    Collective {
        /// The builder.
        f: CollFn,
        /// Which argument the call returns.
        result_arg: usize,
    },
    /// Nothing to simulate (cache maintenance): the call is a step that returns nothing, and
    /// its arguments — pure expressions of a verified program — are not even evaluated.
    Noop,
}

/// Registers an ordinary op's semantics: `register_semantics!("pld.system.notify", notify)`.
#[macro_export]
macro_rules! register_semantics {
    ($name:expr, $f:path) => {
        $crate::pld_ir::register_entry!(&[$name], $crate::sem::SemKind::Op($f));
    };
}

/// Registers an op with nothing to simulate ([`SemKind::Noop`]):
/// `register_noop_semantics!("system.cacheinvalid")`.
#[macro_export]
macro_rules! register_noop_semantics {
    ($name:expr) => {
        $crate::pld_ir::register_entry!(&[$name], $crate::sem::SemKind::Noop);
    };
}

/// Registers an ordinary op that may reuse its arguments' storage ([`OwningFn`]):
/// `register_owning_semantics!("tile.add", tile_binary)`.
#[macro_export]
macro_rules! register_owning_semantics {
    ($name:expr, $f:path) => {
        $crate::pld_ir::register_entry!(&[$name], $crate::sem::SemKind::Owning($f));
    };
}

/// Registers a protocol op: `register_collective!("builtin.tensor.barrier", 0, barrier)`.
#[macro_export]
macro_rules! register_collective {
    ($name:expr, $result_arg:expr, $f:path) => {
        $crate::pld_ir::register_entry!(
            &[$name],
            $crate::sem::SemKind::Collective { f: $f, result_arg: $result_arg }
        );
    };
}

/// The semantics table, indexed by [`pld_ir::OpId`]: every [`SemKind`] registered.
static TABLE: LazyLock<OpTable<SemKind>> = LazyLock::new(|| {
    OpTable::collect(
        "simulator semantics",
        pld_ir::table::entries::<SemKind>().map(|e| (e.op, e.site, *e.value)),
    )
});

pld_ir::register_op_table!("sim", |id| TABLE.has(id), || TABLE.errors().to_vec());

/// The semantics of `def` (a vector lookup by its [`pld_ir::OpId`]), if registered.
pub fn of(def: &OpDef) -> Option<SemKind> {
    TABLE.of(def)
}

/// The semantics of the op with canonical name `op`, if registered.
pub fn lookup(op: &str) -> Option<SemKind> {
    TABLE.get(op)
}

/// Registration problems: duplicates and semantics for ops the registry does not know
/// (empty when consistent).
pub fn duplicates() -> Vec<String> {
    TABLE.errors().iter().map(ToString::to_string).collect()
}

/// Every op name with semantics, sorted.
pub fn names() -> Vec<&'static str> {
    TABLE.names()
}
