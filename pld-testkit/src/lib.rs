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

/// Forces `pld-ops`, the pto emitters and the simulator semantics into the link and checks
/// the registry is consistent (its own tables and both per-op tables: duplicates, unknown
/// op names).
///
/// # Panics
/// When the registry reports a problem or is empty: a test setup bug, not user input.
pub fn init() -> &'static pld_ir::registry::Registry {
    let reg = pld_ops::registry();
    let _ = (pld_codegen_pto::emitters(), pld_sim::sem::names());
    if let Err(errs) = reg.check() {
        let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        panic!("op registry is inconsistent:\n{}", msgs.join("\n"));
    }
    reg
}
