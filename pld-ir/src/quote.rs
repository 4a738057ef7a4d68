//! Python string literals for the IR printer and the Python pld writes (JSON goes through
//! `serde_json` everywhere).
//!
//! Guarantees: the result is one double-quoted literal that Python's reader turns back into
//! exactly `s`; `"` and `\` are escaped, `\n`, `\r`, `\t` use their short forms, every other
//! control character and DEL is a `\xNN` escape; all other characters are copied as they are.

use std::fmt::Write as _;

fn push_quoted(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The Python string literal of `s` (double-quoted).
pub fn python_string(s: &str) -> String {
    let mut out = String::new();
    push_quoted(s, &mut out);
    out
}
