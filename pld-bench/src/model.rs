//! A yardstick for the simulator's data rate: the data movement of the host mesh allreduce
//! builtin (every rank, in the builtin's 256-element tiles: load its own tile, combine every
//! peer's into it in rank order, store the result back) done directly on `f32` slices, with no interpretation,
//! no signals and no checks. Its rate is what a slice-based simulator could approach; the
//! simulator's rate divided by it is the interpretation overhead. Beside it, the rest of a
//! whole run's unavoidable work on raw memory: fresh windows mapped and filled (D-bench-6).
//!
//! Beside them, the same data movement cut as the simulator's protocol model cuts it
//! ([`mesh_steps`]: a step per protocol grain, a barrier between its reads and its stores), on
//! one thread and on two: what that structure costs on raw memory, and what a second core can
//! gain on it with no interpretation at all (D-bench-7).
//!
//! Guarantees: [`mesh_allreduce`] and [`mesh_steps`] compute the real sum (every rank's window
//! ends up holding the elementwise sum of all ranks' inputs, its own first, then its peers' in
//! rank order; on any number of threads) and return the bytes read plus written, counted as
//! the simulator counts them (`pld_sim::Stats::rw_bytes`: both sides of every chunk load,
//! combine and store); [`fill_fresh_windows`] writes every byte of every window exactly once.

/// Elements per chunk, as the simulator's host builtin tiles data
/// (`pld_runtime_abi::BUILTIN_MESH_TILE`, the seed's 256 elements).
pub const CHUNK: usize = pld_runtime_abi::BUILTIN_MESH_TILE as usize;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// Runs the mesh allreduce over `windows` (one per rank, equal lengths) in place; returns the
/// bytes read plus written: a load or store of `n` bytes counts `2n`, a combine `3n` (the peer's
/// bytes read, the accumulator read and written).
///
/// Like the protocol, every rank first reads all ranks' chunk into an accumulator, and the
/// store-back happens after all ranks have read the chunk (the read-done barrier).
pub fn mesh_allreduce(windows: &mut [Vec<f32>]) -> u64 {
    let p = windows.len();
    let n = windows.first().map_or(0, Vec::len);
    let mut acc = vec![vec![0f32; CHUNK]; p];
    let mut moved = 0u64;
    let mut off = 0;
    while off < n {
        let len = CHUNK.min(n - off);
        for (r, a) in acc.iter_mut().enumerate() {
            let a = &mut a[..len];
            a.copy_from_slice(&windows[r][off..off + len]);
            moved += 2 * 4 * len as u64;
            for (_, w) in windows.iter().enumerate().filter(|&(q, _)| q != r) {
                a.iter_mut().zip(&w[off..off + len]).for_each(|(x, y)| *x += *y);
                moved += 3 * 4 * len as u64;
            }
        }
        for (w, a) in windows.iter_mut().zip(&acc) {
            w[off..off + len].copy_from_slice(&a[..len]);
            moved += 2 * 4 * len as u64;
        }
        off += len;
    }
    moved
}

/// [`mesh_allreduce`] on four 16 MiB windows (P = 4, already faulted in), best of five: its
/// time and the bytes it read plus wrote.
pub fn yardstick_run() -> (Duration, u64) {
    let (p, elems) = (4usize, 4usize << 20);
    let mut best = (Duration::MAX, 0);
    for _ in 0..5 {
        let mut windows: Vec<Vec<f32>> = (0..p).map(|r| vec![r as f32; elems]).collect();
        let t = Instant::now();
        let moved = mesh_allreduce(&mut windows);
        best = best.min((t.elapsed(), moved));
    }
    best
}

/// [`fill_fresh_windows`] for the yardstick's windows, in the prepare kernel's 4 KiB tiles,
/// best of five.
pub fn fill_run() -> Duration {
    let tile: Vec<u8> = std::iter::repeat_n(1f32.to_le_bytes(), 1024).flatten().collect();
    let time = || {
        let t = Instant::now();
        fill_fresh_windows(4, 16 << 20, &tile);
        t.elapsed()
    };
    (0..5).map(|_| time()).min().unwrap_or_default()
}

/// The part of a simulator run the [`mesh_allreduce`] yardstick leaves out, on raw memory:
/// `p` zeroed windows of `bytes` each, mapped as the simulator maps them
/// ([`pld_sim::arena::Arena`]: a new mapping, or in a process that keeps freed memory a kept
/// one cleared, as a simulator's later run gets it), every byte written once by copying `tile`
/// over it (the bench's
/// prepare kernel fills its source window in 4 KiB tiles), then unmapped. Returns the bytes
/// written. The yardstick's time plus this one's is the floor of a run that maps its windows,
/// fills them and reduces them, with no interpretation and no checks.
pub fn fill_fresh_windows(p: usize, bytes: usize, tile: &[u8]) -> u64 {
    let mut written = 0u64;
    let mut windows: Vec<pld_sim::arena::Arena> =
        (0..p).map(|_| pld_sim::arena::Arena::zeroed(bytes)).collect();
    for w in &mut windows {
        for chunk in w.chunks_mut(tile.len().max(1)) {
            chunk.copy_from_slice(&tile[..chunk.len()]);
            written += chunk.len() as u64;
        }
    }
    drop(windows);
    written
}

/// Elements of one protocol step per rank at the simulator's default protocol grain
/// (`pld_sim::DEFAULT_PROTOCOL_GRAIN` bytes of FP32).
pub const GRAIN: usize = (pld_sim::DEFAULT_PROTOCOL_GRAIN / 4) as usize;

/// [`mesh_allreduce`] cut as the simulator's builtin mesh protocol runs it at a protocol grain
/// (D-sim-37): per step of `grain` elements, every rank loads its own region into its
/// register and combines every peer's region into it in rank order; a barrier; every rank
/// stores its register back; a barrier. The threads take consecutive blocks of ranks, as the
/// parallel schedule's workers take theirs first (a rank's program runs in order on one
/// thread), and the barrier spins, as its idle workers do. Returns the windows and the bytes read plus written.
pub fn mesh_steps(windows: Vec<Vec<f32>>, grain: usize, threads: usize) -> (Vec<Vec<f32>>, u64) {
    let p = windows.len();
    let n = windows.first().map_or(0, Vec::len);
    let (grain, threads) = (grain.max(1), threads.clamp(1, p.max(1)));
    let windows: Vec<RwLock<Vec<f32>>> = windows.into_iter().map(RwLock::new).collect();
    let barrier = SpinBarrier::new(threads);
    let moved = AtomicUsize::new(0);
    let run = |t: usize| {
        let mine: Vec<usize> = (0..p).filter(|r| r * threads / p == t).collect();
        let mut regs = vec![vec![0f32; grain]; mine.len()];
        let mut bytes = 0;
        for off in (0..n).step_by(grain) {
            let len = grain.min(n - off);
            {
                let all: Vec<_> =
                    windows.iter().map(|w| w.read().unwrap_or_else(|e| e.into_inner())).collect();
                for (&r, reg) in mine.iter().zip(&mut regs) {
                    let acc = &mut reg[..len];
                    acc.copy_from_slice(&all[r][off..off + len]);
                    for (_, w) in all.iter().enumerate().filter(|&(q, _)| q != r) {
                        acc.iter_mut().zip(&w[off..off + len]).for_each(|(x, y)| *x += *y);
                    }
                    bytes += (2 + 3 * (p - 1)) * 4 * len;
                }
            }
            barrier.wait();
            for (&r, reg) in mine.iter().zip(&regs) {
                windows[r].write().unwrap_or_else(|e| e.into_inner())[off..off + len]
                    .copy_from_slice(&reg[..len]);
                bytes += 2 * 4 * len;
            }
            barrier.wait();
        }
        moved.fetch_add(bytes, Ordering::Relaxed);
    };
    std::thread::scope(|s| {
        for t in 1..threads {
            s.spawn(move || run(t));
        }
        run(0);
    });
    let windows = windows.into_iter().map(|w| w.into_inner().unwrap_or_else(|e| e.into_inner())).collect();
    (windows, moved.into_inner() as u64)
}

/// [`mesh_steps`] on the yardstick's four 16 MiB windows at the default grain ([`GRAIN`]) on
/// `threads` threads, best of five.
pub fn steps_run(threads: usize) -> Duration {
    let (p, elems) = (4usize, 4usize << 20);
    let time = || {
        let windows: Vec<Vec<f32>> = (0..p).map(|r| vec![r as f32; elems]).collect();
        let t = Instant::now();
        let out = mesh_steps(windows, GRAIN, threads);
        let time = t.elapsed();
        drop(out);
        time
    };
    (0..5).map(|_| time()).min().unwrap_or_default()
}

/// A barrier whose waiters spin (yielding now and then, so an oversubscribed machine still
/// gets on): what a worker of the parallel schedule does while its ranks wait.
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier { n, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // Reset before the release: nobody arrives again until the generation moves.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            spins = spins.wrapping_add(1);
            if spins % 4096 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_every_rank_and_counts_bytes() {
        let p = 3;
        let n = 600;
        let mut w: Vec<Vec<f32>> = (0..p).map(|r| (0..n).map(|i| (r * 1000 + i) as f32).collect()).collect();
        let moved = mesh_allreduce(&mut w);
        for (r, win) in w.iter().enumerate() {
            for (i, x) in win.iter().enumerate() {
                assert_eq!(*x, (3000 + 3 * i) as f32, "rank {r} element {i}");
            }
        }
        // Per rank, of every element: a load and a store (2 × 4 bytes each), P-1 combines
        // (3 × 4 bytes each).
        assert_eq!(moved, (p * (2 * 8 + 3 * (p - 1) * 4) * n) as u64);
    }

    #[test]
    fn the_protocol_steps_sum_every_rank_on_any_thread_count_and_count_bytes() {
        let (p, n) = (3, 1000);
        let input: Vec<Vec<f32>> = (0..p).map(|r| (0..n).map(|i| (r * 1000 + i) as f32).collect()).collect();
        let mut yard = input.clone();
        let yard_moved = mesh_allreduce(&mut yard);
        // A grain that leaves a short last step, and one past the whole window.
        for (grain, threads) in [(64, 1), (64, 2), (64, 3), (7, 2), (5000, 2)] {
            let (out, moved) = mesh_steps(input.clone(), grain, threads);
            assert_eq!(out, yard, "grain {grain}, {threads} thread(s)");
            assert_eq!(moved, yard_moved, "grain {grain}, {threads} thread(s)");
        }
    }

    #[test]
    fn fresh_windows_are_written_whole_a_short_last_tile_included() {
        assert_eq!(fill_fresh_windows(3, 10_000, &[7u8; 4096]), 30_000);
        assert_eq!(fill_fresh_windows(2, 0, &[7u8; 16]), 0);
    }
}
