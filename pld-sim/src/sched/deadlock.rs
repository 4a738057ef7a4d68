//! The deadlock report: every wait that can never be satisfied, who wrote its cell so far,
//! which ranks are blocked and which finished, and the wait-for graph.
//!
//! Guarantees: the report lists every parked wait it is given, in order, with its cell's
//! current value and writers; every unfinished rank is named as blocked.

use crate::report::{Fault, ParkedCore, ReportKind};
use crate::SimConfig;
use pld_ir::Span;

pub(crate) fn deadlock_fault(
    parked: Vec<ParkedCore>,
    live: &[usize],
    nranks: usize,
    cfg: &SimConfig,
) -> Fault {
    let src = cfg.sources.as_ref();
    let mut f = Fault::new(
        ReportKind::Deadlock(parked.clone()),
        parked.first().map_or(Span::DUMMY, |p| p.span),
        format!("no core can run; {} wait(s) can never be satisfied", parked.len()),
    );
    for p in &parked {
        let writers = if p.writers.is_empty() {
            "never written".to_string()
        } else {
            format!("written so far by ranks {:?}", p.writers)
        };
        f = f.note(format!(
            "rank {} kernel '{}' at {} waits on {} {} (current value {}); {writers}",
            p.rank,
            p.kernel,
            crate::report::span_text(p.span, src),
            p.cell,
            p.predicate,
            p.value,
        ));
    }
    // In a deadlock every unfinished rank is itself blocked: none of them will notify.
    if !live.is_empty() {
        f = f.note(format!("ranks not finished, each blocked in a wait above: {live:?}"));
    }
    let finished: Vec<usize> = (0..nranks).filter(|r| !live.contains(r)).collect();
    if !finished.is_empty() {
        f = f.note(format!("ranks that already finished all their work: {finished:?}"));
    }
    f.context.graph = Some(crate::report::render::WaitGraph { waits: parked, live: live.to_vec(), finished });
    f
}
