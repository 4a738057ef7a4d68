//! A yardstick for the simulator's data rate: the data movement of the host mesh allreduce
//! builtin (every rank, in the builtin's 256-element tiles: load its own tile, combine every
//! peer's into it in rank order, store the result back) done directly on `f32` slices, with no interpretation,
//! no signals and no checks. Its rate is what a slice-based simulator could approach; the
//! simulator's rate divided by it is the interpretation overhead. Beside it, the rest of a
//! whole run's unavoidable work on raw memory: fresh windows mapped and filled (D-bench-6).
//!
//! Guarantees: [`mesh_allreduce`] computes the real sum (every rank's window ends up holding
//! the elementwise sum of all ranks' inputs, its own first, then its peers' in rank order) and
//! returns the bytes read plus written, counted as the simulator counts them
//! (`pld_sim::Stats::rw_bytes`: both sides of every chunk load, combine and store);
//! [`fill_fresh_windows`] writes every byte of every window exactly once.

/// Elements per chunk, as the simulator's host builtin tiles data
/// (`pld_runtime_abi::BUILTIN_MESH_TILE`, the seed's 256 elements).
pub const CHUNK: usize = pld_runtime_abi::BUILTIN_MESH_TILE as usize;

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
    fn fresh_windows_are_written_whole_a_short_last_tile_included() {
        assert_eq!(fill_fresh_windows(3, 10_000, &[7u8; 4096]), 30_000);
        assert_eq!(fill_fresh_windows(2, 0, &[7u8; 16]), 0);
    }
}
