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
    /// `help:` lines: a concrete suggestion (`did you mean …`, the fixed call).
    pub help: Vec<String>,
    /// The error code `pld explain` describes, when the error has one.
    pub code: Option<&'static crate::codes::ErrorCode>,
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
            help: Vec::new(),
            code: None,
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

    /// Adds a `help:` line with a concrete suggestion.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
        self
    }

    /// Adds a `help:` line when there is a suggestion.
    pub fn with_help_opt(self, help: Option<String>) -> Diagnostic {
        match help {
            Some(h) => self.with_help(h),
            None => self,
        }
    }

    /// Sets the error code (`pld explain CODE`; one of the constants of [`crate::codes`]).
    pub fn with_code(mut self, code: &str) -> Diagnostic {
        self.code = crate::codes::lookup(code);
        self
    }

    /// The error code, when the diagnostic has one (`E0001`).
    pub fn code(&self) -> Option<&'static str> {
        self.code.map(|c| c.code)
    }

    /// The diagnostic of a call written `written` and canonicalized onto `canon` (a
    /// redirecting canonicalizer, D-ops-canon-1), in the user's words: every mention of
    /// `canon` as a name becomes `written`, and a note says which op the call became. A
    /// mention followed by `(` is kept: it is a call suggested in the canonical spelling,
    /// which the note explains.
    pub fn in_user_words(mut self, written: &str, canon: &str) -> Diagnostic {
        let note =
            format!("`{written}` is canonicalized onto `{canon}`; the call is checked by that op's rules");
        if self.notes.contains(&note) {
            // Already in the user's words (a diagnostic passed through twice).
            return self;
        }
        let mut out = String::with_capacity(self.message.len());
        let mut rest = self.message.as_str();
        while let Some(at) = rest.find(canon) {
            let after = &rest[at + canon.len()..];
            let name_goes_on = after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '(');
            let name_began = rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.');
            out.push_str(&rest[..at]);
            out.push_str(if name_goes_on || name_began { canon } else { written });
            rest = after;
        }
        out.push_str(rest);
        self.message = out;
        self.notes.insert(0, note);
        self
    }

    /// This diagnostic about `call`, in the words the user wrote
    /// ([`crate::Call::written_name`]): when a canonicalizer redirected the call, every mention
    /// of the canonical op becomes the user's spelling and a note names the canonical op
    /// ([`Diagnostic::in_user_words`]); otherwise unchanged.
    pub fn about_call(self, call: &crate::Call) -> Diagnostic {
        let (written, canon) = (call.written_name(), call.callee.name());
        if written == canon {
            self
        } else {
            self.in_user_words(written, canon)
        }
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

    /// Renders rustc-style, without colour: `error[CODE]: msg`, ` --> file:line:col`, the
    /// source lines with a caret line per span, `= note:` and `= help:` lines
    /// ([`crate::diag_render`]).
    pub fn render(&self, sources: &SourceMap) -> String {
        crate::diag_render::render(self, sources, false)
    }

    /// [`Diagnostic::render`], with ANSI colour when `color` (a terminal) is set.
    pub fn render_color(&self, sources: &SourceMap, color: bool) -> String {
        crate::diag_render::render(self, sources, color)
    }

    /// `file:line:col` of the primary span, when it has one.
    pub fn location(&self, sources: &SourceMap) -> Option<(String, usize, usize)> {
        let file = sources.get(self.span.file)?;
        let (line, col) = file.line_col(self.span.lo);
        Some((file.name.clone(), line, col))
    }
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
        self.render_color(sources, false)
    }

    /// [`Diagnostics::render`], with ANSI colour when `color` (a terminal) is set.
    pub fn render_color(&self, sources: &SourceMap, color: bool) -> String {
        self.0.iter().map(|d| d.render_color(sources, color)).collect::<Vec<_>>().join("\n")
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
            "error: unknown op pld.bad\n --> k.py:2:5\n  |\n2 | y = pld.bad(x)\n  |     ^^^^^^^\n  |\n  = note: did you mean pld.tensor.put\n"
        );
    }

    #[test]
    fn two_labels_of_one_file_share_one_snippet() {
        let mut sm = SourceMap::new();
        let src = "def k(self, x: pl.Tensor[[4], pl.FP32]):\n    pass\ny = self.k(3)\n";
        let f = sm.add("k.py", src);
        let arg = src.find("3)").unwrap() as u32;
        let ann = src.find("pl.Tensor").unwrap() as u32;
        let d = Diagnostic::error(Span::new(f, arg, arg + 1), "type mismatch")
            .with_label(Span::new(f, ann, ann + 24), "parameter `x` declared here")
            .with_help("pass a tensor of shape [4]")
            .with_code("E0201");
        let text = d.render(&sm);
        assert_eq!(
            text,
            "error[E0201]: type mismatch\n --> k.py:3:12\n  |\n1 | def k(self, x: pl.Tensor[[4], pl.FP32]):\n  |                ------------------------ parameter `x` declared here\n2 |     pass\n3 | y = self.k(3)\n  |            ^\n  |\n  = help: pass a tensor of shape [4]\n"
        );
        assert_eq!(text.matches("-->").count(), 1, "one snippet: {text}");
    }

    #[test]
    fn carets_under_wide_characters_count_display_columns() {
        let mut sm = SourceMap::new();
        let src = "x = 张量(y)\n";
        let f = sm.add("k.py", src);
        let lo = src.find('张').unwrap() as u32;
        let d = Diagnostic::error(Span::new(f, lo, lo + 6), "unknown name `张量`");
        let text = d.render(&sm);
        // Two CJK characters are four columns wide: four carets, under them.
        assert!(text.contains("1 | x = 张量(y)\n  |     ^^^^\n"), "{text}");
        assert!(text.contains("--> k.py:1:5"), "{text}");
    }

    #[test]
    fn spans_inside_a_character_snap_to_its_boundaries() {
        let mut sm = SourceMap::new();
        let src = "y = \"ok \u{fffd}\"\n";
        let f = sm.add("k.py", src);
        let inside = src.find('\u{fffd}').unwrap() as u32 + 1;
        let text = Diagnostic::error(Span::new(f, inside - 1, inside), "invalid utf-8").render(&sm);
        assert!(text.contains("--> k.py:1:9"), "{text}");
    }

    #[test]
    fn user_words_replace_the_canonical_name_but_not_a_suggested_call_or_a_longer_name() {
        let d = Diagnostic::error(
            Span::default(),
            "pld.tensor.all_to_all needs a signal (see pld.tensor.all_to_all_v). Use pld.tensor.all_to_all(i, t, s)",
        )
        .with_note("an earlier note");
        let d = d.in_user_words("pld.all_to_all", "pld.tensor.all_to_all");
        assert_eq!(
            d.message,
            "pld.all_to_all needs a signal (see pld.tensor.all_to_all_v). Use pld.tensor.all_to_all(i, t, s)"
        );
        assert_eq!(d.notes.len(), 2);
        assert!(d.notes[0].contains("`pld.all_to_all` is canonicalized onto `pld.tensor.all_to_all`"));
    }

    #[test]
    fn colour_only_when_asked() {
        let mut sm = SourceMap::new();
        let f = sm.add("k.py", "x = bad\n");
        let d = Diagnostic::error(Span::new(f, 4, 7), "unknown name `bad`");
        assert!(!d.render(&sm).contains('\u{1b}'));
        assert!(d.render_color(&sm, true).contains('\u{1b}'));
    }
}
