//! Fault reports: what the simulator says when a program is broken.
//!
//! Guarantees: every fault is a value ([`Report`]) with a machine-readable [`ReportKind`] and a
//! rendered text that names the op, rank, kernel, cells and source spans involved; nothing in
//! the simulator panics or hangs on a broken program; [`render`] shows a fault with its code.

pub mod render;

use pld_ir::{SourceMap, Span};
use std::fmt;

/// One core parked in a `wait` when the run deadlocked.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParkedCore {
    /// Global rank.
    pub rank: usize,
    /// Core the wait runs on (`None`: the chip orchestrator or a deferred completion).
    pub core: Option<usize>,
    /// Kernel (function or builtin) name.
    pub kernel: String,
    /// Source location of the wait.
    pub span: Span,
    /// Signal buffer name and flat cell index.
    pub cell: String,
    /// `Ge 3`, `Eq 0`, `unsigned Ge 1`.
    pub predicate: String,
    /// The cell's value when the run stopped.
    pub value: i32,
    /// Ranks that ever wrote the cell.
    pub writers: Vec<usize>,
}

/// The kinds of faults.
#[derive(Clone, Debug, PartialEq)]
pub enum ReportKind {
    /// No core can run and some are parked.
    Deadlock(Vec<ParkedCore>),
    /// A window access outside the window or its named buffer.
    OutOfBounds,
    /// An access outside a host tensor (a host orchestrator's tensor parameter).
    HostOutOfBounds,
    /// A peer index outside `[0, rankNum)`.
    PeerOutOfRange,
    /// Set and AtomicAdd mixed on one signal cell.
    MixedNotify,
    /// A self-clearing signal left non-zero at the end of the run.
    CreditLeak,
    /// Unordered conflicting accesses from two ranks.
    Race,
    /// A notify publishing window writes no GM fence covered (with fence checking on).
    UnfencedNotify,
    /// One source notify executed by both lanes of a mixed kernel.
    DuplicateNotify,
    /// Deferred-completion misuse (too many conditions or deferred tasks, bad threshold).
    Deferred,
    /// The step budget ran out (a livelock or a runaway loop).
    Budget,
    /// A run-time error of the program (bad argument, unsupported dtype, no semantics).
    Runtime,
    /// A host callback (`role=pl.Role.SubWorker`) could not run or failed.
    HostCallback,
    /// The run was interrupted (Ctrl-C) through [`SimConfig::interrupt`](crate::SimConfig::interrupt).
    Interrupted,
    /// The run would need more memory than [`SimConfig::max_memory`](crate::SimConfig::max_memory).
    Memory,
    /// A read of window bytes nothing wrote (undefined memory).
    UninitRead,
    /// A wait satisfied by credits a previous call of the protocol deposited.
    StaleCredit,
}

impl ReportKind {
    /// The error code `pld explain` describes, for the faults that have one.
    pub fn code(&self) -> Option<&'static str> {
        use pld_ir::codes;
        Some(match self {
            ReportKind::Deadlock(_) => codes::DEADLOCK,
            ReportKind::Race => codes::RACE,
            ReportKind::UninitRead => codes::UNINIT_READ,
            ReportKind::StaleCredit => codes::STALE_CREDIT,
            ReportKind::CreditLeak => codes::CREDIT_LEAK,
            ReportKind::OutOfBounds | ReportKind::HostOutOfBounds => codes::OUT_OF_BOUNDS,
            ReportKind::PeerOutOfRange => codes::PEER_OUT_OF_RANGE,
            ReportKind::MixedNotify => codes::MIXED_NOTIFY,
            _ => return None,
        })
    }

    /// Short lowercase name.
    pub fn name(&self) -> &'static str {
        match self {
            ReportKind::Deadlock(_) => "deadlock",
            ReportKind::OutOfBounds => "out-of-bounds window access",
            ReportKind::HostOutOfBounds => "out-of-bounds host tensor access",
            ReportKind::PeerOutOfRange => "peer index out of range",
            ReportKind::MixedNotify => "set and atomic-add mixed on one signal cell",
            ReportKind::CreditLeak => "credit leak",
            ReportKind::Race => "data race",
            ReportKind::UnfencedNotify => "notify before fence",
            ReportKind::DuplicateNotify => "duplicate notify from a mixed kernel",
            ReportKind::Deferred => "deferred completion misuse",
            ReportKind::Budget => "step budget exhausted",
            ReportKind::Runtime => "runtime error",
            ReportKind::HostCallback => "host callback failed",
            ReportKind::Interrupted => "interrupted",
            ReportKind::Memory => "memory limit",
            ReportKind::UninitRead => "read of uninitialised window bytes",
            ReportKind::StaleCredit => "wait satisfied by a stale credit",
        }
    }
}

/// A fault with its rendered text.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// What went wrong.
    pub kind: ReportKind,
    /// The rendered report (first line `error: <kind>: ...`).
    pub text: String,
    /// The same report as one JSON object ([`render::json`]).
    pub json: Box<serde_json::Value>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A fault before rendering: kind, message and the spans it refers to ([`FaultData`], boxed:
/// every fallible step of the interpreter returns a `Result<_, Fault>`, and an inline fault
/// made each of them ~130 bytes to move).
#[derive(Clone, Debug)]
pub struct Fault(Box<FaultData>);

impl std::ops::Deref for Fault {
    type Target = FaultData;
    fn deref(&self) -> &FaultData {
        &self.0
    }
}

impl std::ops::DerefMut for Fault {
    fn deref_mut(&mut self) -> &mut FaultData {
        &mut self.0
    }
}

/// What a [`Fault`] holds.
#[derive(Clone, Debug)]
pub struct FaultData {
    /// Kind.
    pub kind: ReportKind,
    /// Main message (lowercase, no trailing period).
    pub message: String,
    /// Further lines.
    pub notes: Vec<String>,
    /// Span of the op that faulted.
    pub span: Span,
    /// Further lines that end in a source location: (text, span).
    pub span_notes: Vec<(String, Span)>,
    /// Where it happened, a deadlock's wait-for graph and `help:` lines
    /// ([`render`]).
    pub context: Box<render::Context>,
}

impl Fault {
    /// A fault of `kind` at `span`.
    pub fn new(kind: ReportKind, span: Span, message: impl Into<String>) -> Fault {
        Fault(Box::new(FaultData {
            kind,
            message: message.into(),
            notes: Vec::new(),
            span,
            span_notes: Vec::new(),
            context: Box::default(),
        }))
    }

    /// A runtime error.
    pub fn runtime(span: Span, message: impl Into<String>) -> Fault {
        Fault::new(ReportKind::Runtime, span, message)
    }

    /// The same fault at `span` (when it had none).
    pub fn at(mut self, span: Span) -> Fault {
        if self.span.is_dummy() {
            self.span = span;
        }
        self
    }

    /// Adds a note line.
    pub fn note(mut self, n: impl Into<String>) -> Fault {
        self.notes.push(n.into());
        self
    }

    /// Adds a note followed by the location of `span` (rendered with the sources).
    pub fn note_at(mut self, n: impl Into<String>, span: Span) -> Fault {
        self.span_notes.push((n.into(), span));
        self
    }

    /// Marks where the fault happened (kept when already set).
    pub fn at_site(mut self, site: render::Site) -> Fault {
        self.context.site.get_or_insert(site);
        self
    }

    /// Renders against the optional source map: the source line with a caret, the site, the
    /// notes and a deadlock's wait-for graph ([`render`]).
    pub fn render(self, sources: Option<&SourceMap>) -> Report {
        let code = self.kind.code().map_or_else(String::new, |c| format!("[{c}]"));
        let mut text = format!("error{code}: {}: {}\n", self.kind.name(), self.message);
        text.push_str(&render::location_block(self.span, sources));
        if let Some(s) = &self.context.site {
            let core = s.core.map_or_else(|| "the chip orchestrator".to_string(), |c| format!("core {c}"));
            text.push_str(&format!("  = on rank {}, {core}, kernel '{}'\n", s.rank, s.kernel));
        }
        for (n, sp) in &self.span_notes {
            text.push_str(&format!("  = {n} {}\n", span_text(*sp, sources)));
        }
        for n in &self.notes {
            text.push_str(&format!("  = {n}\n"));
        }
        if let Some(g) = &self.context.graph {
            text.push_str(&format!("  = {}\n", g.render(sources)));
        }
        for (h, sp) in &self.context.helps {
            text.push_str(&format!("help: {h}\n"));
            text.push_str(&render::location_block(*sp, sources));
        }
        let json = Box::new(render::json(&self, &text, sources));
        Report { kind: self.kind.clone(), text, json }
    }
}

/// `file:line:col` for a span, or `<unknown location>`.
pub fn span_text(span: Span, sources: Option<&SourceMap>) -> String {
    if span.is_dummy() {
        return "<no source location>".to_string();
    }
    if let Some(f) = sources.and_then(|m| m.get(span.file)) {
        let (l, c) = f.line_col(span.lo);
        return format!("{}:{}:{}", f.name, l, c);
    }
    format!("<file {} bytes {}..{}>", span.file.0, span.lo, span.hi)
}
