//! Help for a deadlock caused by a rank-divergent branch: an `if` that some ranks take and
//! others skip, holding the notify another rank waits for.
//!
//! Guarantees: the interpreter records, per `if` statement and rank, which branches the rank
//! took ([`Branches`]). For each blocked wait of a deadlock, [`help`] looks in the waiting
//! kernel for an `if` one of whose branches holds a notify (an op whose record's signal role
//! is `Notify`) into the same signal tensor the wait reads, such that a rank that finished
//! without writing the awaited cell ran that `if` but never took the notify's branch, while
//! another rank did take it — so the branch's condition differs between ranks. It adds one
//! `help:` pointing at that condition, naming the rank and the branch it took. Nothing is
//! added when no such `if` exists (the deadlock has another cause) or the run kept no record.

use crate::report::render::WaitGraph;
use crate::report::Fault;
use pld_ir::{Block, Expr, ExprKind, Program, SignalRole, Span, Stmt, StmtKind};
use rustc_hash::FxHashMap;

/// Took the then branch.
const THEN: u8 = 1;
/// Took the else branch.
const ELSE: u8 = 2;

/// Per `if` statement (its span) and rank, the branches taken (bit set of `THEN`, `ELSE`).
#[derive(Clone, Debug, Default)]
pub struct Branches(FxHashMap<(Span, usize), u8>);

impl Branches {
    /// Rank `rank` took the then (`taken`) or else branch of the `if` at `span`.
    pub fn record(&mut self, span: Span, rank: usize, taken: bool) {
        *self.0.entry((span, rank)).or_default() |= if taken { THEN } else { ELSE };
    }

    /// Adds another record's branches (a forked world's).
    pub fn absorb(&mut self, other: Branches) {
        for (k, v) in other.0 {
            *self.0.entry(k).or_default() |= v;
        }
    }

    fn taken(&self, span: Span, rank: usize) -> u8 {
        self.0.get(&(span, rank)).copied().unwrap_or(0)
    }
}

/// An `if` holding a notify into a signal: its statement span, its condition's span, and the
/// branch ([`THEN`] or [`ELSE`]) the notify sits in.
struct Guarded {
    stmt: Span,
    cond: Span,
    side: u8,
}

/// Deadlock `f` with a `help:` at the rank-divergent branch that skipped an awaited notify,
/// when there is one.
pub fn help(mut f: Fault, program: &Program, branches: &Branches) -> Fault {
    let Some(graph) = f.context.graph.clone() else { return f };
    if let Some((text, span)) = find(&graph, program, branches) {
        f.context.helps.push((text, span));
    }
    f
}

fn find(graph: &WaitGraph, program: &Program, branches: &Branches) -> Option<(String, Span)> {
    for w in &graph.waits {
        let kernel = w.kernel.split(['#', ' ']).next().unwrap_or(&w.kernel);
        let Some(func) = program.function(kernel) else { continue };
        let Some(signal) = waited_signal(&func.body, w.span) else { continue };
        let silent: Vec<usize> = graph.finished.iter().copied().filter(|r| !w.writers.contains(r)).collect();
        for g in guarded_notifies(&func.body, signal) {
            let took = |r: usize| branches.taken(g.stmt, r);
            let Some(&skipper) = silent.iter().find(|&&r| took(r) != 0 && took(r) & g.side == 0) else {
                continue;
            };
            let Some(taker) = (0..graph.finished.len() + graph.live.len()).find(|&r| took(r) & g.side != 0)
            else {
                continue;
            };
            return Some((
                format!(
                    "rank {skipper} skips the notify into `{}` that rank {} waits for: this condition depends \
                     on the rank (it took the other branch on rank {skipper} than on rank {taker}); notify \
                     from every rank the waits expect (move the notify out of the branch, or make the waits \
                     follow the same condition)",
                    cell_buffer(&w.cell),
                    w.rank
                ),
                g.cond,
            ));
        }
    }
    None
}

/// The buffer part of a cell description (`signal_buf[0] on rank 1` → `signal_buf`).
fn cell_buffer(cell: &str) -> &str {
    cell.split(['[', ' ']).next().unwrap_or(cell)
}

/// The first argument of a signal call, when it names a value.
fn signal_arg(e: &Expr, role: SignalRole) -> Option<pld_ir::ValueId> {
    let ExprKind::Call(c) = &e.kind else { return None };
    if c.signal_role() != role {
        return None;
    }
    match c.args.first().map(|a| &a.kind) {
        Some(ExprKind::Var(v)) => Some(*v),
        _ => None,
    }
}

/// The signal value the blocking wait at `span` reads.
fn waited_signal(body: &Block, span: Span) -> Option<pld_ir::ValueId> {
    let mut found = None;
    body.walk(&mut |s: &Stmt| {
        s.for_each_expr(&mut |e| {
            e.walk(&mut |x| {
                if found.is_none() && (x.span == span || s.span == span) {
                    found = signal_arg(x, SignalRole::BlockingWait);
                }
            });
        });
    });
    found
}

/// Every `if` of `body` with a notify into `signal` in one of its branches.
fn guarded_notifies(body: &Block, signal: pld_ir::ValueId) -> Vec<Guarded> {
    let notifies = |b: &Block| {
        let mut any = false;
        b.walk_exprs(&mut |e| any |= signal_arg(e, SignalRole::Notify) == Some(signal));
        any
    };
    let mut out = Vec::new();
    body.walk(&mut |s: &Stmt| {
        if let StmtKind::If { cond, then_body, else_body, .. } = &s.kind {
            for (b, side) in [(then_body, THEN), (else_body, ELSE)] {
                if notifies(b) {
                    out.push(Guarded { stmt: s.span, cond: cond.span, side });
                }
            }
        }
    });
    out
}
