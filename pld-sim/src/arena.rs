//! Window memory: the bytes of one rank's symmetric window.
//!
//! Guarantees: an [`Arena`] is a plain byte slice of the requested length. A large one
//! (at least [`HUGE_MIN`] bytes, on Linux) is its own anonymous mapping advised for transparent
//! huge pages, so materialising a large window takes one page fault per 2 MiB instead of
//! one per 4 KiB (faults are most of the cost of a large window: measured 60 ms → 12 ms for
//! 64 MiB on the 2-core VM, and unmapping 7 ms → 0.3 ms). Everything else, or a mapping
//! that fails, is an ordinary heap `Vec`. Mapped bytes bypass the global allocator, so they
//! are counted here ([`mapped_bytes`], [`mapped_peak`]) for anyone measuring memory.
//!
//! A heap arena of at least [`RECYCLE_MIN`] bytes gives its buffer back when it drops, and the
//! next heap arena takes one that fits ([`Arena::heap`]): the process holds at most
//! [`RECYCLE_MAX`] bytes so. The allocator hands a buffer that large back to the kernel when
//! it is freed (glibc: above its mmap threshold), so without this every run of a process faulted
//! its windows in afresh; a recycled buffer is already faulted in. A recycled buffer was
//! allocated by an earlier run, so it is counted here too ([`recycled_bytes`],
//! [`recycled_peak`]); its old bytes are never seen: [`Arena::heap`] hands it over empty.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Smallest window given its own huge-page mapping. The kernel puts huge pages only on the
/// 2 MiB-aligned stretches inside a mapping, and need not align a mapping whose length is not
/// a multiple of 2 MiB, so a window gets them on all but at most ~4 MiB of its length: worth it
/// from 8 MiB. Smaller windows stay on the heap, where their buffers are recycled across the
/// runs of one process ([`Arena::heap`]; measured: a 2 MiB window mapped afresh per run was 6x
/// slower than a recycled heap one).
pub const HUGE_MIN: usize = 8 << 20;

static MAPPED: AtomicUsize = AtomicUsize::new(0);
static MAPPED_PEAK: AtomicUsize = AtomicUsize::new(0);

/// Bytes of window arenas currently mapped outside the heap (by every run in the process).
pub fn mapped_bytes() -> usize {
    MAPPED.load(Ordering::Relaxed)
}

/// The most [`mapped_bytes`] held at once since the last [`reset_mapped_peak`].
pub fn mapped_peak() -> usize {
    MAPPED_PEAK.load(Ordering::Relaxed)
}

/// Starts a new [`mapped_peak`] measurement from the bytes mapped now.
pub fn reset_mapped_peak() {
    MAPPED_PEAK.store(mapped_bytes(), Ordering::Relaxed);
}

/// Smallest heap buffer kept for reuse: smaller ones the allocator's own free lists recycle.
pub const RECYCLE_MIN: usize = 64 << 10;

/// Bytes of heap buffers the process keeps for reuse at most.
pub const RECYCLE_MAX: usize = 64 << 20;

/// Heap window buffers no arena holds, kept for the next arenas (with their total capacity).
static RECYCLED: Mutex<(Vec<Vec<u8>>, usize)> = Mutex::new((Vec::new(), 0));
static REUSED: AtomicUsize = AtomicUsize::new(0);
static REUSED_PEAK: AtomicUsize = AtomicUsize::new(0);

/// Bytes (capacity) of the recycled buffers that arenas hold now: allocated by an earlier run.
pub fn recycled_bytes() -> usize {
    REUSED.load(Ordering::Relaxed)
}

/// The most [`recycled_bytes`] held at once since the last [`reset_recycled_peak`].
pub fn recycled_peak() -> usize {
    REUSED_PEAK.load(Ordering::Relaxed)
}

/// Starts a new [`recycled_peak`] measurement from the recycled bytes held now.
pub fn reset_recycled_peak() {
    REUSED_PEAK.store(recycled_bytes(), Ordering::Relaxed);
}

fn recycled() -> std::sync::MutexGuard<'static, (Vec<Vec<u8>>, usize)> {
    RECYCLED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An empty buffer with room for `len` bytes: the smallest kept one that holds them without
/// wasting more than as much again (`true`: recycled), else a new one.
fn buffer(len: usize) -> (Vec<u8>, bool) {
    if len >= RECYCLE_MIN {
        let mut pool = recycled();
        let fits = |v: &Vec<u8>| (len..=2 * len).contains(&v.capacity());
        let best = pool.0.iter().enumerate().filter(|(_, v)| fits(v)).min_by_key(|(_, v)| v.capacity());
        if let Some(i) = best.map(|(i, _)| i) {
            let mut v = pool.0.swap_remove(i);
            pool.1 -= v.capacity();
            drop(pool);
            v.clear();
            let now = REUSED.fetch_add(v.capacity(), Ordering::Relaxed) + v.capacity();
            REUSED_PEAK.fetch_max(now, Ordering::Relaxed);
            return (v, true);
        }
    }
    (Vec::with_capacity(len), false)
}

/// Keeps `v` for a later arena, if it is large enough and the pool has room.
fn give_back(v: Vec<u8>) {
    let cap = v.capacity();
    if cap < RECYCLE_MIN {
        return;
    }
    let mut pool = recycled();
    if pool.1 + cap <= RECYCLE_MAX {
        pool.1 += cap;
        pool.0.push(v);
    }
}

/// The bytes of one window.
pub struct Arena(Store);

enum Store {
    /// Heap bytes; `true` when the buffer was recycled (counted in [`recycled_bytes`]).
    Heap(Vec<u8>, bool),
    Mapped(memmap2::MmapMut),
}

impl Arena {
    /// `len` zero bytes. Nothing is written here: the pages come from the kernel zero-filled
    /// when first touched (a mapped arena's in 2 MiB huge pages where the kernel allows).
    pub fn zeroed(len: usize) -> Arena {
        Arena(Self::store(len).unwrap_or_else(|| Store::Heap(vec![0; len], false)))
    }

    /// `len` zero bytes in their own mapping, when `len` is large enough for one and the
    /// mapping succeeds (`None`: the caller builds the bytes on the heap, [`Arena::heap`]).
    pub fn mapped(len: usize) -> Option<Arena> {
        Self::store(len).map(Arena)
    }

    /// `len` bytes on the heap, as `write` appends them to the empty buffer it is given (a
    /// window [`Arena::mapped`] declined, written in one pass by its maker rather than zeroed
    /// first and written again); bytes it leaves out are zero, bytes past `len` are cut off.
    /// The buffer is a recycled one when one fits (see the module documentation).
    pub fn heap(len: usize, write: impl FnOnce(&mut Vec<u8>)) -> Arena {
        let (mut bytes, recycled) = buffer(len);
        write(&mut bytes);
        bytes.resize(len, 0);
        Arena(Store::Heap(bytes, recycled))
    }

    #[cfg(target_os = "linux")]
    fn store(len: usize) -> Option<Store> {
        if len < HUGE_MIN {
            return None;
        }
        let map = memmap2::MmapMut::map_anon(len).ok()?;
        // Advice only: without THP support the mapping simply keeps 4 KiB pages.
        let _ = map.advise(memmap2::Advice::HugePage);
        let now = MAPPED.fetch_add(len, Ordering::Relaxed) + len;
        MAPPED_PEAK.fetch_max(now, Ordering::Relaxed);
        Some(Store::Mapped(map))
    }

    #[cfg(not(target_os = "linux"))]
    fn store(_len: usize) -> Option<Store> {
        None
    }

    /// Whether the arena is its own huge-page-advised mapping.
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Store::Mapped(_))
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        match &mut self.0 {
            Store::Mapped(m) => {
                MAPPED.fetch_sub(m.len(), Ordering::Relaxed);
            }
            Store::Heap(v, recycled) => {
                if *recycled {
                    REUSED.fetch_sub(v.capacity(), Ordering::Relaxed);
                }
                give_back(std::mem::take(v));
            }
        }
    }
}

impl Deref for Arena {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Store::Heap(v, _) => v,
            Store::Mapped(m) => m,
        }
    }
}

impl DerefMut for Arena {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            Store::Heap(v, _) => v,
            Store::Mapped(m) => m,
        }
    }
}

impl Default for Arena {
    fn default() -> Arena {
        Arena(Store::Heap(Vec::new(), false))
    }
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Arena({} bytes{})", self.len(), if self.is_mapped() { ", mapped" } else { "" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_arenas_start_zeroed_hold_writes_and_count_mappings() {
        let small = Arena::zeroed(100);
        assert!(!small.is_mapped());
        assert!(small.iter().all(|&b| b == 0) && small.len() == 100);
        let mut large = Arena::zeroed(HUGE_MIN + 5);
        assert_eq!(large.len(), HUGE_MIN + 5);
        assert!(large.iter().all(|&b| b == 0));
        large[HUGE_MIN + 4] = 1;
        large[..3].fill(9);
        assert_eq!((large[HUGE_MIN + 4], large[2], large[3]), (1, 9, 0));
        if large.is_mapped() {
            // Other tests may map and unmap meanwhile (in one process): lower bounds only.
            assert!(mapped_bytes() >= HUGE_MIN + 5 && mapped_peak() >= HUGE_MIN + 5);
        }
    }

    #[test]
    fn a_dropped_heap_arena_is_recycled_whole_rewritten_and_counted() {
        // An odd length no other test uses, so a parallel test cannot take the buffer between.
        let len = 1_234_567;
        let first = Arena::heap(len, |b| b.resize(len, 7));
        let addr = first.as_ptr();
        assert_eq!((first.len(), first[len - 1]), (len, 7));
        drop(first);
        let held = recycled_bytes();
        // Appending less than `len` leaves zeros after it: nothing of the old bytes shows.
        let second = Arena::heap(len - 100, |b| b.resize(10, 3));
        assert_eq!(second.as_ptr(), addr, "the freed buffer is taken again");
        assert_eq!(second.len(), len - 100);
        assert!(second[..10].iter().all(|&b| b == 3) && second[10..].iter().all(|&b| b == 0));
        assert!(recycled_bytes() >= held + len && recycled_peak() >= len);
        drop(second);
        // Too small a request for that buffer (it would waste more than as much again): a new one.
        let third = Arena::heap(len / 3, |_| {});
        assert_ne!(third.as_ptr(), addr);
        assert!(third.iter().all(|&b| b == 0));
    }

    #[test]
    fn small_buffers_are_not_kept_and_the_kept_ones_stay_bounded() {
        // Exact capacities no other test uses: what the pool holds of them is this test's.
        let kept = |cap: usize| recycled().0.iter().filter(|v| v.capacity() == cap).count();
        drop(Arena::heap(RECYCLE_MIN - 1, |_| {}));
        assert_eq!(kept(RECYCLE_MIN - 1), 0, "a small buffer is not kept");
        let half = RECYCLE_MAX / 2 + 1;
        let big: Vec<Arena> = (0..3).map(|_| Arena::heap(half, |_| {})).collect();
        drop(big);
        assert_eq!(kept(half), 1, "two would pass RECYCLE_MAX");
        assert!(recycled().1 <= RECYCLE_MAX);
    }
}
