//! The user-program corpus: every `pld-cli/tests/corpus/*.py` × each of its run
//! configurations × each rank count runs through the built `pld` binary with
//! `--check-golden` and must exit 0 (its outputs match its NumPy golden).
//!
//! Header lines of a corpus file (TEAM.md's convention):
//! - `# pld-corpus-run: ARGS…` — one line per run configuration (extra `pld run` arguments,
//!   split on whitespace); no such line means one run with no extra arguments;
//! - `# pld-corpus-ranks: 2,3,4` — the rank counts (default 2, 3 and 4);
//! - `# pld-corpus-verify: ARGS…` — also `pld verify --check-golden ARGS…` (det plus PCT
//!   schedules, outputs and traffic compared byte for byte) at each rank count, with the
//!   arguments of the first run configuration.
//!
//! Every failing combination is reported at once (file, arguments, exit code, the tail of its
//! output), so one broken program does not hide another. Needs `python3` with numpy (the
//! goldens run there); without it the test fails and says how to install it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// One `pld` command of a corpus file: `run` or `verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Run,
    Verify,
}

/// What to run of one corpus file: its run configurations (with the mode of each), and the
/// rank counts every configuration runs at.
type Plan = (Vec<(Mode, Vec<String>)>, Vec<usize>);

/// The plan of a file from its header lines.
fn plan(text: &str) -> Result<Plan, String> {
    let mut runs: Vec<(Mode, Vec<String>)> = Vec::new();
    let mut verify = Vec::new();
    let mut ranks = None;
    let words = |args: &str| args.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    for line in text.lines() {
        let line = line.trim();
        if let Some(args) = line.strip_prefix("# pld-corpus-run:") {
            runs.push((Mode::Run, words(args)));
        } else if let Some(args) = line.strip_prefix("# pld-corpus-verify:") {
            verify.push(words(args));
        } else if let Some(list) = line.strip_prefix("# pld-corpus-ranks:") {
            let parsed: Result<Vec<usize>, _> =
                list.split(',').map(|s| s.trim()).filter(|s| !s.is_empty()).map(str::parse).collect();
            match parsed {
                Ok(v) if !v.is_empty() => ranks = Some(v),
                _ => return Err(format!("bad `# pld-corpus-ranks:` line `{line}`")),
            }
        }
    }
    if runs.is_empty() {
        runs.push((Mode::Run, Vec::new()));
    }
    let first = runs[0].1.clone();
    for v in verify {
        runs.push((Mode::Verify, first.iter().cloned().chain(v).collect()));
    }
    Ok((runs, ranks.unwrap_or_else(|| vec![2, 3, 4])))
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n      ")
}

/// Runs one file × configuration × rank count; the failure text if it did not pass.
fn run_one(
    file: &Path,
    name: &str,
    ci: usize,
    (mode, extra): &(Mode, Vec<String>),
    p: usize,
    out_root: &Path,
) -> Option<String> {
    let out = out_root.join(format!("{name}-{ci}-{p}"));
    let o = Command::new(env!("CARGO_BIN_EXE_pld"))
        .arg(match mode {
            Mode::Run => "run",
            Mode::Verify => "verify",
        })
        .arg(file)
        .args(["--ranks", &p.to_string(), "--out", out.to_str().unwrap(), "--check-golden"])
        .args(extra)
        .output()
        .expect("run pld");
    if o.status.code() != Some(0) {
        return Some(format!(
            "{name}.py ({mode:?}) --ranks {p} {}: exit {:?}\n      {}\n      {}",
            extra.join(" "),
            o.status.code(),
            tail(&String::from_utf8_lossy(&o.stdout), 4),
            tail(&String::from_utf8_lossy(&o.stderr), 12)
        ));
    }
    if !String::from_utf8_lossy(&o.stdout).contains("golden: ") {
        return Some(format!("{name}.py --ranks {p} {}: no golden was checked", extra.join(" ")));
    }
    None
}

#[test]
fn header_lines_choose_the_runs() {
    let (runs, ranks) = plan("# pld-corpus-run: --entry a --bind mode=ring\n# pld-corpus-run: --entry b\n# pld-corpus-verify: --schedules 2\n# pld-corpus-ranks: 2, 4\nx = 1\n").unwrap();
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        runs,
        vec![
            (Mode::Run, owned(&["--entry", "a", "--bind", "mode=ring"])),
            (Mode::Run, owned(&["--entry", "b"])),
            (Mode::Verify, owned(&["--entry", "a", "--bind", "mode=ring", "--schedules", "2"])),
        ]
    );
    assert_eq!(ranks, vec![2, 4]);
    assert_eq!(plan("x = 1\n").unwrap(), (vec![(Mode::Run, Vec::new())], vec![2, 3, 4]));
    assert!(plan("# pld-corpus-ranks: two\n").is_err());
}

#[test]
fn every_corpus_program_matches_its_golden() {
    let numpy =
        Command::new("python3").args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success());
    assert!(
        numpy,
        "the corpus goldens need python3 with numpy: run `python3 -m pip install numpy` (.ci/run does)"
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("pld-cli/tests/corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "the corpus has only {} programs", files.len());
    let out_root =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pld-corpus-{}", std::process::id()));
    let mut failures = Vec::new();
    let mut jobs = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        match plan(&text) {
            Ok((runs, ranks)) => {
                for (ci, extra) in runs.iter().enumerate() {
                    for &p in &ranks {
                        jobs.push((file.clone(), name.clone(), ci, extra.clone(), p));
                    }
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    let runs_done = jobs.len();
    // A few runs at a time: each spends most of its time starting python3.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let found = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let Some((file, name, ci, extra, p)) = queue.lock().unwrap().next() else { break };
                if let Some(f) = run_one(&file, &name, ci, &extra, p, &out_root) {
                    found.lock().unwrap().push(f);
                }
            });
        }
    });
    let mut found = found.into_inner().unwrap();
    found.sort();
    failures.extend(found);
    let _ = std::fs::remove_dir_all(&out_root);
    assert!(
        failures.is_empty(),
        "{} of {runs_done} corpus runs failed:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
