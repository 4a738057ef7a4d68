//! `pld run`'s modeled time, cost overrides, trace flags and `--report-json`, through the
//! binary.

mod cli_support;

use cli_support::pld;

use std::path::PathBuf;
use std::process::Output;

fn scratch(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-timeline-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The modeled time the results table prints for collective `name` (its `time(us)` column).
fn collective_us(out: &str, name: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} row:\n{out}"));
    line.split_whitespace().nth(7).and_then(|t| t.parse().ok()).expect("time(us)")
}

#[test]
fn the_summary_prints_modeled_time_and_busbw_per_collective() {
    let dir = scratch("summary");
    let base = pld(&["run", "examples/host_collectives.py", "--ranks", "4", "--out", dir.to_str().unwrap()]);
    assert!(base.status.success(), "{}", stderr(&base));
    let out = stdout(&base);
    assert!(out.contains("modeled time (alpha_ns=1500 link_gbps=56 hbm_gbps=1600"), "{out}");
    for r in 0..4 {
        assert!(out.contains(&format!("    rank {r}: ")), "{out}");
    }
    assert!(out.contains("algbw") && out.contains("busbw") && out.contains("(GB/s)"), "{out}");
    for c in ["allreduce", "broadcast", "allgather", "all_to_all", "reduce_scatter"] {
        let row = out.lines().find(|l| l.split_whitespace().next() == Some(c));
        let cells = row.unwrap_or_else(|| panic!("no {c} row:\n{out}")).split_whitespace().count();
        assert_eq!(cells, 11, "{c}:\n{out}");
    }
    // Zero latency makes every collective faster; a faster link too.
    let fast = pld(&[
        "run",
        "examples/host_collectives.py",
        "--ranks",
        "4",
        "--out",
        dir.to_str().unwrap(),
        "--cost",
        "alpha_ns=0",
        "--cost",
        "link_gbps=560",
    ]);
    assert!(fast.status.success(), "{}", stderr(&fast));
    let f = stdout(&fast);
    assert!(f.contains("alpha_ns=0 link_gbps=560"), "{f}");
    let name = "allreduce";
    assert!(collective_us(&f, name) < collective_us(&out, name), "{f}\n{out}");
    // The a5 profile has its own defaults.
    let a5 = pld(&[
        "run",
        "examples/host_collectives.py",
        "--ranks",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--target",
        "a5",
    ]);
    assert!(stdout(&a5).contains("link_gbps=112 hbm_gbps=4000"), "{}", stdout(&a5));
}

#[test]
fn bad_cost_overrides_are_usage_errors() {
    for (arg, msg) in [
        ("speed=3", "unknown parameter `speed`"),
        ("link_gbps=0", "a bandwidth must be positive"),
        ("alpha_ns=-2", "not a finite non-negative number"),
        ("alpha_ns", "is not KEY=VALUE"),
    ] {
        let o = pld(&["run", "examples/quickstart_allreduce.py", "--cost", arg]);
        assert_eq!(o.status.code(), Some(2), "{arg}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{arg}: {}", stderr(&o));
    }
}

#[test]
fn report_json_holds_the_verdict() {
    let dir = scratch("report");
    let path = dir.join("report.json");
    let bad = pld(&[
        "run",
        "examples/broken_divergent_barrier.py",
        "--ranks",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--report-json",
        path.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(3));
    let err = stderr(&bad);
    // The report shows the wait's source line with a caret and the wait-for graph.
    assert!(err.contains("pld.system.wait(") && err.contains("^^^"), "{err}");
    assert!(err.contains("wait-for graph:") && err.contains("missing notifier"), "{err}");
    let json = std::fs::read_to_string(&path).expect("report written");
    assert!(json.starts_with("{\"ok\":false,\"report\":{\"kind\":\"deadlock\""), "{json}");
    assert!(
        json.contains("\"missing_notifier\":[\"")
            && json.contains("\"file\":\"examples/broken_divergent_barrier.py\""),
        "{json}"
    );
    let good = pld(&[
        "run",
        "examples/quickstart_allreduce.py",
        "--ranks",
        "3",
        "--out",
        dir.to_str().unwrap(),
        "--report-json",
        path.to_str().unwrap(),
    ]);
    assert!(good.status.success(), "{}", stderr(&good));
    let json = std::fs::read_to_string(&path).expect("report written");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!((&v["ok"], &v["report"]), (&true.into(), &serde_json::Value::Null), "{json}");
    assert_eq!(v["modeled_ps"].as_array().map(Vec::len), Some(3), "three ranks' times: {json}");
    // The summary the text prints: every output with its checksum, every collective's row.
    let outputs = v["outputs"].as_array().expect("outputs");
    assert!(
        !outputs.is_empty() && outputs.iter().all(|o| o["fnv"].as_str().is_some_and(|f| f.len() == 16)),
        "{json}"
    );
    assert!(v["collectives"].is_array(), "{json}");
    let path = dir.join("coll.json");
    let coll = pld(&[
        "run",
        "examples/host_collectives.py",
        "--ranks",
        "4",
        "--out",
        dir.to_str().unwrap(),
        "--report-json",
        path.to_str().unwrap(),
    ]);
    assert!(coll.status.success(), "{}", stderr(&coll));
    let json = std::fs::read_to_string(&path).expect("report written");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let rows = v["collectives"].as_array().expect("collectives");
    assert!(
        rows.len() >= 5 && rows.iter().all(|c| c["ranks"] == 4 && c["time_ps"].as_u64() > Some(0)),
        "{json}"
    );
}

#[test]
fn trace_and_trace_all_write_modeled_time_traces() {
    let dir = scratch("trace");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for (path, extra) in [(&a, None), (&b, Some("--trace-all"))] {
        let mut args = vec![
            "run",
            "examples/quickstart_allreduce.py",
            "--ranks",
            "4",
            "--out",
            dir.to_str().unwrap(),
            "--trace",
            path.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = pld(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let t = std::fs::read_to_string(&a).expect("trace");
    assert!(
        t.contains("\"clock\":\"modeled\"")
            && t.contains("\"name\":\"core 0\"")
            && t.contains("notify → wait"),
        "{t}"
    );
    assert!(t.contains("\"loc\":\"examples/quickstart_allreduce.py:"), "source locations in args");
    // A run this small keeps every slice either way.
    assert_eq!(std::fs::read_to_string(&b).expect("trace"), t);
}

#[test]
fn modeled_time_does_not_depend_on_the_schedule() {
    // host_collectives: five collectives back to back on one self-clearing signal, two AIV
    // blocks for the allreduce (fast ranks run ahead into the next collective's notifies in
    // some schedules); deferred_completion: tasks that complete when their condition lands.
    let dir = scratch("schedules");
    for (example, ranks) in [("host_collectives", "4"), ("deferred_completion", "2")] {
        let block = |schedule: &str| {
            let o = pld(&[
                "run",
                &format!("examples/{example}.py"),
                "--ranks",
                ranks,
                "--out",
                dir.to_str().unwrap(),
                "--schedule",
                schedule,
            ]);
            assert!(o.status.success(), "{example} {schedule}: {}", stderr(&o));
            let out = stdout(&o);
            out[out.find("modeled time").expect("modeled time")..].to_string()
        };
        let det = block("det");
        for seed in [1, 7, 42, 99] {
            assert_eq!(block(&format!("random:{seed}")), det, "{example} seed {seed}");
        }
    }
}
