//! The test matcher itself: each directive accepts what it should and rejects what it must.

mod common;
use common::filecheck::check;

const T: &str = "a = 1\nb = load(x)\nc = add(a, b)\nstore(c)\n";

#[test]
fn directives_match_and_fail() {
    assert!(check(T, "CHECK: load\nCHECK-NEXT: add\nCHECK-SAME: b)").is_ok());
    assert!(check(T, "CHECK: load\nCHECK-NEXT: store").is_err());
    assert!(check(T, "CHECK: a = 1\nCHECK-NOT: add\nCHECK: store").is_err());
    assert!(check(T, "CHECK: add\nCHECK-NOT: load").is_ok());
    assert!(check(T, "CHECK: store\nCHECK: load").is_err());
    assert!(check(T, "CHECK: add(a\nCHECK-SAME: b)").is_ok());
    assert!(check(T, "CHECK: add(a\nCHECK-SAME: add").is_err());
    assert!(check(T, "no directives").is_err());
}
