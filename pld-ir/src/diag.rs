//! Diagnostics as values.
//!
//! Every user-facing error in pld is a [`Diagnostic`] anchored to a [`Span`]. Stages collect
//! them into [`Diagnostics`] instead of stopping at the first one; nothing on a user-input path
//! panics. Messages are lowercase without a trailing period, like rustc's.

use crate::span::{SourceMap, Span};
use std::fmt;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// The program is accepted but probably wrong.
    Warning,
}

/// One message about the user's program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The main message: lowercase, no trailing period.
    pub message: String,
    /// Where the problem is.
    pub span: Span,
    /// Secondary spans with a label each.
    pub labels: Vec<(Span, String)>,
    /// Free-standing notes (e.g. the sibling op to use instead).
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(span, message) }
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Adds a labelled secondary span.
    pub fn with_label(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.labels.push((span, label.into()));
        self
    }

    /// Replaces a dummy span with `span`.
    pub fn or_span(mut self, span: Span) -> Diagnostic {
        self.span = self.span.or(span);
        self
    }

    /// Renders rustc-style: `error: msg`, ` --> file:line:col`, the source line and a caret.
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = String::new();
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!("{kind}: {}\n", self.message));
        render_snippet(&mut out, sources, self.span, "");
        for (span, label) in &self.labels {
            render_snippet(&mut out, sources, *span, label);
        }
        for note in &self.notes {
            out.push_str(&format!("  = note: {note}\n"));
        }
        out
    }

    /// `file:line:col` of the primary span, when it has one.
    pub fn location(&self, sources: &SourceMap) -> Option<(String, usize, usize)> {
        let file = sources.get(self.span.file)?;
        let (line, col) = file.line_col(self.span.lo);
        Some((file.name.clone(), line, col))
    }
}

fn render_snippet(out: &mut String, sources: &SourceMap, span: Span, label: &str) {
    let Some(file) = sources.get(span.file) else {
        return;
    };
    let (line, col) = file.line_col(span.lo);
    let (end_line, end_col) = file.line_col(span.hi);
    let text = file.line_text(line);
    let width = line.to_string().len();
    let pad = " ".repeat(width);
    out.push_str(&format!("{pad}--> {}:{line}:{col}\n", file.name));
    out.push_str(&format!("{pad} |\n"));
    out.push_str(&format!("{line} | {text}\n"));
    let carets = if end_line == line { end_col.saturating_sub(col).max(1) } else { 1 };
    let lead: String = text.chars().take(col - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    let mut caret_line = format!("{pad} | {lead}{}", "^".repeat(carets));
    if !label.is_empty() {
        caret_line.push(' ');
        caret_line.push_str(label);
    }
    out.push_str(&caret_line);
    out.push('\n');
}

/// A collection of diagnostics, in the order they were found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Diagnostics {
        Diagnostics(Vec::new())
    }

    /// Adds one diagnostic.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Adds all of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    /// Whether any error (not warning) was collected.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    /// Whether nothing was collected.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of diagnostics.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Iterates over the diagnostics.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }

    /// `Ok(value)` when no error was collected, else `Err(self)`.
    pub fn into_result<T>(self, value: T) -> Result<T, Diagnostics> {
        if self.has_errors() {
            Err(self)
        } else {
            Ok(value)
        }
    }

    /// Renders every diagnostic, separated by blank lines.
    pub fn render(&self, sources: &SourceMap) -> String {
        self.0.iter().map(|d| d.render(sources)).collect::<Vec<_>>().join("\n")
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", d.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_col_and_caret() {
        let mut sm = SourceMap::new();
        let f = sm.add("k.py", "x = 1\ny = pld.bad(x)\n");
        let d = Diagnostic::error(Span::new(f, 10, 17), "unknown op pld.bad")
            .with_note("did you mean pld.tensor.put");
        let text = d.render(&sm);
        assert_eq!(
            text,
            "error: unknown op pld.bad\n --> k.py:2:5\n  |\n2 | y = pld.bad(x)\n  |     ^^^^^^^\n  = note: did you mean pld.tensor.put\n"
        );
    }
}
