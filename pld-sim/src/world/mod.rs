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

use crate::arena::Arena;
use crate::clock::{acquire_clock, release_clock, CellClock, Release};
use crate::elem;
use crate::report::{Fault, ReportKind};
use crate::value::{Mem, TRef};
use pld_ir::{DataType, Span};
use pld_runtime_abi::{CommContext, ReduceOp};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{
    Arc, LockResult, Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError,
    TryLockResult,
};

mod access;
mod backend;
mod credit;
mod deps;
mod memory;
mod meter;
mod race;
mod resolve;
mod run;
mod signal;
#[cfg(test)]
mod tests;
mod traffic;
mod uninit;

pub(crate) use access::*;
pub use backend::*;
pub use memory::*;
pub use meter::{CellOp, Meter, TouchRec};
pub(crate) use race::*;
pub use resolve::*;
pub use run::{Checks, RunEnd};
pub use signal::*;
pub use traffic::*;

/// The whole simulated memory and checker state.
pub struct World {
    /// Number of global ranks.
    nranks: usize,
    /// The parallel schedule's wake-up epoch, bumped by every notify so a parked worker
    /// re-checks its ranks at once (`None` in the single-threaded schedules).
    wake: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// Host/GM buffers (shared by the handles of a parallel run).
    host: Vec<Arc<Mutex<crate::lazy::HostBuf>>>,
    /// What bounds reports say of a host buffer: its parameter name and dims bound from the run.
    host_labels: HashMap<usize, Arc<HostLabel>>,
    /// Comm domains.
    domains: Vec<Domain>,
    /// Named buffers.
    allocs: Vec<Alloc>,
    /// Reused list of subsumed record ids.
    drop_ids: Vec<u32>,
    /// Interned (op, kernel) names of race records (shared by the handles of a run).
    sites: Arc<Mutex<Sites>>,
    /// The sites this handle interned, with their ids (a run has a handful).
    site_cache: Vec<(String, String, u32)>,
    /// Vector clock of each global rank.
    vc: Vec<Vec<u32>>,
    /// Per rank: its pending clock advance after a release (applied before the rank's next
    /// recorded access or clock change).
    released: Vec<Release>,
    /// Accounting.
    stats: Stats,
    /// `stats.steps` when the run last made progress (changed data or a signal cell):
    /// the liveness budget counts the steps since ([`World::idle_steps`]).
    progress_at: u64,
    /// Whether races are checked.
    check_races: bool,
    /// Whether a read of window bytes nothing wrote is only a warning (`--allow-uninit-reads`)
    /// instead of a fault.
    allow_uninit_reads: bool,
    /// Per global rank: its call index on each self-clearing signal buffer (see
    /// [`crate::credit`]).
    calls: Vec<BTreeMap<usize, crate::credit::CallPhase>>,
    /// Per global rank: its barrier generations within its current calls.
    gens: Vec<crate::credit::Generations>,
    /// The first wait satisfied by an earlier barrier generation's credit on a buffer not (yet)
    /// known to be self-clearing: (buffer, fault), judged when the run ends.
    stale_generation: Option<Box<(usize, Fault)>>,
    /// Per signal buffer some rank self-cleared: the first epilogue notify's location.
    epilogue_sites: BTreeMap<usize, Span>,
    /// The first reads of undefined window bytes (at most [`MAX_UNINIT`]): the first whose
    /// bytes did not become signal cells is a fault when the run ends without another.
    uninit: Vec<(UninitAt, Box<Fault>)>,
    /// Per rank: a notify was issued since the last completed wait (barrier-round counting).
    notified: Vec<bool>,
    /// Open comm-domain scopes of the host pass: (domain, window buffer names), innermost last.
    scope_stack: Vec<(usize, Vec<String>)>,
    /// Whether a notify must be preceded by a GM fence covering earlier window writes.
    check_fences: bool,
    /// Per rank: window writes not yet covered by a `system.fence` (op, buffer, span).
    unfenced: Vec<Vec<(String, String, Span)>>,
    /// (rank, mixed-kernel group, notify span) -> the lane that executed that notify.
    lane_notifies: HashMap<(usize, String, Span), String>,
    /// Persistent re-run: allocations are matched in order against the existing ones.
    reuse: Option<usize>,
    /// Warnings of the run (counter overflow; undefined-byte reads when allowed), each once.
    warnings: Vec<String>,
    warned: BTreeSet<(usize, usize, &'static str)>,
    /// Reused buffer for the encoded bytes of a write.
    scratch: Vec<u8>,
    /// Reused buffer for the row starts of an access.
    starts: Vec<i64>,
    /// Traffic not yet merged into `stats` (see [`World::flush_traffic`]): `[local, remote,
    /// read+written]` bytes per interned (op, kernel) site and rank, at
    /// `site * (nranks + 1) + column`, the last column being the host orchestrator's (rank
    /// `usize::MAX`).
    traffic: Vec<[u64; 3]>,
    /// Bytes of host tensors allocated so far and the run's memory limit ([`crate::limits`]).
    mem: crate::limits::MemUse,
    /// What the current step did, for the cost model (see [`crate::timeline`]).
    meter: Meter,
    /// Bytes moved since the last progress report ([`crate::budget::publish`]).
    moved: u64,
    /// Which way each rank went at each `if` it ran ([`crate::divergence`]).
    pub branches: crate::divergence::Branches,
    /// Where window bytes live in a distributed run ([`WindowBackend`]; `None`: here).
    backend: Option<Arc<dyn WindowBackend>>,
    /// Host-tensor byte spans written in a distributed run ([`World::host_writes`]).
    host_writes: Vec<(usize, usize, usize)>,
    /// The shared-state accesses since the last [`World::take_deps`], while an exhaustive
    /// exploration drives the run ([`crate::explore`]; `None` otherwise).
    deps: Option<Vec<crate::drive::Ev>>,
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
        let mut vc = vec![vec![0u32; nranks]; nranks];
        for (r, v) in vc.iter_mut().enumerate() {
            v[r] = 1;
        }
        World {
            nranks,
            host: Vec::new(),
            host_labels: HashMap::new(),
            domains: Vec::new(),
            allocs: Vec::new(),
            drop_ids: Vec::new(),
            sites: Arc::default(),
            site_cache: Vec::new(),
            vc,
            released: vec![Release::default(); nranks],
            stats: Stats {
                notifies: vec![0; nranks],
                waits: vec![0; nranks],
                barrier_rounds: vec![0; nranks],
                ..Stats::default()
            },
            progress_at: 0,
            check_races: true,
            allow_uninit_reads: false,
            uninit: Vec::new(),
            calls: vec![BTreeMap::new(); nranks],
            gens: vec![crate::credit::Generations::default(); nranks],
            stale_generation: None,
            epilogue_sites: BTreeMap::new(),
            notified: vec![false; nranks],
            scope_stack: Vec::new(),
            check_fences: false,
            unfenced: vec![Vec::new(); nranks],
            lane_notifies: HashMap::new(),
            reuse: None,
            warnings: Vec::new(),
            warned: BTreeSet::new(),
            scratch: Vec::new(),
            starts: Vec::new(),
            traffic: Vec::new(),
            wake: None,
            mem: crate::limits::MemUse::default(),
            meter: Meter::default(),
            moved: 0,
            branches: Default::default(),
            backend: None,
            host_writes: Vec::new(),
            deps: None,
        }
    }

    /// Adds a domain over `members` (global ranks); windows are materialised by [`World::finalize`].
    pub fn add_domain(&mut self, members: Vec<usize>) -> usize {
        // Members are global ranks of this run (the interpreter rejects others before).
        let mut drank_of = vec![None; self.nranks];
        for (d, &g) in members.iter().enumerate() {
            if let Some(slot) = drank_of.get_mut(g) {
                slot.get_or_insert(d);
            }
        }
        self.domains.push(Domain {
            drank_of,
            members,
            allocs: Vec::new(),
            win_size: 0,
            wins: Vec::new(),
            ctx: Vec::new(),
        });
        self.domains.len() - 1
    }

    /// Carves a named buffer of `size` bytes at the end of domain `d`.
    pub fn alloc(&mut self, d: usize, name: &str, size: u64) -> usize {
        if let Some(cursor) = self.reuse {
            // A persistent worker's later call finds its buffers where the first call put them.
            if let Some(a) =
                self.allocs.get(cursor).filter(|a| a.name == name && a.size == size && a.domain == d)
            {
                let _ = a;
                self.reuse = Some(cursor + 1);
                return cursor;
            }
        }
        let dom = &mut self.domains[d];
        let offset = dom.win_size;
        let rounded = size.div_ceil(32).saturating_mul(32);
        // Saturating: an absurd total is refused by the memory check before anything is mapped.
        dom.win_size = dom.win_size.saturating_add(rounded);
        let id = self.allocs.len();
        dom.allocs.push(id);
        self.allocs.push(Alloc {
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
        if let Some(al) = self.allocs.get_mut(a) {
            al.literal_at = Some(span);
        }
    }

    /// Creates the arenas and CommContexts of every domain (after the host pass carved them),
    /// on the calling thread.
    pub fn finalize(&mut self) -> Result<(), Fault> {
        self.materialize(false)
    }

    /// [`World::finalize`] with the windows' bytes written on rayon's pool (the parallel
    /// schedule's per-rank setup; every other schedule stays on the calling thread).
    pub fn finalize_parallel(&mut self) -> Result<(), Fault> {
        self.materialize(true)
    }

    fn materialize(&mut self, parallel: bool) -> Result<(), Fault> {
        for (di, dom) in self.domains.iter_mut().enumerate() {
            if dom.wins.len() == dom.members.len()
                && (self.backend.is_some()
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
                .map(|&a| &self.allocs[a])
                .filter(|al| al.zeroed)
                .map(|al| (al.offset as usize, (al.offset + al.rounded) as usize))
                .collect();
            let arenas = match &self.backend {
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
                None => arenas(n, dom.win_size as usize, &zeroed, parallel),
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
        Ok(())
    }

    /// Prepares a persistent worker's next call: windows, contexts and clocks stay; race
    /// records, host buffers and counters start afresh; with `reset` every named buffer is
    /// overwritten with zeros (`reset_persistent_windows`).
    pub fn next_call(&mut self, reset: bool) {
        self.reuse = Some(0);
        self.host.clear();
        self.host_labels.clear();
        for dom in &self.domains {
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
        self.lane_notifies.clear();
        self.uninit.clear();
        self.stale_generation = None;
        // Generations count within one call of the worker (retained signals are not judged).
        self.gens.iter_mut().for_each(|g| *g = crate::credit::Generations::default());
        self.warnings.clear();
        self.warned.clear();
        self.scope_stack.clear();
        self.unfenced.iter_mut().for_each(Vec::clear);
        self.notified.iter_mut().for_each(|x| *x = false);
        let n = self.nranks;
        self.traffic.clear();
        self.stats =
            Stats { notifies: vec![0; n], waits: vec![0; n], barrier_rounds: vec![0; n], ..Stats::default() };
    }

    /// Allocates a host buffer holding `bytes`.
    pub fn host_buffer(&mut self, bytes: Vec<u8>) -> usize {
        self.host.push(Arc::new(Mutex::new(crate::lazy::HostBuf::new(bytes))));
        self.host.len() - 1
    }

    /// Allocates a host buffer of `len` bytes that `source` fills chunk by chunk as accesses
    /// reach them ([`crate::lazy`]).
    pub fn host_lazy(&mut self, len: usize, source: Arc<dyn crate::lazy::HostSource>) -> usize {
        self.host.push(Arc::new(Mutex::new(crate::lazy::HostBuf::lazy(len, source))));
        self.host.len() - 1
    }

    /// Names host buffer `buf` for bounds reports: the parameter `name` and, per dim, how its
    /// extent was bound when it is a symbolic dim.
    pub fn label_host(&mut self, buf: usize, name: &str, dims: Vec<Option<DimBinding>>) {
        self.host_labels.insert(buf, Arc::new(HostLabel { name: name.to_string(), dims }));
    }

    fn alloc_name(&self, a: usize) -> &str {
        self.allocs.get(a).map_or("?", |x| x.name.as_str())
    }

    /// The buffer of domain `domain` whose (rounded) extent holds window byte `offset`.
    fn alloc_at(&self, domain: usize, offset: u64) -> Option<&Alloc> {
        self.domains[domain]
            .allocs
            .iter()
            .map(|&a| &self.allocs[a])
            .find(|al| offset >= al.offset && offset < al.offset + al.rounded)
    }
}

impl World {
    /// A handle on the same run for another thread: windows, host buffers and race sites are
    /// shared (each behind its own lock); clocks are copied; counters, warnings and scratch
    /// space start empty. A handle runs the work of a fixed set of ranks (each rank's clock
    /// and counters are touched only by its own work) and is merged back with [`World::join`].
    pub fn fork(&self) -> World {
        let n = self.nranks;
        World {
            nranks: n,
            host: self.host.clone(),
            host_labels: self.host_labels.clone(),
            domains: self.domains.clone(),
            allocs: self.allocs.clone(),
            drop_ids: Vec::new(),
            sites: Arc::clone(&self.sites),
            site_cache: Vec::new(),
            vc: self.vc.clone(),
            released: self.released.clone(),
            stats: Stats {
                notifies: vec![0; n],
                waits: vec![0; n],
                barrier_rounds: vec![0; n],
                ..Stats::default()
            },
            progress_at: 0,
            check_races: self.check_races,
            allow_uninit_reads: self.allow_uninit_reads,
            uninit: Vec::new(),
            calls: self.calls.clone(),
            gens: self.gens.clone(),
            stale_generation: None,
            epilogue_sites: BTreeMap::new(),
            notified: self.notified.clone(),
            scope_stack: Vec::new(),
            check_fences: self.check_fences,
            unfenced: self.unfenced.clone(),
            lane_notifies: self.lane_notifies.clone(),
            reuse: None,
            warnings: Vec::new(),
            warned: self.warned.clone(),
            scratch: Vec::new(),
            starts: Vec::new(),
            traffic: Vec::new(),
            wake: self.wake.clone(),
            mem: self.mem,
            meter: Meter { record_touches: self.meter.record_touches, ..Default::default() },
            moved: 0,
            branches: Default::default(),
            backend: self.backend.clone(),
            host_writes: Vec::new(),
            deps: None,
        }
    }

    /// Merges the handle that ran the work of ranks `ranks` (see [`World::fork`]).
    pub fn join(&mut self, mut h: World, ranks: &[usize]) {
        h.flush_traffic();
        self.branches.absorb(std::mem::take(&mut h.branches));
        for &g in ranks {
            if let (Some(mine), Some(theirs)) = (self.vc.get_mut(g), h.vc.get(g)) {
                mine.clone_from(theirs);
            }
            if let (Some(mine), Some(theirs)) = (self.released.get_mut(g), h.released.get_mut(g)) {
                *mine = std::mem::take(theirs);
            }
            if let (Some(x), Some(y)) = (self.calls.get_mut(g), h.calls.get_mut(g)) {
                *x = std::mem::take(y);
            }
            if let (Some(x), Some(y)) = (self.gens.get_mut(g), h.gens.get_mut(g)) {
                *x = std::mem::take(y);
            }
            if let (Some(x), Some(y)) = (self.notified.get_mut(g), h.notified.get(g)) {
                *x = *y;
            }
            if let (Some(x), Some(y)) = (self.unfenced.get_mut(g), h.unfenced.get_mut(g)) {
                *x = std::mem::take(y);
            }
        }
        for (map, theirs) in [
            (&mut self.stats.remote_bytes, &h.stats.remote_bytes),
            (&mut self.stats.local_bytes, &h.stats.local_bytes),
            (&mut self.stats.rw_bytes, &h.stats.rw_bytes),
        ] {
            for ((r, op), b) in theirs {
                *map.entry((*r, op.clone())).or_default() += b;
            }
        }
        for (a, b) in [
            (&mut self.stats.notifies, &h.stats.notifies),
            (&mut self.stats.waits, &h.stats.waits),
            (&mut self.stats.barrier_rounds, &h.stats.barrier_rounds),
        ] {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        self.stats.steps += h.stats.steps;
        // The handle judged its own liveness; joining is progress for this one.
        self.progress_at = self.stats.steps;
        for u in h.uninit {
            if self.uninit.len() < MAX_UNINIT {
                self.uninit.push(u);
            }
        }
        if self.stale_generation.is_none() {
            self.stale_generation = h.stale_generation;
        }
        for (a, sp) in h.epilogue_sites {
            self.epilogue_sites.entry(a).or_insert(sp);
        }
        self.lane_notifies.extend(h.lane_notifies);
        for w in h.warnings {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
        self.warned.extend(h.warned);
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
