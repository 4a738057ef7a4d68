//! The progress line of `pld run` is drawn only on a terminal: a run longer than the second
//! after which it would appear, with stderr captured, prints nothing but its own output.

use std::path::Path;
use std::process::Command;

#[test]
fn a_long_run_whose_stderr_is_not_a_terminal_prints_no_progress() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root");
    let out_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-progress-{}", std::process::id()));
    let start = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_pld"))
        .args(["run", "pld-cli/tests/corpus/sweep_allreduce_count.py", "--ranks", "16"])
        .args(["--bind", "count=262144", "--out", out_dir.to_str().unwrap()])
        // Tile by tile (D-sim-37): twice the steps of the default grain, and four times the
        // data of the first version of this test (65536 elements took 0.99-1.05 s in a test
        // build on a faster machine), so the run stays well past the one second the line
        // waits for.
        .args(["--protocol-grain", "0"])
        .current_dir(root)
        .output()
        .expect("run pld");
    let (so, se) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{so}{se}");
    // Long enough that a terminal would have shown the line (it appears after one second).
    assert!(start.elapsed().as_secs_f64() > 1.0, "the run took {:?}", start.elapsed());
    let lines: Vec<&str> = se.lines().collect();
    assert_eq!(lines.len(), 1, "{se}");
    assert!(lines[0].starts_with("note: builder parameter `nranks`"), "{se}");
    for text in [&so, &se] {
        assert!(!text.contains('\r') && !text.contains('\x1b') && !text.contains("simulating"), "{text}");
    }
}
