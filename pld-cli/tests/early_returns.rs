//! A kernel whose paths return different numbers of values — an early `return out` under
//! `if me == 0:` with no `return` at the end, a bare `return` beside `return out`, with or
//! without a collective before it — is a `check` error at the return that gives values, with
//! a label where the other path ends (exit 1 from `check` and `run`). These used to stop with
//! an internal "ir verification failed after NormalizeReturns", or were accepted with the
//! returned value silently dropped. The twin that returns `out` on every path runs and matches
//! its NumPy golden.

mod cli_support;

use cli_support::{pld, text};

const DIR: &str = "pld-cli/tests/early_returns";
const MESSAGE: &str = "error: this `return` gives 1 value(s), but another path through the kernel returns 0";
const NOTE: &str = "= note: every path through `step` must return the same number of values";

/// One rejected program: where the error points, and (source line, label) pairs, each label
/// drawn on the line right under its source line.
struct Rejected {
    file: &'static str,
    at: &'static str,
    labels: &'static [(&'static str, &'static str)],
}

static REJECTED: &[Rejected] = &[
    Rejected {
        file: "mixed_returns_falls_off.py",
        at: "mixed_returns_falls_off.py:25:13",
        labels: &[
            ("23 |         if me == 0:", "on the other path of this `if` the kernel ends without a `return`"),
            ("25 |             return out", "^^^^^^^^^^"),
        ],
    },
    Rejected {
        file: "mixed_returns_collective.py",
        at: "mixed_returns_collective.py:29:13",
        labels: &[(
            "27 |         if me == 0:",
            "on the other path of this `if` the kernel ends without a `return`",
        )],
    },
    Rejected {
        file: "mixed_returns_bare.py",
        at: "mixed_returns_bare.py:27:9",
        labels: &[("25 |             return", "------ this path returns no value")],
    },
];

#[test]
fn a_kernel_whose_paths_return_different_counts_is_an_error_at_the_return() {
    for r in REJECTED {
        let path = format!("{DIR}/{}", r.file);
        for cmd in ["check", "run"] {
            let out = pld(&[cmd, &path, "--ranks", "2"]);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{cmd} {}: {err}", r.file);
            assert!(!err.contains("ir verification failed"), "{cmd} {}: an internal error\n{err}", r.file);
            assert_eq!(err.lines().next(), Some(MESSAGE), "{cmd} {}:\n{err}", r.file);
            assert!(err.lines().nth(1).is_some_and(|l| l.ends_with(r.at)), "{cmd} {}:\n{err}", r.file);
            assert!(err.contains(NOTE), "{cmd} {}:\n{err}", r.file);
            let lines: Vec<&str> = err.lines().collect();
            for (src, label) in r.labels {
                let i = lines
                    .iter()
                    .position(|l| l == src)
                    .unwrap_or_else(|| panic!("{}: no `{src}` in\n{err}", r.file));
                assert!(lines[i + 1].ends_with(label), "{}: `{label}` under `{src}` in\n{err}", r.file);
            }
        }
    }
}

#[test]
fn the_twin_that_returns_on_every_path_matches_its_golden() {
    let path = format!("{DIR}/early_return_twin.py");
    for ranks in ["2", "3"] {
        let out = pld(&["run", &path, "--ranks", ranks, "--check-golden"]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{ranks} ranks: {stdout}{}", text(&out.stderr));
        assert!(stdout.contains("check out vs golden: ok"), "{ranks} ranks: {stdout}");
    }
}
