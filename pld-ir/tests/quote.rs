//! The one string escaper round-trips what JSON and Python readers expect.

use pld_ir::quote::{json_string, python_string};

#[test]
fn json_literals_escape_quotes_backslashes_and_controls() {
    assert_eq!(json_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    assert_eq!(json_string("\t\r\u{1}é"), "\"\\t\\r\\u0001é\"");
    assert_eq!(json_string("\u{7f}"), "\"\u{7f}\"");
}

#[test]
fn python_literals_use_hex_escapes_for_controls_and_del() {
    assert_eq!(python_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    assert_eq!(python_string("\u{1}\u{7f}x"), "\"\\x01\\x7fx\"");
}
