//! `CheckRankUniformity`: no collective is reached under rank-dependent control flow.
//!
//! Afterwards (the pass changes nothing): no call of a collective (an op whose record says
//! [`RankRole::Collective`]: the `pld.tensor.*` collectives, the ergonomic `pld.all_reduce`
//! family, their builtin dispatches), at host, chip or InCore level, and no call of a function
//! that reaches one, runs under an `if` / `while` condition or a `for` trip count that depends
//! on the rank, or after a `return` that only some ranks take ([`crate::rank_dependence`]).
//! Each such collective is an error (`E0106`) at the collective, labelling the rank-dependent
//! condition, the `return`, the call it is reached through, and where the rank entered. The
//! seed: collectives are legal in loops and branches, but "the only remaining requirement is
//! rank-uniform execution (inherent to any barrier): rank-divergent control flow deadlocks".
//! Hand-written notify/wait protocols are rank-dependent by nature (root vs non-root) and are
//! left to the simulator: notify and wait are not collectives.

use crate::pass::{Pass, PassCx};
use crate::rank_dependence::{Ctl, Divergence, DivergenceKind, RankDependence};
use crate::util::for_each_call;
use pld_ir::{Call, Callee, Diagnostic, Diagnostics, Program, RankRole, Span};
use std::collections::{HashMap, HashSet};

/// See the module docs.
pub struct CheckRankUniformity;

impl Pass for CheckRankUniformity {
    crate::pass_info!("CheckRankUniformity");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        let reach = collectives_reached(program);
        if reach.is_empty() {
            return Ok(());
        }
        let rd = RankDependence::of(program);
        let mut diags = Diagnostics::new();
        let mut seen = HashSet::new();
        for f in &program.functions {
            rd.visit(f, &mut |c: &Call, span: Span, ctl: &Ctl| {
                let Some(why) = ctl.why else { return };
                let (coll, through) = match &c.callee {
                    Callee::Op(def) if def.rank_role == RankRole::Collective => {
                        ((span, def.name, c.spelled.unwrap_or(def.name)), None)
                    }
                    Callee::Func(name) => match reach.get(name.as_str()) {
                        Some(&coll) => (coll, Some(span)),
                        None => return,
                    },
                    Callee::Op(_) => return,
                };
                if seen.insert((coll.0, why.cond, through)) {
                    diags.push(divergent_collective(coll, why, through));
                }
            });
        }
        diags.into_result(())
    }
}

/// A collective call: its span, its op's canonical name, and its name as the user wrote it.
type Coll = (Span, &'static str, &'static str);

/// Per function: the first collective it calls, directly or through the functions it calls
/// (its span, its op's name and the name as the user wrote it).
fn collectives_reached(program: &Program) -> HashMap<&str, Coll> {
    let mut reach: HashMap<&str, Coll> = HashMap::new();
    loop {
        let mut grew = false;
        for f in &program.functions {
            if reach.contains_key(f.name.as_str()) {
                continue;
            }
            let mut first = None;
            for_each_call(&f.body, &mut |c, e| {
                if first.is_some() {
                    return;
                }
                first = match &c.callee {
                    Callee::Op(def) if def.rank_role == RankRole::Collective => {
                        Some((e.span, def.name, c.spelled.unwrap_or(def.name)))
                    }
                    Callee::Func(name) => reach.get(name.as_str()).copied(),
                    Callee::Op(_) => None,
                };
            });
            if let Some(found) = first {
                reach.insert(&f.name, found);
                grew = true;
            }
        }
        if !grew {
            return reach;
        }
    }
}

/// The error at collective `coll` (span, op), run under `why`, reached through the call at
/// `through` when it sits in another function.
fn divergent_collective(coll: Coll, why: Divergence, through: Option<Span>) -> Diagnostic {
    let (span, op, written) = coll;
    let (disagree, cond_label) = match why.kind {
        DivergenceKind::Branch => ("whether they call it", "this condition depends on the rank"),
        DivergenceKind::TripCount => ("how many times they call it", "this trip count depends on the rank"),
        DivergenceKind::LoopCondition => {
            ("how many times they call it", "this loop condition depends on the rank")
        }
    };
    let disagree = if why.early_return.is_some() { "whether they reach it" } else { disagree };
    let mut d = Diagnostic::error(
        span,
        format!("collective `{op}` under rank-dependent control flow: ranks disagree on {disagree}"),
    )
    .with_code(pld_ir::codes::RANK_DIVERGENT_COLLECTIVE)
    .with_label(why.cond, cond_label);
    if let Some(ret) = why.early_return {
        d = d.with_label(ret, "ranks that take this `return` never reach the collective");
    }
    if let Some(call) = through {
        d = d.with_label(call, "the collective is reached through this call");
    }
    let origin = why.origin.span;
    if !overlaps(origin, why.cond) && through.is_none_or(|c| !overlaps(origin, c)) {
        let what = if why.origin.passed { "the rank is passed in here" } else { "the rank enters here" };
        d = d.with_label(origin, what);
    }
    let d = d.with_note(
        "every rank must reach the same collectives in the same order: a collective waits for every rank of its domain, so a rank that skips it, or calls it a different number of times, leaves the others waiting forever (on hardware, until TWAIT's spin-count assert fires; the seed: collectives need rank-uniform execution)",
    )
    .with_help(
        "call the collective on every rank, outside the rank-dependent branch or loop, and select by rank what each rank contributes or keeps",
    );
    if written == op {
        d
    } else {
        d.in_user_words(written, op)
    }
}

/// Whether span `a` lies inside `b` or `b` inside `a` (one label would hide the other).
fn overlaps(a: Span, b: Span) -> bool {
    a.file == b.file && a.lo < b.hi && b.lo < a.hi
}
