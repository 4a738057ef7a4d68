//! The simulated world: host buffers, comm domains with symmetric windows, CommContexts,
//! signal cells, the race checker and traffic accounting.
//!
//! Guarantees:
//! - Named buffers are carved back to back at 32-byte-aligned offsets, identical on every
//!   member rank of a domain; every rank gets a real `pld_runtime_abi::CommContext` whose
//!   `windowsIn[i]` are distinct per-rank virtual addresses, and every remote access is
//!   addressed exactly as the hardware does (`local + windowsIn[peer] - windowsIn[me]`) and
//!   then resolved back through that rank's own address map, so a wrong pointer is a bounds
//!   report, never a silent hit on other memory.
//! - Window memory starts as the garbage byte [`GARBAGE`] (NaN for every float type) except for
//!   allocations all of whose views are integer typed (signals, counters), which start at zero
//!   (docs/DECISIONS.md D-sim-1); what is *defined* to read is what was written or is a signal
//!   cell, whatever the dtype (D-sim-22).
//! - Data accesses to windows are checked for races with per-rank vector clocks whose only
//!   cross-rank edges are notify→wait; signal cells carry the clocks of their notifiers.
//! - The state is grouped by how a parallel run treats it (`handle.rs`): shared by every
//!   handle, per rank (one state each, `rank.rs`, moved between handles), and per-handle tallies
//!   that [`World::join`] merges.

use crate::arena::Arena;
use crate::clock::{acquire_clock, release_clock, CellClock};
use crate::elem;
use crate::report::{Fault, ReportKind};
use crate::value::{Mem, TRef};
use pld_ir::{DataType, Span};
use pld_runtime_abi::{CommContext, ReduceOp};
use std::collections::{BTreeMap, HashMap};
use std::sync::{
    Arc, LockResult, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError,
    TryLockResult,
};

mod access;
mod backend;
mod credit;
mod deps;
#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod fork_tests;
mod handle;
mod memory;
mod meter;
mod notify;
mod race;
mod rank;
mod resolve;
mod run;
mod signal;
#[cfg(test)]
mod tests;
mod traffic;
mod uninit;

pub(crate) use access::*;
pub use backend::*;
use handle::{Local, Shared, Tally};
pub use memory::*;
pub use meter::{CellOp, Meter, TileWork, TouchRec};
pub use notify::{Checked, Notifier};
pub(crate) use race::*;
use rank::PerRank;
pub use resolve::*;
pub use run::{Checks, RunEnd, DEFAULT_PROTOCOL_GRAIN};
pub use signal::*;
pub use traffic::*;

/// The whole simulated memory and checker state, grouped by how a parallel run treats it
/// ([`World::fork`], [`World::join`]): what every handle shares, each rank's own state, what
/// each handle tallies, and each handle's own working state.
pub struct World {
    /// What every handle of a run sees alike: buffers, domains, windows, race sites, checks.
    shared: Shared,
    /// Per global rank: its state ([`PerRank`]), changed only by its own work.
    ranks: Vec<PerRank>,
    /// What a handle counts and collects; [`World::join`] merges a handle's into this one.
    tally: Tally,
    /// This handle's own working state: host-pass scopes, scratch space, the step's meter.
    local: Local,
}

const ADDR_BASE: u64 = 0x4000_0000_0000;

/// Reads of undefined bytes kept for the end of the run (later ones are not judged: one of
/// these is reported unless all of them read what turned out to be signal cells).
pub(super) const MAX_UNINIT: usize = 16;

/// Where a read of undefined bytes landed: (domain, owning domain rank, window bytes lo, hi).
pub(super) type UninitAt = (usize, usize, u64, u64);

impl World {
    /// An empty world of `nranks` ranks.
    pub fn new(nranks: usize) -> World {
        World {
            shared: Shared {
                nranks,
                wake: None,
                host: Vec::new(),
                host_labels: HashMap::new(),
                domains: Vec::new(),
                allocs: Vec::new(),
                sites: Arc::default(),
                checks: Checks { races: true, fences: false, allow_uninit_reads: false },
                protocol_grain: DEFAULT_PROTOCOL_GRAIN,
                mem: crate::limits::MemUse::default(),
                backend: None,
            },
            ranks: (0..nranks).map(|g| PerRank::new(nranks, g)).collect(),
            tally: Tally::new(nranks),
            local: Local::default(),
        }
    }

    /// Adds a domain over `members` (global ranks); windows are materialised by [`World::finalize`].
    pub fn add_domain(&mut self, members: Vec<usize>) -> usize {
        // Members are global ranks of this run (the interpreter rejects others before).
        let mut drank_of = vec![None; self.shared.nranks];
        for (d, &g) in members.iter().enumerate() {
            if let Some(slot) = drank_of.get_mut(g) {
                slot.get_or_insert(d);
            }
        }
        self.shared.domains.push(Domain {
            drank_of,
            members,
            allocs: Vec::new(),
            win_size: 0,
            wins: Vec::new(),
            ctx: Vec::new(),
        });
        self.shared.domains.len() - 1
    }

    /// Carves a named buffer of `size` bytes at the end of domain `d`.
    pub fn alloc(&mut self, d: usize, name: &str, size: u64) -> usize {
        if let Some(cursor) = self.local.reuse {
            // A persistent worker's later call finds its buffers where the first call put them.
            if let Some(a) =
                self.shared.allocs.get(cursor).filter(|a| a.name == name && a.size == size && a.domain == d)
            {
                let _ = a;
                self.local.reuse = Some(cursor + 1);
                return cursor;
            }
        }
        let dom = &mut self.shared.domains[d];
        let offset = dom.win_size;
        let rounded = size.div_ceil(32).saturating_mul(32);
        // Saturating: an absurd total is refused by the memory check before anything is mapped.
        dom.win_size = dom.win_size.saturating_add(rounded);
        let id = self.shared.allocs.len();
        dom.allocs.push(id);
        self.shared.allocs.push(Alloc {
            name: name.to_string(),
            domain: d,
            offset,
            size,
            rounded,
            zeroed: false,
            defined: false,
            float_view: false,
            literal_at: None,
        });
        id
    }

    /// Records that allocation `a` was made at `span` with a size written in numbers only.
    pub fn mark_literal_size(&mut self, a: usize, span: Span) {
        if let Some(al) = self.shared.allocs.get_mut(a) {
            al.literal_at = Some(span);
        }
    }

    /// Creates the arenas and CommContexts of every domain (after the host pass carved them),
    /// on the calling thread under every schedule: two threads faulting fresh windows into one
    /// address space at once stalled for tens of milliseconds (D-sim-11).
    pub fn finalize(&mut self) -> Result<(), Fault> {
        for (di, dom) in self.shared.domains.iter_mut().enumerate() {
            if dom.wins.len() == dom.members.len()
                && (self.shared.backend.is_some()
                    || dom.wins.first().is_some_and(|w| read(w).len() as u64 == dom.win_size))
            {
                // Already materialised by an earlier call of a persistent worker.
                continue;
            }
            let n = dom.members.len();
            let stride = dom.win_size.div_ceil(1 << 20).max(1) * (1 << 20) + (1 << 20);
            let zeroed: Vec<(usize, usize)> = dom
                .allocs
                .iter()
                .map(|&a| &self.shared.allocs[a])
                .filter(|al| al.zeroed)
                .map(|al| (al.offset as usize, (al.offset + al.rounded) as usize))
                .collect();
            let arenas = match &self.shared.backend {
                // The bytes live behind the backend; the local arenas stay empty.
                Some(b) => {
                    let mut cuts = zeroed.clone();
                    cuts.sort_unstable();
                    b.create(di, &dom.members, dom.win_size, &|bytes| fill_window(bytes, &cuts)).map_err(
                        |e| {
                            Fault::runtime(
                                Span::DUMMY,
                                format!("cannot create the windows of comm domain {di}: {e}"),
                            )
                        },
                    )?;
                    (0..n).map(|_| Arena::zeroed(0)).collect()
                }
                None => arenas(n, dom.win_size as usize, &zeroed),
            };
            dom.wins = arenas
                .into_iter()
                .map(|bytes| Arc::new(Window { bytes: RwLock::new(bytes), ..Window::default() }))
                .collect();
            dom.ctx.clear();
            for (me, &g) in dom.members.iter().enumerate() {
                // Every rank maps the domain's windows at its own virtual addresses.
                let base = ADDR_BASE + (g as u64) * 0x100_0000_0000 + (di as u64) * 0x10_0000_0000;
                let wins: Vec<u64> = (0..n as u64).map(|i| base + i * stride).collect();
                let ctx = CommContext::new(me as u32, n as u32, dom.win_size, &wins)
                    .map_err(|e| Fault::runtime(Span::DUMMY, format!("cannot build comm context: {e}")))?;
                dom.ctx.push(ctx);
            }
        }
        // What this run did not take of the last run's windows goes back to the system.
        crate::arena::release_kept();
        Ok(())
    }

    /// Prepares a persistent worker's next call: windows, contexts and clocks stay; race
    /// records, host buffers and counters start afresh; with `reset` every named buffer is
    /// overwritten with zeros (`reset_persistent_windows`).
    pub fn next_call(&mut self, reset: bool) {
        self.local.reuse = Some(0);
        self.local.scope_stack.clear();
        self.shared.host.clear();
        self.shared.host_labels.clear();
        for dom in &self.shared.domains {
            for w in &dom.wins {
                let mut st = lock(&w.state);
                st.forget_records();
                if reset {
                    // Zeroed by contract (`reset_persistent_windows`): every byte is defined.
                    let len = read(w).len() as u64;
                    st.define_all(len);
                    write(w).fill(0);
                    st.cells.clear();
                }
            }
        }
        self.ranks.iter_mut().for_each(PerRank::next_call);
        self.tally.next_call(self.shared.nranks);
    }

    /// Allocates a host buffer holding `bytes`.
    pub fn host_buffer(&mut self, bytes: Vec<u8>) -> usize {
        self.shared.host.push(Arc::new(Mutex::new(crate::lazy::HostBuf::new(bytes))));
        self.shared.host.len() - 1
    }

    /// Allocates a host buffer of `len` bytes that `source` fills chunk by chunk as accesses
    /// reach them ([`crate::lazy`]).
    pub fn host_lazy(&mut self, len: usize, source: Arc<dyn crate::lazy::HostSource>) -> usize {
        self.shared.host.push(Arc::new(Mutex::new(crate::lazy::HostBuf::lazy(len, source))));
        self.shared.host.len() - 1
    }

    /// Names host buffer `buf` for bounds reports: the parameter `name` and, per dim, how its
    /// extent was bound when it is a symbolic dim.
    pub fn label_host(&mut self, buf: usize, name: &str, dims: Vec<Option<DimBinding>>) {
        self.shared.host_labels.insert(buf, Arc::new(HostLabel { name: name.to_string(), dims }));
    }

    fn alloc_name(&self, a: usize) -> &str {
        self.shared.allocs.get(a).map_or("?", |x| x.name.as_str())
    }

    /// The buffer of domain `domain` whose (rounded) extent holds window byte `offset`.
    fn alloc_at(&self, domain: usize, offset: u64) -> Option<&Alloc> {
        self.shared.domains[domain]
            .allocs
            .iter()
            .map(|&a| &self.shared.allocs[a])
            .find(|al| offset >= al.offset && offset < al.offset + al.rounded)
    }
}

/// Element type checks shared by the semantics: `dt` must be simulated.
pub fn check_dtype(dt: DataType, span: Span, op: &str) -> Result<(), Fault> {
    if elem::supported(dt) {
        Ok(())
    } else {
        Err(Fault::runtime(span, format!("{op}: dtype {dt} is not supported by the simulator")))
    }
}

/// A host buffer's name and the bindings of its symbolic dims, for bounds reports.
#[derive(Debug)]
pub(crate) struct HostLabel {
    /// The host tensor parameter it backs.
    pub(crate) name: String,
    /// Per dim: its binding when it is a symbolic dim, `None` otherwise.
    pub(crate) dims: Vec<Option<DimBinding>>,
}

/// A symbolic dim's value and where it came from.
#[derive(Clone, Debug)]
pub struct DimBinding {
    /// The dim's name (`M`).
    pub name: String,
    /// Its value in this run.
    pub value: i64,
    /// Where the value came from: `--bind M=4`, `--ranks`, `the shape of input 'x'`.
    pub from: String,
}
