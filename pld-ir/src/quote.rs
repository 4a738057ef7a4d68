//! String literals for the text formats the toolchain writes: JSON (RFC 8259: the
//! orchestration description, simulator reports and traces, the host-callback protocol) and
//! Python (the IR printer). One escaper serves both.
//!
//! Guarantees: the result is one double-quoted literal that the format's reader turns back
//! into exactly `s`; `"` and `\` are escaped, `\n`, `\r`, `\t` use their short forms, every
//! other control character (and, in Python, DEL) is a numeric escape (`\u00NN` in JSON,
//! `\xNN` in Python); all other characters are copied as they are.

use std::fmt::Write as _;

/// The two literal syntaxes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Syntax {
    Json,
    Python,
}

fn push_quoted(s: &str, syntax: Syntax, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 && syntax == Syntax::Json => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ((c as u32) < 0x20 || c as u32 == 0x7f) && syntax == Syntax::Python => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends the JSON string literal of `s` to `out`.
pub fn push_json_string(s: &str, out: &mut String) {
    push_quoted(s, Syntax::Json, out);
}

/// The JSON string literal of `s`.
pub fn json_string(s: &str) -> String {
    let mut out = String::new();
    push_json_string(s, &mut out);
    out
}

/// The Python string literal of `s` (double-quoted).
pub fn python_string(s: &str) -> String {
    let mut out = String::new();
    push_quoted(s, Syntax::Python, &mut out);
    out
}
