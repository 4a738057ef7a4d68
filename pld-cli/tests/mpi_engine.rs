//! The MPI engine end to end (`--features mpi`): every example and corpus program run under
//! `mpirun -n P pld run … --engine mpi` gives byte-identical outputs and the same traffic
//! summary as the in-process deterministic run, at P = 2, 3, 4 and 8 (or a file's own
//! `# pld-corpus-ranks:`); the deadlock example and a wrong-peer program report within
//! seconds, exit 3 and leave no process behind; a 64-rank allreduce matches its golden. Runs
//! on one host only (`--mca btl self,vader`). Host callbacks included: every process runs them
//! on host tensors shared first (D-mpi-4). The frontend's notes and warnings are printed once,
//! by rank 0, as the in-process run prints them.

#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `mpirun` with the options every run here uses.
fn mpirun(p: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader", "-n", &p.to_string()]);
    c.env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    c
}

/// Runs `cmd` to its end or for at most `limit` (then kills it): its output and wall time.
fn run_for(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn (is mpirun installed?)");
    loop {
        if child.try_wait().expect("wait").is_some() || start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            return (out, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The lines of a run summary that both engines must print alike: outputs (dtype, shape, sum,
/// fnv) and each rank's traffic, notifies and waits. Modeled time and barrier rounds depend on
/// the interleaving (they differ between in-process schedules too, D-mpi-4).
fn summary(stdout: &[u8], out: &Path) -> Vec<String> {
    let text = String::from_utf8_lossy(stdout);
    let out = out.display().to_string();
    text.lines()
        .filter(|l| l.contains(" sum=") || (l.trim_start().starts_with("rank ") && l.contains(" remote")))
        .map(|l| {
            let l = l.replace(&out, "OUT");
            match l.rsplit_once(", ") {
                Some((head, tail)) if tail.ends_with("barrier rounds") => head.to_string(),
                _ => l,
            }
        })
        .collect()
}

/// `(run arguments, rank counts)` of a program: its first `# pld-corpus-run:` line and its
/// `# pld-corpus-ranks:` line, else no arguments and 2, 3, 4, 8.
fn plan(file: &Path) -> (Vec<String>, Vec<usize>) {
    let text = std::fs::read_to_string(file).expect("read program");
    let mut args = None;
    let mut ranks = vec![2, 3, 4, 8];
    for line in text.lines().map(str::trim) {
        if let Some(a) = line.strip_prefix("# pld-corpus-run:") {
            args.get_or_insert_with(|| a.split_whitespace().map(str::to_string).collect());
        } else if let Some(list) = line.strip_prefix("# pld-corpus-ranks:") {
            ranks = list.split(',').filter_map(|s| s.trim().parse().ok()).collect();
        }
    }
    (args.unwrap_or_default(), ranks)
}

/// Runs `file` both ways at `p` ranks; the difference, if any.
fn compare(file: &Path, extra: &[String], p: usize, scratch: &Path) -> Option<String> {
    let name = file.file_stem().unwrap().to_string_lossy().into_owned();
    let (a, b) = (scratch.join(format!("{name}-{p}-inproc")), scratch.join(format!("{name}-{p}-mpi")));
    let mut inproc = Command::new(env!("CARGO_BIN_EXE_pld"));
    inproc.arg("run").arg(file).args(["--ranks", &p.to_string(), "--out"]).arg(&a).args(extra);
    let mut mpi = mpirun(p);
    mpi.arg(env!("CARGO_BIN_EXE_pld")).arg("run").arg(file);
    mpi.args(["--ranks", &p.to_string(), "--engine", "mpi", "--out"]).arg(&b).args(extra);
    let (x, _) = run_for(inproc, Duration::from_secs(120));
    let (y, t) = run_for(mpi, Duration::from_secs(120));
    let what = format!("{name}.py at P={p} {}", extra.join(" "));
    if x.status.code() != Some(0) || y.status.code() != Some(0) {
        return Some(format!(
            "{what}: exit {:?} in-process, {:?} under MPI ({t:?})\n{}",
            x.status.code(),
            y.status.code(),
            String::from_utf8_lossy(&y.stderr).lines().take(12).collect::<Vec<_>>().join("\n")
        ));
    }
    let (sx, sy) = (summary(&x.stdout, &a), summary(&y.stdout, &b));
    if sx.is_empty() || sx != sy {
        return Some(format!("{what}: summaries differ\n  in-process: {sx:?}\n  mpi:        {sy:?}"));
    }
    for entry in std::fs::read_dir(&a).expect("in-process outputs") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "npy") {
            let there = b.join(path.file_name().unwrap());
            if std::fs::read(&path).ok() != std::fs::read(&there).ok() {
                return Some(format!("{what}: {} differs", there.display()));
            }
        }
    }
    None
}

/// Compares every listed program at each of its rank counts; panics listing every difference.
fn compare_all(files: Vec<PathBuf>, label: &str) {
    assert!(!files.is_empty(), "no {label} programs found");
    let scratch = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-mpi-{label}-{}", std::process::id()));
    let mut failures = Vec::new();
    let mut runs = 0;
    for file in &files {
        let (extra, ranks) = plan(file);
        for p in ranks {
            runs += 1;
            failures.extend(compare(file, &extra, p, &scratch));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{} of {runs} runs differ:\n{}", failures.len(), failures.join("\n"));
}

fn programs(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("program folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .filter(|p| keep(&p.file_stem().unwrap().to_string_lossy()))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_runs_alike_under_mpi() {
    // The deadlock example has its own test.
    let files = programs(&root().join("examples"), |n| !n.starts_with("broken_"));
    assert!(files.len() >= 6, "only {} examples", files.len());
    compare_all(files, "examples");
}

#[test]
fn every_corpus_program_runs_alike_under_mpi() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let files = programs(&dir, |_| true);
    assert!(files.len() >= 25, "only {} corpus programs", files.len());
    compare_all(files, "corpus");
}

/// Runs a faulting program under MPI: exit 3 within `limit`, no process of it left behind.
fn faulting(file: &Path, p: usize, limit: Duration) -> (String, Duration) {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "pld-mpi-fault-{}-{}",
        std::process::id(),
        p
    ));
    let mut mpi = mpirun(p);
    mpi.arg(env!("CARGO_BIN_EXE_pld")).arg("run").arg(file);
    mpi.args(["--ranks", &p.to_string(), "--engine", "mpi", "--out"]).arg(&out);
    let (o, t) = run_for(mpi, limit + Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(3), "{} at P={p}: exit {:?}\n{stderr}", file.display(), o.status.code());
    assert!(t < limit, "{} at P={p} took {t:?}", file.display());
    // Every process of the job is gone (each one's command line names the output folder).
    std::thread::sleep(Duration::from_millis(200));
    let marker = out.display().to_string();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&out);
    (stderr, t)
}

/// `examples/put_get_ring.py` with one bug planted (`from` → `to`, which must occur once),
/// written as `name` in a fresh folder.
fn ring_with_bug(name: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(root().join("examples/put_get_ring.py")).expect("read the ring example");
    assert_eq!(text.matches(from).count(), 1, "`{from}` no longer occurs once in the ring example");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-mpi-bugs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let file = dir.join(name);
    std::fs::write(&file, text.replace(from, to)).expect("write");
    file
}

#[test]
fn deadlocks_report_the_in_process_report_within_seconds() {
    // One notify arrives but the wait asks for two credits: every rank blocks on a cell its
    // previous rank wrote, and the report names that writer.
    let short = ring_with_bug(
        "short_credit.py",
        "pld.system.wait(signal, [prv, 0], 1, cmp=pld.WaitCmp.Ge)",
        "pld.system.wait(signal, [prv, 0], 2, cmp=pld.WaitCmp.Ge)",
    );
    for (file, p) in [
        (root().join("examples/broken_divergent_barrier.py"), 2),
        (root().join("examples/broken_divergent_barrier.py"), 4),
        (short.clone(), 3),
    ] {
        let mut inproc = Command::new(env!("CARGO_BIN_EXE_pld"));
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pld-mpi-dl-{}", std::process::id()));
        let file = file.as_path();
        inproc.arg("run").arg(file).args(["--ranks", &p.to_string(), "--out"]).arg(&out);
        let (x, _) = run_for(inproc, Duration::from_secs(60));
        let all = String::from_utf8_lossy(&x.stderr).into_owned();
        assert!(all.contains("deadlock"), "the example no longer deadlocks in-process:\n{all}");
        // In-process the report may end in a `help:` from the branches every rank took, which
        // the MPI engine's rank 0 does not see (D-eco-7): the rest is the same.
        let want = all.split("\nhelp: ").next().unwrap_or_default().to_string();
        let (got, _) = faulting(file, p, Duration::from_secs(20));
        assert!(got.contains(want.trim_end()), "P={p}: MPI report\n{got}\nis not the in-process one\n{want}");
        if file == short {
            assert!(want.contains("written so far by ranks [1]"), "{want}");
        }
    }
}

#[test]
fn a_wrong_peer_is_reported_by_the_rank_that_hit_it() {
    // The last rank puts to peer `n` (the `% n` is forgotten): a peer-range fault on that rank.
    let file = ring_with_bug("wrong_peer.py", "nxt = (me + 1) % n", "nxt = me + 1");
    let (got, _) = faulting(&file, 4, Duration::from_secs(20));
    assert!(got.contains("peer index 4 is outside [0, 4)"), "{got}");
    assert!(got.contains("on rank 3"), "{got}");
}

#[test]
fn a_rank_count_or_schedule_the_engine_cannot_honour_is_a_usage_error() {
    let mut mpi = mpirun(2);
    mpi.arg(env!("CARGO_BIN_EXE_pld")).arg("run").arg(root().join("examples/quickstart_allreduce.py"));
    mpi.args(["--ranks", "4", "--engine", "mpi", "--out"])
        .arg(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pld-mpi-usage"));
    let (o, _) = run_for(mpi, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("one process per rank"), "{stderr}");
    let mut mpi = mpirun(2);
    mpi.arg(env!("CARGO_BIN_EXE_pld")).arg("run").arg(root().join("examples/quickstart_allreduce.py"));
    mpi.args(["--ranks", "2", "--engine", "mpi", "--schedule", "random:1", "--out"]);
    mpi.arg(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pld-mpi-usage"));
    let (o, _) = run_for(mpi, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("other than det are in-process only"), "{stderr}");
}

#[test]
fn sixty_four_ranks_run_a_small_allreduce_that_matches_its_golden() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/rebind_store_then_allreduce.py");
    let out =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pld-mpi-64-{}", std::process::id()));
    let mut mpi = mpirun(64);
    mpi.arg(env!("CARGO_BIN_EXE_pld")).arg("run").arg(&file);
    mpi.args(["--ranks", "64", "--engine", "mpi", "--check-golden", "--out"]).arg(&out);
    let (o, t) = run_for(mpi, Duration::from_secs(240));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{t:?}\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("on 64 rank(s)") && stdout.contains("vs golden: ok"), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_input_file_is_read_by_each_process_where_its_rank_touches_it() {
    // Each process reads only its rank's rows of an `--input` file (positioned reads after
    // the header was checked): the outputs are the in-process run's on the same file.
    let file = root().join("examples/quickstart_allreduce.py");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-mpi-input-{}", std::process::id()));
    let (a, b) = (dir.join("inproc"), dir.join("mpi"));
    let mut inproc = Command::new(env!("CARGO_BIN_EXE_pld"));
    inproc.arg("run").arg(&file).args(["--ranks", "4", "--seed", "9", "--out"]).arg(&a);
    let (x, _) = run_for(inproc, Duration::from_secs(120));
    assert_eq!(x.status.code(), Some(0), "{}", String::from_utf8_lossy(&x.stderr));
    let given = dir.join("given.npy");
    std::fs::rename(a.join("inputs/inputs.npy"), &given).expect("the run wrote its input");
    let mut mpi = mpirun(4);
    mpi.arg(env!("CARGO_BIN_EXE_pld")).arg("run").arg(&file);
    mpi.args(["--ranks", "4", "--engine", "mpi", "--input"]).arg(format!("inputs={}", given.display()));
    mpi.arg("--out").arg(&b);
    let (y, _) = run_for(mpi, Duration::from_secs(120));
    assert_eq!(y.status.code(), Some(0), "{}", String::from_utf8_lossy(&y.stderr));
    assert!(!b.join("inputs").exists(), "a given input is not written back");
    let (sx, sy) = (summary(&x.stdout, &a), summary(&y.stdout, &b));
    assert!(!sx.is_empty() && sx == sy, "in-process {sx:?}\nmpi {sy:?}");
    let out = |d: &Path| std::fs::read(d.join("outputs.npy")).expect("outputs.npy");
    assert_eq!(out(&a), out(&b));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_rank_0_prints_the_frontends_warnings() {
    // A kernel that never writes its `Out` parameter: a frontend warning. Every process loads
    // the program, but the run prints the warning once, as the in-process run does.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-mpi-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let file = dir.join("never_writes_y.py");
    std::fs::write(
        &file,
        r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 64


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        t = pl.load(x, [0, 0], [1, N])
        u = pl.mul(t, 3.0)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.scale(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)
"#,
    )
    .expect("write");
    let out = dir.join("out");
    let inproc = Command::new(env!("CARGO_BIN_EXE_pld"))
        .arg("run")
        .arg(&file)
        .args(["--ranks", "3", "--out"])
        .arg(&out)
        .output()
        .expect("pld");
    let inproc_err = String::from_utf8_lossy(&inproc.stderr).into_owned();
    let warnings = |s: &str| s.lines().filter(|l| l.starts_with("warning:")).count();
    assert_eq!(warnings(&inproc_err), 1, "in-process:\n{inproc_err}");
    let mut mpi = mpirun(3);
    mpi.arg(env!("CARGO_BIN_EXE_pld")).arg("run").arg(&file);
    mpi.args(["--ranks", "3", "--engine", "mpi", "--out"]).arg(&out);
    let (o, t) = run_for(mpi, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{t:?}\n{stderr}");
    assert_eq!(warnings(&stderr), 1, "one warning for the run, not one per process:\n{stderr}");
    let first = |s: &str| s.lines().find(|l| l.starts_with("warning:")).map(str::to_owned);
    assert_eq!(first(&stderr), first(&inproc_err));
    let _ = std::fs::remove_dir_all(&dir);
}
