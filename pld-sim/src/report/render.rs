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

use super::{span_text, Fault, ParkedCore, ReportKind};
use pld_ir::{SourceMap, Span};
use serde::Serialize;
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
    /// `help:` lines, each at the source it suggests changing.
    pub helps: Vec<(String, Span)>,
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

/// A source location in a report's JSON.
#[derive(Serialize)]
struct Location<'a> {
    file: &'a str,
    line: usize,
    col: usize,
}

fn json_loc(span: Span, sources: Option<&SourceMap>) -> Option<Location<'_>> {
    let f = sources.and_then(|m| m.get(span.file)).filter(|_| !span.is_dummy())?;
    let (line, col) = f.line_col(span.lo);
    Some(Location { file: &f.name, line, col })
}

/// A fault report as JSON.
#[derive(Serialize)]
struct FaultJson<'a> {
    kind: &'static str,
    message: &'a str,
    location: Option<Location<'a>>,
    rank: Option<usize>,
    core: Option<usize>,
    kernel: Option<&'a str>,
    notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_for: Option<WaitForJson<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    help: Vec<HelpJson<'a>>,
    text: &'a str,
}

/// A `help:` line as JSON: its text and the source it points at.
#[derive(Serialize)]
struct HelpJson<'a> {
    message: &'a str,
    location: Option<Location<'a>>,
}

/// A deadlock's wait-for graph as JSON.
#[derive(Serialize)]
struct WaitForJson<'a> {
    waits: Vec<WaitJson<'a>>,
    live: &'a [usize],
    finished: &'a [usize],
    cycle: Option<Vec<usize>>,
    missing_notifier: Vec<&'a str>,
}

/// One blocked wait as JSON.
#[derive(Serialize)]
struct WaitJson<'a> {
    rank: usize,
    core: Option<usize>,
    kernel: &'a str,
    cell: &'a str,
    predicate: &'a str,
    value: i32,
    location: Option<Location<'a>>,
    could_notify: Vec<usize>,
    writers: &'a [usize],
}

/// The JSON of a fault (`text` is its rendered form).
pub fn json(f: &Fault, text: &str, sources: Option<&SourceMap>) -> serde_json::Value {
    let site = f.context.site.as_ref();
    let notes = f
        .span_notes
        .iter()
        .map(|(n, sp)| format!("{n} {}", span_text(*sp, sources)))
        .chain(f.notes.iter().cloned())
        .collect();
    let wait_for = match (&f.kind, &f.context.graph) {
        (ReportKind::Deadlock(_), Some(g)) => Some(WaitForJson {
            waits: g
                .waits
                .iter()
                .map(|w| WaitJson {
                    rank: w.rank,
                    core: w.core,
                    kernel: &w.kernel,
                    cell: &w.cell,
                    predicate: &w.predicate,
                    value: w.value,
                    location: json_loc(w.span, sources),
                    could_notify: g.could_notify(w),
                    writers: &w.writers,
                })
                .collect(),
            live: &g.live,
            finished: &g.finished,
            cycle: g.cycle(),
            missing_notifier: g.missing().iter().map(|w| w.cell.as_str()).collect(),
        }),
        _ => None,
    };
    let doc = FaultJson {
        kind: f.kind.name(),
        message: &f.message,
        location: json_loc(f.span, sources),
        rank: site.map(|s| s.rank),
        core: site.and_then(|s| s.core),
        kernel: site.map(|s| s.kernel.as_str()),
        notes,
        wait_for,
        help: f
            .context
            .helps
            .iter()
            .map(|(m, sp)| HelpJson { message: m, location: json_loc(*sp, sources) })
            .collect(),
        text,
    };
    // Strings and integers always serialize.
    serde_json::to_value(doc).unwrap_or_default()
}
