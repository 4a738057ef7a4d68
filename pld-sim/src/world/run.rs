//! The world's run-level state behind methods: the checks a run enables, its memory
//! accounting, comm-domain scopes of the host pass, GM-fence and mixed-kernel lane bookkeeping,
//! warnings, the cost-model meter and the end of a run.
//!
//! Guarantees:
//! - The rest of the simulator reads and changes this state only through the operations
//!   below, so each invariant (a warning recorded once per run's list, a scope popped only by
//!   its own frame, a fence clearing exactly its rank's unfenced writes) lives here; the checks
//!   a notify runs on the fence and lane state are in `notify.rs`.

use super::Meter;
use super::{Alloc, Domain, Stats, World};
use crate::limits::{check_total, human, MemUse};
use crate::report::Fault;
use pld_ir::DataType;
use std::sync::{Arc, Mutex};

/// The checks a run enables (`pld run` flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checks {
    /// Data accesses to windows are checked for races.
    pub races: bool,
    /// A notify must be preceded by a GM fence covering earlier window writes.
    pub fences: bool,
    /// A read of window bytes nothing wrote is only a warning instead of a fault.
    pub allow_uninit_reads: bool,
}

/// The default [`crate::SimConfig::protocol_grain`]: 256 KiB per rank and protocol step.
pub const DEFAULT_PROTOCOL_GRAIN: u64 = 256 * 1024;

/// What a finished run leaves behind: its accounting, warnings and host buffers.
pub struct RunEnd {
    /// Accounting of the run.
    pub stats: Stats,
    /// Warnings of the run, each once.
    pub warnings: Vec<String>,
    /// The host/GM buffers, by buffer id.
    pub host: Vec<Arc<Mutex<crate::lazy::HostBuf>>>,
}

impl World {
    /// Number of global ranks.
    pub fn nranks(&self) -> usize {
        self.shared.nranks
    }

    /// Comm domain `d`.
    pub fn domain(&self, d: usize) -> &Domain {
        &self.shared.domains[d]
    }

    /// Every comm domain, by id.
    pub fn domains(&self) -> &[Domain] {
        &self.shared.domains
    }

    /// Named window buffer `a`.
    pub fn buffer(&self, a: usize) -> &Alloc {
        &self.shared.allocs[a]
    }

    /// Every named window buffer, by id.
    pub fn buffers(&self) -> &[Alloc] {
        &self.shared.allocs
    }

    /// Accounting so far (traffic merged by [`World::flush_traffic`]).
    pub fn stats(&self) -> &Stats {
        &self.tally.stats
    }

    /// Counts one more scheduler step; returns the run's step count.
    pub fn count_step(&mut self) -> u64 {
        self.tally.stats.steps += 1;
        self.tally.stats.steps
    }

    /// Steps since the run last made progress: wrote window bytes that change them (or added
    /// atomically), wrote host-tensor bytes, or changed a signal cell's value (the liveness
    /// budget, [`crate::budget`]). Reads are not progress: a loop that only polls data spins.
    pub fn idle_steps(&self) -> u64 {
        self.tally.stats.steps - self.tally.progress_at.min(self.tally.stats.steps)
    }

    /// Notifies rank `g` has issued so far.
    pub fn notifies_of(&self, g: usize) -> u64 {
        self.tally.stats.notifies[g]
    }

    /// Records warnings of the run (e.g. a host callback's).
    pub fn record_warnings(&mut self, warnings: impl IntoIterator<Item = String>) {
        self.tally.warnings.extend(warnings);
    }

    /// The first recorded read of undefined bytes whose buffer did not turn out to hold signal
    /// cells later in the run (a signal buffer is zero from the start).
    fn first_uninit(&mut self) -> Option<Fault> {
        let list = std::mem::take(&mut self.tally.uninit);
        list.into_iter()
            .find(|&((domain, owner, lo, _), _)| {
                let Some(al) = self.alloc_index_at(domain, lo).map(|a| &self.shared.allocs[a]) else {
                    return true;
                };
                !super::lock(&self.shared.domains[domain].wins[owner].state)
                    .has_cells(al.offset, al.offset + al.rounded)
            })
            .map(|(_, f)| *f)
    }

    /// Starts a run: its memory limit (counters reset) and the checks it enables.
    pub fn begin_run(&mut self, max_memory: u64, checks: Checks) {
        self.shared.mem = MemUse { cap: max_memory, host: 0, windows: 0 };
        self.shared.checks.races = checks.races;
        self.shared.checks.fences = checks.fences;
        self.shared.checks.allow_uninit_reads = checks.allow_uninit_reads;
    }

    /// Bytes one protocol step of a builtin collective moves per rank from now on (see
    /// [`crate::SimConfig::protocol_grain`]).
    pub fn set_protocol_grain(&mut self, bytes: u64) {
        self.shared.protocol_grain = bytes;
    }

    /// The grain set by [`World::set_protocol_grain`].
    pub fn protocol_grain(&self) -> u64 {
        self.shared.protocol_grain
    }

    /// A world with no comm domain yet gets the one of every rank.
    pub fn ensure_world_domain(&mut self) {
        if self.shared.domains.is_empty() {
            self.add_domain((0..self.shared.nranks).collect());
        }
    }

    /// Ends a run: the first read of undefined bytes (when nothing else failed) is its fault;
    /// a persistent re-run's allocation matching stops; traffic is merged; the accounting,
    /// warnings and host buffers are handed out.
    pub fn end_run(&mut self, result: Result<(), Fault>) -> (Result<(), Fault>, RunEnd) {
        let result = match result {
            Ok(()) => self.first_uninit().map_or(Ok(()), Err),
            Err(f) => Err(f),
        };
        self.local.reuse = None;
        self.flush_traffic();
        let end = RunEnd {
            stats: self.tally.stats.clone(),
            warnings: std::mem::take(&mut self.tally.warnings),
            host: std::mem::take(&mut self.shared.host),
        };
        (result, end)
    }

    /// Host buffer `buf`.
    pub fn host_cell(&self, buf: usize) -> Option<&Mutex<crate::lazy::HostBuf>> {
        self.shared.host.get(buf).map(|c| &**c)
    }

    /// Reserves `bytes` of host memory for `what` against the run's limit.
    pub fn reserve_host(&mut self, bytes: u64, what: &str) -> Result<(), Fault> {
        self.shared.mem.reserve(bytes, what)
    }

    /// The largest tile (bytes) the run's memory limit allows.
    pub fn tile_cap(&self) -> u64 {
        self.shared.mem.tile_cap()
    }

    /// The windows of every comm domain (each member holds one) plus the host tensors, checked
    /// against the run's memory limit before the windows are mapped; records the windows' bytes.
    pub fn check_window_memory(&mut self) -> Result<(), Fault> {
        let windows = self
            .shared
            .domains
            .iter()
            .fold(0u64, |t, d| t.saturating_add(d.win_size.saturating_mul(d.members.len() as u64)));
        let total = self.shared.mem.host.saturating_add(windows);
        if let Err(f) = check_total(total, self.shared.mem.cap, "its windows (every rank's) and host tensors")
        {
            let biggest = self.shared.allocs.iter().max_by_key(|a| a.size);
            return Err(match biggest {
                Some(a) => f.note(format!("largest window buffer: '{}', {} per rank", a.name, human(a.size))),
                None => f,
            });
        }
        self.shared.mem.windows = windows;
        Ok(())
    }

    /// The parallel schedule's wake-up epoch (`None` outside it).
    pub fn set_wake(&mut self, epoch: Option<Arc<std::sync::atomic::AtomicU64>>) {
        self.shared.wake = epoch;
    }

    /// The comm domain of exactly `members`, created when there is none (a persistent re-run
    /// reuses the domain it had; a first run only one with no buffers yet).
    pub fn open_comm_domain(&mut self, members: Vec<usize>) -> usize {
        let existing = if self.local.reuse.is_some() {
            self.shared.domains.iter().position(|d| d.members == members)
        } else {
            self.shared.domains.iter().position(|d| d.members == members && d.allocs.is_empty())
        };
        existing.unwrap_or_else(|| self.add_domain(members))
    }

    /// Opens a comm-domain scope of the host pass listing its window buffer names.
    pub fn enter_scope(&mut self, domain: usize, windows: Vec<String>) {
        self.local.scope_stack.push((domain, windows));
    }

    /// Closes the innermost comm-domain scope.
    pub fn exit_scope(&mut self) {
        self.local.scope_stack.pop();
    }

    /// The domain whose open scope lists window buffer `name` (innermost first).
    pub fn scope_domain(&self, name: &str) -> Option<usize> {
        self.local.scope_stack.iter().rev().find(|(_, ws)| ws.iter().any(|w| w == name)).map(|(d, _)| *d)
    }

    /// A GM fence on rank `g`: its earlier window writes are visible.
    pub fn fence(&mut self, g: usize) {
        if let Some(s) = self.ranks.get_mut(g) {
            s.unfenced = None;
        }
    }

    /// A `dtype` view of `bytes` over window buffer `a` (its shape `shape`): the buffer's
    /// domain and offset. A float view makes the buffer start as garbage, an integer-only one
    /// at zero (D-sim-1).
    pub fn view_buffer(
        &mut self,
        a: usize,
        dtype: DataType,
        shape: &[i64],
        bytes: u64,
    ) -> Result<(usize, u64), String> {
        let al = &mut self.shared.allocs[a];
        if bytes > al.size {
            return Err(format!(
                "a {shape:?} {dtype} view needs {bytes} bytes but buffer '{}' has {}",
                al.name, al.size
            ));
        }
        if dtype.is_float() {
            al.float_view = true;
            al.zeroed = false;
        } else if !al.float_view {
            al.zeroed = true;
        }
        Ok((al.domain, al.offset))
    }

    /// `pld run --zero-windows`: every window buffer starts at zero.
    pub fn zero_all_windows(&mut self) {
        self.shared.allocs.iter_mut().for_each(|a| {
            a.zeroed = true;
            a.defined = true;
        });
    }

    /// Starts a scheduler step's meter (`record_touches`: keep the bytes it touches).
    pub fn reset_meter(&mut self, record_touches: Option<bool>) {
        if let Some(t) = record_touches {
            self.local.meter.record_touches = t;
        }
        self.local.meter.reset();
    }

    /// Charges rank `g` with `tiles` tiles of kernel work `per` that a protocol step took
    /// together with its own (see [`crate::micro::Micro::Charge`]): their modeled time in the
    /// current step and their notifies, waits and barrier rounds in the accounting.
    pub fn charge_tiles(&mut self, g: usize, tiles: u64, per: &super::TileWork) {
        let w = &mut self.local.meter.work;
        w.remote_msgs = w.remote_msgs.saturating_add(tiles.saturating_mul(per.msgs));
        w.notifies = w.notifies.saturating_add(tiles.saturating_mul(per.notifies));
        w.polls = w.polls.saturating_add(tiles.saturating_mul(per.polls));
        let stats = &mut self.tally.stats;
        for (counts, each) in [
            (&mut stats.notifies, per.notifies),
            (&mut stats.waits, per.waits),
            (&mut stats.barrier_rounds, per.rounds),
        ] {
            if let Some(c) = counts.get_mut(g) {
                *c = c.saturating_add(tiles.saturating_mul(each));
            }
        }
    }

    /// The current step's meter, for a cost model that charges the step without the world
    /// (`timeline::Recorder::step_plain`).
    pub fn meter_mut(&mut self) -> &mut Meter {
        &mut self.local.meter
    }

    /// Hands the current step's meter to a cost model that reads the world while it charges
    /// the step (a fresh one stays).
    pub fn take_meter(&mut self) -> Meter {
        std::mem::take(&mut self.local.meter)
    }

    /// Gives the meter back after the cost model charged the step.
    pub fn restore_meter(&mut self, meter: Meter) {
        self.local.meter = meter;
    }
}
