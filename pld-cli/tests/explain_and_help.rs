//! Error codes, `pld explain` and the `help:` lines of diagnostics: every code in the table
//! is explained with a wrong and a fixed fragment; typos in kwargs, enum members and names
//! get a "did you mean" with the intended spelling; run-time faults carry their code.

mod cli_support;

use cli_support::{pld, root, text};

/// `pld check` on example `file` with `from` replaced by `to`; returns stderr (exit 1).
fn check_edited(file: &str, tag: &str, from: &str, to: &str) -> String {
    let src = std::fs::read_to_string(root().join(file)).expect("example");
    assert!(src.contains(from), "{file} still contains `{from}`");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-explain-{}-{tag}.py", std::process::id()));
    std::fs::write(&path, src.replacen(from, to, 1)).expect("write");
    let out = pld(&["check", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    err
}

#[test]
fn explain_lists_at_least_twenty_codes_and_explains_each() {
    let out = pld(&["explain"]);
    assert!(out.status.success());
    let list = text(&out.stdout);
    let codes: Vec<&str> = list.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(codes.len() >= 20, "{list}");
    for code in codes {
        let one = pld(&["explain", code]);
        let t = text(&one.stdout);
        assert!(one.status.success(), "{code}: {}", text(&one.stderr));
        assert!(
            t.starts_with(&format!("{code}: ")) && t.contains("\nWrong:\n") && t.contains("\nFixed:\n"),
            "{t}"
        );
    }
    let lower = pld(&["explain", "e301"]);
    assert!(text(&lower.stdout).starts_with("E0301: deadlock"), "{}", text(&lower.stdout));
    let bad = pld(&["explain", "E9999"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("no error code `E9999`"), "{}", text(&bad.stderr));
}

#[test]
fn a_misspelt_kwarg_gets_its_code_and_the_intended_name() {
    let err = check_edited(
        "examples/host_collectives.py",
        "kwarg",
        "op=pld.ReduceOp.Sum, core_num=2",
        "op=pld.ReduceOp.Sum, core_nm=2",
    );
    assert!(err.starts_with("error[E0002]: "), "{err}");
    assert!(err.contains("= help: did you mean `core_num`?"), "{err}");
}

#[test]
fn a_misspelt_enum_member_gets_the_intended_member() {
    let err = check_edited(
        "examples/host_collectives.py",
        "enum",
        "op=pld.ReduceOp.Sum, core_num",
        "op=pld.ReduceOp.Summ, core_num",
    );
    assert!(err.starts_with("error[E0003]: `Summ` is not a member of pld.ReduceOp"), "{err}");
    assert!(err.contains("= help: did you mean `Sum`?"), "{err}");
}

#[test]
fn a_misspelt_name_gets_the_name_in_scope() {
    let err = check_edited(
        "examples/quickstart_allreduce.py",
        "name",
        "theirs = pld.tile.remote_load(data, peer,",
        "theirs = pld.tile.remote_load(data, peeer,",
    );
    assert!(err.starts_with("error[E0007]: undefined name `peeer`"), "{err}");
    assert!(err.contains("= help: did you mean `peer`?"), "{err}");
}

#[test]
fn a_run_time_deadlock_carries_its_code() {
    let out = pld(&["run", "examples/broken_divergent_barrier.py", "--ranks", "2"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.starts_with("error[E0301]: deadlock"), "{err}");
}

#[test]
fn a_missing_argument_is_named_with_the_callees_signature() {
    let err = check_edited(
        "examples/quickstart_allreduce.py",
        "missing",
        "self.chip_orch(inputs[r], outputs[r], data, signal, device=r)",
        "self.chip_orch(inputs[r], outputs[r], data, device=r)",
    );
    assert!(err.starts_with("error[E0004]: missing argument `signal` of `chip_orch`"), "{err}");
    assert!(err.contains("= note: signature: chip_orch(inp, out, data, signal)"), "{err}");
    assert!(err.contains("parameter `signal` declared here"), "{err}");
}
