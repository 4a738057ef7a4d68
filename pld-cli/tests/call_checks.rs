//! `pld check` reports a call whose argument does not match the callee's annotation before
//! anything runs: the quickstart with its signal window made FP32 (which used to pass
//! `check` and deadlock at run time) and with a rank's input passed as its output (which
//! used to run and exit 0) are rejected with exit 1, the error at the argument and a label
//! at the parameter's annotation.

mod cli_support;

use cli_support::root;

use std::process::Command;

/// `pld check` on the quickstart example with `from` replaced by `to`; returns stderr.
fn check_edited(tag: &str, from: &str, to: &str) -> String {
    let src = std::fs::read_to_string(root().join("examples/quickstart_allreduce.py")).expect("example");
    assert!(src.contains(from), "the example still contains `{from}`");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-call-check-{}-{tag}.py", std::process::id()));
    std::fs::write(&path, src.replace(from, to)).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args(["check", path.to_str().unwrap()])
        .output()
        .expect("pld");
    let _ = std::fs::remove_file(&path);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    err.replace(path.to_str().unwrap(), "q.py")
}

#[test]
fn an_fp32_window_for_an_int32_signal_parameter_is_rejected_at_the_argument() {
    let err = check_edited(
        "dtype",
        "signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)",
        "signal = pld.window(signal_buf, [NR, 1], dtype=pl.FP32)",
    );
    assert!(
        err.starts_with(
            "error[E0005]: argument 4 (`signal`) has dtype pl.FP32, but parameter `signal` is declared with dtype pl.INT32\n"
        ),
        "{err}"
    );
    // One snippet: the argument (primary, line 74) and the parameter's annotation (line 59).
    assert!(err.contains("--> q.py:74:57"), "{err}");
    assert!(err.contains("\n59 |         signal: "), "{err}");
    assert!(err.contains("parameter `signal` of `chip_orch` declared here"), "{err}");
    assert_eq!(err.matches("-->").count(), 1, "{err}");
}

#[test]
fn a_read_only_input_for_an_out_parameter_is_rejected_at_the_argument() {
    let err = check_edited(
        "direction",
        "self.chip_orch(inputs[r], outputs[r], data, signal, device=r)",
        "self.chip_orch(inputs[r], inputs[r], data, signal, device=r)",
    );
    assert!(err.starts_with("error[E0005]: argument 2 is read-only here"), "{err}");
    assert!(err.contains("--> q.py:74:39"), "{err}");
    assert!(err.contains("\n57 |         out: pl.Out["), "{err}");
    assert!(err.contains("parameter `out` of `chip_orch` declared here"), "{err}");
}
