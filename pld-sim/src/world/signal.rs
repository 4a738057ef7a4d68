//! Signal cells: addressing, values, writers, the clocks their notifiers release, and the
//! predicate a wait parks on ([`Park`], read by the schedulers, the timeline and the micro
//! programs from here, below the op semantics).
//!
//! Guarantees: a cell is addressed through the same checked resolution as data; acquiring a
//! cell joins exactly the clocks released into it.

use super::*;
use crate::credit::EqWait;
use pld_runtime_abi::NotifyOp;

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
    /// Which notifies deposited the credits it holds (see [`crate::credit`]), and the `Eq`
    /// waits satisfied on it.
    pub ledger: Option<Box<crate::credit::Ledger>>,
}

/// `Eq` waits kept per cell at most (later ones are not judged).
const MAX_EQ_WAITS: usize = 64;

/// Records that rank `g` (clock `vc`, release state `rel`; kernel `who`) passed `Eq expected`
/// at `span` on the cell `meta` (under its window's lock); a Set-driven cell is not judged.
pub(super) fn note_eq_wait(
    (vc, rel): (&mut [u32], &mut crate::clock::Release),
    g: usize,
    meta: &mut CellMeta,
    (expected, span, who): (i32, Span, &str),
) {
    if meta.first.is_some_and(|f| f.set) {
        return;
    }
    let Some(l) = meta.ledger.as_deref_mut() else { return };
    rel.settle(vc, g);
    let clock = vc.get(g).copied().unwrap_or(0);
    let list = &mut l.eq_waits;
    if list.len() < MAX_EQ_WAITS {
        list.push(EqWait { rank: g as u16, clock, expected, span, who: who.to_string() });
    }
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

impl World {
    /// Signal fault `f` (offset `i` outside a dimension of `dim` cells) with a `help:` at the
    /// allocation when the signal's buffer was sized in numbers for fewer ranks than its comm
    /// domain has and `i` is a rank index: the fix is a size in the rank count.
    fn undersized_help(&self, mut f: Fault, sig: &TRef, i: i64, dim: i64) -> Fault {
        let Mem::Window { alloc, .. } = sig.mem else { return f };
        let Some(al) = self.shared.allocs.get(alloc) else { return f };
        let n = self.shared.domains.get(al.domain).map_or(0, |d| d.members.len()) as i64;
        let Some(at) = al.literal_at.filter(|_| dim < n && (0..n).contains(&i)) else { return f };
        let per = (al.size % dim as u64 == 0).then(|| al.size / dim as u64).filter(|p| *p > 0);
        let size =
            per.map_or_else(|| "pld.world_size() * …".to_string(), |p| format!("pld.world_size() * {p}"));
        f.context.helps.push((
            format!(
                "`{}` is sized in numbers for {dim} rank(s), but its comm domain has {n}: size it by the rank \
                 count, `pld.alloc_window_buffer({size})`, and give its windows the rank count as that \
                 dimension (`pl.dynamic(\"NR\")` / `pld.world_size()`) instead of {dim}",
                al.name
            ),
            at,
        ));
        f
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
                let f = Fault::new(
                    ReportKind::OutOfBounds,
                    span,
                    format!("{op} on rank {g}: signal offset {i} in dimension {d} is outside [0, {dim})"),
                );
                return Err(self.undersized_help(f, sig, i, dim));
            }
            e += i * sig.strides.get(d).copied().unwrap_or(1);
        }
        let r = self.resolve(g, sig, peer, e * 4, span, op)?;
        let Mem::Window { alloc, .. } = sig.mem else {
            return Err(Fault::runtime(span, format!("{op}: signal must be window-bound")));
        };
        let al = &self.shared.allocs[alloc];
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
        if let Some(b) = &self.shared.backend {
            // An atomic read: adding zero.
            return b.fetch_add(r.domain, r.owner, r.offset, 0);
        }
        cell_of(&read(&self.shared.domains[r.domain].wins[r.owner]), r.offset)
    }

    /// Stores a cell value.
    pub fn set_cell(&mut self, r: Resolved, v: i32) {
        if let Some(b) = &self.shared.backend {
            b.swap(r.domain, r.owner, r.offset, v);
            return;
        }
        let o = r.offset as usize;
        write(&self.shared.domains[r.domain].wins[r.owner])[o..o + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Notifies a cell through the window backend, when there is one: atomically adds
    /// `value` (or, with `set`, stores it) and returns the value before; `None` in-process.
    pub fn backend_notify(&self, r: Resolved, set: bool, value: i32) -> Option<i32> {
        let b = self.shared.backend.as_ref()?;
        Some(if set {
            b.swap(r.domain, r.owner, r.offset, value)
        } else {
            b.fetch_add(r.domain, r.owner, r.offset, value)
        })
    }

    /// Every rank that ever wrote the cell.
    pub fn cell_writers(&self, r: Resolved) -> Vec<usize> {
        let st = lock(&self.shared.domains[r.domain].wins[r.owner].state);
        let mask = st.cells.get(&r.offset).map_or(0, |m| m.writers);
        (0..64).filter(|g| mask >> g & 1 == 1).collect()
    }

    /// The names ([`World::cell_name`]) of every cell global rank `g` wrote, as far as this
    /// world saw (a distributed run's process sees its own rank's notifies).
    pub fn cells_written_by(&self, g: usize) -> Vec<String> {
        let bit = 1u64.checked_shl(g as u32).unwrap_or(0);
        let mut out = Vec::new();
        for (domain, dom) in self.shared.domains.iter().enumerate() {
            for (owner, w) in dom.wins.iter().enumerate() {
                let st = lock(&w.state);
                for (&offset, meta) in &st.cells {
                    if meta.writers & bit != 0 {
                        out.push(self.cell_name(Resolved { domain, owner, offset }));
                    }
                }
            }
        }
        out
    }

    /// Buffer name and element index of a cell, for reports.
    pub fn cell_name(&self, r: Resolved) -> String {
        let rank = self.shared.domains[r.domain].members[r.owner];
        match self.alloc_at(r.domain, r.offset) {
            Some(al) => format!("{}[{}] on rank {rank}", al.name, (r.offset - al.offset) / 4),
            None => format!("byte {} on rank {rank}", r.offset),
        }
    }

    /// Releases rank `g`'s clock into a cell it notifies (its clock advances before its next
    /// recorded access or clock change, see [`crate::clock`]).
    pub fn release_into(&mut self, g: usize, key: (usize, usize, u64)) {
        let mut st = lock(&self.shared.domains[key.0].wins[key.1].state);
        let meta = st.cells.entry(key.2).or_default();
        let (vc, rel) = self.ranks[g].clocks();
        release_clock(vc, rel, &mut meta.vc);
    }

    /// Acquires the clock of a cell into rank `g` (a satisfied wait).
    pub fn acquire_from(&mut self, g: usize, key: (usize, usize, u64)) {
        let st = lock(&self.shared.domains[key.0].wins[key.1].state);
        if let Some(meta) = st.cells.get(&key.2) {
            let (vc, rel) = self.ranks[g].clocks();
            acquire_clock(vc, rel, g, meta.vc.as_slice());
        }
    }
}

/// The little-endian `i32` at byte `o` of a window.
fn cell_of(m: &[u8], o: u64) -> i32 {
    let o = o as usize;
    i32::from_le_bytes([m[o], m[o + 1], m[o + 2], m[o + 3]])
}

impl World {
    /// TNOTIFY by notifier `n` (rank `g`, kernel `who`, at `span`; checked, see
    /// [`World::check_notify`]) on the resolved cell `r`: Set stores `value`, AtomicAdd adds
    /// it (wrapping, warned); the cell's value and metadata change together under its window's
    /// lock, the notifier's clock is released into the cell and the credit recorded in its
    /// ledger.
    pub fn notify_cell(
        &mut self,
        n: Checked<'_>,
        r: Resolved,
        value: i32,
        op: NotifyOp,
    ) -> Result<(), Fault> {
        let Notifier { g, span, who, op: op_name, .. } = *n.notifier();
        let me = self.shared.domains[r.domain].drank(g);
        let epilogue = op == NotifyOp::AtomicAdd && value < 0 && me == Some(r.owner);
        let call = self.signal_step(g, r, epilogue, span);
        let credits = if op == NotifyOp::AtomicAdd { value.max(0) as u32 } else { 0 };
        let gen = self.notify_generation(g, r, call, credits);
        // The cell's value and metadata change together under its window's lock (a waiter on
        // another thread sees both or neither).
        // Borrowed, not cloned (see `World::touch`).
        // A distributed run's cell lives behind the window backend, which applies the notify
        // atomically there (its metadata below is this rank's view only).
        let remote_old = self.backend_notify(r, op == NotifyOp::Set, value);
        let win = &self.shared.domains[r.domain].wins[r.owner];
        let mut st = lock(&win.state);
        let mut bytes = remote_old.is_none().then(|| write(win));
        let o = r.offset as usize;
        let old = match (&bytes, remote_old) {
            (Some(b), _) => i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]),
            (None, v) => v.unwrap_or(0),
        };
        // Named only for a report (formatting it on every notify is most of a notify's cost).
        let cell_name = |world: &World| world.cell_name(r);
        let meta = st.cells.entry(r.offset).or_default();
        let set = op == NotifyOp::Set;
        match meta.first {
            Some(first) if first.set != set => {
                let (this, that) = if set { ("Set", "AtomicAdd") } else { ("AtomicAdd", "Set") };
                return Err(Fault::new(
                    ReportKind::MixedNotify,
                    span,
                    format!(
                        "{op_name} {this} by rank {g} ({who}) on signal cell {} which rank {} already wrote with {that}",
                        cell_name(self),
                        first.rank
                    ),
                )
                .note_at(format!("the earlier {that} is at"), first.span)
                .note("never mix Set and AtomicAdd on one cell: a Set can clobber an advanced counter"));
            }
            Some(_) => {}
            None => meta.first = Some(FirstNotify { set, rank: g as u16, span }),
        }
        if !set && value > 0 {
            // A credit unordered with an `Eq` wait that an earlier value satisfied: on another
            // interleaving it lands first, the cell passes the expected value and the wait
            // never returns.
            let vc = &self.ranks[g].vc;
            let late = meta.ledger.as_deref().and_then(|l| {
                l.eq_waits.iter().find(|w| {
                    usize::from(w.rank) != g && vc.get(usize::from(w.rank)).copied().unwrap_or(0) < w.clock
                })
            });
            if let Some(w) = late {
                return Err(Fault::new(
                    ReportKind::Deadlock(Vec::new()),
                    w.span,
                    format!(
                        "wait == {} by rank {} ({}) on signal cell {} can be overshot: rank {g}'s notify (+{value}, {who}) is not ordered after it, so on another interleaving it lands first, the cell passes {} and the wait never returns",
                        w.expected,
                        w.rank,
                        w.who,
                        cell_name(self),
                        w.expected
                    ),
                )
                .note_at("the notify that can overshoot it is at", span)
                .note("wait with `Ge` where a peer's next credit can arrive early, or order that credit after the wait"));
            }
        }
        let new = if set { value } else { old.wrapping_add(value) };
        if new != old {
            // Progress for the liveness budget (`World::idle_steps`).
            self.tally.progress_at = self.tally.stats.steps;
        }
        let overflow = op == NotifyOp::AtomicAdd && old.checked_add(value).is_none();
        if op == NotifyOp::AtomicAdd && new == 0 {
            meta.first = None;
        }
        meta.writers |= 1u64.checked_shl(g as u32).unwrap_or(0);
        // Release the notifier's clock into the cell (`World::release_into`, on the entry at hand).
        let (vc, rel) = self.ranks[g].clocks();
        crate::clock::release_clock(vc, rel, &mut meta.vc);
        let origin = crate::credit::Origin { rank: g as u16, call, gen, span };
        meta.ledger.get_or_insert_default().notify(set, value, origin, &meta.vc);
        if let Some(b) = bytes.as_mut() {
            b[o..o + 4].copy_from_slice(&new.to_le_bytes());
        }
        if overflow {
            let name = cell_name(self);
            self.tally.warnings.push(format!("{op_name} by rank {g} ({who}) wraps signal cell {name} from {old} by {value} past the int32 range"));
        }
        self.tally.stats.notifies[g] += 1;
        if let Some(log) = &mut self.local.deps {
            log.push(super::deps::cell_ev(g, r.domain, r.owner, r.offset));
        }
        self.local.meter.notified(r, set, value, old, new, me != Some(r.owner));
        self.ranks[g].notified = true;
        if let Some(e) = &self.shared.wake {
            e.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(())
    }

    /// TWAIT of rank `g`, one sweep, on the resolved cell `r`: `None` when satisfied (clock
    /// acquired, the wait and a completed barrier round counted), else the park record.
    #[allow(clippy::too_many_arguments)]
    pub fn wait_cell(
        &mut self,
        g: usize,
        r: Resolved,
        expected: i32,
        ge: bool,
        span: Span,
        who: &str,
    ) -> Result<Option<Park>, Fault> {
        let park = Park { cell: r, ge, unsigned: false, expected };
        if self.acquire_wait(g, &park, span, who)? {
            self.tally.stats.waits[g] += 1;
            self.local.meter.waited(&park);
            if std::mem::take(&mut self.ranks[g].notified) {
                self.tally.stats.barrier_rounds[g] += 1;
            }
            Ok(None)
        } else {
            Ok(Some(park))
        }
    }
}

/// A parked wait: the cell and predicate a core blocks on.
#[derive(Clone, Debug)]
pub struct Park {
    /// The awaited cell.
    pub cell: Resolved,
    /// `true` for Ge, `false` for Eq.
    pub ge: bool,
    /// Unsigned comparison (deferred conditions).
    pub unsigned: bool,
    /// Expected value.
    pub expected: i32,
}

impl Park {
    /// Whether `v` satisfies the predicate.
    pub fn holds(&self, v: i32) -> bool {
        if self.unsigned {
            (v as u32) >= (self.expected as u32)
        } else if self.ge {
            v >= self.expected
        } else {
            v == self.expected
        }
    }

    /// `Ge 3`, `Eq 0`, `unsigned Ge 1`.
    pub fn describe(&self) -> String {
        match (self.unsigned, self.ge) {
            (true, _) => format!("unsigned >= {}", self.expected),
            (false, true) => format!(">= {}", self.expected),
            (false, false) => format!("== {}", self.expected),
        }
    }
}
