//! `cargo xtask bench --against REV [--rounds N] [--runs N] [--only TEXT] [--instructions]`: the side-by-side
//! regression guard. Builds REV's `bench_table` in a target directory of its own, cached per
//! commit (`target/bench-against/<commit>/`: the commit's tree exported by `git archive` into
//! `src/`, built into `target/`; no git worktree is registered), and this checkout's; then
//! times every simulator row this checkout lists (`bench_table --rows`) with both builds,
//! alternating (REV, this, this, REV, …: both see the same machine state), each process timing
//! `--runs` runs, and keeps the best of all of each build's runs. A row whose best is not yet
//! reproduced (a build's two fastest processes more than [`SETTLED`] apart) gets more rounds,
//! up to twice `--rounds`, and is marked `NOISY` if it still is not: on a busy machine a best of
//! a few runs can be far from the build's speed, and the table says so instead of showing a
//! ratio it cannot stand behind. Prints per row both best times, the ratio (this / REV) and the
//! rounds run, flagging rows at or above [`SLOWER`] (and more than [`RESOLUTION_MS`] slower);
//! then the headline ratios of this build: 16 MiB P = 4 mesh and ring whole run over the slice
//! yardstick, parallel over deterministic, and the race checker's share of the run.
//!
//! Guarantees: both builds run exactly the same command line per row; a row whose two builds
//! print different output-and-traffic digests (when both print one) is flagged `DIGEST`, as is
//! a parallel row whose digest differs from its deterministic row's. Exit 1 when any row is
//! flagged or fails in either build, 2 on a bad command line. Nothing here is a test: times
//! are only printed. `--instructions` counts instead of timing ([`crate::counted`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::shell::{relative, workspace_root, Cmd};
use crate::{Failure, Result};

/// A row this many times slower than REV's is flagged.
pub const SLOWER: f64 = 1.15;

/// ... unless it is slower by less than this (ms): `bench_table` prints 0.1 ms, so a 4 KiB row
/// at 0.1 vs 0.2 ms is resolution, not a regression.
pub const RESOLUTION_MS: f64 = 0.15;

/// A build's best time counts as reproduced when its second-fastest process came within this
/// factor of its fastest (or within [`RESOLUTION_MS`]).
pub const SETTLED: f64 = 1.05;

/// The parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The revision to compare with, as given.
    pub rev: String,
    /// Alternating rounds per row (each build runs once per round).
    pub rounds: usize,
    /// Runs per process; `None`: 5 for payloads up to 1 MiB, 2 above.
    pub runs: Option<usize>,
    /// Only rows whose arguments contain this text.
    pub only: Option<String>,
    /// Count instructions under callgrind instead of timing ([`crate::counted`]).
    pub instructions: bool,
}

/// Parses the arguments after `--against`.
pub fn parse(args: &[String]) -> Result<Options> {
    let usage = |m: &str| Failure::Usage(format!("bench --against: {m}"));
    let mut it = args.iter();
    let rev = it.next().ok_or_else(|| usage("needs a revision (e.g. main, 752e779)"))?.clone();
    let mut o = Options { rev, rounds: 3, runs: None, only: None, instructions: false };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| usage(&format!("`{flag}` needs a value")));
        let count = |v: &String| {
            v.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| usage(&format!("bad count `{v}`")))
        };
        match flag.as_str() {
            "--rounds" => o.rounds = count(value()?)?,
            "--runs" => o.runs = Some(count(value()?)?),
            "--only" => o.only = Some(value()?.clone()),
            "--instructions" => o.instructions = true,
            other => return Err(usage(&format!("unknown option `{other}`"))),
        }
    }
    Ok(o)
}

/// One build's timing line of a `--sim … race|norace` run: milliseconds and, when the build
/// prints one, the digest.
pub fn parse_run(line: &str) -> Option<(f64, Option<String>)> {
    let ms = line.split_whitespace().next()?.parse::<f64>().ok()?;
    line.split(" ms ").nth(1)?;
    let digest = line.rsplit_once("digest ").map(|(_, d)| d.trim().to_string());
    Some((ms, digest))
}

/// What one build did on one row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Best {
    /// Best time, ms.
    pub ms: Option<f64>,
    /// The digest of its runs (the last one printed).
    pub digest: Option<String>,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Each process's best time, ms, in the order they ran.
    pub rounds: Vec<f64>,
}

impl Best {
    fn add(&mut self, stdout: &str) {
        let mut process: Option<f64> = None;
        for (ms, digest) in stdout.lines().filter_map(parse_run) {
            process = Some(process.map_or(ms, |b| b.min(ms)));
            if digest.is_some() {
                self.digest = digest;
            }
        }
        if let Some(p) = process {
            self.ms = Some(self.ms.map_or(p, |b: f64| b.min(p)));
            self.rounds.push(p);
        }
    }

    /// Whether the best time was reproduced: the two fastest processes within [`SETTLED`] (or
    /// [`RESOLUTION_MS`]) of each other. A failed build has nothing to reproduce.
    pub fn settled(&self) -> bool {
        if self.error.is_some() {
            return true;
        }
        let mut r = self.rounds.clone();
        r.sort_by(f64::total_cmp);
        match r.as_slice() {
            [a, b, ..] => b - a <= (a * (SETTLED - 1.0)).max(RESOLUTION_MS),
            _ => false,
        }
    }
}

/// The flags of one row: slower, digest mismatch, failure.
pub fn flags(base: &Best, this: &Best) -> Vec<&'static str> {
    let mut f = Vec::new();
    if base.error.is_some() || this.error.is_some() {
        f.push("FAILED");
    }
    if let (Some(a), Some(b)) = (base.ms, this.ms) {
        if b >= SLOWER * a && b - a > RESOLUTION_MS {
            f.push("SLOWER");
        }
    }
    if let (Some(a), Some(b)) = (&base.digest, &this.digest) {
        if a != b {
            f.push("DIGEST");
        }
    }
    f
}

fn git(args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(workspace_root())
        .output()
        .map_err(|e| Failure::Failed(format!("git: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Failure::Failed(format!("git {}: {}", args.join(" "), err.trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// REV's tree under `target/bench-against/<commit>/src` (exported once) and its built
/// `bench_table`.
fn build_rev(rev: &str) -> Result<(String, PathBuf)> {
    let commit = git(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?;
    let dir = workspace_root().join("target/bench-against").join(&commit);
    let src = dir.join("src");
    if !src.join("Cargo.toml").is_file() {
        std::fs::create_dir_all(&src).map_err(|e| Failure::Failed(format!("{}: {e}", src.display())))?;
        let tar = dir.join("tree.tar");
        git(&["archive", "--format=tar", "-o", &tar.to_string_lossy(), &commit])?;
        Cmd::new("tar", &["-xf", &tar.to_string_lossy(), "-C", &src.to_string_lossy()])
            .run()
            .map_err(Failure::Failed)?;
        std::fs::remove_file(&tar).map_err(|e| Failure::Failed(format!("{}: {e}", tar.display())))?;
    }
    let manifest = src.join("Cargo.toml");
    let target = dir.join("target");
    Cmd::cargo(&["build", "--release", "-p", "pld-bench", "--bin", "bench_table", "--manifest-path"])
        .args(&[manifest.to_string_lossy()])
        .env("CARGO_TARGET_DIR", &target.to_string_lossy())
        .run()
        .map_err(Failure::Failed)?;
    Ok((commit, target.join("release/bench_table")))
}

/// Runs `bin args`, returning its stdout or why it failed.
fn run_bin(bin: &Path, args: &[String]) -> std::result::Result<String, String> {
    let out = Command::new(bin).args(args).output().map_err(|e| format!("{}: {e}", bin.display()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err.lines().next().unwrap_or("failed").to_string())
    }
}

/// `--against`: build both, run every row alternately, print the table and the headline ratios.
pub fn run(args: &[String]) -> Result {
    let o = parse(args)?;
    let (commit, base_bin) = build_rev(&o.rev)?;
    Cmd::cargo(&["build", "--release", "-p", "pld-bench", "--bin", "bench_table"])
        .run()
        .map_err(Failure::Failed)?;
    let this_bin = workspace_root().join("target/release/bench_table");
    let rows = run_bin(&this_bin, &["--rows".to_string()]).map_err(Failure::Failed)?;
    let rows: Vec<Vec<String>> = rows
        .lines()
        .filter(|l| o.only.as_ref().is_none_or(|t| l.contains(t.as_str())))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    let short = &commit[..commit.len().min(10)];
    if o.instructions {
        return counted_rows(&rows, &o, (short, &base_bin), &this_bin);
    }
    println!(
        "\n{} rows, {} alternating rounds; base {short} ({}), this = the working tree",
        rows.len(),
        o.rounds,
        relative(&base_bin)
    );
    println!(
        "{:<44} {:>10} {:>10} {:>7} {:>6}  flags",
        "row (--sim COLL P BYTES SCHED ITERS MODE)", "base ms", "this ms", "ratio", "rounds"
    );
    let mut results: HashMap<String, (Best, Best)> = HashMap::new();
    let (mut bad, mut noisy) = (0, 0);
    for row in &rows {
        let runs = o.runs.unwrap_or(if payload(row) <= 1 << 20 { 5 } else { 2 });
        let mut argv = vec!["--sim".to_string()];
        argv.extend(row.iter().cloned());
        argv.push(runs.to_string());
        let (mut base, mut this) = (Best::default(), Best::default());
        let mut round = 0;
        while round < o.rounds || (round < 2 * o.rounds && !(base.settled() && this.settled())) {
            let order = if round % 2 == 0 { [true, false] } else { [false, true] };
            round += 1;
            for is_base in order {
                let (bin, best) = if is_base { (&base_bin, &mut base) } else { (&this_bin, &mut this) };
                match run_bin(bin, &argv) {
                    Ok(out) => best.add(&out),
                    Err(e) => best.error = Some(e),
                }
            }
        }
        let key = row.join(" ");
        let mut f = flags(&base, &this);
        bad += usize::from(!f.is_empty());
        if !(base.settled() && this.settled()) {
            noisy += 1;
            f.push("NOISY");
        }
        let ms = |b: &Best| b.ms.map_or("-".to_string(), |x| format!("{x:.1}"));
        let ratio = match (base.ms, this.ms) {
            (Some(a), Some(b)) => format!("{:.3}", b / a),
            _ => "-".to_string(),
        };
        let why = [&base.error, &this.error].into_iter().flatten().cloned().collect::<Vec<_>>().join("; ");
        println!(
            "{key:<44} {:>10} {:>10} {ratio:>7} {round:>6}  {} {why}",
            ms(&base),
            ms(&this),
            f.join(",")
        );
        results.insert(key, (base, this));
    }
    if noisy > 0 {
        println!(
            "\n{noisy} row(s) NOISY: a build's best time was not reproduced within {:.0}% in {} rounds, so their ratios may be off by more than the machine's noise; rerun them (--only) when the machine is quieter, or count them (--instructions)",
            100.0 * (SETTLED - 1.0),
            2 * o.rounds
        );
    }
    bad += headline(&this_bin, &results);
    if bad > 0 {
        return Err(Failure::Failed(format!("{bad} row(s) flagged against {short}")));
    }
    Ok(())
}

/// `--instructions`: every listed row but the parallel ones, and without `--only` those up to
/// 1 MiB (a 16 MiB row takes minutes under callgrind), counted in both builds.
fn counted_rows(
    rows: &[Vec<String>],
    o: &Options,
    (short, base_bin): (&str, &Path),
    this_bin: &Path,
) -> Result {
    let rows: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.get(3).is_some_and(|s| s == "det"))
        .filter(|r| o.only.is_some() || payload(r) <= 1 << 20)
        .collect();
    println!(
        "\n{} rows counted under callgrind; base {short} ({}), this = the working tree",
        rows.len(),
        relative(base_bin)
    );
    println!(
        "{:<44} {:>13} {:>13} {:>7} {:>13} {:>13} {:>7}  flags",
        "row (--sim COLL P BYTES SCHED ITERS MODE)",
        "base first",
        "this first",
        "ratio",
        "base later",
        "this later",
        "ratio"
    );
    let mut bad = 0;
    for row in rows {
        let (base, this) = (crate::counted::count(base_bin, row), crate::counted::count(this_bin, row));
        let f = crate::counted::flags(&base, &this);
        bad += usize::from(!f.is_empty());
        // The first run's counts, then each later run's: both builds' and their ratio.
        let pick: [fn(&crate::counted::Counted) -> u64; 2] = [|c| c.first, |c| c.later];
        let cells: Vec<String> = pick
            .iter()
            .map(|pick| {
                let (b, t) = (base.as_ref().ok().map(pick), this.as_ref().ok().map(pick));
                let show = |x: Option<u64>| x.map_or("-".to_string(), |x| x.to_string());
                let ratio = match (b, t) {
                    (Some(b), Some(t)) => format!("{:.3}", t as f64 / b.max(1) as f64),
                    _ => "-".to_string(),
                };
                format!("{:>13} {:>13} {ratio:>7}", show(b), show(t))
            })
            .collect();
        let why =
            [base.as_ref().err(), this.as_ref().err()].into_iter().flatten().cloned().collect::<Vec<_>>();
        println!("{:<44} {}  {} {}", row.join(" "), cells.join(" "), f.join(","), why.join("; "));
    }
    if bad > 0 {
        return Err(Failure::Failed(format!("{bad} row(s) flagged against {short}")));
    }
    Ok(())
}

/// A row's payload bytes (its third argument).
fn payload(row: &[String]) -> u64 {
    row.get(2).and_then(|b| b.parse().ok()).unwrap_or(0)
}

/// The milliseconds of the `; `-separated part of a `--yardstick` line that reads `X ms LABEL`
/// (older builds print no fresh fill: `None`).
fn ms_labelled(line: &str, label: &str) -> Option<f64> {
    line.split(';')
        .find_map(|part| part.trim().strip_suffix(label)?.trim().strip_suffix("ms")?.trim().parse().ok())
}

/// This build's headline ratios from the rows just run (those present under `--only`).
fn headline(this_bin: &Path, results: &HashMap<String, (Best, Best)>) -> usize {
    let yard = run_bin(this_bin, &["--yardstick".to_string()]).ok();
    let yard_ms = yard.as_deref().and_then(|l| ms_labelled(l, "yardstick"));
    let floor_ms =
        yard.as_deref().and_then(|l| Some(ms_labelled(l, "yardstick")? + ms_labelled(l, "fresh fill")?));
    if let Some(line) = &yard {
        println!("\nthis build: {}", line.trim());
    }
    let mut bad = 0;
    for coll in ["allreduce_mesh", "allreduce_ring"] {
        let get = |sched: &str, mode: &str| {
            results.get(&format!("{coll} 4 16777216 {sched} 1 {mode}")).map(|r| &r.1)
        };
        let (Some(det), par, norace) = (get("det", "race"), get("parallel", "race"), get("det", "norace"))
        else {
            continue;
        };
        let Some(d) = det.ms else { continue };
        // A ratio of a time the guard could not reproduce says so.
        let mark = |others: &[&Best]| {
            if det.settled() && others.iter().all(|b| b.settled()) {
                ""
            } else {
                " NOISY"
            }
        };
        let mut parts = Vec::new();
        if let Some(y) = yard_ms {
            parts.push(format!("whole run / yardstick {:.2}{} (target <= 2)", d / y, mark(&[])));
        }
        if let Some(f) = floor_ms {
            parts.push(format!("whole run / (yardstick + fresh fill) {:.2}{}", d / f, mark(&[])));
        }
        if let Some((p, pb)) = par.and_then(|p| Some((p.ms?, p))) {
            parts.push(format!("parallel/det {:.3}{} (target <= 0.6)", p / d, mark(&[pb])));
        }
        if let Some((n, nb)) = norace.and_then(|n| Some((n.ms?, n))) {
            let share = 100.0 * (1.0 - n / d);
            parts.push(format!("race checking {share:.1}% of the run{} (target <= 10%)", mark(&[nb])));
        }
        if let (Some(a), Some(b)) = (&det.digest, par.and_then(|p| p.digest.as_ref())) {
            if a != b {
                bad += 1;
                parts.push("parallel DIGEST differs from det".to_string());
            }
        }
        println!("{coll} 16MiB P=4 (this build): {}", parts.join("; "));
    }
    bad
}

#[cfg(test)]
mod tests {
    //! Option parsing, run-line parsing and flagging.
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn yardstick_lines_give_each_labelled_time() {
        let line = "10.6 ms yardstick; 10.8 ms fresh fill; memcpy 11.378 GB/s";
        assert_eq!(ms_labelled(line, "yardstick"), Some(10.6));
        assert_eq!(ms_labelled(line, "fresh fill"), Some(10.8));
        assert_eq!(ms_labelled("12.0 ms yardstick; memcpy 9 GB/s", "fresh fill"), None);
    }

    #[test]
    fn options_parse_and_reject() {
        let o = parse(&s(&["main", "--rounds", "5", "--only", "mesh"])).expect("parses");
        assert_eq!((o.rev.as_str(), o.rounds, o.runs, o.only.as_deref()), ("main", 5, None, Some("mesh")));
        assert!(!o.instructions && parse(&s(&["main", "--instructions"])).expect("parses").instructions);
        assert!(matches!(parse(&s(&[])), Err(Failure::Usage(_))));
        assert!(matches!(parse(&s(&["main", "--rounds", "0"])), Err(Failure::Usage(_))));
        assert!(matches!(parse(&s(&["main", "--bogus"])), Err(Failure::Usage(_))));
    }

    #[test]
    fn run_lines_of_old_and_new_builds_parse() {
        let old = "293.4 ms with race checks, 1234 steps, peak/need 1.02";
        assert_eq!(parse_run(old), Some((293.4, None)));
        let new = "12.5 ms without race checks, 9 steps, peak/need 1.00, digest 00ff00ff00ff00ff";
        assert_eq!(parse_run(new), Some((12.5, Some("00ff00ff00ff00ff".to_string()))));
        assert_eq!(parse_run("collective P payload"), None);
    }

    #[test]
    fn rows_are_flagged_when_slower_different_or_failed() {
        let b = |ms: f64, d: &str| Best { ms: Some(ms), digest: Some(d.to_string()), ..Best::default() };
        assert!(flags(&b(100.0, "a"), &b(114.0, "a")).is_empty());
        assert_eq!(flags(&b(100.0, "a"), &b(115.0, "a")), vec!["SLOWER"]);
        assert!(flags(&b(0.1, "a"), &b(0.2, "a")).is_empty(), "print resolution");
        assert_eq!(flags(&b(0.1, "a"), &b(0.3, "a")), vec!["SLOWER"]);
        assert_eq!(flags(&b(100.0, "a"), &b(90.0, "b")), vec!["DIGEST"]);
        let failed = Best { error: Some("boom".into()), ..Best::default() };
        assert_eq!(flags(&failed, &b(1.0, "a")), vec!["FAILED"]);
        let mut best = Best::default();
        best.add("5.0 ms with race checks\n3.0 ms with race checks, digest ab\n4.0 ms with race checks");
        assert_eq!(
            (best.ms, best.digest.as_deref(), best.rounds.as_slice()),
            (Some(3.0), Some("ab"), &[3.0][..])
        );
    }

    #[test]
    fn a_best_is_settled_once_a_second_process_reproduces_it() {
        let mut best = Best::default();
        best.add("40.0 ms with race checks\n37.0 ms with race checks");
        assert!(!best.settled(), "one process proves nothing");
        best.add("52.0 ms with race checks");
        assert!(!best.settled(), "37 then 52: not reproduced");
        best.add("38.5 ms with race checks");
        assert!(best.settled(), "38.5 is within 5% of 37");
        assert_eq!((best.ms, best.rounds.len()), (Some(37.0), 3));
        // Tiny rows settle within the print resolution.
        let mut tiny = Best::default();
        tiny.add("0.1 ms with race checks");
        tiny.add("0.2 ms with race checks");
        assert!(tiny.settled());
        // A failed build has nothing to reproduce; one that printed no run line has.
        assert!(Best { error: Some("boom".into()), ..Best::default() }.settled());
        let mut silent = Best::default();
        silent.add("no timing here");
        assert!(silent.rounds.is_empty() && !silent.settled());
    }
}
