//! Source spans and source files.
//!
//! Every IR node carries a [`Span`]: a byte range in one [`SourceFile`]. Spans survive every
//! pass, so a diagnostic raised late in the pipeline still points at the user's line.

use std::sync::Arc;

/// Identifies a source file inside a [`SourceMap`]; `FileId(0)` is the first file added.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct FileId(pub u32);

/// A byte range `[lo, hi)` in one source file.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Span {
    /// The file the range belongs to.
    pub file: FileId,
    /// Start byte offset (inclusive).
    pub lo: u32,
    /// End byte offset (exclusive).
    pub hi: u32,
}

impl Span {
    /// The span of synthesized nodes that have no source text.
    pub const DUMMY: Span = Span { file: FileId(u32::MAX), lo: 0, hi: 0 };

    /// A span covering `lo..hi` of `file`.
    pub fn new(file: FileId, lo: u32, hi: u32) -> Span {
        Span { file, lo, hi: hi.max(lo) }
    }

    /// Whether this span points at real source text.
    pub fn is_dummy(self) -> bool {
        self.file == FileId(u32::MAX)
    }

    /// The smallest span covering both `self` and `other` (same file), or `self`.
    pub fn to(self, other: Span) -> Span {
        if self.is_dummy() {
            return other;
        }
        if other.is_dummy() || other.file != self.file {
            return self;
        }
        Span::new(self.file, self.lo.min(other.lo), self.hi.max(other.hi))
    }

    /// `other` when `self` is dummy, else `self`.
    pub fn or(self, other: Span) -> Span {
        if self.is_dummy() {
            other
        } else {
            self
        }
    }
}

/// One loaded source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path or name used in diagnostics.
    pub name: String,
    /// The full text.
    pub text: Arc<str>,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Wraps source text, precomputing line starts.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> SourceFile {
        let text: Arc<str> = text.into();
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile { name: name.into(), text, line_starts }
    }

    /// One-based `(line, column)` of a byte offset; the column counts characters.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = offset.min(self.text.len() as u32);
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line] as usize;
        let end = (offset as usize).max(start);
        let col = self.text.get(start..end).map_or(end - start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// The text of one-based line `line`, without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self.line_starts.get(line).map_or(self.text.len(), |&e| e as usize);
        self.text[start as usize..end].trim_end_matches(['\n', '\r'])
    }
}

/// All source files of one compilation.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        FileId(self.files.len() as u32 - 1)
    }

    /// The file behind `id`, if any.
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based_and_counts_chars() {
        let f = SourceFile::new("a.py", "ab\ncdé f\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(8), (2, 5));
        assert_eq!(f.line_text(2), "cdé f");
        assert_eq!(f.line_text(9), "");
    }
}
