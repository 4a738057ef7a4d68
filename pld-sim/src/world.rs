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
//!   (docs/DECISIONS.md D-sim-1).
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

/// The byte window memory is filled with before anything writes it.
pub const GARBAGE: u8 = 0xFF;

/// One named buffer of a domain.
#[derive(Clone, Debug)]
pub struct Alloc {
    /// The `name=` of the allocation.
    pub name: String,
    /// Domain index.
    pub domain: usize,
    /// Byte offset inside the window.
    pub offset: u64,
    /// Requested bytes.
    pub size: u64,
    /// Size rounded up to 32 bytes.
    pub rounded: u64,
    /// Whether the allocation starts zeroed.
    pub zeroed: bool,
    /// Whether a float-typed view of it was made (which keeps it garbage-filled).
    pub float_view: bool,
}

/// A comm domain: members, window size, per-member arenas and contexts.
#[derive(Clone, Debug)]
pub struct Domain {
    /// Global ranks of the members, in domain-rank order.
    pub members: Vec<usize>,
    /// Allocation indices carved in this domain.
    pub allocs: Vec<usize>,
    /// Window bytes per rank.
    pub win_size: u64,
    /// One window per member (shared by the handles of a parallel run, see [`World::fork`]).
    pub wins: Vec<Arc<Window>>,
    /// One CommContext per member.
    pub ctx: Vec<CommContext>,
    /// Domain rank of each global rank (`None`: not a member), from `members`: every access
    /// and notify asks, so it is a lookup rather than a scan over the members.
    drank_of: Vec<Option<usize>>,
}

impl Domain {
    /// Domain rank of global rank `g`.
    #[inline]
    pub fn drank(&self, g: usize) -> Option<usize> {
        self.drank_of.get(g).copied().flatten()
    }
}

/// One rank's window: its bytes and the checker state kept about them, each behind its own
/// lock so that ranks on different threads read the same window at once.
///
/// Lock order: `state` before `bytes`, whenever both are held. An access checks and records
/// itself under `state`, then moves bytes under `bytes` (shared for a read, exclusive for a
/// write or an atomic update); a notify or a wait holds both, so a cell's value and its
/// released clock change and are read together.
#[derive(Debug, Default)]
pub struct Window {
    /// Race records, written intervals and signal-cell metadata.
    pub state: Mutex<WinState>,
    /// The window's bytes.
    pub bytes: RwLock<Arena>,
}

/// The checker state of a window (see [`Window`]).
#[derive(Debug, Default)]
pub struct WinState {
    /// Race records.
    shadow: Shadow,
    /// Insertion counter of race records.
    seq: u64,
    /// Written byte intervals, sorted and disjoint.
    written: Vec<(u64, u64)>,
    /// Signal-cell metadata keyed by byte offset.
    pub cells: BTreeMap<u64, CellMeta>,
    /// Per buffer: the global ranks that wrote any byte of it in this window (bit `g`).
    wrote: BTreeMap<usize, u64>,
}

// A poisoned window lock still guards consistent data (every update is complete before
// anything can panic), so the helpers below take it anyway. A holder keeps a window lock for
// microseconds, so a contended one (parallel schedule only) is spun on for a while before the
// thread sleeps: a futex sleep and wake-up costs far more than that on a VM.

/// Takes a lock by `attempt`, spinning [`LOCK_SPINS`] times while it is busy before `block`.
fn spin_then<G>(attempt: impl Fn() -> TryLockResult<G>, block: impl FnOnce() -> LockResult<G>) -> G {
    for _ in 0..LOCK_SPINS {
        match attempt() {
            Ok(g) => return g,
            Err(TryLockError::Poisoned(e)) => return e.into_inner(),
            Err(TryLockError::WouldBlock) => std::hint::spin_loop(),
        }
    }
    block().unwrap_or_else(|e| e.into_inner())
}

/// Locks a window's checker state.
pub fn lock(w: &Mutex<WinState>) -> MutexGuard<'_, WinState> {
    spin_then(|| w.try_lock(), || w.lock())
}

/// Shares a window's bytes for reading.
pub fn read(w: &Window) -> RwLockReadGuard<'_, Arena> {
    spin_then(|| w.bytes.try_read(), || w.bytes.read())
}

/// Takes a window's bytes for writing.
pub fn write(w: &Window) -> RwLockWriteGuard<'_, Arena> {
    spin_then(|| w.bytes.try_write(), || w.bytes.write())
}

/// `n` window arenas of `size` bytes: [`GARBAGE`] except the `zeroed` byte ranges (sorted or
/// not, possibly overlapping). Every byte is written exactly once, here: that faults every page
/// in up front, by one write each (left to the run, the first touches fault inside the
/// protocol — a read fault on the zero page, then a copying one at the first store — and in the
/// parallel schedule two workers fault into one address space at once, which measured slower
/// and far more erratic). With `parallel` the arenas are made on rayon's pool (page faults are
/// most of the cost of a large window).
fn arenas(n: usize, size: usize, zeroed: &[(usize, usize)], parallel: bool) -> Vec<Arena> {
    let mut cuts: Vec<(usize, usize)> = zeroed.iter().map(|&(lo, hi)| (lo.min(size), hi.min(size))).collect();
    cuts.sort_unstable();
    let make = || {
        let mut bytes = Arena::zeroed(size);
        let mut done = 0;
        for &(lo, hi) in &cuts {
            if hi > done {
                bytes[done..lo.max(done)].fill(GARBAGE);
                bytes[lo.max(done)..hi].fill(0);
                done = hi;
            }
        }
        bytes[done..].fill(GARBAGE);
        bytes
    };
    if parallel {
        use rayon::prelude::*;
        (0..n).into_par_iter().map(|_| make()).collect()
    } else {
        (0..n).map(|_| make()).collect()
    }
}

/// Tries of a contended window lock (see [`spin_then`]) before the thread sleeps.
const LOCK_SPINS: u32 = 2000;

/// Interned (op, kernel) names of race records.
#[derive(Debug, Default)]
struct Sites {
    list: Vec<(String, String)>,
    ids: HashMap<(String, String), u32>,
}

/// One access: rank `g` touches the region `offs`/`shape` of `view` (of `peer`'s copy when
/// set) as op `op` of kernel `who` at `span` — what every window and host-tensor access of
/// [`World`] is given.
#[derive(Clone, Copy, Debug)]
pub struct Access<'a> {
    /// Global rank.
    pub g: usize,
    /// The local view.
    pub view: &'a TRef,
    /// Domain rank whose copy is accessed, or the local one.
    pub peer: Option<i64>,
    /// Region offsets.
    pub offs: &'a [i64],
    /// Region shape.
    pub shape: &'a [i64],
    /// Source span, for reports.
    pub span: Span,
    /// Op kind, for accounting and reports.
    pub op: &'a str,
    /// Kernel name, for reports.
    pub who: &'a str,
}

#[cfg(test)]
impl<'a> Access<'a> {
    /// A test access by rank `g` as op `op` of kernel `k` (no source span).
    pub(crate) fn of(
        g: usize,
        view: &'a TRef,
        peer: Option<i64>,
        offs: &'a [i64],
        shape: &'a [i64],
        op: &'a str,
    ) -> Access<'a> {
        Access { g, view, peer, offs, shape, span: Span::DUMMY, op, who: "k" }
    }
}

/// A window-bound view as rank `g` addresses it through `peer`: the region-independent checks
/// of an access, done once (see `World::access_at`).
#[derive(Clone, Debug)]
pub struct Located {
    g: usize,
    peer: Option<i64>,
    mem: Mem,
    view_owner: usize,
    dtype: DataType,
    domain: usize,
    alloc: usize,
    /// Domain rank whose window is accessed.
    owner: usize,
    /// Domain rank of `g`.
    me: usize,
    /// The interned (op, kernel) race site of the accessing instruction (whose op and kernel
    /// never change).
    site: u32,
}

impl Located {
    /// Whether this location was made for rank `g` accessing `view` through `peer`.
    fn serves(&self, g: usize, view: &TRef, peer: Option<i64>) -> bool {
        self.g == g
            && self.peer == peer
            && self.mem == view.mem
            && self.view_owner == view.owner
            && self.dtype == view.dtype
    }
}

/// The bytes `[lo, hi)` of domain rank `owner`'s window that one checked access touches.
#[derive(Clone, Copy, Debug)]
struct Touch {
    domain: usize,
    alloc: usize,
    owner: usize,
    lo: u64,
    hi: u64,
    /// Bytes moved (`hi - lo` unless the region is strided).
    bytes: u64,
    /// The interned (op, kernel) race site, when the caller knows it.
    site: Option<u32>,
    /// Whether the accessing rank is not the owner.
    remote: bool,
}

/// Access kinds for the race checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// Plain read.
    Read,
    /// Plain write.
    Write,
    /// Atomic accumulate.
    Atomic,
}

/// One race record; its start offset is the first half of its key in [`Shadow`].
#[derive(Clone, Debug)]
struct AccessRec {
    hi: u64,
    rank: u32,
    clock: u32,
    /// Interned (op, kernel) pair (index into `World::sites`).
    site: u32,
    span: Span,
    kind: AccessKind,
}

/// Race records of one window, indexed by granule so an access visits only records that can
/// overlap it.
///
/// Records are kept whole (never split) in a slab and listed in every [`GRAIN`]-byte granule
/// they touch; an access looks only at the granules it touches and visits each overlapping
/// record once (in the granule where the overlap starts). Each record carries its insertion
/// number `seq`, so "the oldest conflicting record" is the same one a linear scan of an
/// insertion-ordered list would report. Nothing is ever dropped except by subsumption. An
/// access costs O(granules touched + records listed there): a chunked protocol that touches
/// each chunk a few times keeps a handful of records per granule.
#[derive(Clone, Debug, Default)]
struct Shadow {
    /// Record slab: `(lo, seq, record)`; `None` = free slot.
    recs: Slab,
    free: Vec<u32>,
    /// Record ids listed per granule.
    grains: Vec<Grain>,
}

/// The record slots of a [`Shadow`], in chunks of `1 << SLAB_SHIFT`: growing it moves (copies)
/// no records beyond the first chunk's, where one growing vector would copy them all at every
/// doubling.
#[derive(Clone, Debug, Default)]
struct Slab {
    /// Every chunk but the last is full.
    chunks: Vec<Vec<Option<(u64, u64, AccessRec)>>>,
}

/// Record slots per [`Slab`] chunk (log2).
const SLAB_SHIFT: u32 = 12;

impl Slab {
    fn get(&self, id: u32) -> Option<&(u64, u64, AccessRec)> {
        let id = id as usize;
        self.chunks.get(id >> SLAB_SHIFT)?.get(id & ((1 << SLAB_SHIFT) - 1))?.as_ref()
    }

    fn slot(&mut self, id: u32) -> &mut Option<(u64, u64, AccessRec)> {
        let id = id as usize;
        &mut self.chunks[id >> SLAB_SHIFT][id & ((1 << SLAB_SHIFT) - 1)]
    }

    /// A new empty slot.
    fn push_free(&mut self) -> u32 {
        let full = self.chunks.last().is_none_or(|c| c.len() == 1 << SLAB_SHIFT);
        if full {
            // The first chunk grows as needed (a small run keeps few records); later ones are
            // allocated whole.
            let cap = if self.chunks.is_empty() { 0 } else { 1 << SLAB_SHIFT };
            self.chunks.push(Vec::with_capacity(cap));
        }
        let k = self.chunks.len() - 1;
        let chunk = &mut self.chunks[k];
        chunk.push(None);
        ((k << SLAB_SHIFT) + chunk.len() - 1) as u32
    }
}

/// The record ids of one granule: a few inline (no allocation for the common case of a chunk
/// touched by a handful of ranks), the rest in a vector. Order carries no meaning.
#[derive(Clone, Debug, Default)]
struct Grain {
    n: u32,
    inline: [u32; GRAIN_INLINE],
    more: Vec<u32>,
}

const GRAIN_INLINE: usize = 6;

impl Grain {
    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.inline[..self.n as usize].iter().chain(&self.more).copied()
    }

    fn push(&mut self, id: u32) {
        if (self.n as usize) < GRAIN_INLINE {
            self.inline[self.n as usize] = id;
            self.n += 1;
        } else {
            self.more.push(id);
        }
    }

    fn remove(&mut self, id: u32) {
        let n = self.n as usize;
        if let Some(k) = self.inline[..n].iter().position(|&x| x == id) {
            match self.more.pop() {
                Some(x) => self.inline[k] = x,
                None => {
                    self.inline[k] = self.inline[n - 1];
                    self.n -= 1;
                }
            }
        } else if let Some(k) = self.more.iter().position(|&x| x == id) {
            self.more.swap_remove(k);
        }
    }
}

/// Bytes per race-record granule (log2).
const GRAIN_SHIFT: u32 = 10;
/// Bytes per race-record granule.
pub const GRAIN: u64 = 1 << GRAIN_SHIFT;

impl Shadow {
    fn grain_range(lo: u64, hi: u64) -> std::ops::Range<usize> {
        (lo >> GRAIN_SHIFT) as usize..(((hi.max(lo + 1) - 1) >> GRAIN_SHIFT) + 1) as usize
    }

    /// Calls `f` with the key `(lo, seq)`, slab id and record of every record overlapping
    /// `[lo, hi)`, each once.
    fn for_overlapping<'a>(&'a self, lo: u64, hi: u64, mut f: impl FnMut((u64, u64), u32, &'a AccessRec)) {
        let range = Self::grain_range(lo, hi);
        let end = range.end.min(self.grains.len());
        for gi in range.start..end {
            for id in self.grains[gi].ids() {
                let Some((o_lo, seq, o)) = self.recs.get(id) else { continue };
                if o.hi > lo && *o_lo < hi && (lo.max(*o_lo) >> GRAIN_SHIFT) as usize == gi {
                    f((*o_lo, *seq), id, o);
                }
            }
        }
    }

    fn remove(&mut self, id: u32) {
        let Some((lo, _, rec)) = self.recs.slot(id).take() else { return };
        for gi in Self::grain_range(lo, rec.hi) {
            if let Some(list) = self.grains.get_mut(gi) {
                list.remove(id);
            }
        }
        self.free.push(id);
    }

    /// Adds a record; `win_size` (the window's bytes) sizes the granule table once, on its
    /// first growth, instead of regrowing (and copying) it as accesses reach further.
    fn insert(&mut self, lo: u64, seq: u64, rec: AccessRec, win_size: u64) {
        let range = Self::grain_range(lo, rec.hi);
        if self.grains.len() < range.end {
            let all = win_size.div_ceil(GRAIN) as usize;
            self.grains.reserve_exact(all.max(range.end) - self.grains.len());
            self.grains.resize_with(range.end, Grain::default);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => self.recs.push_free(),
        };
        for gi in range {
            self.grains[gi].push(id);
        }
        *self.recs.slot(id) = Some((lo, seq, rec));
    }

    /// Live records.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.recs.chunks.iter().flat_map(|c| c.iter()).flatten().count()
    }
}

impl WinState {
    /// Notes that global rank `g` wrote bytes of buffer `alloc` in this window.
    fn note_writer(&mut self, alloc: usize, g: usize) {
        *self.wrote.entry(alloc).or_default() |= 1u64.checked_shl(g as u32).unwrap_or(0);
    }

    /// The global ranks that wrote any byte of buffer `alloc` in this window, and the byte
    /// intervals written so far (window offsets).
    fn writers_of(&self, alloc: usize) -> (Vec<usize>, Vec<(u64, u64)>) {
        let mask = self.wrote.get(&alloc).copied().unwrap_or(0);
        ((0..64).filter(|g| mask >> g & 1 == 1).collect(), self.written.clone())
    }

    /// Records written bytes `[lo, hi)` (`write`), or tells whether the read bytes `[lo, hi)`
    /// are all defined: written in this run, or in a buffer that starts zeroed (runtime.md
    /// §8.12: the others start as garbage).
    fn note_defined(&mut self, lo: u64, hi: u64, write: bool, zeroed: bool) -> bool {
        let iv = &mut self.written;
        if write {
            let (mut a, mut b) = (lo, hi);
            iv.retain(|&(x, y)| {
                let touches = x <= b && a <= y;
                if touches {
                    a = a.min(x);
                    b = b.max(y);
                }
                !touches
            });
            let at = iv.partition_point(|&(x, _)| x < a);
            iv.insert(at, (a, b));
            return true;
        }
        zeroed || iv.iter().any(|&(x, y)| x <= lo && hi <= y)
    }

    /// Checks an access of `kind` by rank `g` (vector clock `vc`) to bytes `[lo, hi)` against
    /// the race records, then records it, dropping the records it subsumes (covered and
    /// ordered before it; `drop` is reused scratch space). `Err` carries the oldest conflicting
    /// record unordered with it (lowest insertion number, as a linear scan would find), as
    /// `(its first byte, record)`; nothing is recorded then.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        vc: &[u32],
        drop: &mut Vec<u32>,
        win_size: u64,
        g: usize,
        lo: u64,
        hi: u64,
        kind: AccessKind,
        site: u32,
        span: Span,
    ) -> Result<(), Box<(u64, AccessRec)>> {
        let clock = vc[g];
        let mut conflict: Option<((u64, u64), &AccessRec)> = None;
        drop.clear();
        self.shadow.for_overlapping(lo, hi, |key, id, o| {
            let (o_lo, o_rank) = (key.0, o.rank as usize);
            if o_rank != g {
                let clash = !matches!(
                    (o.kind, kind),
                    (AccessKind::Read, AccessKind::Read) | (AccessKind::Atomic, AccessKind::Atomic)
                );
                if clash && vc[o_rank] < o.clock && conflict.is_none_or(|(k, _)| key.1 < k.1) {
                    conflict = Some((key, o));
                }
            }
            // Records the new access subsumes (covered and ordered before it).
            let covered = o_lo >= lo && o.hi <= hi;
            let ordered = o_rank == g || vc[o_rank] >= o.clock;
            let subsumes = kind == AccessKind::Write || kind == o.kind;
            if covered && ordered && subsumes {
                drop.push(id);
            }
        });
        if let Some(((o_lo, _), o)) = conflict {
            return Err(Box::new((o_lo, o.clone())));
        }
        for &id in drop.iter() {
            self.shadow.remove(id);
        }
        let seq = self.seq;
        self.seq += 1;
        self.shadow.insert(lo, seq, AccessRec { hi, rank: g as u32, clock, site, span, kind }, win_size);
        Ok(())
    }
}

/// Per-signal-cell bookkeeping (one entry per notified cell; a full-barrier protocol has
/// O(P²) cells per window, so the entry is kept small).
#[derive(Clone, Debug, Default)]
pub struct CellMeta {
    /// The first notify since the cell was last zero. Mixing Set and AtomicAdd on a cell is a
    /// fault, so all notifies since the last zero are of this one's kind.
    pub first: Option<FirstNotify>,
    /// Every global rank that ever wrote the cell: bit `g` (a run has at most 64 ranks).
    pub writers: u64,
    /// The vector clock released into the cell (see [`release_clock`]).
    pub vc: CellClock,
    /// Which notifies deposited the credits it holds (see [`crate::credit`]).
    pub ledger: Option<Box<crate::credit::Ledger>>,
}

/// Who first notified a cell since it was last zero, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FirstNotify {
    /// Set (`true`) or AtomicAdd.
    pub set: bool,
    /// Global rank.
    pub rank: u16,
    /// Where.
    pub span: Span,
}

/// A resolved window address.
#[derive(Clone, Copy, Debug)]
pub struct Resolved {
    /// Domain.
    pub domain: usize,
    /// Domain rank whose window is addressed.
    pub owner: usize,
    /// Byte offset inside that window.
    pub offset: u64,
}

/// Accounting of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// `(rank, op kind) -> bytes` that crossed to or from another rank's window.
    pub remote_bytes: BTreeMap<(usize, String), u64>,
    /// `(rank, op kind) -> bytes` moved to or from the rank's own window or local memory.
    pub local_bytes: BTreeMap<(usize, String), u64>,
    /// `(rank, op kind) -> bytes` read plus bytes written by the accesses' tile operations on
    /// both of their sides: the memory side (the bytes of `remote_bytes` + `local_bytes`; an
    /// atomic add also reads what it adds into) and the tile side (a load writes its tile, a
    /// store reads it, a load-combine reads and writes its accumulator). A plain copy of `n`
    /// bytes counts `2n`, as a memcpy's read+write rate does.
    pub rw_bytes: BTreeMap<(usize, String), u64>,
    /// Notifies issued per rank.
    pub notifies: Vec<u64>,
    /// Waits completed per rank.
    pub waits: Vec<u64>,
    /// Barrier rounds per rank (a wait phase completed after a notify phase).
    pub barrier_rounds: Vec<u64>,
    /// Scheduler steps taken.
    pub steps: u64,
}

impl Stats {
    /// Remote bytes of `rank` summed over op kinds.
    pub fn remote_total(&self, rank: usize) -> u64 {
        self.remote_bytes.iter().filter(|((r, _), _)| *r == rank).map(|(_, b)| b).sum()
    }
    /// Remote bytes of `rank` for op kinds containing `kind`.
    pub fn remote_of(&self, rank: usize, kind: &str) -> u64 {
        self.remote_bytes.iter().filter(|((r, k), _)| *r == rank && k.contains(kind)).map(|(_, b)| b).sum()
    }
}

/// The whole simulated memory and checker state.
pub struct World {
    /// Number of global ranks.
    pub nranks: usize,
    /// The parallel schedule's wake-up epoch, bumped by every notify so a parked worker
    /// re-checks its ranks at once (`None` in the single-threaded schedules).
    pub wake: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// Host/GM buffers (shared by the handles of a parallel run).
    pub host: Vec<Arc<Mutex<Vec<u8>>>>,
    /// Comm domains.
    pub domains: Vec<Domain>,
    /// Named buffers.
    pub allocs: Vec<Alloc>,
    /// Reused list of subsumed record ids.
    drop_ids: Vec<u32>,
    /// Interned (op, kernel) names of race records (shared by the handles of a run).
    sites: Arc<Mutex<Sites>>,
    /// The sites this handle interned, with their ids (a run has a handful).
    site_cache: Vec<(String, String, u32)>,
    /// Vector clock of each global rank.
    pub vc: Vec<Vec<u32>>,
    /// Per rank: its pending clock advance after a release (applied before the rank's next
    /// recorded access or clock change).
    pub released: Vec<Release>,
    /// Accounting.
    pub stats: Stats,
    /// Whether races are checked.
    pub check_races: bool,
    /// Whether a read of window bytes nothing wrote is only a warning (`--allow-uninit-reads`)
    /// instead of a fault.
    pub allow_uninit_reads: bool,
    /// Per global rank: its call index on each self-clearing signal buffer (see
    /// [`crate::credit`]).
    pub calls: Vec<BTreeMap<usize, crate::credit::CallPhase>>,
    /// Per global rank: its barrier generations within its current calls.
    pub gens: Vec<crate::credit::Generations>,
    /// The first wait satisfied by an earlier barrier generation's credit on a buffer not (yet)
    /// known to be self-clearing: (buffer, fault), judged when the run ends.
    pub stale_generation: Option<Box<(usize, Fault)>>,
    /// Per signal buffer some rank self-cleared: the first epilogue notify's location.
    pub epilogue_sites: BTreeMap<usize, Span>,
    /// The first read of undefined window bytes (a fault when the run ends without another).
    pub uninit: Option<Box<Fault>>,
    /// Per rank: a notify was issued since the last completed wait (barrier-round counting).
    pub notified: Vec<bool>,
    /// Open comm-domain scopes of the host pass: (domain, window buffer names), innermost last.
    pub scope_stack: Vec<(usize, Vec<String>)>,
    /// Whether a notify must be preceded by a GM fence covering earlier window writes.
    pub check_fences: bool,
    /// Per rank: window writes not yet covered by a `system.fence` (op, buffer, span).
    pub unfenced: Vec<Vec<(String, String, Span)>>,
    /// (rank, mixed-kernel group, notify span) -> the lane that executed that notify.
    pub lane_notifies: HashMap<(usize, String, Span), String>,
    /// Persistent re-run: allocations are matched in order against the existing ones.
    pub reuse: Option<usize>,
    /// Warnings of the run (counter overflow; undefined-byte reads when allowed), each once.
    pub warnings: Vec<String>,
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
    pub mem: crate::limits::MemUse,
    /// What the current step did, for the cost model (see [`crate::timeline`]).
    pub meter: crate::timeline::Meter,
}

const ADDR_BASE: u64 = 0x4000_0000_0000;

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
            check_races: true,
            allow_uninit_reads: false,
            uninit: None,
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
            meter: crate::timeline::Meter::default(),
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
            float_view: false,
        });
        id
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
                && dom.wins.first().is_some_and(|w| read(w).len() as u64 == dom.win_size)
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
            let arenas = arenas(n, dom.win_size as usize, &zeroed, parallel);
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
        for dom in &self.domains {
            for w in &dom.wins {
                let mut st = lock(&w.state);
                st.shadow = Shadow::default();
                if reset {
                    // Zeroed by contract (`reset_persistent_windows`): every byte is defined.
                    let len = read(w).len() as u64;
                    st.written = vec![(0, len)];
                    st.wrote.clear();
                    write(w).fill(0);
                    st.cells.clear();
                }
            }
        }
        self.lane_notifies.clear();
        self.uninit = None;
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
        self.host.push(Arc::new(Mutex::new(bytes)));
        self.host.len() - 1
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

    /// Resolves the byte at `view.base + byte_off` of a local window view as seen through
    /// `peer` by global rank `g`, via the CommContext address arithmetic.
    pub fn resolve(
        &self,
        g: usize,
        view: &TRef,
        peer: Option<i64>,
        byte_off: i64,
        span: Span,
        op: &str,
    ) -> Result<Resolved, Fault> {
        let Mem::Window { domain, alloc } = view.mem else {
            return Err(Fault::runtime(
                span,
                format!("{op} needs a window-bound tensor, got a plain tensor"),
            ));
        };
        let dom = &self.domains[domain];
        let Some(me) = dom.drank(g) else {
            return Err(Fault::new(
                ReportKind::OutOfBounds,
                span,
                format!(
                    "{op} on rank {g}: rank is not a member of the comm domain of buffer '{}'",
                    self.alloc_name(alloc)
                ),
            ));
        };
        let ctx = &dom.ctx[me];
        if view.owner != me {
            return Err(Fault::new(
                ReportKind::OutOfBounds,
                span,
                format!(
                    "{op} on rank {g}: view of buffer '{}' does not point into this rank's window",
                    self.alloc_name(alloc)
                ),
            ));
        }
        let local = ctx.windows_in[me].wrapping_add((view.base as i64 + byte_off) as u64);
        let addr = match peer {
            None => local,
            Some(p) => {
                if p < 0 || p >= i64::from(ctx.rank_num) {
                    return Err(Fault::new(
                        ReportKind::PeerOutOfRange,
                        span,
                        format!(
                            "{op} on rank {g}: peer index {p} is outside [0, {}) of the comm domain of buffer '{}'",
                            ctx.rank_num,
                            self.alloc_name(alloc)
                        ),
                    ));
                }
                ctx.peer_address(local, p as u32).unwrap_or(u64::MAX)
            }
        };
        // The window the access is aimed at first (the usual hit), then every window.
        let aimed = peer.map_or(me, |p| p as usize);
        let wins = &ctx.windows_in[..ctx.rank_num as usize];
        let hit = |i: usize, w: u64| (addr >= w && addr < w + ctx.win_size).then_some(i);
        let found = wins
            .get(aimed)
            .and_then(|&w| hit(aimed, w))
            .or_else(|| wins.iter().enumerate().find_map(|(i, &w)| hit(i, w)));
        if let Some(i) = found {
            return Ok(Resolved { domain, owner: i, offset: addr - wins[i] });
        }
        Err(Fault::new(
            ReportKind::OutOfBounds,
            span,
            format!("{op} on rank {g}: address {addr:#x} is outside every window of the comm domain (buffer '{}')", self.alloc_name(alloc)),
        ))
    }

    /// Element offsets (relative to the view base, in elements) of the rows of a region, and
    /// the row length: the region `offs`/`shape` of `view`, innermost dim contiguous or strided.
    fn region_rows(view: &TRef, offs: &[i64], shape: &[i64], starts: &mut Vec<i64>) -> (i64, i64) {
        let n = shape.len();
        let (cols, col_stride) =
            if n == 0 { (1, 1) } else { (shape[n - 1], view.strides.get(n - 1).copied().unwrap_or(1)) };
        let lead = &shape[..n.saturating_sub(1)];
        let total: i64 = lead.iter().product();
        let mut idx_buf = [0i64; 8];
        let mut idx_heap = Vec::new();
        let idx: &mut [i64] = if lead.len() <= idx_buf.len() {
            &mut idx_buf[..lead.len()]
        } else {
            idx_heap.resize(lead.len(), 0);
            &mut idx_heap
        };
        starts.clear();
        starts.reserve(total.max(0) as usize);
        for _ in 0..total.max(0) {
            let mut e = 0i64;
            for (d, st) in view.strides.iter().enumerate().take(n) {
                let i = idx.get(d).copied().unwrap_or(0);
                e += (offs.get(d).copied().unwrap_or(0) + i) * st;
            }
            starts.push(e);
            for d in (0..lead.len()).rev() {
                idx[d] += 1;
                if idx[d] < lead[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        (cols, col_stride)
    }

    /// The region as one contiguous run of elements, when it is one: `(first element relative
    /// to the view base, element count)`. It is when, from the innermost dimension out, every
    /// dimension the region spans more than once continues the packed layout of the ones inside
    /// it, and only the outermost such dimension is partial.
    fn single_run(view: &TRef, offs: &[i64], shape: &[i64]) -> Option<(i64, i64)> {
        let (mut start, mut numel, mut partial) = (0i64, 1i64, false);
        for d in (0..shape.len()).rev() {
            let stride = view.strides.get(d).copied().unwrap_or(1);
            start += offs.get(d).copied().unwrap_or(0) * stride;
            let n = shape[d];
            if n == 1 {
                continue;
            }
            if partial || stride != numel {
                return None;
            }
            numel *= n;
            partial = n != view.shape.get(d).copied().unwrap_or(1);
        }
        Some((start, numel))
    }

    /// Checks a region lies inside its tensor (static shape) — the view's own extent.
    fn check_in_view(
        view: &TRef,
        offs: &[i64],
        shape: &[i64],
        span: Span,
        op: &str,
        g: usize,
    ) -> Result<(), Fault> {
        for (d, (&o, &s)) in offs.iter().zip(shape).enumerate() {
            let dim = view.shape.get(d).copied().unwrap_or(1);
            if o < 0 || s < 0 || o + s > dim {
                return Err(Fault::new(
                    ReportKind::OutOfBounds,
                    span,
                    format!(
                        "{op} on rank {g}: region dimension {d} [{o}, {}) exceeds the tensor extent {dim}",
                        o + s
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Reads the region of `a` as `f64` lanes, row-major over its shape.
    pub fn read(&mut self, a: &Access<'_>) -> Result<Vec<f64>, Fault> {
        let mut out = Vec::new();
        self.access(a, Data::ReadF64(&mut out))?;
        Ok(out)
    }

    /// Reads the region of `a` as its raw little-endian `view.dtype` bytes (row-major) into
    /// `out` (cleared first): the same checks and accounting as [`World::read`].
    pub fn read_bytes_into(&mut self, a: &Access<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
        out.clear();
        self.access(a, Data::ReadBytes(out))
    }

    /// Writes `data` (row-major over the region's shape) into the region of `a`; `atomic`
    /// accumulates instead.
    pub fn write(&mut self, a: &Access<'_>, data: &[f64], atomic: bool) -> Result<(), Fault> {
        if atomic {
            return self.access(a, Data::AtomicF64(data));
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        encode_values(a.view.dtype, data, &mut scratch);
        let r = self.access(a, Data::WriteBytes(&scratch));
        self.scratch = scratch;
        r
    }

    /// Writes raw elements of `src_dt` (row-major) into the region of `a`; `atomic` accumulates
    /// instead. A plain write of another dtype than the view's converts per element exactly as
    /// [`World::write`] of the decoded values would.
    pub fn write_bytes(
        &mut self,
        a: &Access<'_>,
        src: &[u8],
        src_dt: DataType,
        atomic: bool,
    ) -> Result<(), Fault> {
        if atomic {
            return self.access(a, Data::AtomicBytes(src, src_dt));
        }
        if src_dt == a.view.dtype {
            return self.access(a, Data::WriteBytes(src));
        }
        let eb = src_dt.bytes().max(1) as usize;
        let vals: Vec<f64> = src.chunks_exact(eb).map(|b| elem::decode(src_dt, b)).collect();
        self.write(a, &vals, false)
    }

    fn access(&mut self, a: &Access<'_>, mut data: Data<'_>) -> Result<(), Fault> {
        let Access { g, view, offs, shape, span, op, .. } = *a;
        let dt = view.dtype;
        if !elem::supported(dt) {
            return Err(Fault::runtime(span, format!("{op}: dtype {dt} is not supported by the simulator")));
        }
        if let Data::AtomicBytes(_, sdt) | Data::ReadReduce { acc_dt: sdt, .. } = data {
            if !elem::supported(sdt) {
                return Err(Fault::runtime(
                    span,
                    format!("{op}: dtype {sdt} is not supported by the simulator"),
                ));
            }
        }
        if shape.iter().any(|&s| s <= 0) {
            return Ok(());
        }
        // Remote views share the local view's shape; a region past it is a bounds error too.
        Self::check_in_view(view, offs, shape, span, op, g)?;
        if let Some((start, numel)) = Self::single_run(view, offs, shape) {
            // One contiguous run (every tile row, every packed chunk): no row list to build.
            return self.access_rows(a, &mut data, &[start], numel, 1);
        }
        let mut starts = std::mem::take(&mut self.starts);
        let (cols, cstride) = Self::region_rows(view, offs, shape, &mut starts);
        let r = self.access_rows(a, &mut data, &starts, cols, cstride);
        self.starts = starts;
        r
    }

    fn access_rows(
        &mut self,
        a: &Access<'_>,
        data: &mut Data<'_>,
        starts: &[i64],
        cols: i64,
        cstride: i64,
    ) -> Result<(), Fault> {
        let Access { g, view, peer, span, op, who, .. } = *a;
        let kind = data.kind();
        let eb = view.dtype.bytes() as i64;
        let dt = view.dtype;
        let numel = starts.len() as i64 * cols;
        if let Some(n) = data.elems(eb as usize) {
            if n as i64 != numel {
                return Err(Fault::runtime(
                    span,
                    format!("{op}: {n} values for a region of {numel} elements"),
                ));
            }
        }
        let (mut lo_e, mut hi_e) = (i64::MAX, i64::MIN);
        for &s in starts {
            let e = s + (cols - 1) * cstride;
            lo_e = lo_e.min(s.min(e));
            hi_e = hi_e.max(s.max(e));
        }
        let bytes = (numel * eb) as u64;
        data.reserve(numel as usize, eb as usize);
        match view.mem {
            Mem::Host(buf) => {
                let b = view.base as i64;
                let Some(hb) = self.host.get(buf).map(Arc::clone) else {
                    return Err(Fault::new(
                        ReportKind::OutOfBounds,
                        span,
                        format!("{op} on rank {g}: access outside a host tensor of 0 bytes"),
                    ));
                };
                let mut mem = hb.lock().unwrap_or_else(|e| e.into_inner());
                let len = mem.len() as i64;
                if b + lo_e * eb < 0 || b + (hi_e + 1) * eb > len {
                    return Err(Fault::new(
                        ReportKind::OutOfBounds,
                        span,
                        format!("{op} on rank {g}: access outside a host tensor of {len} bytes"),
                    ));
                }
                let rows = Rows { base: b, starts, cols, cstride, eb };
                rows.apply(dt, &mut mem, data);
                drop(mem);
                let site = self.intern(op, who);
                self.count(g, site, false, bytes, data.read_written(bytes, eb as u64));
            }
            Mem::Window { domain, alloc } => {
                let first = self.resolve(g, view, peer, lo_e * eb, span, op)?;
                // The last byte lies `extent` past the first: in the same window when the window
                // reaches that far (windows never overlap), else resolved on its own.
                let extent = ((hi_e + 1 - lo_e) * eb - 1) as u64;
                let last = if first.offset + extent < self.domains[domain].win_size {
                    Resolved { offset: first.offset + extent, ..first }
                } else {
                    self.resolve(g, view, peer, (hi_e + 1) * eb - 1, span, op)?
                };
                let al = &self.allocs[alloc];
                let writes = kind != AccessKind::Read;
                let limit = if writes { al.offset + al.size } else { al.offset + al.rounded };
                if first.owner != last.owner || first.offset < al.offset || last.offset >= limit {
                    return Err(Fault::new(
                        ReportKind::OutOfBounds,
                        span,
                        format!(
                            "{op} on rank {g}: bytes [{}, {}] of the window of domain rank {} are outside buffer '{}' [{}, {})",
                            first.offset, last.offset, last.owner, al.name, al.offset, limit
                        ),
                    ));
                }
                // Base byte of element 0 in the owner's window.
                let base0 = first.offset as i64 - lo_e * eb;
                let remote = self.domains[domain].drank(g) != Some(first.owner);
                let (lo, hi) = (first.offset, last.offset + 1);
                let at = Touch { domain, alloc, owner: first.owner, lo, hi, bytes, site: None, remote };
                let rows = Rows { base: base0, starts, cols, cstride, eb };
                self.touch(a, at, &rows, data)?;
            }
        }
        Ok(())
    }

    /// The part of a window access after its address checks: records defined bytes, checks
    /// and records the race candidate (unless a plain write leaves every byte as it was),
    /// moves the bytes, notes unfenced writes and counts the traffic.
    fn touch(
        &mut self,
        a: &Access<'_>,
        at: Touch,
        rows: &Rows<'_>,
        data: &mut Data<'_>,
    ) -> Result<(), Fault> {
        let Access { g, view, span, op, who, .. } = *a;
        let (dt, kind) = (view.dtype, data.kind());
        let Touch { domain, alloc, owner, lo, hi, bytes, site, remote } = at;
        let writes = kind != AccessKind::Read;
        let site = site.unwrap_or_else(|| self.intern(op, who));
        let win_size = self.domains[domain].win_size;
        // Borrowed, not cloned: the window's reference count is shared by the workers of a
        // parallel run, and bumping it on every access made its cache line bounce.
        let win: &Window = &self.domains[domain].wins[owner];
        let mut guard = lock(&win.state);
        let st = &mut *guard;
        let defined = st.note_defined(lo, hi, writes, self.allocs[alloc].zeroed);
        if writes {
            st.note_writer(alloc, g);
        } else if !defined && !self.allow_uninit_reads && self.uninit.is_none() {
            // Reported when the run ends, unless a fault comes first: a read that a peer's
            // unordered write follows is a race whichever of the two ran first.
            let writers = st.writers_of(alloc);
            self.uninit = Some(Box::new(crate::uninit::fault(self, a, owner, alloc, lo, hi, &writers)));
        }
        // A plain write that leaves every byte as it was (a self-copy, an idempotent re-store)
        // cannot be observed by anyone, so it is not a race candidate.
        let silent = match data {
            Data::WriteBytes(src) => rows.equal(&read(win), src),
            _ => false,
        };
        if self.check_races && !silent {
            // A release since this rank's last access advances its clock now.
            self.released[g].settle(&mut self.vc[g], g);
            let vc = &self.vc[g];
            if let Err(other) = st.record(vc, &mut self.drop_ids, win_size, g, lo, hi, kind, site, span) {
                drop(guard);
                return Err(self.race_fault(domain, owner, g, lo, hi, kind, span, op, who, &other));
            }
        }
        // Checked and recorded: the bytes move without holding the checker state, so other
        // ranks' accesses to this window are checked meanwhile, and reads share the bytes.
        drop(guard);
        if writes {
            rows.apply(dt, &mut write(win), data);
        } else {
            rows.apply_read(dt, &read(win), data);
        }
        if !defined && self.allow_uninit_reads {
            self.warn_undefined(owner, alloc, g, lo, hi, op);
        }
        if writes && self.check_fences {
            let list = &mut self.unfenced[g];
            if list.len() < 64 {
                list.push((op.to_string(), self.allocs[alloc].name.clone(), span));
            }
        }
        let (win, write) = ((domain, owner), writes);
        self.meter.touched(crate::timeline::TouchRec { win, lo, hi, write, remote });
        self.count(g, site, remote, bytes, data.read_written(bytes, dt.bytes()));
        Ok(())
    }

    /// The checks of an access by rank `g` to `view` through `peer` that do not depend on
    /// the region, done once: `None` when any fails (the full path then reports it).
    fn locate(&mut self, a: &Access<'_>) -> Option<Located> {
        let Access { g, view, peer, op, who, .. } = *a;
        let Mem::Window { domain, alloc } = view.mem else { return None };
        let dom = &self.domains[domain];
        let me = dom.drank(g)?;
        let n = dom.ctx.get(me)?.rank_num as usize;
        let owner = match peer {
            None => me,
            Some(p) => usize::try_from(p).ok().filter(|&p| p < n)?,
        };
        if view.owner != me || !elem::supported(view.dtype) {
            return None;
        }
        let site = self.intern(op, who);
        Some(Located {
            g,
            peer,
            mem: view.mem.clone(),
            view_owner: view.owner,
            dtype: view.dtype,
            domain,
            alloc,
            owner,
            me,
            site,
        })
    }

    /// [`World::access`] through a location cache (`at`, kept by the caller for repeated
    /// accesses to the same view): a region that is one contiguous run inside its buffer goes
    /// straight to [`World::touch`]; anything else — first use, another rank or view than
    /// the cached one, a strided region, a bounds error — takes the full path, so faults and
    /// their messages are those of [`World::access`].
    pub(crate) fn access_at(
        &mut self,
        at: &OnceLock<Located>,
        a: &Access<'_>,
        mut data: Data<'_>,
    ) -> Result<(), Fault> {
        let fresh;
        let loc = match at.get() {
            Some(l) if l.serves(a.g, a.view, a.peer) => Some(l),
            Some(_) => {
                fresh = self.locate(a);
                fresh.as_ref()
            }
            None => {
                if let Some(l) = self.locate(a) {
                    let _ = at.set(l);
                }
                at.get()
            }
        };
        let plan = loc.and_then(|loc| self.plan_run(loc, a, &data));
        let Some((touch, start, numel)) = plan else {
            return self.access(a, data);
        };
        let eb = a.view.dtype.bytes() as i64;
        let rows = Rows { base: a.view.base as i64, starts: &[start], cols: numel, cstride: 1, eb };
        self.touch(a, touch, &rows, &mut data)
    }

    /// The bytes a located access touches, when its region is one contiguous run that passes
    /// every check of [`World::access`]: `(touch, first element, element count)`.
    fn plan_run(&self, loc: &Located, a: &Access<'_>, data: &Data<'_>) -> Option<(Touch, i64, i64)> {
        let Access { view, offs, shape, .. } = *a;
        let kind = data.kind();
        if let Data::AtomicBytes(_, sdt) | Data::ReadReduce { acc_dt: sdt, .. } = data {
            if !elem::supported(*sdt) {
                return None;
            }
        }
        if shape.len() != offs.len() || shape.iter().any(|&s| s <= 0) {
            return None;
        }
        let in_view = offs.iter().zip(shape).zip(&view.shape).all(|((&o, &s), &d)| o >= 0 && o + s <= d);
        if !in_view || offs.len() > view.shape.len() {
            return None;
        }
        let (start, numel) = Self::single_run(view, offs, shape)?;
        let eb = view.dtype.bytes() as i64;
        if data.elems(eb as usize).is_some_and(|n| n as i64 != numel) {
            return None;
        }
        let lo = view.base as i64 + start * eb;
        let hi = lo + numel * eb;
        let al = &self.allocs[loc.alloc];
        let limit = if kind == AccessKind::Read { al.offset + al.rounded } else { al.offset + al.size };
        if lo < al.offset as i64 || hi > limit as i64 {
            return None;
        }
        let at = Touch {
            domain: loc.domain,
            alloc: loc.alloc,
            owner: loc.owner,
            lo: lo as u64,
            hi: hi as u64,
            bytes: (hi - lo) as u64,
            site: Some(loc.site),
            remote: loc.owner != loc.me,
        };
        Some((at, start, numel))
    }

    /// Adds `bytes` to the traffic of rank `g` (`usize::MAX`: the host orchestrator) under
    /// the op of race site `site`: one counter per site and rank, no name comparison.
    /// `rw` is the access's read+written bytes on both sides (see [`Stats::rw_bytes`]).
    fn count(&mut self, g: usize, site: u32, remote: bool, bytes: u64, rw: u64) {
        let at = site as usize * (self.nranks + 1) + g.min(self.nranks);
        if self.traffic.len() <= at {
            self.traffic.resize(at + 1, [0; 3]);
        }
        self.meter.count(remote, bytes);
        let c = &mut self.traffic[at];
        c[usize::from(remote)] += bytes;
        c[2] += rw;
    }

    /// Merges the pending traffic counters into `stats.local_bytes` / `remote_bytes` / `rw_bytes`
    /// by op name (the run calls it before handing out its stats).
    pub fn flush_traffic(&mut self) {
        let columns = self.nranks + 1;
        for (at, counts) in std::mem::take(&mut self.traffic).into_iter().enumerate() {
            if counts == [0; 3] {
                continue;
            }
            let (site, col) = (at / columns, at % columns);
            let g = if col == self.nranks { usize::MAX } else { col };
            let (op, _) = self.site(site as u32);
            let stats = &mut self.stats;
            let maps = [&mut stats.local_bytes, &mut stats.remote_bytes, &mut stats.rw_bytes];
            for (map, bytes) in maps.into_iter().zip(counts).filter(|&(_, b)| b > 0) {
                bump(map, g, &op, bytes);
            }
        }
    }

    /// Warns (once per rank and buffer) that rank `g` read bytes `[lo, hi)` of buffer `alloc`
    /// in the window of domain rank `owner` that nothing wrote in this run.
    fn warn_undefined(&mut self, owner: usize, alloc: usize, g: usize, lo: u64, hi: u64, op: &str) {
        if self.warned.insert((g, alloc, "undefined")) {
            let al = &self.allocs[alloc];
            self.warnings.push(format!(
                "rank {g} read bytes [{}, {}) of buffer '{}' (window of domain rank {owner}) with {op}, but nothing wrote all of them in this run: they hold undefined (garbage) bytes",
                lo.saturating_sub(al.offset),
                hi.saturating_sub(al.offset),
                al.name
            ));
        }
    }

    /// The index of the (op, kernel) pair; a run uses only a handful of them.
    fn intern(&mut self, op: &str, who: &str) -> u32 {
        // This handle's own copy first: a run has a handful of sites, and the shared table's
        // lock would be taken by every access of every worker of a parallel run.
        if let Some(&(_, _, i)) = self.site_cache.iter().find(|(o, w, _)| o == op && w == who) {
            return i;
        }
        let mut s = self.sites.lock().unwrap_or_else(|e| e.into_inner());
        let key = (op.to_string(), who.to_string());
        let i = match s.ids.get(&key) {
            Some(&i) => i,
            None => {
                let i = s.list.len() as u32;
                s.list.push(key.clone());
                s.ids.insert(key.clone(), i);
                i
            }
        };
        drop(s);
        self.site_cache.push((key.0, key.1, i));
        i
    }

    /// The (op, kernel) names of a race site.
    fn site(&self, i: u32) -> (String, String) {
        let s = self.sites.lock().unwrap_or_else(|e| e.into_inner());
        s.list.get(i as usize).cloned().unwrap_or_default()
    }

    /// The race report of an access by rank `g` to bytes `[lo, hi)` of the window of domain
    /// rank `owner` that `other` (the oldest unordered conflicting record) clashes with.
    #[allow(clippy::too_many_arguments)]
    fn race_fault(
        &self,
        domain: usize,
        owner: usize,
        g: usize,
        lo: u64,
        hi: u64,
        kind: AccessKind,
        span: Span,
        op: &str,
        who: &str,
        other: &(u64, AccessRec),
    ) -> Fault {
        let (o_lo, o) = other;
        let site = self.site(o.site);
        let dname = |k: AccessKind| match k {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic add",
        };
        let at = lo.max(*o_lo);
        let buf = self.alloc_at(domain, at).map_or("?", |al| al.name.as_str());
        Fault::new(
            ReportKind::Race,
            span,
            format!(
                "{} by rank {g} ({op} in {who}) and {} by rank {} ({} in {}) touch bytes [{at}, {}) of buffer '{buf}' in the window of domain rank {owner} with no notify→wait ordering between them",
                dname(kind),
                dname(o.kind),
                o.rank,
                site.0,
                site.1,
                hi.min(o.hi)
            ),
        )
        .note_at("the other access is at", o.span)
        .note("publish data before the notify that releases it, and wait before touching what a peer may still read or write")
    }

    /// Reads a signal cell (flat element index `idx` of the local view, through `peer`).
    pub fn cell_addr(
        &self,
        g: usize,
        sig: &TRef,
        peer: Option<i64>,
        idx: &[i64],
        span: Span,
        op: &str,
    ) -> Result<Resolved, Fault> {
        if sig.dtype.bytes() != 4 {
            return Err(Fault::runtime(
                span,
                format!("{op}: signal must have a 32-bit element type, got {}", sig.dtype),
            ));
        }
        let mut e = 0i64;
        for (d, &i) in idx.iter().enumerate() {
            let dim = sig.shape.get(d).copied().unwrap_or(1);
            if i < 0 || i >= dim {
                return Err(Fault::new(
                    ReportKind::OutOfBounds,
                    span,
                    format!("{op} on rank {g}: signal offset {i} in dimension {d} is outside [0, {dim})"),
                ));
            }
            e += i * sig.strides.get(d).copied().unwrap_or(1);
        }
        let r = self.resolve(g, sig, peer, e * 4, span, op)?;
        let Mem::Window { alloc, .. } = sig.mem else {
            return Err(Fault::runtime(span, format!("{op}: signal must be window-bound")));
        };
        let al = &self.allocs[alloc];
        if r.offset < al.offset || r.offset + 4 > al.offset + al.size {
            return Err(Fault::new(
                ReportKind::OutOfBounds,
                span,
                format!(
                    "{op} on rank {g}: signal cell at byte {} is outside buffer '{}' [{}, {})",
                    r.offset,
                    al.name,
                    al.offset,
                    al.offset + al.size
                ),
            ));
        }
        Ok(r)
    }

    /// The current value of a resolved cell.
    pub fn cell_value(&self, r: Resolved) -> i32 {
        cell_of(&read(&self.domains[r.domain].wins[r.owner]), r.offset)
    }

    /// Stores a cell value.
    pub fn set_cell(&mut self, r: Resolved, v: i32) {
        let o = r.offset as usize;
        write(&self.domains[r.domain].wins[r.owner])[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Every rank that ever wrote the cell.
    pub fn cell_writers(&self, r: Resolved) -> Vec<usize> {
        let st = lock(&self.domains[r.domain].wins[r.owner].state);
        let mask = st.cells.get(&r.offset).map_or(0, |m| m.writers);
        (0..64).filter(|g| mask >> g & 1 == 1).collect()
    }

    /// Buffer name and element index of a cell, for reports.
    pub fn cell_name(&self, r: Resolved) -> String {
        let rank = self.domains[r.domain].members[r.owner];
        match self.alloc_at(r.domain, r.offset) {
            Some(al) => format!("{}[{}] on rank {rank}", al.name, (r.offset - al.offset) / 4),
            None => format!("byte {} on rank {rank}", r.offset),
        }
    }

    /// Releases rank `g`'s clock into a cell it notifies (its clock advances before its next
    /// recorded access or clock change, see [`crate::clock`]).
    pub fn release_into(&mut self, g: usize, key: (usize, usize, u64)) {
        let mut st = lock(&self.domains[key.0].wins[key.1].state);
        let meta = st.cells.entry(key.2).or_default();
        release_clock(&self.vc[g], &mut self.released[g], &mut meta.vc);
    }

    /// Acquires the clock of a cell into rank `g` (a satisfied wait).
    pub fn acquire_from(&mut self, g: usize, key: (usize, usize, u64)) {
        let st = lock(&self.domains[key.0].wins[key.1].state);
        if let Some(meta) = st.cells.get(&key.2) {
            acquire_clock(&mut self.vc[g], &mut self.released[g], g, meta.vc.as_slice());
        }
    }

    /// A handle on the same run for another thread: windows, host buffers and race sites are
    /// shared (each behind its own lock); clocks are copied; counters, warnings and scratch
    /// space start empty. A handle runs the work of a fixed set of ranks (each rank's clock
    /// and counters are touched only by its own work) and is merged back with [`World::join`].
    pub fn fork(&self) -> World {
        let n = self.nranks;
        World {
            nranks: n,
            host: self.host.clone(),
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
            check_races: self.check_races,
            allow_uninit_reads: self.allow_uninit_reads,
            uninit: None,
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
            meter: crate::timeline::Meter { record_touches: self.meter.record_touches, ..Default::default() },
        }
    }

    /// Merges the handle that ran the work of ranks `ranks` (see [`World::fork`]).
    pub fn join(&mut self, mut h: World, ranks: &[usize]) {
        h.flush_traffic();
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
        if self.uninit.is_none() {
            self.uninit = h.uninit;
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

/// The little-endian `i32` at byte `o` of a window.
fn cell_of(m: &[u8], o: u64) -> i32 {
    let o = o as usize;
    i32::from_le_bytes([m[o], m[o + 1], m[o + 2], m[o + 3]])
}

/// Adds `bytes` to the `(g, op)` counter without allocating when the key exists.
fn bump(map: &mut BTreeMap<(usize, String), u64>, g: usize, op: &str, bytes: u64) {
    let hit =
        map.range_mut((g, String::new())..).take_while(|((r, _), _)| *r == g).find(|((_, k), _)| k == op);
    match hit {
        Some((_, v)) => *v += bytes,
        None => {
            map.insert((g, op.to_string()), bytes);
        }
    }
}

/// Encodes `d` as `dt` elements into `out` (cleared first), rounding exactly as
/// [`elem::encode`] does.
fn encode_values(dt: DataType, d: &[f64], out: &mut Vec<u8>) {
    out.clear();
    out.resize(d.len() * dt.bytes() as usize, 0);
    elem::encode_all(dt, d, out);
}

/// `acc[i] = round(acc_dt, reduce(op, acc[i], src[i]))` over raw elements (`acc` of `acc_dt`,
/// `src` of `src_dt`, the same element count). The FP32 sum of FP32 runs on `f32` directly:
/// an `f32` addition rounds exactly as the `f64` sum rounded to `f32` does (53 ≥ 2·24 + 2).
pub fn reduce_bytes(acc_dt: DataType, acc: &mut [u8], src_dt: DataType, src: &[u8], op: ReduceOp) {
    if acc_dt == DataType::FP32 && src_dt == DataType::FP32 && op == ReduceOp::Sum {
        for (a, s) in acc.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            let x =
                f32::from_le_bytes([a[0], a[1], a[2], a[3]]) + f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            a.copy_from_slice(&x.to_le_bytes());
        }
        return;
    }
    let (ae, se) = (acc_dt.bytes().max(1) as usize, src_dt.bytes().max(1) as usize);
    for (a, s) in acc.chunks_exact_mut(ae).zip(src.chunks_exact(se)) {
        let v = elem::reduce(op, elem::decode(acc_dt, a), elem::decode(src_dt, s));
        elem::encode(acc_dt, v, a);
    }
}

/// What an access does with its region (row-major element order throughout).
pub(crate) enum Data<'a> {
    /// Append the elements as `f64`.
    ReadF64(&'a mut Vec<f64>),
    /// Append the raw bytes.
    ReadBytes(&'a mut Vec<u8>),
    /// Reduce the elements into raw `acc_dt` accumulators.
    ReadReduce { acc: &'a mut [u8], acc_dt: DataType, rop: ReduceOp },
    /// Plain write of raw bytes of the view's dtype.
    WriteBytes(&'a [u8]),
    /// Atomic add of `f64` values, rounded per element to the view's dtype.
    AtomicF64(&'a [f64]),
    /// Atomic add of raw elements of the given dtype.
    AtomicBytes(&'a [u8], DataType),
}

impl Data<'_> {
    #[inline]
    fn kind(&self) -> AccessKind {
        match self {
            Data::ReadF64(_) | Data::ReadBytes(_) | Data::ReadReduce { .. } => AccessKind::Read,
            Data::WriteBytes(_) => AccessKind::Write,
            Data::AtomicF64(_) | Data::AtomicBytes(..) => AccessKind::Atomic,
        }
    }

    /// The element count the data side brings (`None` for appending reads); `eb` = bytes of
    /// the view's dtype.
    #[inline]
    fn elems(&self, eb: usize) -> Option<usize> {
        match self {
            Data::ReadF64(_) | Data::ReadBytes(_) => None,
            Data::ReadReduce { acc, acc_dt, .. } => Some(acc.len() / acc_dt.bytes().max(1) as usize),
            Data::WriteBytes(b) => Some(b.len() / eb.max(1)),
            Data::AtomicF64(d) => Some(d.len()),
            Data::AtomicBytes(b, dt) => Some(b.len() / dt.bytes().max(1) as usize),
        }
    }

    /// The bytes an access of `bytes` memory bytes (elements of `eb` bytes) reads plus writes
    /// on both sides ([`Stats::rw_bytes`]): the memory bytes, and the tile side — a load writes
    /// its tile, a store reads it, a load-combine reads and writes its accumulator, an atomic
    /// add reads its operand (and the memory it adds into).
    #[inline]
    fn read_written(&self, bytes: u64, eb: u64) -> u64 {
        let n = bytes / eb.max(1);
        bytes
            + match self {
                Data::ReadF64(_) | Data::ReadBytes(_) | Data::WriteBytes(_) => bytes,
                Data::ReadReduce { acc_dt, .. } => 2 * n * acc_dt.bytes(),
                Data::AtomicF64(_) => 2 * bytes,
                Data::AtomicBytes(_, sdt) => n * sdt.bytes() + bytes,
            }
    }

    fn reserve(&mut self, numel: usize, eb: usize) {
        match self {
            Data::ReadF64(out) => out.reserve(numel),
            Data::ReadBytes(out) => out.reserve(numel * eb),
            _ => {}
        }
    }
}

/// The rows of a region in one memory: byte `base + (start + c * cstride) * eb` holds
/// column `c` of the row starting at element `start`.
struct Rows<'a> {
    base: i64,
    starts: &'a [i64],
    cols: i64,
    cstride: i64,
    eb: i64,
}

impl Rows<'_> {
    fn at(&self, s: i64, c: i64) -> usize {
        (self.base + (s + c * self.cstride) * self.eb) as usize
    }

    /// Whether `mem` already holds the encoded bytes `enc` (row-major) at every element.
    fn equal(&self, mem: &[u8], enc: &[u8]) -> bool {
        let (eb, row) = (self.eb as usize, (self.cols * self.eb) as usize);
        self.starts.iter().zip(enc.chunks_exact(row.max(1))).all(|(&s, e)| {
            if self.cstride == 1 {
                let at = self.at(s, 0);
                mem[at..at + row] == *e
            } else {
                (0..self.cols).all(|c| {
                    let at = self.at(s, c);
                    mem[at..at + eb] == e[c as usize * eb..(c as usize + 1) * eb]
                })
            }
        })
    }

    /// Calls `f(bytes, k)` for every contiguous run of the region in row-major order (a whole
    /// row when the innermost dim is packed, else one element), `k` = its first element's index.
    fn runs(&self, mem: &mut [u8], mut f: impl FnMut(&mut [u8], usize)) {
        self.spans(|at, len, k| f(&mut mem[at..at + len], k));
    }

    /// [`Rows::runs`] over bytes that are only read.
    fn runs_read(&self, mem: &[u8], mut f: impl FnMut(&[u8], usize)) {
        self.spans(|at, len, k| f(&mem[at..at + len], k));
    }

    /// Calls `f(byte offset, byte length, first element index)` for every contiguous run.
    fn spans(&self, mut f: impl FnMut(usize, usize, usize)) {
        let (eb, row) = (self.eb as usize, (self.cols * self.eb) as usize);
        let mut k = 0usize;
        for &s in self.starts {
            if self.cstride == 1 {
                f(self.at(s, 0), row, k);
                k += self.cols as usize;
            } else {
                for c in 0..self.cols {
                    f(self.at(s, c), eb, k);
                    k += 1;
                }
            }
        }
    }

    /// Performs a read access on `mem` (elements of `dt`); any other access is left to
    /// [`Rows::apply`].
    fn apply_read(&self, dt: DataType, mem: &[u8], data: &mut Data<'_>) {
        let eb = self.eb as usize;
        match data {
            Data::ReadF64(out) => self.runs_read(mem, |run, _| elem::decode_all(dt, run, out)),
            Data::ReadBytes(out) => self.runs_read(mem, |run, _| out.extend_from_slice(run)),
            Data::ReadReduce { acc, acc_dt, rop } => {
                let ae = acc_dt.bytes() as usize;
                self.runs_read(mem, |run, k| {
                    let n = run.len() / eb;
                    reduce_bytes(*acc_dt, &mut acc[k * ae..(k + n) * ae], dt, run, *rop);
                });
            }
            Data::WriteBytes(_) | Data::AtomicF64(_) | Data::AtomicBytes(..) => {}
        }
    }

    /// Performs the access on `mem` (elements of `dt`).
    fn apply(&self, dt: DataType, mem: &mut [u8], data: &mut Data<'_>) {
        let eb = self.eb as usize;
        match data {
            Data::ReadF64(_) | Data::ReadBytes(_) | Data::ReadReduce { .. } => self.apply_read(dt, mem, data),
            Data::WriteBytes(src) => {
                self.runs(mem, |run, k| run.copy_from_slice(&src[k * eb..k * eb + run.len()]));
            }
            Data::AtomicF64(d) => self.runs(mem, |run, k| {
                for (i, e) in run.chunks_exact_mut(eb).enumerate() {
                    let v = elem::decode(dt, e) + d[k + i];
                    elem::encode(dt, v, e);
                }
            }),
            Data::AtomicBytes(src, sdt) => {
                let se = sdt.bytes() as usize;
                self.runs(mem, |run, k| {
                    let n = run.len() / eb;
                    let s = &src[k * se..(k + n) * se];
                    for (e, x) in run.chunks_exact_mut(eb).zip(s.chunks_exact(se)) {
                        let v = elem::decode(dt, e) + elem::decode(*sdt, x);
                        elem::encode(dt, v, e);
                    }
                });
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SHARE_FROM;

    #[test]
    fn the_host_orchestrators_traffic_is_its_own() {
        // The host runs as rank usize::MAX; its host-tensor accesses count under that rank,
        // apart from the ranks' traffic under the same op.
        let mut w = World::new(2);
        let buf = w.host_buffer(vec![0; 16]);
        let v = TRef {
            mem: Mem::Host(buf),
            owner: usize::MAX,
            base: 0,
            shape: vec![4],
            strides: vec![1],
            dtype: DataType::FP32,
        };
        w.read(&Access::of(usize::MAX, &v, None, &[0], &[4], "tensor.read")).expect("host read");
        w.read(&Access::of(1, &v, None, &[1], &[2], "tensor.read")).expect("rank read");
        w.flush_traffic();
        let op = "tensor.read".to_string();
        assert_eq!(w.stats.local_bytes.get(&(usize::MAX, op.clone())), Some(&16));
        assert_eq!(w.stats.local_bytes.get(&(1, op)), Some(&8));
        assert_eq!(w.stats.local_bytes.len(), 2);
    }

    #[test]
    fn a_new_persistent_call_drops_the_last_calls_pending_traffic() {
        // A call that faulted before its end-of-run flush leaves counters pending.
        let mut w = World::new(2);
        w.count(1, 0, false, 8, 16);
        w.count(1, 0, true, 16, 32);
        w.next_call(false);
        w.flush_traffic();
        assert!(w.stats.local_bytes.is_empty() && w.stats.remote_bytes.is_empty(), "{:?}", w.stats);
        assert!(w.stats.rw_bytes.is_empty(), "{:?}", w.stats);
    }

    #[test]
    fn arenas_are_garbage_outside_zeroed_ranges_made_in_parallel_or_not() {
        // Unsorted, overlapping, and one range past the end.
        let zeroed = [(40, 64), (8, 16), (12, 20), (90, 200)];
        let one = arenas(3, 100, &zeroed, false);
        assert_eq!(one.len(), 3);
        for a in &one {
            assert_eq!(a.len(), 100);
            for (i, &b) in a.iter().enumerate() {
                let zero = zeroed.iter().any(|&(lo, hi)| (lo..hi).contains(&i));
                assert_eq!(b, if zero { 0 } else { GARBAGE }, "byte {i}");
            }
        }
        for n in [1, 3, 8] {
            let many = arenas(n, 100, &zeroed, true);
            assert_eq!(many.len(), n);
            assert!(many.iter().all(|a| a[..] == one[0][..]), "{n} arenas in parallel");
        }
        assert!(arenas(0, 100, &zeroed, true).is_empty());
    }

    fn world2() -> (World, TRef, TRef) {
        world_n(2)
    }

    /// `n` ranks in one domain: a 10-element FP32 `data` buffer and a 2-cell `signal`.
    fn world_n(n: usize) -> (World, TRef, TRef) {
        let mut w = World::new(n);
        let d = w.add_domain((0..n).collect());
        let a = w.alloc(d, "data", 10 * 4);
        let s = w.alloc(d, "signal", 2 * 4);
        w.allocs[s].zeroed = true;
        w.finalize().expect("finalize");
        let view = |alloc: usize, shape: Vec<i64>, dtype: DataType, w: &World| TRef {
            mem: Mem::Window { domain: d, alloc },
            owner: 0,
            base: w.allocs[alloc].offset,
            strides: TRef::packed_strides(&shape),
            shape,
            dtype,
        };
        let dv = view(a, vec![1, 10], DataType::FP32, &w);
        let sv = view(s, vec![2, 1], DataType::INT32, &w);
        (w, dv, sv)
    }

    #[test]
    fn carving_contexts_and_translation() {
        let (w, dv, sv) = world2();
        assert_eq!(w.allocs[0].offset, 0);
        assert_eq!(w.allocs[1].offset, 64, "40 bytes round up to 64");
        let c0 = &w.domains[0].ctx[0];
        let c1 = &w.domains[0].ctx[1];
        assert_eq!((c0.rank_id, c1.rank_id, c0.rank_num), (0, 1, 2));
        assert_ne!(c0.windows_in[1], c1.windows_in[1], "each rank maps the windows at its own addresses");
        let r = w.resolve(0, &dv, Some(1), 8, Span::DUMMY, "t").expect("resolve");
        assert_eq!((r.owner, r.offset), (1, 8));
        // Garbage fill for the float buffer, zero for the signal.
        assert!(read(&w.domains[0].wins[1])[..40].iter().all(|&b| b == GARBAGE));
        let cell = w.cell_addr(0, &sv, Some(1), &[1, 0], Span::DUMMY, "t").expect("cell");
        assert_eq!(w.cell_value(cell), 0);
    }

    #[test]
    fn bounds_and_peers() {
        let (mut w, dv, _) = world2();
        let e = w.resolve(0, &dv, Some(2), 0, Span::DUMMY, "t").expect_err("peer 2");
        assert_eq!(e.kind, ReportKind::PeerOutOfRange);
        let e = w.read(&Access::of(0, &dv, Some(1), &[0, 8], &[1, 4], "t")).expect_err("past the view");
        assert_eq!(e.kind, ReportKind::OutOfBounds);
        // A view whose base was moved past its buffer is caught at the address level.
        let shifted = TRef { base: dv.base + 40, ..dv.clone() };
        let e = w
            .write(&Access::of(0, &shifted, Some(1), &[0, 0], &[1, 2], "t"), &[1.0, 2.0], false)
            .expect_err("outside");
        assert_eq!(e.kind, ReportKind::OutOfBounds);
        assert!(e.message.contains("outside buffer 'data'"), "{}", e.message);
    }

    #[test]
    fn read_written_bytes_count_both_sides_of_each_tile_operation() {
        let (mut w, dv, _) = world2();
        let a = |op| Access::of(0, &dv, None, &[0, 0], &[1, 4], op);
        w.write(&a("store"), &[1.0, 2.0, 3.0, 4.0], false).expect("store");
        w.read(&a("load")).expect("load");
        let mut acc = vec![0u8; 4 * 4];
        let combine = Data::ReadReduce { acc: &mut acc, acc_dt: DataType::FP32, rop: ReduceOp::Sum };
        w.access(&a("combine"), combine).expect("combine");
        w.write(&a("atomic"), &[1.0; 4], true).expect("atomic");
        w.flush_traffic();
        let rw = |op: &str| w.stats.rw_bytes.get(&(0, op.to_string())).copied();
        // 16 window bytes each: a copy counts them twice (window + tile); the combine reads
        // them and reads and writes its 4 accumulators; the atomic reads its 4 operands and
        // reads and writes the window.
        assert_eq!(rw("store"), Some(32));
        assert_eq!(rw("load"), Some(32));
        assert_eq!(rw("combine"), Some(16 + 2 * 16));
        assert_eq!(rw("atomic"), Some(16 + 32));
        assert_eq!(w.stats.local_bytes.values().sum::<u64>(), 4 * 16, "the memory side alone");
    }

    #[test]
    fn races_need_a_notify_wait_edge() {
        let (mut w, dv, _) = world2();
        w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 4], "store"), &[1.0, 2.0, 3.0, 4.0], false)
            .expect("write");
        let mut r1 = dv.clone();
        r1.owner = 1;
        let e = w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 4], "remote_load")).expect_err("race");
        assert_eq!(e.kind, ReportKind::Race);
        // Release by rank 0 into a cell, acquire by rank 1: ordered.
        let (mut w, dv, _) = world2();
        w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 4], "store"), &[1.0, 2.0, 3.0, 4.0], false)
            .expect("write");
        w.release_into(0, (0, 1, 64));
        w.acquire_from(1, (0, 1, 64));
        let v = w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 4], "remote_load")).expect("ordered");
        assert_eq!(v, vec![1.0, 2.0, 3.0, 4.0]);
        // Atomic adds from two ranks commute.
        let (mut w, dv, _) = world2();
        w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 2], "store"), &[0.0, 0.0], false).expect("init");
        w.release_into(0, (0, 1, 64));
        w.acquire_from(1, (0, 1, 64));
        w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 2], "put"), &[1.0, 1.0], true).expect("atomic 0");
        w.write(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 2], "put"), &[2.0, 2.0], true).expect("atomic 1");
        assert_eq!(
            w.read(&Access::of(0, &dv, None, &[0, 0], &[1, 2], "load")).ok(),
            None,
            "plain read vs unordered atomic races"
        );
    }
    #[test]
    fn notifies_in_a_row_order_what_came_before_them_and_not_what_came_after() {
        // Both clock representations: joined in place (few ranks) and shared snapshots.
        for n in [2, SHARE_FROM + 2] {
            let store = |w: &mut World, dv: &TRef, vals: &[f64]| {
                w.write(&Access::of(0, dv, None, &[0, 0], &[1, 2], "store"), vals, false)
            };
            let load = |w: &mut World, dv: &TRef| {
                let r1 = TRef { owner: 1, ..dv.clone() };
                w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 2], "remote_load"))
            };
            // Written before both notifies: ordered for whoever acquires either cell.
            let (mut w, dv, _) = world_n(n);
            store(&mut w, &dv, &[1.0, 2.0]).expect("write");
            w.release_into(0, (0, 1, 64));
            w.release_into(0, (0, 1, 68));
            w.acquire_from(1, (0, 1, 68));
            assert_eq!(load(&mut w, &dv).expect("ordered"), vec![1.0, 2.0], "P={n}");
            // Written after the notifies: the pending clock advance makes it unordered with
            // the reader, though rank 0 neither notified nor waited in between.
            let (mut w, dv, _) = world_n(n);
            store(&mut w, &dv, &[1.0, 2.0]).expect("write");
            w.release_into(0, (0, 1, 64));
            w.release_into(0, (0, 1, 68));
            store(&mut w, &dv, &[3.0, 4.0]).expect("write after the notifies");
            w.acquire_from(1, (0, 1, 68));
            assert_eq!(load(&mut w, &dv).expect_err("race").kind, ReportKind::Race, "P={n}");
        }
    }

    #[test]
    fn a_cell_entry_stays_small() {
        // A full-barrier protocol keeps O(P²) cells per window (~260k in all at P=64).
        assert!(std::mem::size_of::<CellMeta>() <= 56, "{}", std::mem::size_of::<CellMeta>());
    }

    #[test]
    fn many_ranks_share_released_clocks_between_cells() {
        // Runs `(rank, release?, cell offset)` steps on a world of more than SHARE_FROM ranks
        // and returns the clocks of cells 64 and 68.
        let run = |steps: &[(usize, bool, u64)]| {
            let (mut w, _, _) = world_n(SHARE_FROM + 2);
            for &(g, release, cell) in steps {
                if release {
                    w.release_into(g, (0, 1, cell));
                } else {
                    w.acquire_from(g, (0, 1, cell));
                }
            }
            let st = lock(&w.domains[0].wins[1].state);
            let shared = |o: u64| match &st.cells[&o].vc {
                CellClock::Shared(a) => Arc::clone(a),
                other => panic!("not a shared clock: {other:?}"),
            };
            (shared(64), shared(68))
        };
        let (a, b) = run(&[(0, true, 64), (0, true, 68)]);
        assert!(Arc::ptr_eq(&a, &b), "two cells notified back to back hold one snapshot");
        // A notify after the rank acquired the cell's clock (an epilogue) takes its snapshot
        // as the cell's clock; one into a clock it has not acquired joins the two.
        let (a, b) = run(&[(1, true, 64), (1, true, 68), (0, false, 64), (0, true, 64), (0, true, 68)]);
        assert!(Arc::ptr_eq(&a, &b), "the acquired cell's clock is covered by the notifier's");
        let (a, b) = run(&[(1, true, 64), (0, true, 68), (0, true, 64)]);
        assert!(!Arc::ptr_eq(&a, &b), "an unacquired clock is joined, not replaced");
        assert_eq!(&a[..2], &[1, 1], "rank 0's clock joined with rank 1's");
        // Few ranks: each cell keeps its own clock.
        let (mut w, _, _) = world_n(2);
        w.release_into(0, (0, 1, 64));
        w.release_into(0, (0, 1, 68));
        let st = lock(&w.domains[0].wins[1].state);
        assert!(
            matches!(st.cells[&64].vc, CellClock::Own(_)) && matches!(st.cells[&68].vc, CellClock::Own(_))
        );
        assert_eq!(st.cells[&64].vc.as_slice(), st.cells[&68].vc.as_slice());
    }

    #[test]
    fn races_are_found_among_many_records() {
        // 10,000 disjoint writes by rank 0 (more than any fixed record cap), then an unordered
        // read by rank 1 of the very first one: still a race, naming the oldest writer.
        let mut w = World::new(2);
        let d = w.add_domain(vec![0, 1]);
        let a = w.alloc(d, "big", 10_000 * 4);
        w.finalize().expect("finalize");
        let v = TRef {
            mem: Mem::Window { domain: d, alloc: a },
            owner: 0,
            base: 0,
            shape: vec![1, 10_000],
            strides: vec![10_000, 1],
            dtype: DataType::FP32,
        };
        for i in 0..10_000 {
            w.write(&Access::of(0, &v, None, &[0, i], &[1, 1], "store"), &[i as f64], false).expect("write");
        }
        let r1 = TRef { owner: 1, ..v.clone() };
        let e = w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 2], "remote_load")).expect_err("race");
        assert_eq!(e.kind, ReportKind::Race);
        assert!(e.message.contains("touch bytes [0, 4)"), "{}", e.message);
        // A wide write by rank 0 subsumes the small records it covers and is ordered after them.
        w.write(&Access::of(0, &v, None, &[0, 0], &[1, 10_000], "store"), &vec![1.0; 10_000], false)
            .expect("cover");
        let recs: usize = w.domains.iter().flat_map(|d| &d.wins).map(|x| lock(&x.state).shadow.len()).sum();
        assert_eq!(recs, 1, "covered records are dropped");
        let e = w.read(&Access::of(1, &r1, Some(0), &[0, 9_999], &[1, 1], "remote_load")).expect_err("race");
        assert!(e.message.contains("[39996, 40000)"), "{}", e.message);
    }
}
