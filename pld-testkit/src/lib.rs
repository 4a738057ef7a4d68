//! # pld-testkit — what every pld test needs
//!
//! Links `pld-ops` so every test sees the full registry ([`init`]), and offers golden-file
//! comparison ([`golden`]), the golden reference collectives ([`mod@reference`]), the one CHECK-line
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

/// Paths of the runtime test declarations (`pld-testkit/runtime_decls/`, see its README):
/// C++ declaration headers, Python stand-ins, the fake ptoas and the directory checker. They
/// state the documented runtime API for syntax and structure checks; they are not a runtime.
pub mod runtime_decls {
    use std::path::PathBuf;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("runtime_decls")
    }

    /// The include folder with the declaration headers.
    pub fn include_dir() -> PathBuf {
        root().join("include")
    }

    /// The fake ptoas script.
    pub fn fake_ptoas() -> PathBuf {
        root().join("fake_ptoas.py")
    }

    /// The folder of stand-in `torch`/`simpler`/`simpler_setup` modules that let a generated
    /// `run.py` run and log its runtime calls (`$MOCK_SIMPLER_LOG`); put it on `PYTHONPATH`.
    pub fn mock_simpler() -> PathBuf {
        root().join("mock_simpler")
    }

    /// The folder of the cloudpickle stand-in (by-reference / by-value pickling as cloudpickle
    /// does it), for a python3 without cloudpickle; put it on `PYTHONPATH` after
    /// [`mock_simpler`].
    pub fn cloudpickle_standin() -> PathBuf {
        root().join("cloudpickle_standin")
    }

    /// The structural checker script (`check_runtime_dir.py DIR RANKS`).
    pub fn checker() -> PathBuf {
        root().join("check_runtime_dir.py")
    }
}
