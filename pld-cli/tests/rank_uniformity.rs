//! Rank uniformity at compile time (#34 part 2): `pld check` rejects a collective reached
//! under rank-dependent control flow (E0106) — an `if` on `pld.rank`, a loop whose trip count
//! or condition depends on it, a rank-dependent early `return`, a rank passed in as a
//! parameter (the host's device index), a call of a function that holds the collective, the
//! ergonomic forms — with the error at the collective and the rank-dependent condition
//! labelled. Every such program was accepted before the check (and deadlocked at run time).
//! Their positive twins (a fixed trip count, a builder-parameter branch, the rank selecting
//! data only) pass `check` and match their NumPy goldens, a hand-written notify/wait protocol
//! under a rank-dependent branch is not a collective, and no other program of the repository
//! is rejected by the check at any rank count.

mod cli_support;

use cli_support::{pld, root, text};
use std::path::PathBuf;

const DIR: &str = "pld-cli/tests/uniformity";

/// One rejected program: its first line, its location, and (source line, label) pairs,
/// each label drawn on the line right under its source line.
struct Rejected {
    file: &'static str,
    message: &'static str,
    at: &'static str,
    labels: &'static [(&'static str, &'static str)],
}

const WHETHER: &str = "error[E0106]: collective `pld.tensor.allreduce` under rank-dependent control flow: ranks disagree on whether they call it";
const HOW_MANY: &str = "error[E0106]: collective `pld.tensor.allreduce` under rank-dependent control flow: ranks disagree on how many times they call it";
const COND: &str = "this condition depends on the rank";
const ENTERS: &str = "the rank enters here";
const PASSED: &str = "the rank is passed in here";
const HOST_R: &str = "51 |             self.chip_orch(x[r], out[r], data, signal, r, device=r)";

static REJECTED: &[Rejected] = &[
    Rejected {
        file: "divergent_if_rank.py",
        message: WHETHER,
        at: "divergent_if_rank.py:26:20",
        labels: &[("25 |         if pld.rank(ctx) == 0:", COND)],
    },
    Rejected {
        file: "divergent_if_me.py",
        message: WHETHER,
        at: "divergent_if_me.py:26:20",
        labels: &[("23 |         me = pld.rank(ctx)", ENTERS), ("25 |         if me != 0:", COND)],
    },
    Rejected {
        file: "divergent_trip_count.py",
        message: HOW_MANY,
        at: "divergent_trip_count.py:26:20",
        labels: &[
            ("23 |         me = pld.rank(ctx)", ENTERS),
            ("25 |         for i in pl.range(me):", "this trip count depends on the rank"),
        ],
    },
    Rejected {
        file: "divergent_while.py",
        message: HOW_MANY,
        at: "divergent_while.py:27:20",
        labels: &[
            ("23 |         me = pld.rank(ctx)", ENTERS),
            ("26 |         while i < 3:", "this loop condition depends on the rank"),
        ],
    },
    Rejected {
        file: "divergent_early_return.py",
        message: "error[E0106]: collective `pld.tensor.allreduce` under rank-dependent control flow: ranks disagree on whether they reach it",
        at: "divergent_early_return.py:28:16",
        labels: &[
            ("25 |         if me == 0:", COND),
            ("27 |             return out", "ranks that take this `return` never reach the collective"),
        ],
    },
    Rejected {
        file: "divergent_rank_parameter.py",
        message: WHETHER,
        at: "divergent_rank_parameter.py:26:20",
        labels: &[("25 |         if me > 0:", COND), (HOST_R, PASSED)],
    },
    Rejected {
        file: "divergent_through_call.py",
        message: WHETHER,
        at: "divergent_through_call.py:25:16",
        labels: &[
            ("37 |         if me == 0:", COND),
            ("38 |             self.step(x, out, data, signal, me)", "the collective is reached through this call"),
            (HOST_R, PASSED),
        ],
    },
    Rejected {
        file: "divergent_ergonomic_barrier.py",
        message: "error[E0106]: collective `pld.barrier` under rank-dependent control flow: ranks disagree on whether they call it",
        at: "divergent_ergonomic_barrier.py:38:22",
        labels: &[("37 |         if me == 0:", COND), (HOST_R, PASSED)],
    },
    Rejected {
        file: "divergent_host_all_reduce.py",
        message: "error[E0106]: collective `pld.all_reduce` under rank-dependent control flow: ranks disagree on whether they call it",
        at: "divergent_host_all_reduce.py:52:20",
        labels: &[("51 |         if pld.rank(ctx) == 0:", COND)],
    },
];

/// Asserts that `err` draws `label` on the line right under source line `src`.
fn assert_label(err: &str, src: &str, label: &str) {
    let lines: Vec<&str> = err.lines().collect();
    let i = lines.iter().position(|l| *l == src).unwrap_or_else(|| panic!("no line `{src}` in:\n{err}"));
    let under = lines.get(i + 1).copied().unwrap_or_default();
    assert!(under.trim_start().starts_with("|") && under.ends_with(label), "`{label}` under `{src}`:\n{err}");
}

#[test]
fn a_collective_under_rank_dependent_control_flow_is_an_error_at_the_collective() {
    for case in REJECTED {
        let path = format!("{DIR}/{}", case.file);
        for ranks in ["2", "4"] {
            let out = pld(&["check", &path, "--ranks", ranks]);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{path} --ranks {ranks}: {err}");
            assert!(err.starts_with(&format!("{}\n", case.message)), "{path}:\n{err}");
            assert!(err.contains(&format!("--> {DIR}/{}\n", case.at)), "{path}:\n{err}");
            assert_eq!(err.matches("error[").count(), 1, "{path}: one error:\n{err}");
            for (src, label) in case.labels {
                assert_label(&err, src, label);
            }
            assert!(
                err.contains("note: every rank must reach the same collectives in the same order"),
                "{path}:\n{err}"
            );
            assert!(err.contains("TWAIT's spin-count assert"), "{path}:\n{err}");
            // An ergonomic call is named as the user wrote it, the canonical op in a note.
            for (written, canon) in
                [("pld.barrier", "pld.tensor.barrier"), ("pld.all_reduce", "pld.tensor.allreduce")]
            {
                if case.message.contains(&format!("`{written}`")) {
                    let note = format!("note: `{written}` is canonicalized onto `{canon}`");
                    assert!(err.contains(&note), "{path}:\n{err}");
                }
            }
        }
    }
}

#[test]
fn every_divergent_program_is_listed_and_run_rejects_it_too() {
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join(DIR))
        .expect("uniformity programs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("divergent_"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = REJECTED.iter().map(|c| c.file.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    // `run` stops with the same diagnostic before simulating (no deadlock report, exit 1).
    let out = pld(&["run", &format!("{DIR}/divergent_if_me.py"), "--ranks", "2"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with(WHETHER) && !err.contains("deadlock"), "{err}");
}

#[test]
fn rank_uniform_twins_pass_check_and_match_their_goldens() {
    let twins = [
        "uniform_fixed_trip_count.py",
        "uniform_rank_selects_data.py",
        "uniform_device_index_selects_data.py",
    ];
    for twin in twins {
        let path = format!("{DIR}/{twin}");
        for ranks in ["2", "3", "4"] {
            let out = pld(&["check", &path, "--ranks", ranks]);
            assert!(out.status.success(), "{path} --ranks {ranks}: {}", text(&out.stderr));
        }
        for ranks in ["2", "4"] {
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("pld-uniform-{}-{twin}-{ranks}", std::process::id()));
            let out =
                pld(&["run", &path, "--ranks", ranks, "--check-golden", "--out", dir.to_str().unwrap()]);
            let _ = std::fs::remove_dir_all(&dir);
            assert!(out.status.success(), "{path} --ranks {ranks}: {}", text(&out.stderr));
            assert!(text(&out.stdout).contains("vs golden: ok"), "{path}: {}", text(&out.stdout));
        }
    }
}

#[test]
fn the_broken_example_is_rejected_and_a_hand_written_divergent_barrier_is_not_a_collective() {
    let out = pld(&["check", "examples/broken_divergent_allreduce.py"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with(WHETHER), "{err}");
    assert!(err.contains("--> examples/broken_divergent_allreduce.py:36:20\n"), "{err}");
    assert_label(&err, "35 |         if me != 0:", COND);
    assert_label(&err, "32 |         me = pld.rank(ctx)", ENTERS);
    // Root vs non-root notify/wait is rank-dependent by nature: left to the simulator.
    let out = pld(&["check", "examples/broken_divergent_barrier.py", "--ranks", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn pld_explain_describes_e0106_with_a_wrong_and_a_fixed_example() {
    let out = pld(&["explain", "E0106"]);
    let t = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(t.starts_with("E0106: collective under rank-dependent control flow\n"), "{t}");
    assert!(t.contains("Wrong:") && t.contains("if me == 0:\n        data = pld.all_reduce(data)"), "{t}");
    assert!(t.contains("Fixed:"), "{t}");
}

/// Every other folder of DSL programs (users' programs, the reference-style frontend corpus,
/// codegen and pass fixtures): none may meet the check, whatever else rejects it.
const CLEAN_DIRS: [&str; 11] = [
    "examples",
    "pld-cli/tests/corpus",
    "pld-cli/tests/runtime_programs",
    "pld-cli/tests/mutations",
    "pld-cli/tests/parity_programs",
    "pld-cli/tests/early_returns",
    "pld-testkit/tests/programs",
    "pld-sim/tests/programs",
    "pld-frontend/tests/corpus",
    "pld-codegen-pto/tests/programs",
    "pld-passes/tests/filetests",
];

#[test]
fn no_other_program_of_the_repository_is_rejected_by_the_check_at_any_rank_count() {
    let mut checked = 0;
    for dir in CLEAN_DIRS {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect(dir)
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect();
        files.sort();
        for f in files {
            let rel = format!("{dir}/{}", f.file_name().unwrap().to_string_lossy());
            if rel == "examples/broken_divergent_allreduce.py" {
                continue;
            }
            for ranks in ["2", "3", "4", "8"] {
                let out = pld(&["check", &rel, "--ranks", ranks]);
                let err = text(&out.stderr);
                assert!(!err.contains("E0106"), "{rel} --ranks {ranks}: {err}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 4 * 100, "{checked}");
}

#[test]
fn the_op_records_say_which_ops_are_collectives_and_which_yields_the_rank() {
    let role = |op: &str| {
        let out = pld(&["ops", op]);
        let t = text(&out.stdout);
        t.lines().find_map(|l| l.strip_prefix("rank role:")).unwrap_or_default().trim().to_string()
    };
    for op in ["pld.all_reduce", "pld.barrier", "pld.tensor.allreduce", "pld.tensor.all_to_all_v"] {
        assert!(role(op).starts_with("collective"), "{op}: {}", role(op));
    }
    assert!(role("pld.rank").starts_with("rank index"), "{}", role("pld.rank"));
    for op in ["pld.system.notify", "pld.system.wait", "pld.nranks"] {
        assert_eq!(role(op), "none", "{op}");
    }
}
