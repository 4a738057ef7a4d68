//! Credit ledgers of signal cells: which notify deposited each credit a cell holds, so that a
//! satisfied wait is ordered after (and judged by) the credits that satisfy it, not by
//! whatever else landed in the cell before the waiter polled.
//!
//! Guarantees:
//! - A cell's credits are kept as runs of tokens in the order of their call (see below), then
//!   of arrival; an AtomicAdd of `+v` appends `v` tokens, a negative AtomicAdd consumes tokens
//!   from the front (the oldest call's first), a Set replaces them all.
//! - A wait `Ge t` / `Eq t` (`t ≥ 1`) is satisfied by the `t`-th token: the waiter acquires the
//!   clock the cell had when that token arrived — so a race report does not depend on whether
//!   the waiter polled before or after later credits arrived (a fast peer's next-round notify
//!   no longer orders the waiter after the peer's next-round writes). A wait for `t ≤ 0` is
//!   satisfied by the last consumption (or Set). When the ledger disagrees with the cell (bytes
//!   written by a data op), the whole released clock is acquired, as before.
//! - A *call* of a self-clearing protocol on a signal buffer is counted per rank: a rank's call
//!   index on a buffer is the number of epilogues (runs of negative AtomicAdds into its own
//!   cells) it has started on it. Every token carries its depositor's call index; a wait
//!   satisfied by a token of another call than the waiter's own is a stale credit
//!   (docs/DECISIONS.md D-sim-23). Buffers no rank ever self-clears stay at call 0, so
//!   monotonic counters and flags are never judged. The seed's bounded skew — a slow rank's
//!   next-call credit landing before the fast rank's epilogue — is absorbed by consuming the
//!   oldest call's tokens first.
//! - Within a call, single-credit notifies carry their generation (the producer's how-many-th
//!   +1 into the cell) and each waiting kernel counts its waits per cell: on a self-cleared
//!   buffer, a single-producer cell's wait passed by a lower generation's credit is a stale
//!   credit too (at once when the buffer is known to self-clear, else at the end of the run).

use crate::clock::{acquire_clock, CellClock};
use crate::report::{Fault, ReportKind};
use crate::sem::Park;
use crate::world::{lock, read, Resolved, World};
use pld_ir::Span;

/// Token runs kept per cell at most; older runs merge (their waiters then acquire the later
/// run's clock: more order, never less soundness of what is reported).
const MAX_RUNS: usize = 64;

/// Who deposited a run of tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Origin {
    /// Global rank of the notifier.
    pub rank: u16,
    /// Its call index on the signal buffer when it notified.
    pub call: u32,
    /// Its generation: the how-many-th single-credit notify into this cell of its call it was
    /// (0: not counted — a Set, or a notify of several credits at once).
    pub gen: u32,
    /// The notify's source location.
    pub span: Span,
}

/// The last notify of a cell: (global rank, value, location).
pub type LastNotify = (u16, i32, Span);

/// A run of `count` tokens that arrived together.
#[derive(Clone, Debug)]
struct Run {
    count: i64,
    /// The cell's released clock right after the run arrived.
    clock: CellClock,
    origin: Origin,
}

/// The credit ledger of one cell.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    runs: Vec<Run>,
    /// Tokens consumed before they arrived (a negative add ahead of its credits).
    debt: i64,
    /// The cell's clock at the last consumption or Set (what a `t ≤ 0` wait acquires).
    floor: CellClock,
    /// The last notify of the cell (any kind), for leak reports.
    pub last: Option<LastNotify>,
}

/// What satisfied a wait.
pub enum Satisfied<'a> {
    /// A token: acquire this clock; the token's origin.
    Token(&'a CellClock, Origin),
    /// The last consumption (or nothing ever consumed): acquire this clock.
    Floor(&'a CellClock),
    /// The ledger does not explain the cell's value: acquire the whole released clock.
    Unknown,
}

impl Ledger {
    /// Tokens held.
    fn held(&self) -> i64 {
        self.runs.iter().map(|r| r.count).sum::<i64>() - self.debt
    }

    /// Records a notify: `set` (Set of `value`) or AtomicAdd of `value`, by `origin`; `clock`
    /// is the cell's released clock after the notify.
    pub fn notify(&mut self, set: bool, value: i32, origin: Origin, clock: &CellClock) {
        self.last = Some((origin.rank, value, origin.span));
        let v = i64::from(value);
        if set {
            self.runs.clear();
            self.debt = 0;
            self.floor = clock.clone();
            if v > 0 {
                self.runs.push(Run { count: v, clock: clock.clone(), origin });
            }
            return;
        }
        if v >= 0 {
            let mut v = v;
            let paid = v.min(self.debt);
            self.debt -= paid;
            v -= paid;
            if v > 0 {
                // After every run of the same or an earlier call (calls are consumed in order).
                let at = self.runs.iter().rposition(|r| r.origin.call <= origin.call).map_or(0, |i| i + 1);
                self.runs.insert(at, Run { count: v, clock: clock.clone(), origin });
                if self.runs.len() > MAX_RUNS {
                    let first = self.runs.remove(0);
                    self.runs[0].count += first.count;
                }
            }
            return;
        }
        let mut need = -v;
        while need > 0 {
            let Some(front) = self.runs.first_mut() else { break };
            let take = front.count.min(need);
            front.count -= take;
            need -= take;
            if front.count == 0 {
                self.runs.remove(0);
            }
        }
        self.debt += need;
        self.floor = clock.clone();
    }

    /// What satisfies a wait for `expected` on a cell holding `value` (the predicate holds).
    pub fn satisfied(&self, value: i32, expected: i32) -> Satisfied<'_> {
        if self.held() != i64::from(value) {
            return Satisfied::Unknown;
        }
        if expected <= 0 {
            return Satisfied::Floor(&self.floor);
        }
        let mut t = i64::from(expected) + self.debt;
        for r in &self.runs {
            if t <= r.count {
                return Satisfied::Token(&r.clock, r.origin);
            }
            t -= r.count;
        }
        Satisfied::Unknown
    }
}

/// Cell key: (domain, owning domain rank, byte offset).
type CellKey = (usize, usize, u64);

/// A rank's barrier generations within its current call: single-credit notifies it sent into
/// each cell, and waits it completed on each cell, each as (call index, count).
#[derive(Clone, Debug, Default)]
pub struct Generations {
    sent: std::collections::HashMap<(CellKey, u64), (u32, u32)>,
    /// Keyed by cell and waiting kernel (the two lanes of a mixed kernel each wait).
    waited: std::collections::HashMap<(CellKey, u64), (u32, u32)>,
}

/// A kernel name's key in [`Generations`].
fn kernel_key(who: &str) -> u64 {
    who.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Counts one more event of `call` in `map[key]` (restarting at a new call); returns the count.
fn bump(
    map: &mut std::collections::HashMap<(CellKey, u64), (u32, u32)>,
    key: (CellKey, u64),
    call: u32,
) -> u32 {
    let e = map.entry(key).or_insert((call, 0));
    if e.0 != call {
        *e = (call, 0);
    }
    e.1 += 1;
    e.1
}

/// A rank's progress through the self-clearing calls on one signal buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallPhase {
    /// Epilogues started.
    pub index: u32,
    /// The rank's last signal op on the buffer was an epilogue add.
    in_epilogue: bool,
}

impl CallPhase {
    /// Notes a signal op (`epilogue`: a negative AtomicAdd into the rank's own cell); returns
    /// the call index the op belongs to.
    pub fn step(&mut self, epilogue: bool) -> u32 {
        if epilogue && !self.in_epilogue {
            self.index += 1;
        }
        self.in_epilogue = epilogue;
        self.index
    }
}

impl World {
    /// The named buffer of domain `domain` holding window byte `offset`.
    pub fn alloc_index_at(&self, domain: usize, offset: u64) -> Option<usize> {
        self.domains[domain].allocs.iter().copied().find(|&a| {
            let al = &self.allocs[a];
            offset >= al.offset && offset < al.offset + al.rounded
        })
    }

    /// Notes a signal op of rank `g` on the cell `r` (an epilogue add when `epilogue`) and
    /// returns the call index of rank `g` on the cell's buffer it belongs to.
    pub(crate) fn signal_step(&mut self, g: usize, r: Resolved, epilogue: bool, span: Span) -> u32 {
        let Some(alloc) = self.alloc_index_at(r.domain, r.offset) else { return 0 };
        if epilogue {
            self.epilogue_sites.entry(alloc).or_insert(span);
        }
        match self.calls.get_mut(g) {
            Some(m) => m.entry(alloc).or_default().step(epilogue),
            None => 0,
        }
    }

    /// The generation of a notify of rank `g` into cell `r` in call `call` (see
    /// [`Origin::gen`]): counted for single-credit AtomicAdds only.
    pub(crate) fn notify_generation(&mut self, g: usize, r: Resolved, call: u32, counted: bool) -> u32 {
        match self.gens.get_mut(g) {
            Some(gs) if counted => bump(&mut gs.sent, ((r.domain, r.owner, r.offset), 0), call),
            _ => 0,
        }
    }

    /// A wait of rank `g` at `span` for `park` on its cell: whether the predicate holds; if so
    /// rank `g` acquires the clock of what satisfied it (see [`Ledger::satisfied`]) in the same
    /// atomic step, and a credit of another call than the waiter's is a stale-credit fault.
    pub fn acquire_wait(&mut self, g: usize, park: &Park, span: Span, who: &str) -> Result<bool, Fault> {
        let r = park.cell;
        let call = self.signal_step(g, r, false, span);
        let win = &self.domains[r.domain].wins[r.owner];
        let st = lock(&win.state);
        let o = r.offset as usize;
        let value = match self.distributed_rank() {
            Some(_) => self.cell_value(r),
            None => {
                let b = read(win);
                i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
            }
        };
        if !park.holds(value) {
            return Ok(false);
        }
        let Some(meta) = st.cells.get(&r.offset) else { return Ok(true) };
        let (vc, rel) = (&mut self.vc[g], &mut self.released[g]);
        // One producer besides the owner's own epilogue: generations are that producer's.
        let owner_g = self.domains[r.domain].members.get(r.owner).copied().unwrap_or(usize::MAX);
        let producers = (meta.writers & !1u64.checked_shl(owner_g as u32).unwrap_or(0)).count_ones();
        let mut gen_wait = None;
        let stale = match meta.ledger.as_deref().map(|l| l.satisfied(value, park.expected)) {
            Some(Satisfied::Token(clock, origin)) => {
                acquire_clock(vc, rel, g, clock.as_slice());
                if origin.call == call && !park.unsigned {
                    gen_wait = Some((origin, producers == 1 && origin.gen > 0));
                }
                (origin.call != call).then_some(origin)
            }
            Some(Satisfied::Floor(clock)) => {
                acquire_clock(vc, rel, g, clock.as_slice());
                None
            }
            Some(Satisfied::Unknown) | None => {
                acquire_clock(vc, rel, g, meta.vc.as_slice());
                None
            }
        };
        drop(st);
        if let Some(origin) = stale {
            return Err(self.stale_fault(g, park, span, who, call, origin, value));
        }
        if let (Some((origin, judged)), Some(gs)) = (gen_wait, self.gens.get_mut(g)) {
            let expected = bump(&mut gs.waited, ((r.domain, r.owner, r.offset), kernel_key(who)), call);
            if judged && origin.gen < expected {
                // Judged only on signals some rank self-clears (the seed's barrier protocol):
                // at once when that is known, else when the run ends.
                let f = self.generation_fault(g, park, span, who, expected, origin, value);
                let alloc = self.alloc_index_at(r.domain, r.offset).unwrap_or(usize::MAX);
                if self.epilogue_sites.contains_key(&alloc) {
                    return Err(f);
                }
                if self.stale_generation.is_none() {
                    self.stale_generation = Some(Box::new((alloc, f)));
                }
            }
        }
        Ok(true)
    }

    /// The end-of-run part of the generation check: a wait satisfied by an earlier
    /// generation's credit, on a buffer that turned out to be self-clearing.
    pub fn generation_check(&mut self) -> Result<(), Fault> {
        match self.stale_generation.take() {
            Some(b) if self.epilogue_sites.contains_key(&b.0) => Err(b.1),
            _ => Ok(()),
        }
    }

    /// A wait satisfied by the credit of an earlier generation of its own call.
    #[allow(clippy::too_many_arguments)]
    fn generation_fault(
        &self,
        g: usize,
        park: &Park,
        span: Span,
        who: &str,
        expected: u32,
        origin: Origin,
        value: i32,
    ) -> Fault {
        Fault::new(
            ReportKind::StaleCredit,
            span,
            format!(
                "wait {} by rank {g} ({who}) on signal cell {} (value {value}) is satisfied by a credit of an earlier barrier generation: this is rank {g}'s wait number {expected} on the cell in this call (generation expected: {expected}), the credit is rank {}'s notify number {} (generation {})",
                park.describe(),
                self.cell_name(park.cell),
                origin.rank,
                origin.gen,
                origin.gen
            ),
        )
        .note_at("the notify that deposited the credit is at", origin.span)
        .note("barrier generation g waits for g credits (`Ge g`); a threshold that does not grow with the generation passes on the previous generation's credit")
    }

    #[allow(clippy::too_many_arguments)]
    fn stale_fault(
        &self,
        g: usize,
        park: &Park,
        span: Span,
        who: &str,
        call: u32,
        origin: Origin,
        value: i32,
    ) -> Fault {
        let cell = self.cell_name(park.cell);
        let when = if origin.call < call { "an earlier" } else { "a later" };
        Fault::new(
            ReportKind::StaleCredit,
            span,
            format!(
                "wait {} by rank {g} ({who}) on signal cell {cell} (value {value}) is satisfied by a credit rank {} deposited in {when} call of the protocol: the wait belongs to call {} of rank {g} on this signal (generation expected: call {}), the credit to call {}",
                park.describe(),
                origin.rank,
                call + 1,
                call + 1,
                origin.call + 1
            ),
        )
        .note_at("the notify that deposited the credit is at", origin.span)
        .note("calls are counted by the self-clearing epilogues each rank has run on the signal; a cell the previous call's epilogue did not clear (or a signal reused before it was zero) passes this barrier early")
    }

    /// End-of-run check: after the self-clearing protocols, every notified AtomicAdd cell of every
    /// signal buffer some rank self-cleared is zero again (not only the cells an epilogue touched).
    pub fn leak_check(&self) -> Result<(), Fault> {
        let mut leaks: Vec<(String, Option<LastNotify>)> = Vec::new();
        let mut sites: Vec<(String, Span)> = Vec::new();
        for (&alloc, &site) in &self.epilogue_sites {
            let al = &self.allocs[alloc];
            let dom = &self.domains[al.domain];
            let mut hit = false;
            for (owner, w) in dom.wins.iter().enumerate() {
                let st = lock(&w.state);
                let bytes = read(w);
                for (&off, meta) in st.cells.range(al.offset..al.offset + al.size) {
                    if meta.first.is_some_and(|f| f.set) || off as usize + 4 > bytes.len() {
                        continue;
                    }
                    let o = off as usize;
                    let v = i32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
                    if v != 0 {
                        hit = true;
                        let r = Resolved { domain: al.domain, owner, offset: off };
                        let last = meta.ledger.as_ref().and_then(|l| l.last);
                        leaks.push((format!("{} = {v}", self.cell_name(r)), last));
                    }
                }
            }
            if hit {
                sites.push((al.name.clone(), site));
            }
        }
        if leaks.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = sites.iter().map(|(n, _)| n.as_str()).collect();
        // The report points at the last notify of the first leaking cell (the likely culprit).
        let culprit = leaks.iter().find_map(|(_, last)| *last);
        let mut f = Fault::new(
            ReportKind::CreditLeak,
            culprit.map_or(Span::DUMMY, |(_, _, span)| span),
            format!(
                "{} cell(s) of self-clearing signal '{}' are non-zero after every rank finished",
                leaks.len(),
                names.join("', '")
            ),
        );
        if let Some((rank, _, _)) = culprit {
            f = f.at_site(crate::report_render::Site {
                rank: usize::from(rank),
                core: None,
                kernel: "(end of run)".into(),
            });
        }
        for (cell, last) in leaks.into_iter().take(16) {
            f = match last {
                Some((rank, value, span)) => f.note_at(
                    format!("{cell}; the last notify to write it ({value:+} by rank {rank}) is at"),
                    span,
                ),
                None => f.note(cell),
            };
        }
        for (name, site) in sites {
            f = f.note_at(
                format!("the self-clearing epilogue of '{name}' (the collective's call site) is at"),
                site,
            );
        }
        Err(f.note("a self-clearing collective must subtract exactly the credits it received, from every cell of its signal"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(rank: u16, call: u32) -> Origin {
        Origin { rank, call, gen: 0, span: Span::DUMMY }
    }

    #[test]
    fn a_wait_is_satisfied_by_its_own_token_not_by_later_ones() {
        let mut l = Ledger::default();
        let c = CellClock::Own(vec![2, 0]);
        l.notify(false, 1, o(0, 0), &c);
        l.notify(false, 1, o(0, 0), &CellClock::Own(vec![5, 0]));
        match l.satisfied(2, 1) {
            Satisfied::Token(clock, origin) => {
                assert_eq!(clock.as_slice(), &[2, 0]);
                assert_eq!(origin.call, 0);
            }
            _ => panic!("the first token satisfies Ge 1"),
        }
    }

    #[test]
    fn the_epilogue_consumes_the_oldest_call_first() {
        // Rank 1's next-call credit lands before rank 0's epilogue, after a credit of the
        // current call from another producer is still outstanding.
        let mut l = Ledger::default();
        let c = CellClock::None;
        l.notify(false, 1, o(1, 0), &c);
        l.notify(false, 1, o(1, 1), &c);
        l.notify(false, 1, o(2, 0), &c);
        l.notify(false, -2, o(0, 1), &c);
        match l.satisfied(1, 1) {
            Satisfied::Token(_, origin) => assert_eq!((origin.rank, origin.call), (1, 1)),
            _ => panic!("one token left"),
        }
    }

    #[test]
    fn a_leftover_credit_of_an_earlier_call_is_what_satisfies_the_wait() {
        let mut l = Ledger::default();
        let c = CellClock::None;
        l.notify(false, 1, o(1, 0), &c);
        l.notify(false, 1, o(1, 1), &c);
        match l.satisfied(2, 1) {
            Satisfied::Token(_, origin) => assert_eq!(origin.call, 0),
            _ => panic!("token"),
        }
        assert!(matches!(l.satisfied(3, 1), Satisfied::Unknown), "value the ledger cannot explain");
    }

    #[test]
    fn call_indices_count_epilogues() {
        let mut p = CallPhase::default();
        assert_eq!(p.step(false), 0);
        assert_eq!(p.step(true), 1);
        assert_eq!(p.step(true), 1);
        assert_eq!(p.step(false), 1);
        assert_eq!(p.step(true), 2);
    }

    /// Two ranks, a 4-element FP32 `data` buffer and a 2-cell INT32 `signal`.
    fn world2() -> (World, crate::value::TRef, crate::value::TRef) {
        use crate::value::{Mem, TRef};
        use pld_ir::DataType;
        let mut w = World::new(2);
        let d = w.add_domain(vec![0, 1]);
        let a = w.alloc(d, "data", 4 * 4);
        let s = w.alloc(d, "signal", 2 * 4);
        w.allocs[s].zeroed = true;
        w.finalize().expect("finalize");
        let view = |alloc: usize, shape: Vec<i64>, dtype: DataType, w: &World| TRef {
            mem: Mem::Window { domain: d, alloc },
            owner: 0,
            base: w.allocs[alloc].offset,
            strides: TRef::packed_strides(&shape),
            shape,
            dtype,
        };
        let dv = view(a, vec![1, 4], DataType::FP32, &w);
        let sv = view(s, vec![2, 1], DataType::INT32, &w);
        (w, dv, sv)
    }

    #[test]
    fn a_wait_polled_after_a_later_notify_is_ordered_only_after_the_credit_it_needs() {
        // Rank 0 stores round 0, notifies rank 1, stores round 1 (nothing orders it after rank
        // 1's read of round 0) and notifies again; rank 1 polls `Ge 1` only now and reads rank
        // 0's row. The first credit satisfied the wait: the read races with the round-1 store,
        // exactly as when rank 1 polls between the two notifies.
        use crate::sem::system::{notify, wait};
        use crate::world::Access;
        use pld_runtime_abi::NotifyOp;
        for poll_late in [false, true] {
            let (mut w, dv, sv) = world2();
            let mut sv1 = sv.clone();
            sv1.owner = 1;
            let mut dv1 = dv.clone();
            dv1.owner = 1;
            let store = |w: &mut World, v: f64| {
                w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 4], "tile.store"), &[v; 4], false)
            };
            store(&mut w, 1.0).expect("round 0 store");
            notify(&mut w, 0, &sv, 1, &[0, 0], 1, NotifyOp::AtomicAdd, Span::DUMMY, "k").expect("notify");
            let read = |w: &mut World| {
                let at = wait(w, 1, &sv1, &[0, 0], 1, true, Span::DUMMY, "k").expect("wait");
                assert!(at.is_none(), "the wait is satisfied");
                w.read(&Access::of(1, &dv1, Some(0), &[0, 0], &[1, 4], "remote_load"))
            };
            let first = if poll_late { None } else { Some(read(&mut w).expect("round 0 read is ordered")) };
            let second = store(&mut w, 2.0);
            if !poll_late {
                assert_eq!(first, Some(vec![1.0; 4]));
                assert_eq!(second.expect_err("round-1 store races the read").kind, ReportKind::Race);
                continue;
            }
            second.expect("nobody read yet");
            notify(&mut w, 0, &sv, 1, &[0, 0], 1, NotifyOp::AtomicAdd, Span::DUMMY, "k").expect("notify 2");
            let e = read(&mut w).expect_err("the late poll is ordered after the first credit only");
            assert_eq!(e.kind, ReportKind::Race, "{}", e.message);
        }
    }
}
