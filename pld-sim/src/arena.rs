//! Window memory: the bytes of one rank's symmetric window.
//!
//! Guarantees: an [`Arena`] is a plain byte slice of the requested length. A large one
//! (at least [`HUGE_MIN`] bytes, on Linux) is its own anonymous mapping advised for transparent
//! huge pages, so materialising a large window takes one page fault per 2 MiB instead of
//! one per 4 KiB (faults are most of the cost of a large window: measured 60 ms → 12 ms for
//! 64 MiB on the 2-core VM, and unmapping 7 ms → 0.3 ms). Everything else, or a mapping
//! that fails, is an ordinary heap `Vec`. Mapped bytes bypass the global allocator, so they
//! are counted here ([`mapped_bytes`], [`mapped_peak`]) for anyone measuring memory. Once a
//! program asked for it ([`keep_freed_heap`]), a freed mapping is kept for the next run's window
//! of the same length, which gets it holding the old bytes ([`Arena::mapped`] says so).

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Smallest window given its own huge-page mapping. The kernel puts huge pages only on the
/// 2 MiB-aligned stretches inside a mapping, and need not align a mapping whose length is not
/// a multiple of 2 MiB, so a window gets them on all but at most ~4 MiB of its length: worth it
/// from 8 MiB. Smaller windows stay on the heap, where a later run of the process reuses
/// memory already faulted in (reliably once [`keep_freed_heap`] ran; measured: a 2 MiB window
/// mapped afresh per run was 6x slower than a recycled heap one).
pub const HUGE_MIN: usize = 8 << 20;

static MAPPED: AtomicUsize = AtomicUsize::new(0);
static MAPPED_PEAK: AtomicUsize = AtomicUsize::new(0);

/// Whether freed mappings are kept ([`keep_freed_heap`]).
static KEEP: AtomicBool = AtomicBool::new(false);

/// Freed window mappings kept for the next run, oldest first (see [`release_kept`]).
static KEPT: Mutex<Vec<memmap2::MmapMut>> = Mutex::new(Vec::new());

/// Bytes of kept mappings windows have taken ([`kept_taken`]).
static TAKEN: AtomicUsize = AtomicUsize::new(0);

/// Bytes of window arenas currently mapped outside the heap (by every run in the process,
/// and kept for the next one).
pub fn mapped_bytes() -> usize {
    MAPPED.load(Ordering::Relaxed)
}

/// The most [`mapped_bytes`] held at once since the last [`reset_mapped_peak`].
pub fn mapped_peak() -> usize {
    MAPPED_PEAK.load(Ordering::Relaxed)
}

/// Bytes of kept mappings that windows have taken so far in the process. A kept mapping stays
/// counted in [`mapped_bytes`] between runs, so a run that takes it raises no [`mapped_peak`]:
/// whoever measures a run's memory adds what this grew by during the run.
pub fn kept_taken() -> usize {
    TAKEN.load(Ordering::Relaxed)
}

/// Starts a new [`mapped_peak`] measurement from the bytes mapped now.
pub fn reset_mapped_peak() {
    MAPPED_PEAK.store(mapped_bytes(), Ordering::Relaxed);
}

/// Largest allocation glibc serves from its heap once [`keep_freed_heap`] ran (its ceiling for
/// the threshold: 32 MiB on 64-bit targets).
pub const HEAP_SERVED_MAX: usize = 32 << 20;

/// Freed heap memory glibc keeps at the top of its heap once [`keep_freed_heap`] ran.
pub const HEAP_KEPT_MAX: usize = 256 << 20;

/// For a program's `main`, before it starts threads: makes glibc's allocator serve every
/// allocation under [`HEAP_SERVED_MAX`] from its heap and keep up to [`HEAP_KEPT_MAX`] of freed
/// heap memory, and keeps freed window mappings until the next run's windows are made
/// ([`release_kept`]), so the windows, tiles and race records of one run are reused, already
/// faulted in, by the next run of the process (`pld verify`, `explore`, a benchmark's best of
/// N).
///
/// Left to its defaults, glibc maps each allocation above a threshold that it raises only when
/// such a mapping is freed, and then only to that size, so whether a run's allocations were
/// reused depended on what earlier runs had freed: a 1 MiB row's later runs took 0.5 ms in some
/// processes and 2.3 ms, faulting ~1,000 pages, in most (D-sim-11). A library does not change
/// the process's allocator on its own: the `pld` and bench binaries call this. Does nothing
/// elsewhere than glibc on Linux.
pub fn keep_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: `mallopt` only sets allocator parameters (each value is within the range glibc
    // accepts); the caller runs it before other threads allocate.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, HEAP_SERVED_MAX as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, HEAP_KEPT_MAX as libc::c_int);
    }
    KEEP.store(true, Ordering::Relaxed);
}

/// Unmaps every kept mapping that no window has taken. The world calls it once a run's
/// windows are made, so at most one run's worth of freed windows is ever held idle: a later
/// run of the same shapes (the common case: `verify`'s schedules, a benchmark's best of N)
/// takes them all, and a run of other shapes lets them go.
pub fn release_kept() {
    let stale = std::mem::take(&mut *KEPT.lock().unwrap_or_else(|e| e.into_inner()));
    for m in stale {
        MAPPED.fetch_sub(m.len(), Ordering::Relaxed);
    }
}

/// A kept mapping of exactly `len` bytes, if any.
fn take_kept(len: usize) -> Option<memmap2::MmapMut> {
    if !KEEP.load(Ordering::Relaxed) {
        return None;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let at = kept.iter().position(|m| m.len() == len)?;
    TAKEN.fetch_add(len, Ordering::Relaxed);
    Some(kept.remove(at))
}

/// The bytes of one window.
pub struct Arena(Store);

enum Store {
    Heap(Vec<u8>),
    Mapped(memmap2::MmapMut),
}

impl Arena {
    /// `len` zero bytes. Nothing is written to a new mapping: its pages come from the kernel
    /// zero-filled when first touched (in 2 MiB huge pages where the kernel allows); a kept
    /// one is cleared.
    pub fn zeroed(len: usize) -> Arena {
        match Self::mapped(len) {
            Some((a, true)) => a,
            Some((mut a, false)) => {
                a.fill(0);
                a
            }
            None => Arena(Store::Heap(vec![0; len])),
        }
    }

    /// `len` bytes in their own mapping, when `len` is large enough for one and the mapping
    /// succeeds (`None`: the caller builds the bytes on the heap, [`Arena::from_vec`]), and
    /// whether they are a new mapping's zeros (`true`) or a kept one's old bytes (`false`).
    pub fn mapped(len: usize) -> Option<(Arena, bool)> {
        if len < HUGE_MIN {
            return None;
        }
        if let Some(m) = take_kept(len) {
            return Some((Arena(Store::Mapped(m)), false));
        }
        Self::store(len).map(|s| (Arena(s), true))
    }

    /// An arena holding `bytes` on the heap (a window [`Arena::mapped`] declined, written in
    /// one pass by its maker rather than zeroed first and written again).
    pub fn from_vec(bytes: Vec<u8>) -> Arena {
        Arena(Store::Heap(bytes))
    }

    #[cfg(target_os = "linux")]
    fn store(len: usize) -> Option<Store> {
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
        if let Store::Mapped(m) = std::mem::replace(&mut self.0, Store::Heap(Vec::new())) {
            if KEEP.load(Ordering::Relaxed) {
                // Still mapped, so still counted.
                KEPT.lock().unwrap_or_else(|e| e.into_inner()).push(m);
            } else {
                MAPPED.fetch_sub(m.len(), Ordering::Relaxed);
            }
        }
    }
}

impl Deref for Arena {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Store::Heap(v) => v,
            Store::Mapped(m) => m,
        }
    }
}

impl DerefMut for Arena {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            Store::Heap(v) => v,
            Store::Mapped(m) => m,
        }
    }
}

impl Default for Arena {
    fn default() -> Arena {
        Arena(Store::Heap(Vec::new()))
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
}
