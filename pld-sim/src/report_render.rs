//! Fault reports that show the code: the source line with a caret under the faulting op (the
//! compile diagnostics' renderer, [`pld_ir::Diagnostic::render`]), the rank, core and kernel
//! that faulted, a deadlock's wait-for graph, and the same report as JSON for tools.
//!
//! Guarantees: rendering never fails — a span without sources renders as its location text
//! only; the JSON is one self-contained object (kind, message, location, rank, core, kernel,
//! notes, the rendered text, and for a deadlock its wait-for graph) with every string escaped.
//! The wait-for graph names, for each blocked wait, who waits (rank, core, kernel), on which
//! cell and predicate, who could still notify it (the other unfinished ranks — each blocked
//! itself — and the ranks that wrote it so far), and either a cycle of ranks waiting on one
//! another or the cells no unfinished rank is left to notify.

use crate::report::{span_text, Fault, ParkedCore, ReportKind};
use pld_ir::{SourceMap, Span};
use std::fmt::Write as _;

/// Where a fault happened: rank, core and kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// Global rank.
    pub rank: usize,
    /// Core number (`None`: the chip orchestrator).
    pub core: Option<usize>,
    /// Kernel (function or builtin) name.
    pub kernel: String,
}

/// What a report knows beyond its message: where it happened, a deadlock's wait-for graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    /// Rank, core and kernel that faulted, when one did.
    pub site: Option<Site>,
    /// A deadlock's wait-for graph.
    pub graph: Option<WaitGraph>,
}

/// A deadlock's wait-for graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaitGraph {
    /// The blocked waits.
    pub waits: Vec<ParkedCore>,
    /// Ranks that had not finished (all blocked).
    pub live: Vec<usize>,
    /// Ranks that finished all their work.
    pub finished: Vec<usize>,
}

impl WaitGraph {
    /// The ranks that could still notify wait `w`: every other unfinished rank.
    pub fn could_notify(&self, w: &ParkedCore) -> Vec<usize> {
        self.live.iter().copied().filter(|&r| r != w.rank).collect()
    }

    /// A cycle of unfinished ranks each waiting for the next (the first found from the lowest
    /// rank), when one exists.
    pub fn cycle(&self) -> Option<Vec<usize>> {
        let next = |r: usize| -> Option<usize> {
            self.waits.iter().filter(|w| w.rank == r).flat_map(|w| self.could_notify(w)).min()
        };
        let start = *self.live.first()?;
        let mut path = vec![start];
        let mut at = start;
        while let Some(n) = next(at) {
            if let Some(i) = path.iter().position(|&p| p == n) {
                let mut c = path[i..].to_vec();
                c.push(n);
                return Some(c);
            }
            path.push(n);
            at = n;
        }
        None
    }

    /// Waits no unfinished rank is left to notify.
    pub fn missing(&self) -> Vec<&ParkedCore> {
        self.waits.iter().filter(|w| self.could_notify(w).is_empty()).collect()
    }

    /// The readable block (one line per wait and its possible notifiers, then the verdict).
    pub fn render(&self, sources: Option<&SourceMap>) -> String {
        let mut o = String::from("wait-for graph:");
        for w in &self.waits {
            let _ = write!(
                o,
                "\n      rank {} core {} '{}' waits on {} {} (value {}) at {}",
                w.rank,
                core_text(w.core),
                w.kernel,
                w.cell,
                w.predicate,
                w.value,
                span_text(w.span, sources)
            );
            let others = self.could_notify(w);
            let who = if others.is_empty() {
                "nobody: no other rank is unfinished".to_string()
            } else {
                format!("ranks {} (each blocked itself)", list(&others))
            };
            let wrote = if w.writers.is_empty() {
                "never written".to_string()
            } else {
                format!("written so far by ranks {}", list(&w.writers))
            };
            let silent: Vec<usize> =
                self.finished.iter().copied().filter(|r| !w.writers.contains(r)).collect();
            let _ = write!(o, "\n        could still be notified by: {who}; {wrote}");
            if !silent.is_empty() {
                let _ = write!(o, "; finished without writing it: ranks {}", list(&silent));
            }
        }
        if let Some(c) = self.cycle() {
            let path: Vec<String> = c.iter().map(|r| format!("rank {r}")).collect();
            let _ = write!(o, "\n      cycle: {} (each waits for the next to notify)", path.join(" -> "));
        }
        for w in self.missing() {
            let _ = write!(
                o,
                "\n      missing notifier: no unfinished rank is left to notify {} for rank {}",
                w.cell, w.rank
            );
        }
        o
    }
}

fn core_text(core: Option<usize>) -> String {
    core.map_or_else(|| "orch".to_string(), |c| c.to_string())
}

fn list(v: &[usize]) -> String {
    let s: Vec<String> = v.iter().map(usize::to_string).collect();
    s.join(", ")
}

/// The source line of `span` with a caret under it (the compile diagnostics' format), or
/// nothing without sources.
pub fn snippet(span: Span, sources: Option<&SourceMap>) -> String {
    let Some(map) = sources.filter(|m| !span.is_dummy() && m.get(span.file).is_some()) else {
        return String::new();
    };
    let text = pld_ir::Diagnostic::error(span, "").render(map);
    // Drop the diagnostic's own `error: ` line; keep `--> file:line:col`, the line and caret.
    text.split_once('\n').map(|(_, rest)| rest.to_string()).unwrap_or_default()
}

/// The rendered location block of a fault: the source snippet (or `--> location`).
pub fn location_block(span: Span, sources: Option<&SourceMap>) -> String {
    let snip = snippet(span, sources);
    if !snip.is_empty() {
        return snip;
    }
    if span.is_dummy() {
        return String::new();
    }
    format!("  --> {}\n", span_text(span, sources))
}

pub use pld_ir::quote::json_string as json_str;

fn json_loc(span: Span, sources: Option<&SourceMap>) -> String {
    match sources.and_then(|m| m.get(span.file)).filter(|_| !span.is_dummy()) {
        Some(f) => {
            let (l, c) = f.line_col(span.lo);
            format!("{{\"file\":{},\"line\":{l},\"col\":{c}}}", json_str(&f.name))
        }
        None => "null".to_string(),
    }
}

/// The JSON of a fault (`text` is its rendered form).
pub fn json(f: &Fault, text: &str, sources: Option<&SourceMap>) -> String {
    let mut o = format!(
        "{{\"kind\":{},\"message\":{},\"location\":{}",
        json_str(f.kind.name()),
        json_str(&f.message),
        json_loc(f.span, sources)
    );
    match &f.context.site {
        Some(s) => {
            let core = s.core.map_or_else(|| "null".to_string(), |c| c.to_string());
            let _ = write!(o, ",\"rank\":{},\"core\":{core},\"kernel\":{}", s.rank, json_str(&s.kernel));
        }
        None => o.push_str(",\"rank\":null,\"core\":null,\"kernel\":null"),
    }
    let notes: Vec<String> = f
        .span_notes
        .iter()
        .map(|(n, sp)| format!("{n} {}", span_text(*sp, sources)))
        .chain(f.notes.iter().cloned())
        .map(|n| json_str(&n))
        .collect();
    let _ = write!(o, ",\"notes\":[{}]", notes.join(","));
    if let (ReportKind::Deadlock(_), Some(g)) = (&f.kind, &f.context.graph) {
        let waits: Vec<String> = g
            .waits
            .iter()
            .map(|w| {
                format!(
                    "{{\"rank\":{},\"core\":{},\"kernel\":{},\"cell\":{},\"predicate\":{},\"value\":{},\"location\":{},\"could_notify\":[{}],\"writers\":[{}]}}",
                    w.rank,
                    w.core.map_or_else(|| "null".to_string(), |c| c.to_string()),
                    json_str(&w.kernel),
                    json_str(&w.cell),
                    json_str(&w.predicate),
                    w.value,
                    json_loc(w.span, sources),
                    list(&g.could_notify(w)).replace(' ', ""),
                    list(&w.writers).replace(' ', "")
                )
            })
            .collect();
        let cycle =
            g.cycle().map_or_else(|| "null".to_string(), |c| format!("[{}]", list(&c).replace(' ', "")));
        let missing: Vec<String> = g.missing().iter().map(|w| json_str(&w.cell)).collect();
        let _ = write!(
            o,
            ",\"wait_for\":{{\"waits\":[{}],\"live\":[{}],\"finished\":[{}],\"cycle\":{cycle},\"missing_notifier\":[{}]}}",
            waits.join(","),
            list(&g.live).replace(' ', ""),
            list(&g.finished).replace(' ', ""),
            missing.join(",")
        );
    }
    let _ = write!(o, ",\"text\":{}}}", json_str(text));
    o
}
