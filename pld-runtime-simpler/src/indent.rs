//! The one indenting line writer of the generated orchestrators (C++ in `chip.rs`, Python in
//! `host.rs`): each line is written at four spaces per depth level and ends in `\n`; whether an
//! empty line carries the indentation is the writer's one switch ([`EmptyLines`]), since the
//! goldens pin the C++ writer's empty lines bare and the Python writer's indented.

/// What an empty line written at depth > 0 holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EmptyLines {
    /// Nothing: the line is just `\n` (the C++ orchestrator).
    Bare,
    /// The indentation, like every other line (the Python orchestrator).
    Indented,
}

/// Text built line by line at a depth.
#[derive(Debug)]
pub(crate) struct Indented {
    text: String,
    /// The current indentation level (four spaces each).
    pub(crate) depth: usize,
    empty: EmptyLines,
}

impl Indented {
    pub(crate) fn new(empty: EmptyLines) -> Self {
        Indented { text: String::new(), depth: 0, empty }
    }

    /// One line at the current depth.
    pub(crate) fn line(&mut self, s: &str) {
        if !s.is_empty() || self.empty == EmptyLines::Indented {
            self.text.push_str(&"    ".repeat(self.depth));
        }
        self.text.push_str(s);
        self.text.push('\n');
    }

    /// Every line of a rendered snippet, at the current depth.
    pub(crate) fn lines(&mut self, text: &str) {
        for l in text.lines() {
            self.line(l);
        }
    }

    /// The text written so far.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_lines_are_bare_or_indented_as_asked_and_others_always_indented() {
        for (empty, want) in
            [(EmptyLines::Bare, "a\n    b\n\n    c\n"), (EmptyLines::Indented, "a\n    b\n    \n    c\n")]
        {
            let mut w = Indented::new(empty);
            w.line("a");
            w.depth += 1;
            w.lines("b\n\nc");
            assert_eq!(w.as_str(), want, "{empty:?}");
        }
    }
}
