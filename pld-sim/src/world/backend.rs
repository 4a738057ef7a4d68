//! The window backend seam: where the bytes of symmetric windows live when they are not in
//! this process (the MPI engine, `pld-sim-mpi`).
//!
//! Guarantees: without a backend (the default, every in-process schedule) nothing here is
//! used and the world behaves exactly as before. With one, the process runs the work of the
//! single global rank [`WindowBackend::rank`]; every byte of every window (its own included)
//! is moved by the backend, each operation complete at its target before the call returns,
//! so one rank's window operations take effect in its program order. Host-tensor bytes that
//! this rank writes are recorded as exact byte spans ([`World::host_writes`]) so an engine
//! can merge every rank's writes.

use super::*;

/// Where a distributed run's window bytes live. All offsets are byte offsets inside the
/// window of domain rank `owner` of domain `domain`; callers check every address against the
/// named buffer first, so a backend sees only in-range accesses.
pub trait WindowBackend: Watchdog + Send + Sync {
    /// The global rank whose work this process runs.
    fn rank(&self) -> usize;
    /// Creates domain `domain`'s windows (collective over every process, in the same order on
    /// each): `size` bytes per member; `fill` writes this rank's own part's initial bytes
    /// (called only on a member).
    fn create(
        &self,
        domain: usize,
        members: &[usize],
        size: u64,
        fill: &dyn Fn(&mut [u8]),
    ) -> Result<(), String>;
    /// Reads `out.len()` bytes at `offset`.
    fn get(&self, domain: usize, owner: usize, offset: u64, out: &mut [u8]);
    /// Writes `src` at `offset`.
    fn put(&self, domain: usize, owner: usize, offset: u64, src: &[u8]);
    /// Adds the `dt` elements of `src` element-wise and atomically into the ones at `offset`;
    /// `false` when the backend cannot add elements of `dt` atomically (nothing is written).
    fn accumulate(&self, domain: usize, owner: usize, offset: u64, src: &[u8], dt: DataType) -> bool;
    /// Atomically adds `v` to the `i32` at `offset`; returns the value before.
    fn fetch_add(&self, domain: usize, owner: usize, offset: u64, v: i32) -> i32;
    /// Atomically replaces the `i32` at `offset` by `v`; returns the value before.
    fn swap(&self, domain: usize, owner: usize, offset: u64, v: i32) -> i32;
    /// Collective: every process's `mine`, in rank order, on every process.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
    /// Collective: after a device epoch every rank finished, the next one starts (the
    /// watchdog forgets the verdict and every rank counts as running again).
    fn next_epoch(&self);
}

/// What a distributed rank is doing, as its watchdog poll reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankState {
    /// Every unfinished unit of the rank is parked in a wait.
    Blocked,
    /// The rank finished all its work (its window stays up for the others).
    Done,
}

/// What a distributed rank does after a watchdog poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Look at its cells again.
    Go,
    /// Every rank finished: the run is over.
    Finished,
    /// Every rank is blocked or finished and nothing changed for the watchdog's period.
    Deadlock,
}

/// The global quiescence watchdog of a distributed run.
pub trait Watchdog {
    /// Reports that this rank is `state` after `steps` steps; called in a loop while it is.
    fn poll(&self, state: RankState, steps: u64) -> Poll;
}

impl World {
    /// The window backend, when there is one.
    pub fn backend(&self) -> Option<Arc<dyn WindowBackend>> {
        self.shared.backend.clone()
    }

    /// The global rank this process runs, when the windows live behind a backend.
    pub fn distributed_rank(&self) -> Option<usize> {
        self.shared.backend.as_ref().map(|b| b.rank())
    }

    /// Installs a window backend (before the run materialises any window).
    pub fn set_backend(&mut self, b: Arc<dyn WindowBackend>) {
        self.shared.backend = Some(b);
        // Its clocks would only see this process's ranks.
        self.shared.checks.races = false;
    }

    /// The host-tensor byte spans `(buffer, lo, hi)` this process wrote (distributed runs
    /// only), in the order written.
    pub fn host_writes(&self) -> &[(usize, usize, usize)] {
        &self.local.host_writes
    }

    /// Collective in a distributed run (nothing in-process): every process's host tensors
    /// take the bytes every other rank wrote since the last sync, so a host callback sees what
    /// it would see in-process; the recorded spans start afresh.
    pub fn sync_host(&mut self) {
        let Some(b) = self.shared.backend.clone() else { return };
        let mut mine = Vec::new();
        for &(buf, lo, hi) in &self.local.host_writes {
            let Some(h) = self.shared.host.get(buf) else { continue };
            let h = h.lock().unwrap_or_else(|e| e.into_inner());
            let Some(bytes) = h.get(lo..hi) else { continue };
            for v in [buf, lo, hi - lo] {
                mine.extend_from_slice(&(v as u64).to_le_bytes());
            }
            mine.extend_from_slice(bytes);
        }
        let me = b.rank();
        for (r, theirs) in b.all_gather(&mine).iter().enumerate() {
            if r != me {
                self.apply_host_spans(theirs);
            }
        }
        self.local.host_writes.clear();
        b.next_epoch();
    }

    /// Applies `(buffer, lo, len, bytes)` records ([`World::sync_host`]); a record that does
    /// not fit is skipped.
    fn apply_host_spans(&mut self, mut rec: &[u8]) {
        let word = |b: &[u8], k: usize| {
            b.get(k * 8..k * 8 + 8)
                .and_then(|w| w.try_into().ok())
                .map(u64::from_le_bytes)
                .map(|v| v as usize)
        };
        while let (Some(buf), Some(lo), Some(n)) = (word(rec, 0), word(rec, 1), word(rec, 2)) {
            let Some(bytes) = rec.get(24..24 + n) else { return };
            if let Some(h) = self.shared.host.get(buf) {
                let mut h = h.lock().unwrap_or_else(|e| e.into_inner());
                // A lazy buffer's chunk is filled before bytes land in it, never after.
                h.ready(lo, lo + n);
                if let Some(dst) = h.get_mut(lo..lo + n) {
                    dst.copy_from_slice(bytes);
                }
            }
            rec = &rec[24 + n..];
        }
    }

    /// Moves the bytes of a window access through the backend: `rows` addresses bytes of
    /// `[lo, hi)` in the owner's window; `who` is the access's `(span, op)` for a fault.
    pub(super) fn remote_apply(
        b: &dyn WindowBackend,
        (domain, owner, lo, hi): (usize, usize, u64, u64),
        dt: DataType,
        rows: &Rows<'_>,
        data: &mut Data<'_>,
        (span, op): (Span, &str),
    ) -> Result<(), Fault> {
        let len = (hi - lo) as usize;
        let shifted = Rows {
            base: rows.base - lo as i64,
            starts: rows.starts,
            cols: rows.cols,
            cstride: rows.cstride,
            eb: rows.eb,
        };
        // One packed run covering `[lo, hi)`: the bytes go straight between the window and the
        // caller's buffer, without a second copy of the region.
        let packed = rows.starts.len() == 1 && (rows.cstride == 1 || rows.cols == 1);
        match data {
            Data::ReadBytes(out) if packed => {
                let at = out.len();
                out.resize(at + len, 0);
                b.get(domain, owner, lo, &mut out[at..]);
                return Ok(());
            }
            Data::WriteBytes(src) if packed && src.len() == len => {
                b.put(domain, owner, lo, src);
                return Ok(());
            }
            _ => {}
        }
        match data.kind() {
            AccessKind::Read => {
                let mut buf = vec![0u8; len];
                b.get(domain, owner, lo, &mut buf);
                shifted.apply_read(dt, &buf, data);
            }
            AccessKind::Write | AccessKind::Rewrite => {
                // Only the region's own runs are written: bytes between them belong to others.
                let mut buf = vec![0u8; len];
                shifted.apply(dt, &mut buf, data);
                shifted.spans(|at, n, _| b.put(domain, owner, lo + at as u64, &buf[at..at + n]));
            }
            AccessKind::Atomic => {
                // The addends, encoded as the view's elements (x + 0 = x), added run by run.
                let mut buf = vec![0u8; len];
                let zero = {
                    let mut z = vec![0u8; dt.bytes() as usize];
                    elem::encode(dt, 0.0, &mut z);
                    z
                };
                for e in buf.chunks_exact_mut(zero.len().max(1)) {
                    e.copy_from_slice(&zero);
                }
                shifted.apply(dt, &mut buf, data);
                let mut ok = true;
                shifted.spans(|at, n, _| {
                    ok &= b.accumulate(domain, owner, lo + at as u64, &buf[at..at + n], dt)
                });
                if !ok {
                    return Err(Fault::runtime(span, format!("{op}: the MPI engine cannot add {dt} elements atomically (FP32, FP64 and integer types only)")));
                }
            }
        }
        Ok(())
    }
}
