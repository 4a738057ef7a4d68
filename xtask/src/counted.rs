//! `cargo xtask bench --against REV --instructions`: the side-by-side guard counted instead of
//! timed. Each row runs under callgrind (`valgrind`, Debian's package) with collection on only
//! inside the simulator's run function (`pld_sim::entry::run`, `pld_sim::run` in older builds),
//! once with one run and once with three, so a row gives the instructions of its first run and
//! of each later one ((three − one) / 2: what a best-of-N time measures). Instruction counts do
//! not vary with the machine's load as its wall clock does (±25% on the 2-core VM for one
//! binary), so a flag here is a change in work, not noise; caches and page faults are not
//! counted, which is what the timed guard is for.
//!
//! Guarantees: both builds run the same command line per row; a row is flagged `MORE` when this
//! build's later-run count is at least [`MORE`] times the base's, `DIGEST` when the two builds'
//! output-and-traffic digests differ, `FAILED` when either build or valgrind fails. Parallel
//! rows are left out (callgrind runs one thread at a time and counts the workers' spinning).

use std::path::Path;
use std::process::Command;

/// A row whose later runs take this many times the base's instructions is flagged.
pub const MORE: f64 = 1.02;

/// Functions whose inside is counted (the simulator's run; older builds name it `pld_sim::run`).
const TOGGLES: [&str; 2] = ["--toggle-collect=pld_sim::entry::run", "--toggle-collect=pld_sim::run"];

/// What one build did on one row under callgrind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counted {
    /// Instructions of the first run of a process.
    pub first: u64,
    /// Instructions of each later run.
    pub later: u64,
    /// The digest the build printed, if any.
    pub digest: Option<String>,
}

/// The `Collected : N` count of a callgrind run's stderr.
pub fn collected(stderr: &str) -> Option<u64> {
    stderr.lines().find_map(|l| l.split_once("Collected :")?.1.trim().parse().ok())
}

/// Counts `bin --sim ROW RUNS` for one and for three runs.
pub fn count(bin: &Path, row: &[String]) -> Result<Counted, String> {
    let once = |runs: &str| -> Result<(u64, String), String> {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .args(TOGGLES)
            .arg(bin)
            .arg("--sim")
            .args(row)
            .arg(runs)
            .output()
            .map_err(|e| format!("valgrind: {e} (install it: apt-get install valgrind)"))?;
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            return Err(stderr.lines().rfind(|l| !l.starts_with("==")).unwrap_or("failed").to_string());
        }
        let n = collected(&stderr).ok_or("valgrind printed no instruction count")?;
        Ok((n, stdout.into_owned()))
    };
    let (one, stdout) = once("1")?;
    let (three, _) = once("3")?;
    let digest = stdout.lines().filter_map(crate::against::parse_run).find_map(|(_, d)| d);
    Ok(Counted { first: one, later: three.saturating_sub(one) / 2, digest })
}

/// The flags of one counted row.
pub fn flags(base: &Result<Counted, String>, this: &Result<Counted, String>) -> Vec<&'static str> {
    let (Ok(b), Ok(t)) = (base, this) else { return vec!["FAILED"] };
    let mut f = Vec::new();
    if t.later as f64 >= MORE * b.later as f64 {
        f.push("MORE");
    }
    if let (Some(x), Some(y)) = (&b.digest, &t.digest) {
        if x != y {
            f.push("DIGEST");
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_read_from_callgrinds_summary() {
        let err = "==5761== Events    : Ir\n==5761== Collected : 452304\n==5761==\n==5761== I   refs:      452,304\n";
        assert_eq!(collected(err), Some(452_304));
        assert_eq!(collected("==1== nothing here"), None);
    }

    #[test]
    fn rows_are_flagged_for_more_work_other_outputs_or_a_failure() {
        let c = |later: u64, d: &str| Ok(Counted { first: later, later, digest: Some(d.into()) });
        assert!(flags(&c(1000, "a"), &c(1019, "a")).is_empty());
        assert_eq!(flags(&c(1000, "a"), &c(1020, "a")), vec!["MORE"]);
        assert!(flags(&c(1000, "a"), &c(500, "a")).is_empty());
        assert_eq!(flags(&c(1000, "a"), &c(900, "b")), vec!["DIGEST"]);
        assert_eq!(flags(&Err("boom".into()), &c(1, "a")), vec!["FAILED"]);
    }
}
