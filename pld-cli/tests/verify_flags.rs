//! `pld verify --help` lists only flags verify honours: `--schedule`, `--trace` and
//! `--trace-all` (it picks its own schedules and records no trace) are not listed, and each
//! given anyway is a usage error (`--trace-all` used to be ignored silently). `pld run --help`
//! states the `--ranks` range.

mod cli_support;

use cli_support::{pld, text};

#[test]
fn verify_help_lists_no_flag_verify_refuses() {
    let help = text(&pld(&["verify", "--help"]).stdout);
    assert!(help.contains("--schedules") && help.contains("--ranks"), "{help}");
    for flag in ["--schedule ", "--trace ", "--trace-all"] {
        assert!(!help.contains(flag), "`{flag}` listed:\n{help}");
    }
    let run_help = text(&pld(&["run", "--help"]).stdout);
    assert!(run_help.contains("--trace-all") && run_help.contains("1 to 64"), "{run_help}");
}

#[test]
fn check_golden_without_a_golden_is_refused_before_simulating() {
    // A run that would take the whole step budget: the refusal must come first.
    let o = pld(&[
        "run",
        "examples/quickstart_allreduce.py",
        "--ranks",
        "64",
        "--check-golden",
        "--out",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pld-nogolden-{}", std::process::id()))
            .to_str()
            .unwrap(),
    ]);
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("defines no golden function") && e.contains("checked before running"), "{e}");
    assert!(text(&o.stdout).is_empty(), "nothing ran: {}", text(&o.stdout));
}

#[test]
fn refused_verify_flags_are_usage_errors() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-verify-flags-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    for extra in [&["--trace-all"][..], &["--trace", "t.json"], &["--schedule", "pct:1"]] {
        let mut args = vec![
            "verify",
            "examples/quickstart_allreduce.py",
            "--ranks",
            "2",
            "--schedules",
            "1",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let o = pld(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("drop --schedule, --trace and --trace-all"), "{}", text(&o.stderr));
    }
}
