//! Call and generation accounting of the self-clearing signal protocols on the world (see
//! [`crate::credit`] for the ledgers): which call a signal op belongs to, whether a satisfied
//! wait was passed by a stale credit, and the end-of-run leak check.
//!
//! Guarantees:
//! - A wait's predicate check and the clock it acquires happen in one atomic step under the
//!   cell's window lock; a credit of another call (or, on a buffer known to self-clear, an
//!   earlier generation) than the waiter's is reported, never silently accepted.
//! - The leak check visits every notified AtomicAdd cell of every self-cleared buffer.

use super::{lock, read, Resolved, World};
use crate::clock::acquire_clock;
use crate::credit::{LastNotify, Origin, Satisfied};
use crate::report::{Fault, ReportKind};
use crate::world::Park;
use pld_ir::Span;

impl World {
    /// The named buffer of domain `domain` holding window byte `offset`.
    pub fn alloc_index_at(&self, domain: usize, offset: u64) -> Option<usize> {
        self.shared.domains[domain].allocs.iter().copied().find(|&a| {
            let al = &self.shared.allocs[a];
            offset >= al.offset && offset < al.offset + al.rounded
        })
    }

    /// Notes a signal op of rank `g` on the cell `r` (an epilogue add when `epilogue`) and
    /// returns the call index of rank `g` on the cell's buffer it belongs to.
    pub(crate) fn signal_step(&mut self, g: usize, r: Resolved, epilogue: bool, span: Span) -> u32 {
        let Some(alloc) = self.alloc_index_at(r.domain, r.offset) else { return 0 };
        if epilogue {
            self.tally.epilogue_sites.entry(alloc).or_insert(span);
        }
        match self.ranks.get_mut(g).map(|s| &mut s.calls) {
            Some(m) => m.entry(alloc).or_default().step(epilogue),
            None => 0,
        }
    }

    /// The generation of the first of `credits` credits rank `g` notifies into cell `r` in
    /// call `call` (see [`Origin::gen`]): 0 for none (a Set, a non-positive add).
    pub(crate) fn notify_generation(&mut self, g: usize, r: Resolved, call: u32, credits: u32) -> u32 {
        match self.ranks.get_mut(g).map(|s| &mut s.gens) {
            Some(gs) if credits > 0 => gs.count_sent((r.domain, r.owner, r.offset), call, credits),
            _ => 0,
        }
    }

    /// A wait of rank `g` at `span` for `park` on its cell: whether the predicate holds; if so
    /// rank `g` acquires the clock of what satisfied it (see [`crate::credit::Ledger::satisfied`]) in the same
    /// atomic step, and a credit of another call than the waiter's is a stale-credit fault.
    pub fn acquire_wait(&mut self, g: usize, park: &Park, span: Span, who: &str) -> Result<bool, Fault> {
        let r = park.cell;
        let call = self.signal_step(g, r, false, span);
        let win = &self.shared.domains[r.domain].wins[r.owner];
        let mut guard = lock(&win.state);
        // A waited-for cell is a signal cell, defined from the start (D-sim-22).
        let meta = guard.cells.entry(r.offset).or_default();
        let value = self.cell_value(r);
        if !park.holds(value) {
            return Ok(false);
        }
        // Satisfied: the predicate check and the clock acquired from what satisfied it happen
        // under one hold of the cell's window lock.
        if let Some(log) = &mut self.local.deps {
            log.push(super::deps::cell_ev(g, r.domain, r.owner, r.offset));
        }
        let (vc, rel) = self.ranks[g].clocks();
        // One producer besides the owner's own epilogue: generations are that producer's.
        let owner_g = self.shared.domains[r.domain].members.get(r.owner).copied().unwrap_or(usize::MAX);
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
        if let Some(l) = meta.ledger.as_deref_mut() {
            l.note_awaited(park.expected, park.unsigned);
        }
        if !park.ge && !park.unsigned && park.expected >= 1 {
            let clocks = (&mut vc[..], rel);
            super::signal::note_eq_wait(clocks, g, meta, (park.expected, span, who));
        }
        drop(guard);
        if let Some(origin) = stale {
            return Err(self.stale_fault(g, park, span, who, call, origin, value));
        }
        if let (Some((origin, judged)), Some(gs)) = (gen_wait, self.ranks.get_mut(g).map(|s| &mut s.gens)) {
            let expected = gs.count_wait((r.domain, r.owner, r.offset), who, call);
            if judged && origin.gen < expected {
                // Judged only on signals some rank self-clears (the seed's barrier protocol):
                // at once when that is known, else when the run ends.
                let f = self.generation_fault(g, park, span, who, expected, origin, value);
                let alloc = self.alloc_index_at(r.domain, r.offset).unwrap_or(usize::MAX);
                if self.tally.epilogue_sites.contains_key(&alloc) {
                    return Err(f);
                }
                if self.tally.stale_generation.is_none() {
                    self.tally.stale_generation = Some(Box::new((alloc, f)));
                }
            }
        }
        Ok(true)
    }

    /// The end-of-run part of the generation check: a wait satisfied by an earlier
    /// generation's credit, on a buffer that turned out to be self-clearing.
    pub fn generation_check(&mut self) -> Result<(), Fault> {
        match self.tally.stale_generation.take() {
            Some(b) if self.tally.epilogue_sites.contains_key(&b.0) => Err(b.1),
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

    /// End-of-run check of the signals no rank self-clears: an AtomicAdd cell holding credits
    /// that no satisfied wait reached (a notify nobody waits for, or a second call consuming a
    /// first call's credits) is a credit-leak fault; on a cell a `defer_wait` waited on (a
    /// counter the program keeps across calls) it is a warning (docs/DECISIONS.md D-sim-3).
    pub fn leftover_check(&mut self) -> Result<(), Fault> {
        if self.shared.backend.is_some() {
            // A distributed run's process sees only its own rank's notifies.
            return Ok(());
        }
        let mut left: Vec<(String, i64, Option<LastNotify>)> = Vec::new();
        let mut kept = Vec::new();
        for (domain, dom) in self.shared.domains.iter().enumerate() {
            for (owner, w) in dom.wins.iter().enumerate() {
                let st = lock(&w.state);
                let bytes = read(w);
                for (&off, meta) in &st.cells {
                    let (Some(l), o) = (meta.ledger.as_deref(), off as usize) else { continue };
                    let cleared = self
                        .alloc_index_at(domain, off)
                        .is_some_and(|a| self.tally.epilogue_sites.contains_key(&a));
                    if cleared || meta.first.is_some_and(|f| f.set) || o + 4 > bytes.len() {
                        continue;
                    }
                    let v = i32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
                    let n = l.unawaited(v);
                    if n > 0 {
                        let name = self.cell_name(Resolved { domain, owner, offset: off });
                        if l.deferred {
                            kept.push(format!("signal cell {name} = {v} keeps {n} credit(s) no wait reached (a deferred-wait counter the program keeps)"));
                        } else {
                            left.push((format!("{name} = {v}"), n, l.last));
                        }
                    }
                }
            }
        }
        self.tally.warnings.extend(kept);
        let Some((_, _, culprit)) = left.first().cloned() else { return Ok(()) };
        let mut f = Fault::new(
            ReportKind::CreditLeak,
            culprit.map_or(Span::DUMMY, |(_, _, span)| span),
            format!(
                "{} signal cell(s) hold credits that no wait consumed after every rank finished: a notify nobody waits for, or a call that consumed an earlier call's credits",
                left.len()
            ),
        );
        if let Some((rank, _, _)) = culprit {
            f = f.at_site(crate::report::render::Site {
                rank: usize::from(rank),
                core: None,
                kernel: "(end of run)".into(),
            });
        }
        for (cell, n, last) in left.into_iter().take(16) {
            f = match last {
                Some((rank, value, span)) => f.note_at(
                    format!("{cell}: {n} credit(s) never waited for; the last notify to write it ({value:+} by rank {rank}) is at"),
                    span,
                ),
                None => f.note(format!("{cell}: {n} credit(s) never waited for")),
            };
        }
        Err(f.note("every credit a notify deposits must be waited for (a wait `Ge t` consumes the first t); clear the cell in an epilogue, or wait for the count the protocol sends"))
    }

    /// End-of-run check: after the self-clearing protocols, every notified AtomicAdd cell of every
    /// signal buffer some rank self-cleared is zero again (not only the cells an epilogue touched).
    pub fn leak_check(&self) -> Result<(), Fault> {
        let mut leaks: Vec<(String, Option<LastNotify>)> = Vec::new();
        let mut sites: Vec<(String, Span)> = Vec::new();
        for (&alloc, &site) in &self.tally.epilogue_sites {
            let al = &self.shared.allocs[alloc];
            let dom = &self.shared.domains[al.domain];
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
            f = f.at_site(crate::report::render::Site {
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
