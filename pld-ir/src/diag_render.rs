//! The rustc-style rendering of a [`Diagnostic`], through `annotate-snippets` (the renderer
//! rustc itself uses).
//!
//! Guarantees: the primary span and every labelled span of the same file share one snippet
//! (each with its own caret line and label); a label in another file gets its own snippet;
//! spans without a known file are left out; columns and carets count display width, so a
//! wide (CJK) character gets two carets; a span that runs over several lines is marked at its
//! first character, as before; colour only when the caller asks for it (a terminal).

use crate::diag::{Diagnostic, Severity};
use crate::span::{FileId, SourceFile, SourceMap, Span};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

/// One span to draw: its byte range in the file, its label, whether it is the primary one.
struct Mark<'a> {
    span: Span,
    label: &'a str,
    primary: bool,
}

/// The byte range of `span` to draw: itself, or its first character when it runs over
/// several lines; always on character boundaries.
fn drawn(file: &SourceFile, span: Span) -> std::ops::Range<usize> {
    let text = &*file.text;
    let (mut lo, mut hi) = (span.lo as usize, (span.hi as usize).max(span.lo as usize));
    // Snap to character boundaries (a span may end inside a replacement character).
    lo = lo.min(text.len());
    hi = hi.min(text.len());
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    if text[lo..hi].contains('\n') {
        let first = text[lo..].chars().next().map_or(0, char::len_utf8);
        return lo..lo + first;
    }
    lo..hi
}

/// The snippet of `file` holding `marks`: the lines from the first mark to the last.
fn snippet<'a>(file: &'a SourceFile, marks: &[Mark<'a>]) -> Snippet<'a, annotate_snippets::Annotation<'a>> {
    let ranges: Vec<_> = marks.iter().map(|m| drawn(file, m.span)).collect();
    let lo = ranges.iter().map(|r| r.start).min().unwrap_or(0);
    let hi = ranges.iter().map(|r| r.end).max().unwrap_or(0);
    let start = file.text[..lo].rfind('\n').map_or(0, |i| i + 1);
    let end = file.text[hi..].find('\n').map_or(file.text.len(), |i| hi + i);
    let (line, _) = file.line_col(start as u32);
    let mut s = Snippet::source(&file.text[start..end]).line_start(line).path(file.name.as_str());
    for (m, r) in marks.iter().zip(ranges) {
        let kind = if m.primary { AnnotationKind::Primary } else { AnnotationKind::Context };
        let mut a = kind.span(r.start - start..r.end - start);
        if !m.label.is_empty() {
            a = a.label(m.label);
        }
        s = s.annotation(a);
    }
    s
}

/// Renders `d` rustc-style (`color`: with ANSI styles, for a terminal).
pub fn render(d: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let mut title = level.primary_title(d.message.as_str());
    if let Some(code) = d.code() {
        title = title.id(code);
    }
    // Marks per file, the primary span's file first.
    let mut files: Vec<(FileId, Vec<Mark<'_>>)> = Vec::new();
    let all = std::iter::once(Mark { span: d.span, label: "", primary: true })
        .chain(d.labels.iter().map(|(span, label)| Mark { span: *span, label, primary: false }));
    for m in all.filter(|m| !m.span.is_dummy() && sources.get(m.span.file).is_some()) {
        match files.iter_mut().find(|(f, _)| *f == m.span.file) {
            Some((_, v)) => v.push(m),
            None => files.push((m.span.file, vec![m])),
        }
    }
    let mut group = Group::with_title(title);
    for (id, marks) in &files {
        if let Some(file) = sources.get(*id) {
            group = group.element(snippet(file, marks));
        }
    }
    for note in &d.notes {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    for help in &d.help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    let renderer = if color { Renderer::styled() } else { Renderer::plain() };
    let mut out = renderer.render(&[group]);
    out.push('\n');
    out
}
