//! The Python string escaper round-trips what Python's reader expects.

use pld_ir::quote::python_string;

#[test]
fn python_literals_use_hex_escapes_for_controls_and_del() {
    assert_eq!(python_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    assert_eq!(python_string("\u{1}\u{7f}x"), "\"\\x01\\x7fx\"");
}
