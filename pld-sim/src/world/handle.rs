//! The parts of a [`World`] by how a parallel run treats them, and the handles it runs on:
//! [`World::fork`] gives a thread a handle holding some ranks, [`World::join`] takes it back.
//!
//! Guarantees:
//! - Fork clones [`Shared`] (its mutable contents sit behind `Arc`s every handle sees), moves
//!   the forked ranks' [`PerRank`]s into the handle, and starts an empty [`Tally`] and a
//!   fresh [`Local`]; join moves those rank states back whole and merges the tally with one
//!   [`Tally::merge`]. Neither lists a per-rank field, so a new one needs no edit here and
//!   cannot be forgotten.
//! - A rank's state is held by one world at a time: while a handle holds it, the world it was
//!   forked from keeps an empty placeholder in its place.

use super::*;

/// What every handle of a run sees alike (cloned by [`World::fork`]; what a handle changes
/// during the device work sits behind the `Arc`s).
#[derive(Clone)]
pub(super) struct Shared {
    /// Number of global ranks.
    pub(super) nranks: usize,
    /// The parallel schedule's wake-up epoch, bumped by every notify so a parked worker
    /// re-checks its ranks at once (`None` in the single-threaded schedules).
    pub(super) wake: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// Host/GM buffers.
    pub(super) host: Vec<Arc<Mutex<crate::lazy::HostBuf>>>,
    /// What bounds reports say of a host buffer: its parameter name and dims bound from the run.
    pub(super) host_labels: HashMap<usize, Arc<HostLabel>>,
    /// Comm domains (their windows shared).
    pub(super) domains: Vec<Domain>,
    /// Named buffers.
    pub(super) allocs: Vec<Alloc>,
    /// Interned (op, kernel) names of race records.
    pub(super) sites: Arc<Mutex<Sites>>,
    /// The checks the run enables.
    pub(super) checks: Checks,
    /// Bytes one protocol step of a builtin collective moves per rank
    /// ([`crate::SimConfig::protocol_grain`]).
    pub(super) protocol_grain: u64,
    /// Bytes of host tensors allocated so far and the run's memory limit ([`crate::limits`]).
    pub(super) mem: crate::limits::MemUse,
    /// Where window bytes live in a distributed run ([`WindowBackend`]; `None`: here).
    pub(super) backend: Option<Arc<dyn WindowBackend>>,
}

/// What a handle counts and collects during its work, merged into the world it was forked
/// from by [`Tally::merge`].
#[derive(Default)]
pub(super) struct Tally {
    /// Accounting.
    pub(super) stats: Stats,
    /// `stats.steps` when the run last made progress (changed data or a signal cell):
    /// the liveness budget counts the steps since ([`World::idle_steps`]).
    pub(super) progress_at: u64,
    /// The first reads of undefined window bytes (at most [`MAX_UNINIT`]): the first whose
    /// bytes did not become signal cells is a fault when the run ends without another.
    pub(super) uninit: Vec<(UninitAt, Box<Fault>)>,
    /// The first wait satisfied by an earlier barrier generation's credit on a buffer not (yet)
    /// known to be self-clearing: (buffer, fault), judged when the run ends.
    pub(super) stale_generation: Option<Box<(usize, Fault)>>,
    /// Per signal buffer some rank self-cleared: the first epilogue notify's location.
    pub(super) epilogue_sites: BTreeMap<usize, Span>,
    /// Warnings of the run (counter overflow; undefined-byte reads when allowed), each once.
    pub(super) warnings: Vec<String>,
    /// Traffic not yet merged into `stats` (see [`World::flush_traffic`]): `[local, remote,
    /// read+written]` bytes per interned (op, kernel) site and rank, at
    /// `site * (nranks + 1) + column`, the last column being the host orchestrator's (rank
    /// `usize::MAX`).
    pub(super) traffic: Vec<[u64; 3]>,
    /// Which way each rank went at each `if` it ran ([`crate::divergence`]).
    pub(super) branches: crate::divergence::Branches,
}

impl Tally {
    /// Empty, with per-rank counters for `nranks` ranks.
    pub(super) fn new(nranks: usize) -> Tally {
        Tally { stats: Tally::fresh_stats(nranks), ..Tally::default() }
    }

    fn fresh_stats(n: usize) -> Stats {
        Stats { notifies: vec![0; n], waits: vec![0; n], barrier_rounds: vec![0; n], ..Stats::default() }
    }

    /// A persistent worker's next call: accounting, warnings, pending judgements and traffic
    /// start afresh (the self-clearing buffers seen, the branches and the progress mark stay).
    pub(super) fn next_call(&mut self, nranks: usize) {
        self.uninit.clear();
        self.stale_generation = None;
        self.warnings.clear();
        self.traffic.clear();
        self.stats = Tally::fresh_stats(nranks);
    }

    /// Adds a handle's tally (its traffic already flushed into its stats): counters add up,
    /// the first judgements and sites are kept, warnings are kept once, branches are united.
    /// Joining counts as progress.
    pub(super) fn merge(&mut self, h: Tally) {
        let Tally {
            stats,
            progress_at: _,
            uninit,
            stale_generation,
            epilogue_sites,
            warnings,
            traffic: _,
            branches,
        } = h;
        for (map, theirs) in [
            (&mut self.stats.remote_bytes, stats.remote_bytes),
            (&mut self.stats.local_bytes, stats.local_bytes),
            (&mut self.stats.rw_bytes, stats.rw_bytes),
        ] {
            for (key, b) in theirs {
                *map.entry(key).or_default() += b;
            }
        }
        for (a, b) in [
            (&mut self.stats.notifies, &stats.notifies),
            (&mut self.stats.waits, &stats.waits),
            (&mut self.stats.barrier_rounds, &stats.barrier_rounds),
        ] {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        self.stats.steps += stats.steps;
        // The handle judged its own liveness; joining is progress for this one.
        self.progress_at = self.stats.steps;
        for u in uninit {
            if self.uninit.len() < MAX_UNINIT {
                self.uninit.push(u);
            }
        }
        if self.stale_generation.is_none() {
            self.stale_generation = stale_generation;
        }
        for (a, sp) in epilogue_sites {
            self.epilogue_sites.entry(a).or_insert(sp);
        }
        for w in warnings {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
        self.branches.absorb(branches);
    }
}

/// A handle's own working state: neither shared nor merged back.
#[derive(Default)]
pub(super) struct Local {
    /// The global ranks a forked handle holds (empty for the run's own world).
    pub(super) held: Vec<usize>,
    /// Reused list of subsumed records.
    pub(super) drop_ids: Vec<super::Subsumed>,
    /// The race sites this handle interned, with their ids (a run has a handful).
    pub(super) site_cache: Vec<(String, String, u32)>,
    /// Reused buffer for the encoded bytes of a write.
    pub(super) scratch: Vec<u8>,
    /// Reused buffer for the row starts of an access.
    pub(super) starts: Vec<i64>,
    /// Persistent re-run: allocations are matched in order against the existing ones.
    pub(super) reuse: Option<usize>,
    /// Open comm-domain scopes of the host pass: (domain, window buffer names), innermost last.
    pub(super) scope_stack: Vec<(usize, Vec<String>)>,
    /// What the current step did, for the cost model (see [`crate::timeline`]).
    pub(super) meter: Meter,
    /// Bytes moved since the last progress report ([`crate::budget::publish`]).
    pub(super) moved: u64,
    /// Bytes moved by this handle's accesses so far (never reset; the parallel schedule's
    /// measure of a slice's work, [`World::moved_total`]).
    pub(super) moved_total: u64,
    /// Host-tensor byte spans written in a distributed run ([`World::host_writes`]).
    pub(super) host_writes: Vec<(usize, usize, usize)>,
    /// The shared-state accesses since the last [`World::take_deps`], while an exhaustive
    /// exploration drives the run ([`crate::explore`]; `None` otherwise).
    pub(super) deps: Option<Vec<crate::drive::Ev>>,
}

impl World {
    /// A handle on the same run for another thread, holding global ranks `ranks`: the shared
    /// part is cloned (windows, host buffers and race sites behind their own locks), the
    /// ranks' states move into the handle, and its tally and working state start empty (the
    /// meter keeps whether it records touches). The handle runs only the work of its ranks
    /// and is merged back with [`World::join`].
    pub fn fork(&mut self, ranks: &[usize]) -> World {
        let n = self.shared.nranks;
        let mut states: Vec<PerRank> = std::iter::repeat_with(PerRank::default).take(n).collect();
        let mut held = Vec::with_capacity(ranks.len());
        for &g in ranks {
            if let (Some(mine), Some(theirs)) = (self.ranks.get_mut(g), states.get_mut(g)) {
                *theirs = std::mem::take(mine);
                held.push(g);
            }
        }
        let meter = Meter { record_touches: self.local.meter.record_touches, ..Meter::default() };
        World {
            shared: self.shared.clone(),
            ranks: states,
            tally: Tally::new(n),
            local: Local { held, meter, ..Local::default() },
        }
    }

    /// Merges a handle made by [`World::fork`]: its ranks' states move back and its tally is
    /// added to this world's.
    pub fn join(&mut self, mut h: World) {
        h.flush_traffic();
        for &g in &h.local.held {
            if let (Some(mine), Some(theirs)) = (self.ranks.get_mut(g), h.ranks.get_mut(g)) {
                *mine = std::mem::take(theirs);
            }
        }
        self.tally.merge(h.tally);
    }

    /// Which way each rank went at each `if` it ran ([`crate::divergence`]).
    pub fn branches(&self) -> &crate::divergence::Branches {
        &self.tally.branches
    }

    /// The branches to record an `if` in.
    pub fn branches_mut(&mut self) -> &mut crate::divergence::Branches {
        &mut self.tally.branches
    }
}
