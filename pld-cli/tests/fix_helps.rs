//! `help:` lines where the fix is known, through the built binary: a deadlock caused by a
//! rank-divergent branch points at the branch's condition, and a signal sized in numbers for
//! fewer ranks than the run has points at its allocation with the size in the rank count.
//! Reports without such a cause carry no help.

mod cli_support;

use cli_support::root;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(file: &Path, ranks: &str, extra: &[&str]) -> Output {
    let out =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pld-helps-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_pld"))
        .arg("run")
        .arg(file)
        .args(["--ranks", ranks, "--out", out.to_str().unwrap()])
        .args(extra)
        .current_dir(root())
        .output()
        .expect("run pld")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `examples/<name>` with `old` replaced by `new`, written to a scratch file.
fn variant(name: &str, old: &str, new: &str) -> PathBuf {
    let src = std::fs::read_to_string(root().join("examples").join(name)).unwrap();
    assert!(src.contains(old), "{old}");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-helps-src-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{}-{name}", new.len()));
    std::fs::write(&p, src.replace(old, new)).unwrap();
    p
}

#[test]
fn a_deadlock_from_a_rank_divergent_branch_points_at_the_branch() {
    // The parallel schedule joins every rank's branches before it reports, so it gives the
    // same help as the deterministic one.
    for (ranks, schedule) in [("2", "det"), ("3", "det"), ("4", "det"), ("2", "parallel"), ("4", "parallel")]
    {
        let file = Path::new("examples/broken_divergent_barrier.py");
        let json = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pld-helps-{}-{ranks}-{schedule}.json", std::process::id()));
        let o = run(file, ranks, &["--report-json", json.to_str().unwrap(), "--schedule", schedule]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{e}");
        let help = e.split_once("help: ").map(|(_, h)| h).unwrap_or_else(|| panic!("no help:\n{e}"));
        assert!(help.starts_with("rank 0 skips the notify into `signal_buf` that rank 1 waits for"), "{e}");
        assert!(help.contains("this condition depends on the rank"), "{e}");
        // The snippet is the branch's condition, with its caret under `me != 0`.
        assert!(help.contains("--> examples/broken_divergent_barrier.py:30:12"), "{e}");
        assert!(help.contains("30 |         if me != 0:\n   |            ^^^^^^^"), "{e}");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(doc["report"]["help"][0]["location"]["line"], 30, "{doc}");
    }
}

#[test]
fn a_uniform_deadlock_gets_no_branch_help() {
    // Every rank notifies (no branch), but each waits for two credits: a deadlock with no
    // divergent branch to blame.
    let file = variant(
        "broken_divergent_barrier.py",
        "pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)",
        "pld.system.wait(signal, [src, 0], 2, cmp=pld.WaitCmp.Ge)",
    );
    let file = {
        let src =
            std::fs::read_to_string(&file).unwrap().replace("        if me != 0:\n", "        if n > 0:\n");
        std::fs::write(&file, src).unwrap();
        file
    };
    let o = run(&file, "3", &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(e.contains("deadlock") && !e.contains("help:"), "{e}");
}

#[test]
fn a_signal_sized_for_fewer_ranks_points_at_its_allocation() {
    let file = root().join("examples/broken_undersized_signal.py");
    let ok = run(&file, "2", &[]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let o = run(&file, "4", &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(e.contains("out-of-bounds window access") && e.contains("is outside [0, 2)"), "{e}");
    let help = e.split_once("help: ").map(|(_, h)| h).unwrap_or_else(|| panic!("no help:\n{e}"));
    assert!(
        help.starts_with("`signal_buf` is sized in numbers for 2 rank(s), but its comm domain has 4"),
        "{e}"
    );
    assert!(help.contains("`pld.alloc_window_buffer(pld.world_size() * 4)`"), "{e}");
    assert!(
        help.contains("signal_buf = pld.alloc_window_buffer(2 * 4)\n   |                      ^^^^"),
        "{e}"
    );
}

#[test]
fn a_signal_sized_by_the_rank_count_gets_no_size_help() {
    // The same overrun through a window sized by the rank count but indexed past it: the
    // allocation is not the fault, so no help points at it.
    let file = variant(
        "broken_undersized_signal.py",
        "signal_buf = pld.alloc_window_buffer(2 * 4)",
        "signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)",
    );
    let o = run(&file, "4", &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(e.contains("out-of-bounds") && !e.contains("help:"), "{e}");
}
