//! What an op call does to memory and to signals, as data of its op record.
//!
//! Every memory operand of an op ([`ParamDef`](crate::registry::ParamDef)) declares its
//! [`Effect`] (read / write), the [`Side`] it touches (this rank's memory, or a peer's window
//! region addressed through a peer index: a pull when read, a push when written) and, for a
//! local GM store, the [`StoreKind`] (bulk MTE3 transfer or scalar store). An op declares its
//! [`SignalRole`] (it notifies, blocks on a wait, or registers a deferred wait). The passes
//! that must know what a call does — `InsertCommFence`, `FlattenTileNdTo2D`,
//! `ConvertTensorToTileOps` — and codegen's synthesized kernels ask [`arg_accesses`] and
//! [`comm_class`], so an op added with these fields needs no pass change.

use crate::expr::Call;
use crate::registry::OpDef;

/// What an op does to one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Not a memory operand.
    None,
    /// Read.
    Read,
    /// Written.
    Write,
    /// Read and written.
    ReadWrite,
}

impl Effect {
    /// Whether the argument is written.
    pub fn writes(self) -> bool {
        matches!(self, Effect::Write | Effect::ReadWrite)
    }
    /// Whether the argument is read.
    pub fn reads(self) -> bool {
        matches!(self, Effect::Read | Effect::ReadWrite)
    }
}

/// Whose memory a memory operand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Side {
    /// The calling rank's own memory (a local tensor, tile or its own window slice).
    #[default]
    Local,
    /// A peer rank's window region, addressed by the call's peer index: read, it is a pull
    /// (`remote_load`, `get`'s source); written, a push (`put`'s destination, `remote_store`).
    Peer,
}

/// How a local write reaches GM, for the tensor-to-tile conversion's access analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum StoreKind {
    /// Not a GM store (or not one the analysis distinguishes).
    #[default]
    None,
    /// A bulk (MTE3) store of a tile region (`tile.store`, `tensor.assemble`).
    Bulk,
    /// A scalar store of one element (`tensor.write`).
    Scalar,
}

/// An op's part in the signal protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SignalRole {
    /// Not a signal op.
    #[default]
    None,
    /// Publishes into a peer's signal slot (`notify`): never classified as a data write.
    Notify,
    /// Blocks until its own slot satisfies a predicate, then resumes (`wait`): what follows
    /// may read data the signal released, so the core's caches are invalidated after it.
    BlockingWait,
    /// Registers a completion condition and returns without waiting (`defer_wait`).
    DeferredWait,
}

/// An op's part in rank-uniform execution, for the rank-uniformity check of `pld check`
/// (PARCOACH-style: a collective reached under rank-dependent control flow deadlocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RankRole {
    /// Neither a collective nor a rank query.
    #[default]
    None,
    /// A collective: every rank of its domain must call it, as many times and in the same
    /// order as every other (the seed: "rank-uniform execution (inherent to any barrier)").
    Collective,
    /// Its result is the calling rank's index: it differs between ranks (`pld.rank`).
    RankIndex,
}

impl Call {
    /// The signal role of the op it calls (`None` for a function call).
    pub fn signal_role(&self) -> SignalRole {
        self.op().map_or(SignalRole::None, |d| d.signal_role)
    }
}

/// One argument's access, as the op record and the call's attributes decide it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgAccess {
    /// Read / write.
    pub effect: Effect,
    /// Local or a peer's window.
    pub side: Side,
    /// The kind of GM store, for local writes.
    pub store: StoreKind,
}

impl ArgAccess {
    /// A write into a peer's window region.
    pub fn is_push(self) -> bool {
        self.side == Side::Peer && self.effect.writes()
    }
    /// A write into this rank's own memory.
    pub fn is_local_write(self) -> bool {
        self.side == Side::Local && self.effect.writes()
    }
}

/// The access of every argument of `call` to `def` (effects may depend on the call's
/// attributes, e.g. an atomic put also reads its destination).
pub fn arg_accesses(def: &OpDef, call: &Call) -> Vec<ArgAccess> {
    def.arg_effects(call)
        .into_iter()
        .enumerate()
        .map(|(i, effect)| {
            let p = def.params.get(i);
            ArgAccess {
                effect,
                side: p.map_or(Side::Local, |p| p.side),
                store: p.map_or(StoreKind::None, |p| p.store),
            }
        })
        .collect()
}

/// What a call means for the data-before-signal markers (`InsertCommFence`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommClass {
    /// A local write into a window-bound argument (its index): peers may read it after a
    /// later notify, so its region is written back and fenced.
    LocalWindowWrite(usize),
    /// A write into a peer's window: fenced before any later notify.
    RemoteWrite,
    /// A blocking wait: later reads must not hit stale cache lines.
    Wait,
    /// None of these.
    Other,
}

/// Classifies a call of `def` for the comm fences; `is_window(i)` says whether argument `i`
/// is a window-bound (distributed) tensor variable.
pub fn comm_class(def: &OpDef, call: &Call, is_window: impl Fn(usize) -> bool) -> CommClass {
    match def.signal_role {
        SignalRole::BlockingWait => return CommClass::Wait,
        SignalRole::Notify | SignalRole::DeferredWait => return CommClass::Other,
        SignalRole::None => {}
    }
    let accesses = arg_accesses(def, call);
    if accesses.iter().any(|a| a.is_push()) {
        return CommClass::RemoteWrite;
    }
    accesses
        .iter()
        .enumerate()
        .find(|(i, a)| a.is_local_write() && is_window(*i))
        .map_or(CommClass::Other, |(i, _)| CommClass::LocalWindowWrite(i))
}

/// The tile arguments a call pushes to a peer as 2-D regions: the local operands it reads
/// while writing a peer's window (`remote_store`'s source tile). `FlattenTileNdTo2D`
/// reshapes those of rank > 2.
pub fn pushed_sources(def: &OpDef, call: &Call) -> Vec<usize> {
    let accesses = arg_accesses(def, call);
    if !accesses.iter().any(|a| a.is_push()) {
        return Vec::new();
    }
    accesses
        .iter()
        .enumerate()
        .filter(|(_, a)| a.side == Side::Local && a.effect == Effect::Read)
        .map(|(i, _)| i)
        .collect()
}
