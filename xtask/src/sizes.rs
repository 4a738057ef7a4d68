//! Size rules of the style guide, checked by `cargo xtask tidy`: no `.rs` file over
//! [`MAX_FILE_LINES`] lines and no function over [`MAX_FN_LINES`] lines.
//!
//! Functions are found by a small lexer, not a parser: it skips comments, string, raw-string,
//! byte-string and char literals (so braces inside them do not count), and measures each `fn`
//! item from its `fn` line to the line of the brace that closes its body. Nested functions and
//! closures count toward their enclosing function as well as on their own.

use crate::tidy::Violation;

/// The longest a source file may be.
pub const MAX_FILE_LINES: usize = 800;
/// The longest a function may be, from its `fn` line to its closing brace.
pub const MAX_FN_LINES: usize = 150;

/// The size violations of one file.
pub fn check(path: &str, text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_FILE_LINES {
        found.push(Violation {
            location: format!("{path}:1"),
            message: format!("file has {lines} lines (at most {MAX_FILE_LINES}): split it by concern"),
        });
    }
    for f in functions(text) {
        let len = f.end_line - f.start_line + 1;
        if len > MAX_FN_LINES {
            found.push(Violation {
                location: format!("{path}:{}", f.start_line),
                message: format!(
                    "fn `{}` has {len} lines (at most {MAX_FN_LINES}): split it into named steps",
                    f.name
                ),
            });
        }
    }
    found
}

/// One function item: its name and the 1-based lines of its `fn` keyword and closing brace.
#[derive(Debug, PartialEq, Eq)]
pub struct FnSpan {
    pub name: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// Every function with a body in `text`.
pub fn functions(text: &str) -> Vec<FnSpan> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // Functions whose body is open: (name, start line, brace depth outside the body).
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    // A `fn NAME` seen whose body brace has not come yet (a `;` ends a bodiless declaration).
    let mut pending: Option<(String, usize)> = None;
    let (mut i, mut line, mut depth) = (0usize, 1usize, 0usize);
    // Open `(` / `[`: a `;` inside them (`[u8; 4]` in a signature) ends no declaration.
    let mut brackets = 0usize;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_block_comment(b, i, &mut line);
                continue;
            }
            b'"' => {
                i = skip_string(b, i + 1, &mut line);
                continue;
            }
            b'r' | b'b' if !ident_byte(prev(b, i)) => {
                if let Some(next) = raw_or_byte_string(b, i, &mut line) {
                    i = next;
                    continue;
                }
            }
            b'\'' => {
                i = skip_char_or_lifetime(b, i);
                continue;
            }
            b'{' => {
                if let Some((name, start)) = pending.take() {
                    open.push((name, start, depth));
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if open.last().is_some_and(|(_, _, d)| *d == depth) {
                    let (name, start_line, _) = open.pop().expect("checked");
                    out.push(FnSpan { name, start_line, end_line: line });
                }
            }
            b'(' | b'[' => brackets += 1,
            b')' | b']' => brackets = brackets.saturating_sub(1),
            b';' if brackets == 0 => pending = None,
            b'f' if b.get(i + 1) == Some(&b'n')
                && !ident_byte(prev(b, i))
                && !ident_byte(b.get(i + 2).copied()) =>
            {
                let mut j = i + 2;
                while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                    j += 1;
                }
                let name_start = j;
                while j < b.len() && ident_byte(Some(b[j])) {
                    j += 1;
                }
                if j > name_start {
                    pending = Some((String::from_utf8_lossy(&b[name_start..j]).into_owned(), line));
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn prev(b: &[u8], i: usize) -> Option<u8> {
    i.checked_sub(1).map(|j| b[j])
}

fn ident_byte(c: Option<u8>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
}

fn skip_block_comment(b: &[u8], mut i: usize, line: &mut usize) -> usize {
    let mut nest = 0usize;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            nest += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            nest -= 1;
            i += 2;
            if nest == 0 {
                return i;
            }
        } else {
            if b[i] == b'\n' {
                *line += 1;
            }
            i += 1;
        }
    }
    i
}

/// From just after an opening `"` to just after its closing one.
fn skip_string(b: &[u8], mut i: usize, line: &mut usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'"' => return i + 1,
            b'\n' => *line += 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// `r"…"`, `r#"…"#`, `b"…"`, `br#"…"#`: the index after the literal, or `None` when `i` does
/// not start one.
fn raw_or_byte_string(b: &[u8], i: usize, line: &mut usize) -> Option<usize> {
    let mut j = i;
    if b[j] == b'b' {
        j += 1;
        if b.get(j) == Some(&b'"') {
            return Some(skip_string(b, j + 1, line));
        }
        if b.get(j) == Some(&b'\'') {
            return Some(skip_char_or_lifetime(b, j));
        }
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while b.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'\n' {
            *line += 1;
        } else if b[j] == b'"' && b[j + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

/// A char literal (`'{'`, `'\''`, `'\u{7b}'`) is skipped whole; a lifetime or label
/// (`'a`, `'outer:`) only its quote.
fn skip_char_or_lifetime(b: &[u8], i: usize) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        let mut j = i + 2;
        while j < b.len() && b[j] != b'\'' && b[j] != b'\n' {
            j += 1;
        }
        return j + 1;
    }
    // One UTF-8 scalar, then a closing quote: a char literal.
    let width = match b.get(i + 1) {
        Some(c) if *c < 0x80 => 1,
        Some(c) if *c >= 0xF0 => 4,
        Some(c) if *c >= 0xE0 => 3,
        Some(_) => 2,
        None => return i + 1,
    };
    if b.get(i + 1 + width) == Some(&b'\'') {
        i + 2 + width
    } else {
        i + 1
    }
}

#[cfg(test)]
mod tests {
    //! The lexer on the literal forms that hold braces, and the two limits.
    use super::*;

    #[test]
    fn braces_in_literals_and_comments_do_not_count() {
        let text = "fn a() {\n    let s = \"{\";\n    let c = '{';\n    let r = r#\"}\"#;\n    // }\n    /* { */\n    let l: &'static str = \"\";\n}\nfn b<'x>(v: &'x u8) -> u8 {\n    *v\n}\n";
        let f = functions(text);
        assert_eq!(
            f,
            vec![
                FnSpan { name: "a".into(), start_line: 1, end_line: 8 },
                FnSpan { name: "b".into(), start_line: 9, end_line: 11 }
            ]
        );
    }

    #[test]
    fn declarations_without_a_body_are_not_functions() {
        let text = "trait T {\n    fn f(&self);\n    fn g(&self, a: [u8; 4]) {}\n}\n";
        assert_eq!(functions(text), vec![FnSpan { name: "g".into(), start_line: 3, end_line: 3 }]);
    }

    #[test]
    fn long_functions_and_files_are_reported() {
        let body = "    let x = 1;\n".repeat(MAX_FN_LINES - 1);
        let long = format!("//! t\nfn long() {{\n{body}}}\n");
        let v = check("x.rs", &long);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].message.contains("fn `long` has 151 lines"), "{v:?}");
        let ok = format!("//! t\nfn fits() {{\n{}}}\n", "    let x = 1;\n".repeat(MAX_FN_LINES - 2));
        assert!(check("x.rs", &ok).is_empty());
        let file = "//\n".repeat(MAX_FILE_LINES + 1);
        assert!(check("x.rs", &file)[0].message.contains("801 lines"));
    }
}
