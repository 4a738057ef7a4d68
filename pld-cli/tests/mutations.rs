//! The protocol-bug mutation suite (#18): seeded bugs — removed waits and notifies, wrong
//! peers, Set mixed with AtomicAdd, Eq where a peer can overshoot, removed read-done barriers,
//! forgotten epilogue cells, a collective reused on an unzeroed signal, reads of unwritten
//! bytes, out-of-range peers — as text edits of correct programs (`tests/mutations/MUTATIONS`),
//! each of which `pld verify` must report (exit 3, the expected kind, a rank, a source line of
//! the mutant and a cell or buffer); and the correct programs themselves verify clean.

mod cli_support;

use cli_support::{pld, root, scratch, text};

use std::path::{Path, PathBuf};
use std::process::Output;

/// The folder of the suite's own programs and its mutation list.
fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mutations")
}

fn program_path(name: &str) -> PathBuf {
    if name.starts_with("examples/") {
        root().join(name)
    } else if let Some(file) = name.strip_prefix("corpus/") {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(file)
    } else {
        suite().join(name)
    }
}

/// One seeded bug.
struct Mutation {
    line: usize,
    program: String,
    find: String,
    replace: String,
    expect: String,
}

fn mutations() -> Vec<Mutation> {
    let list = std::fs::read_to_string(suite().join("MUTATIONS")).expect("MUTATIONS");
    list.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let parts: Vec<&str> = l.split(" | ").map(str::trim).collect();
            assert_eq!(parts.len(), 4, "MUTATIONS:{}: expected PROGRAM | FIND | REPLACE | REPORT", i + 1);
            Mutation {
                line: i + 1,
                program: parts[0].to_string(),
                find: parts[1].replace("\\n", "\n"),
                replace: parts[2].replace("\\n", "\n"),
                expect: parts[3].to_string(),
            }
        })
        .collect()
}

fn verify(file: &Path, ranks: usize, schedules: usize, out: &Path) -> Output {
    pld(&[
        "verify",
        file.to_str().unwrap(),
        "--ranks",
        &ranks.to_string(),
        "--schedules",
        &schedules.to_string(),
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn every_seeded_protocol_bug_is_reported_by_pld_verify() {
    let all = mutations();
    assert!(all.len() >= 40, "{} mutations", all.len());
    let programs: std::collections::BTreeSet<&str> = all.iter().map(|m| m.program.as_str()).collect();
    assert!(programs.len() >= 8, "{programs:?}");
    let dir = scratch("mutations", "mutants");
    let mut failures = Vec::new();
    for m in &all {
        let src = std::fs::read_to_string(program_path(&m.program)).expect("program");
        assert!(src.contains(&m.find), "MUTATIONS:{}: `{}` is not in {}", m.line, m.find, m.program);
        let mutant = src.replacen(&m.find, &m.replace, 1);
        let stem = Path::new(&m.program).file_stem().unwrap().to_string_lossy().into_owned();
        let file = dir.join(format!("m{:03}_{stem}.py", m.line));
        std::fs::write(&file, &mutant).expect("write mutant");
        let out = verify(&file, 3, 6, &dir.join("out"));
        let err = text(&out.stderr);
        let first = err.lines().find(|l| l.starts_with("error")).map_or(String::new(), without_code);
        let located = err.contains(&format!("{}:", file.display()));
        let names_cell = err.contains("buffer '") || err.contains("] on rank ");
        let names_op =
            ["pld.", "tile.", "builtin.", " waits on ", "notify"].iter().any(|op| err.contains(op));
        let ok = out.status.code() == Some(3)
            && first.starts_with(&format!("error: {}", m.expect))
            && err.contains("rank ")
            && located
            && names_cell
            && names_op;
        if !ok {
            failures.push(format!(
                "MUTATIONS:{} ({}: `{}` -> `{}`), expected `{}`, exit {:?}:\n{err}{}",
                m.line,
                m.program,
                m.find,
                m.replace,
                m.expect,
                out.status.code(),
                text(&out.stdout)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} mutants not reported as expected:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// `pld run` of a mutant at 3 ranks under one schedule.
fn run_under(file: &Path, schedule: &str, out: &Path) -> Output {
    pld(&[
        "run",
        file.to_str().unwrap(),
        "--ranks",
        "3",
        "--schedule",
        schedule,
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn every_seeded_protocol_bug_is_reported_on_every_run_schedule() {
    // What `pld verify` explores (det and PCT) and what it does not: seeded random schedules
    // and the parallel one. A bug reported on only some interleavings is silently missed on
    // the others.
    let dir = scratch("mutations", "schedules");
    let mut failures = Vec::new();
    for m in &mutations() {
        let src = std::fs::read_to_string(program_path(&m.program)).expect("program");
        let stem = Path::new(&m.program).file_stem().unwrap().to_string_lossy().into_owned();
        let file = dir.join(format!("m{:03}_{stem}.py", m.line));
        std::fs::write(&file, src.replacen(&m.find, &m.replace, 1)).expect("write mutant");
        for schedule in ["det", "random:1", "random:2", "pct:5", "parallel"] {
            let out = run_under(&file, schedule, &dir.join("out"));
            let err = text(&out.stderr);
            let first = err.lines().find(|l| l.starts_with("error")).map_or(String::new(), without_code);
            if out.status.code() != Some(3) || !first.starts_with(&format!("error: {}", m.expect)) {
                failures.push(format!(
                    "MUTATIONS:{} ({}) under {schedule}: expected `{}`, exit {:?}: {first}",
                    m.line,
                    m.program,
                    m.expect,
                    out.status.code()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} misses:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_correct_programs_of_the_suite_verify_clean() {
    let all = mutations();
    let programs: std::collections::BTreeSet<&str> = all.iter().map(|m| m.program.as_str()).collect();
    let dir = scratch("mutations", "correct");
    for p in programs {
        for ranks in [2, 3, 4] {
            let out = verify(&program_path(p), ranks, 8, &dir);
            assert!(
                out.status.success(),
                "{p} at {ranks} ranks: exit {:?}\n{}{}",
                out.status.code(),
                text(&out.stdout),
                text(&out.stderr)
            );
            assert!(text(&out.stdout).contains("ran clean with identical outputs and traffic"), "{p}");
        }
    }
}

#[test]
fn verify_usage_and_pct_schedules() {
    let dir = scratch("mutations", "usage");
    let out = verify(&root().join("examples/put_get_ring.py"), 3, 3, &dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("4 schedules (det, pct:1..=3) ran clean"), "{}", text(&out.stdout));
    let out =
        pld(&["run", "examples/put_get_ring.py", "--schedule", "pct:7", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("schedule pct:7"), "{}", text(&out.stdout));
    let out =
        pld(&["verify", "examples/put_get_ring.py", "--schedule", "pct:3", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("drop --schedule"), "{}", text(&out.stderr));
    let out =
        pld(&["run", "examples/put_get_ring.py", "--schedule", "pct:x", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("bad pct seed 'x'"), "{}", text(&out.stderr));
}

#[test]
fn a_fault_names_the_schedule_to_replay_and_pld_run_replays_it() {
    // A ready wait that waits for nothing (`Ge 0`): the ring read is unordered with the peer's
    // store. `pld verify` stops at the first schedule that faults and says how to replay it.
    let src = std::fs::read_to_string(suite().join("ring_rounds.py")).unwrap().replacen(
        "pld.system.wait(signal, [prv, 0], rnd + 1, cmp=pld.WaitCmp.Ge)",
        "pld.system.wait(signal, [prv, 0], 0, cmp=pld.WaitCmp.Ge)",
        1,
    );
    let dir = scratch("mutations", "replay");
    let file = dir.join("no_ready_wait.py");
    std::fs::write(&file, src).unwrap();
    let out = verify(&file, 2, 4, &dir);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.starts_with("error[E0302]: data race"), "{err}");
    assert!(err.contains("under schedule det (replay: pld run --schedule det)"), "{err}");
    for s in ["det", "pct:1", "pct:2"] {
        let out = pld(&[
            "run",
            file.to_str().unwrap(),
            "--ranks",
            "2",
            "--schedule",
            s,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(3), "{s}: {}", text(&out.stderr));
        assert!(text(&out.stderr).starts_with("error[E0302]: data race"), "{s}: {}", text(&out.stderr));
    }
}

/// Every rank atomically adds its row into rank 0's window (see pld-sim's protocol_bugs.rs):
/// correct as a protocol, but FP32 rounding depends on the order of the adds.
const ATOMIC_SUM: &str = include_str!("../../pld-sim/tests/programs/atomic_sum.py");

/// A little-endian FP32 `.npy` file of `shape`.
fn npy_f32(path: &Path, shape: &[usize], vals: &[f32]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", dims.join(", "));
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in vals {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).expect("write npy");
}

#[test]
fn schedule_dependent_outputs_fail_verify_naming_both_schedules_and_the_first_byte() {
    let dir = scratch("mutations", "differ");
    let file = dir.join("atomic_order.py");
    std::fs::write(&file, ATOMIC_SUM).unwrap();
    // Exactly representable sums (the default inputs): every order agrees.
    let out = verify(&file, 3, 8, &dir.join("a"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    // 2^24 on rank 0 and 1 elsewhere: 2^24 + 1 + 1 rounds to 2^24, 1 + 1 + 2^24 does not.
    let mut vals = vec![1.0f32; 24];
    vals[..8].fill(16_777_216.0);
    let input = dir.join("inputs.npy");
    npy_f32(&input, &[3, 1, 8], &vals);
    let spec = format!("inputs={}", input.display());
    let out = pld(&[
        "verify",
        file.to_str().unwrap(),
        "--ranks",
        "3",
        "--input",
        &spec,
        "--out",
        dir.join("b").to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.starts_with("error: schedule-dependent result: schedules det and pct:"), "{err}");
    assert!(err.contains("output 'outputs' first differs at byte 0 (element 0): 16777216"), "{err}");
    assert!(err.contains("replay each with pld run --schedule det / --schedule pct:"), "{err}");
}

/// A report's first line without its error code (`error[E0301]: x` → `error: x`).
fn without_code(line: &str) -> String {
    match (line.find('['), line.find("]: ")) {
        (Some(a), Some(b)) if a < b && line.starts_with("error[") => format!("error{}", &line[b + 1..]),
        _ => line.to_string(),
    }
}
