//! What `pld run` accepts, `pld check` and `pld compile` accept, and the converse (issue #28,
//! "Parity"): over every DSL program file of the repository, `check` succeeds exactly when
//! `compile --emit all` (IR, PTO and the runtime directory) does, and `run` applies the same
//! checks first — a program `check` rejects stops `run` with the same located diagnostic
//! (exit 1) before anything is simulated; one it accepts is never rejected by `run` at exit 1.

mod runtime_support;

use runtime_support::*;
use std::path::{Path, PathBuf};

/// Every folder of the repository that holds DSL programs.
const PROGRAM_DIRS: [&str; 13] = [
    "examples",
    "pld-cli/tests/early_returns",
    "pld-cli/tests/uniformity",
    "pld-cli/tests/exhaustive",
    "pld-cli/tests/parity_programs",
    "pld-cli/tests/corpus",
    "pld-cli/tests/runtime_programs",
    "pld-cli/tests/mutations",
    "pld-codegen-pto/tests/programs",
    "pld-frontend/tests/corpus",
    "pld-passes/tests/filetests",
    "pld-sim/tests/programs",
    "pld-testkit/tests/programs",
];

fn is_program(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "py")
        && std::fs::read_to_string(p)
            .is_ok_and(|t| t.contains("@pl.program") || t.contains("@pl.jit") || t.contains("pl.jit."))
}

fn walk(d: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(d) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && name != ".git" && name != "node_modules" {
                walk(&p, out);
            }
        } else if is_program(&p) {
            out.push(p);
        }
    }
}

#[test]
fn the_parity_sweep_covers_every_program_folder_of_the_repository() {
    let mut found = Vec::new();
    walk(&root(), &mut found);
    for f in &found {
        let rel = f.strip_prefix(root()).unwrap().parent().unwrap().to_string_lossy().into_owned();
        assert!(PROGRAM_DIRS.contains(&rel.as_str()), "{} holds a program but is not swept", f.display());
    }
    assert!(found.len() > 100, "{} programs", found.len());
}

/// The run-relevant arguments of a program's first `# pld-corpus-run:` line and its rank count.
fn args_of(file: &Path) -> (Vec<String>, String) {
    let src = std::fs::read_to_string(file).unwrap();
    let args =
        src.lines().find_map(|l| l.strip_prefix("# pld-corpus-run:")).map(compile_args).unwrap_or_default();
    let ranks = src
        .lines()
        .find_map(|l| l.strip_prefix("# pld-corpus-ranks:"))
        .and_then(|r| r.split(',').next())
        .map_or_else(|| "2".to_string(), |r| r.trim().to_string());
    (args, ranks)
}

fn first_error(stderr: &str) -> String {
    stderr.lines().take_while(|l| !l.starts_with("error: aborting")).take(2).collect::<Vec<_>>().join("\n")
}

#[test]
fn run_check_and_compile_agree_on_every_program() {
    let mut files = Vec::new();
    for d in PROGRAM_DIRS {
        walk(&root().join(d), &mut files);
    }
    files.sort();
    let mut broken = Vec::new();
    let (mut accepted, mut rejected) = (0, Vec::new());
    for (i, f) in files.iter().enumerate() {
        let file = s(f);
        let (args, ranks) = args_of(f);
        let extra: Vec<&str> = args.iter().map(String::as_str).collect();
        // The same arguments for all three, the rank count included (it binds a builder
        // parameter that is the rank count, D-cli-7).
        let check = pld(&[&["check", file, "--ranks", &ranks], &extra[..]].concat());
        let dir = out_dir(&format!("parity-{i}"));
        let compile =
            pld(&[&["compile", file, "--emit", "all", "--ranks", &ranks, "--out", s(&dir)], &extra[..]]
                .concat());
        let _ = std::fs::remove_dir_all(&dir);
        let run_out = out_dir(&format!("parity-run-{i}"));
        let run =
            pld(&[&["run", file, "--ranks", &ranks, "--max-steps", "1", "--out", s(&run_out)], &extra[..]]
                .concat());
        let _ = std::fs::remove_dir_all(&run_out);
        let (c, k, r) = (check.status.code(), compile.status.code(), run.status.code());
        let name = f.strip_prefix(root()).unwrap().display().to_string();
        if (c == Some(0)) != (k == Some(0)) {
            broken.push(format!(
                "{name}: check {c:?} but compile --emit all {k:?}: {}{}",
                first_error(&text(&check.stderr)),
                first_error(&text(&compile.stderr))
            ));
        }
        match c {
            Some(0) => accepted += 1,
            Some(1) => rejected.push(name.clone()),
            _ => {}
        }
        match c {
            Some(0) if r == Some(1) => broken
                .push(format!("{name}: check ok but run rejects it: {}", first_error(&text(&run.stderr)))),
            // A file of several programs, or of none with an orchestrator: run needs a selection.
            Some(1) if r == Some(2) => {}
            Some(1) => {
                let want = first_error(&text(&check.stderr));
                if r != Some(1) || !text(&run.stderr).contains(&want) {
                    broken.push(format!(
                        "{name}: check rejects it ({want}) but run exits {r:?}: {}",
                        first_error(&text(&run.stderr))
                    ));
                }
            }
            _ => {}
        }
    }
    assert!(broken.is_empty(), "{} of {} programs:\n{}", broken.len(), files.len(), broken.join("\n"));
    // Both directions were exercised: the programs `check` rejects include the two of
    // `parity_programs/` that `run` used to simulate.
    assert!(accepted > 90, "{accepted} accepted");
    for want in ["parity_programs/dynamic_tile_shape.py", "parity_programs/self_calling_kernel.py"] {
        assert!(rejected.iter().any(|r| r.ends_with(want)), "{want} not rejected: {rejected:?}");
    }
}
