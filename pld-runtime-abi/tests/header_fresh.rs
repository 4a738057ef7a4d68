//! The checked-in `include/pld_runtime_abi.h` must equal `c_header()`.
//!
//! With `PLD_BLESS=1` (what `cargo xtask bless` sets) a stale header is rewritten
//! instead of failing; `cargo xtask abi-header` does the same on its own.

use std::path::Path;

#[test]
fn checked_in_header_is_fresh() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(pld_runtime_abi::C_HEADER_PATH);
    let expected = pld_runtime_abi::c_header();
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    if actual == expected {
        return;
    }
    if std::env::var_os("PLD_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).expect("write the regenerated header");
        return;
    }
    panic!("{} is stale: run `cargo xtask abi-header`", path.display());
}
