//! `bench_table`'s arguments: `--help` prints the usage and runs nothing, an unknown argument
//! is a usage error (exit 2) instead of a run of the whole table.

use std::process::Command;

fn bench_table(arg: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bench_table")).arg(arg).output().expect("bench_table runs")
}

#[test]
fn help_prints_the_usage_and_runs_no_benchmark() {
    let out = bench_table("--help");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("usage: bench_table") && text.contains("--sim COLL P BYTES"), "{text}");
    assert!(!text.contains("memcpy (read+write bytes)"), "a table was printed: {text}");
}

#[test]
fn an_unknown_argument_is_a_usage_error() {
    let out = bench_table("--bogus");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown argument '--bogus'") && err.contains("usage:"), "{err}");
    assert!(out.stdout.is_empty(), "nothing runs: {}", String::from_utf8_lossy(&out.stdout));
}
