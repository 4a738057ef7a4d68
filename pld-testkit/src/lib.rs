//! # pld-testkit — what every pld test needs
//!
//! Links `pld-ops` so every test sees the full registry ([`init`]), and offers golden-file
//! comparison ([`golden`]), the golden reference collectives ([`reference`]), the one CHECK-line
//! matcher ([`filecheck`]), the one file-test runner ([`filetest`]) and the end-to-end harness
//! ([`e2e`]).

pub mod e2e;
pub mod filecheck;
pub mod filetest;
pub mod golden;
pub mod reference;

/// Forces `pld-ops` into the link and checks the registry is consistent.
///
/// # Panics
/// When the registry reports duplicates or is empty: a test setup bug, not user input.
pub fn init() -> &'static pld_ir::registry::Registry {
    let reg = pld_ops::registry();
    if let Err(errs) = reg.check() {
        let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        panic!("op registry is inconsistent:\n{}", msgs.join("\n"));
    }
    reg
}
