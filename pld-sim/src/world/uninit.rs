//! The uninitialised-read fault: a read (or an atomic add, which reads what it adds into) of
//! window bytes that nothing wrote in this run and that are not signal cells reads undefined
//! memory, whatever the window's dtype (the seed: the all_to_all_v capacity tail
//! past the received count is never written), so computing on them is a protocol bug.
//!
//! Guarantees: the report names the reading rank, op, kernel and source line, the region
//! (buffer-relative bytes and the window it lies in), which ranks wrote any part of that buffer
//! in that window and which bytes of it were written; `SimConfig::allow_uninit_reads`
//! downgrades the fault to the run's warning (docs/DECISIONS.md D-sim-22).

use super::{Access, World};
use crate::report::{Fault, ReportKind};

/// The fault of access `a` reading bytes `[lo, hi)` (window offsets) of buffer `alloc` in the
/// window of domain rank `owner`; `writers` are the global ranks that wrote any of the buffer
/// there and the written intervals of that window (window offsets).
pub(crate) fn fault(
    world: &World,
    a: &Access<'_>,
    owner: usize,
    alloc: usize,
    lo: u64,
    hi: u64,
    writers: &(Vec<usize>, Vec<(u64, u64)>),
) -> Fault {
    let al = world.buffer(alloc);
    let (base, end) = (al.offset, al.offset + al.rounded);
    let rel = |x: u64| x.saturating_sub(base);
    let owner_g = world.domain(al.domain).members.get(owner).copied().unwrap_or(owner);
    let mut f = Fault::new(
        ReportKind::UninitRead,
        a.span,
        format!(
            "rank {} reads bytes [{}, {}) of buffer '{}' in the window of rank {owner_g} ({} in {}), but nothing wrote all of them in this run: they are undefined",
            a.g,
            rel(lo),
            rel(hi),
            al.name,
            a.op,
            a.who
        ),
    );
    let (ranks, written) = writers;
    let parts: Vec<String> = written
        .iter()
        .filter(|&&(x, y)| y > base && x < end)
        .map(|&(x, y)| format!("[{}, {})", rel(x.max(base)), rel(y.min(end))))
        .collect();
    f = if ranks.is_empty() {
        f.note(format!("no rank wrote any byte of '{}' on rank {owner_g} before this read", al.name))
    } else {
        let who: Vec<String> = ranks.iter().map(|g| g.to_string()).collect();
        f.note(format!(
            "rank(s) {} wrote bytes {} of '{}' on rank {owner_g} before this read",
            who.join(", "),
            if parts.is_empty() { "(none)".to_string() } else { parts.join(" ") },
            al.name
        ))
    };
    f.note("read only what a peer published (trim to the received count), or wait for the write that defines these bytes; `pld run --allow-uninit-reads` makes this a warning")
}
