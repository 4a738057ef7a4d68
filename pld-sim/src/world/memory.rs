//! Window and host memory: domains, their named buffers and symmetric windows, and the locks
//! that guard them.
//!
//! Guarantees: window memory starts as [`GARBAGE`] except for the byte ranges it is asked to
//! zero; a poisoned window lock is still taken (every update completes before anything can
//! panic), and a contended one is spun on briefly before the thread sleeps.

use super::*;

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
    /// Whether its bytes count as written from the start (`--zero-windows`): otherwise only
    /// written bytes and signal cells are defined, whatever the dtype (D-sim-22).
    pub defined: bool,
    /// Whether a float-typed view of it was made (which keeps it garbage-filled).
    pub float_view: bool,
    /// The `alloc_window_buffer` call that made it, when its size is written in numbers
    /// only (no rank count, no symbol): where an undersized signal's help points.
    pub literal_at: Option<pld_ir::Span>,
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
    pub(super) drank_of: Vec<Option<usize>>,
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
/// and far more erratic). They are made one after another on the calling thread: made on
/// rayon's pool, a 4 × 16 MiB set took 3–5 ms in most runs and 20–75 ms in one of three.
pub(super) fn arenas(n: usize, size: usize, zeroed: &[(usize, usize)]) -> Vec<Arena> {
    let mut cuts: Vec<(usize, usize)> = zeroed.iter().map(|&(lo, hi)| (lo.min(size), hi.min(size))).collect();
    cuts.sort_unstable();
    let make = || match Arena::mapped(size) {
        Some((mut bytes, fresh)) => {
            if fresh {
                fill_fresh(&mut bytes, &cuts);
            } else {
                // A kept mapping holds an earlier run's bytes: written whole.
                fill_window(&mut bytes, &cuts);
            }
            bytes
        }
        // On the heap: written once, in place of a zeroed allocation (a memset when the
        // allocator reuses memory) written over again.
        None => Arena::from_vec(fresh_vec(size, &cuts)),
    };
    (0..n).map(|_| make()).collect()
}

/// Writes a fresh window's bytes: [`GARBAGE`] except the sorted `cuts` byte ranges (clamped
/// to the window), which are zero.
pub(super) fn fill_window(bytes: &mut [u8], cuts: &[(usize, usize)]) {
    fill_with(bytes, cuts, |zero| zero.fill(0));
}

/// [`fill_window`] on bytes that are already zero (a fresh anonymous mapping): a zero range is
/// only faulted in, by one write per page, instead of written whole (a `--zero-windows` run's
/// windows are then written once, by the program, not twice).
fn fill_fresh(bytes: &mut [u8], cuts: &[(usize, usize)]) {
    fill_with(bytes, cuts, |zero| zero.iter_mut().step_by(PAGE).for_each(|b| *b = 0));
}

/// [`fill_window`]'s bytes built in a new vector, each written once.
fn fresh_vec(size: usize, cuts: &[(usize, usize)]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(size);
    for (range, zero) in segments(size, cuts) {
        bytes.resize(range.end, if zero { 0 } else { GARBAGE });
    }
    bytes
}

/// The smallest page the kernel maps: one write in each faults all of a fresh range in.
const PAGE: usize = 4096;

/// [`fill_window`]'s walk: [`GARBAGE`] outside the sorted `cuts`, `zero` applied inside them.
fn fill_with(bytes: &mut [u8], cuts: &[(usize, usize)], zero: impl Fn(&mut [u8])) {
    for (range, is_zero) in segments(bytes.len(), cuts) {
        if is_zero {
            zero(&mut bytes[range]);
        } else {
            bytes[range].fill(GARBAGE);
        }
    }
}

/// A fresh `size`-byte window's byte ranges in order, each `true` when it lies inside the
/// sorted `cuts` (clamped to the window, overlaps merged: zero) and `false` outside them
/// ([`GARBAGE`]).
fn segments(size: usize, cuts: &[(usize, usize)]) -> Vec<(std::ops::Range<usize>, bool)> {
    let mut out = Vec::with_capacity(2 * cuts.len() + 1);
    let mut done = 0;
    for &(lo, hi) in cuts {
        let (lo, hi) = (lo.min(size).max(done), hi.min(size));
        if hi > done {
            out.push((done..lo, false));
            out.push((lo..hi, true));
            done = hi;
        }
    }
    out.push((done..size, false));
    out
}

/// Tries of a contended window lock (see [`spin_then`]) before the thread sleeps.
const LOCK_SPINS: u32 = 2000;
