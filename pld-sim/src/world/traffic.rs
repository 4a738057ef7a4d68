//! Traffic accounting: local, remote and read+written bytes per rank and op kind.
//!
//! Guarantees: counting is one array increment per access; [`World::flush_traffic`] merges the
//! pending counters by op name, so the stats a run hands out are complete.

use super::*;

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

impl World {
    /// Adds `bytes` to the traffic of rank `g` (`usize::MAX`: the host orchestrator) under
    /// the op of race site `site`: one counter per site and rank, no name comparison.
    /// `rw` is the access's read+written bytes on both sides (see [`Stats::rw_bytes`]).
    pub(super) fn count(&mut self, g: usize, site: u32, remote: bool, bytes: u64, rw: u64) {
        let at = site as usize * (self.shared.nranks + 1) + g.min(self.shared.nranks);
        if self.tally.traffic.len() <= at {
            self.tally.traffic.resize(at + 1, [0; 3]);
        }
        self.local.meter.count(remote, bytes);
        self.local.moved += bytes;
        self.local.moved_total += bytes;
        let c = &mut self.tally.traffic[at];
        c[usize::from(remote)] += bytes;
        c[2] += rw;
    }

    /// Bytes this handle's accesses moved so far (to or from windows and local memory).
    pub fn moved_total(&self) -> u64 {
        self.local.moved_total
    }

    /// Bytes moved since the last call (for [`crate::budget::publish`]).
    pub fn take_moved(&mut self) -> u64 {
        std::mem::take(&mut self.local.moved)
    }

    /// Merges the pending traffic counters into `stats.local_bytes` / `remote_bytes` / `rw_bytes`
    /// by op name (the run calls it before handing out its stats).
    pub fn flush_traffic(&mut self) {
        let columns = self.shared.nranks + 1;
        for (at, counts) in std::mem::take(&mut self.tally.traffic).into_iter().enumerate() {
            if counts == [0; 3] {
                continue;
            }
            let (site, col) = (at / columns, at % columns);
            let g = if col == self.shared.nranks { usize::MAX } else { col };
            let (op, _) = self.site(site as u32);
            let stats = &mut self.tally.stats;
            let maps = [&mut stats.local_bytes, &mut stats.remote_bytes, &mut stats.rw_bytes];
            for (map, bytes) in maps.into_iter().zip(counts).filter(|&(_, b)| b > 0) {
                bump(map, g, &op, bytes);
            }
        }
    }
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
