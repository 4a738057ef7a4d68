//! A yardstick for the simulator's data rate: the data movement of the host mesh allreduce
//! builtin (every rank, in the builtin's 256-element tiles: load its own tile, combine every
//! peer's into it in rank order, store the result back) done directly on `f32` slices, with no interpretation,
//! no signals and no checks. Its rate is what a slice-based simulator could approach; the
//! simulator's rate divided by it is the interpretation overhead.
//!
//! Guarantees: [`mesh_allreduce`] computes the real sum (every rank's window ends up holding
//! the elementwise sum of all ranks' inputs, its own first, then its peers' in rank order) and
//! returns the bytes read plus written, counted as the simulator counts them
//! (`pld_sim::Stats::rw_bytes`: both sides of every chunk load, combine and store).

/// Elements per chunk, as the simulator's host builtin tiles data
/// (`pld_runtime_abi::BUILTIN_MESH_TILE`, the seed's 256 elements).
pub const CHUNK: usize = pld_runtime_abi::BUILTIN_MESH_TILE as usize;

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
}
