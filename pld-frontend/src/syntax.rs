//! Python syntax errors as a user reads them: what was expected where the parser stopped.
//!
//! rustpython's messages name the token it met ("invalid syntax. Got unexpected token
//! Newline") and keep the expected token only when exactly one was possible. This module
//! turns them into the message CPython users know: `expected ':'` after a compound-statement
//! header, `expected 'X'` when the parser knew, `unexpected end of file`, else the parser's
//! own words without its "Got" phrasing.

use rustpython_parser::{ParseError, ParseErrorType, Tok};

/// Keywords that open a compound statement whose header ends in `:`.
const COMPOUND: &[&str] =
    &["def", "class", "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "async"];

/// The message for a syntax error `e` in `text`.
pub(crate) fn message(text: &str, e: &ParseError) -> String {
    match &e.error {
        ParseErrorType::UnrecognizedToken(tok, expected) => {
            if matches!(tok, Tok::Newline) && header_without_colon(text, e.offset.to_usize()) {
                return "expected ':'".to_owned();
            }
            match expected.as_deref() {
                Some("Indent") => "expected an indented block".to_owned(),
                Some(x) => format!("expected {}, found {}", quote(x), describe(tok)),
                None if matches!(tok, Tok::Indent) => "unexpected indent".to_owned(),
                None => format!("unexpected {}", describe(tok)),
            }
        }
        ParseErrorType::Eof => "unexpected end of file".to_owned(),
        ParseErrorType::ExtraToken(tok) => format!("unexpected {}", describe(tok)),
        other => other.to_string(),
    }
}

/// Whether the logical line that ends at byte `at` opens with a compound keyword and does
/// not end with `:` (the parser met the newline where the colon belongs).
fn header_without_colon(text: &str, at: usize) -> bool {
    let at = at.min(text.len());
    let Some(head) = text.get(..at) else { return false };
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    let line = head[line_start..].trim();
    let first = line.split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap_or("");
    COMPOUND.contains(&first) && !line.ends_with(':')
}

/// A token as a diagnostic names it.
fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Newline => "end of line".to_owned(),
        Tok::Indent => "indent".to_owned(),
        Tok::Dedent => "dedent".to_owned(),
        Tok::EndOfFile => "end of file".to_owned(),
        Tok::Name { name } => format!("name '{name}'"),
        // The lexer's own Display already quotes operators and literals (`':'`, `'2'`).
        other => other.to_string(),
    }
}

/// The parser's spelling of an expected token (`"':'"`, `Name`) as a quoted token.
fn quote(expected: &str) -> String {
    let bare = expected.trim_matches('"');
    if bare.starts_with('\'') {
        bare.to_owned()
    } else {
        format!("'{bare}'")
    }
}

#[cfg(test)]
mod tests {
    //! Messages for the syntax errors new users make most.
    use super::*;

    fn msg(src: &str) -> String {
        let e = rustpython_parser::parse(src, rustpython_parser::Mode::Module, "<t>").unwrap_err();
        message(src, &e)
    }

    #[test]
    fn a_missing_colon_is_named() {
        assert_eq!(msg("def f()\n    pass\n"), "expected ':'");
        assert_eq!(msg("if x\n    pass\n"), "expected ':'");
        assert_eq!(msg("for i in pl.range(4)\n    pass\n"), "expected ':'");
        assert_eq!(msg("class A(B)\n    pass\n"), "expected ':'");
    }

    #[test]
    fn other_errors_say_what_was_found() {
        assert_eq!(msg("x = (1,\n"), "unexpected EOF while parsing");
        assert_eq!(msg("def f():\npass\n"), "expected an indented block");
        assert_eq!(msg("x = foo(1 2)\n"), "unexpected '2'");
    }
}
