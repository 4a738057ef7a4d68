//! The nccl-tests results table of `pld run` and `--sweep`, through the built binary: one
//! aligned row per collective call with size, count, type, redop, root, algorithm, time,
//! algbw, busbw and `#wrong` (filled when outputs are checked, `N/A` otherwise), the same
//! fields in `--report-json`, a sweep that prints one row per size under one header, and its
//! usage errors (exit 2).

mod cli_support;

use cli_support::{pld, scratch, text};

/// The whitespace-separated cells of the table rows whose first cell is `name`.
fn rows<'a>(stdout: &'a str, name: &str) -> Vec<Vec<&'a str>> {
    stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|c| c.first() == Some(&name))
        .collect()
}

const HEADER: [&str; 11] = [
    "#collective",
    "size(B)",
    "count",
    "type",
    "redop",
    "root",
    "algorithm",
    "time(us)",
    "algbw",
    "busbw",
    "#wrong",
];

#[test]
fn unchecked_run_prints_one_table_with_na_wrong() {
    let d = scratch("table", "plain");
    let out = pld(&["run", "examples/host_collectives.py", "--ranks", "4", "--out", d.to_str().unwrap()]);
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}{}", text(&out.stderr));
    // Not a terminal: no progress line or anything else on stderr.
    assert_eq!(text(&out.stderr), "");
    let header: Vec<Vec<&str>> = rows(&so, "#collective");
    assert_eq!(header, [HEADER.to_vec()], "{so}");
    // allreduce of a [1, 96] FP32 window: 384 B, 96 elements, sum, no root, mesh.
    let ar = &rows(&so, "allreduce")[0];
    assert_eq!(ar[..7], ["allreduce", "384", "96", "fp32", "sum", "-1", "mesh"], "{so}");
    assert_eq!(ar[10], "N/A");
    let bc = &rows(&so, "broadcast")[0];
    assert_eq!(bc[..7], ["broadcast", "384", "96", "fp32", "none", "0", "mesh"], "{so}");
    // busbw = algbw * 2(n-1)/n for allreduce on 4 ranks, (n-1)/n for allgather, 1 for broadcast.
    let f = |s: &str| s.parse::<f64>().unwrap();
    let ag = &rows(&so, "allgather")[0];
    for (r, factor) in [(ar, 1.5), (ag, 0.75), (bc, 1.0)] {
        assert!((f(r[9]) - f(r[8]) * factor).abs() <= 0.011, "{r:?}");
    }
    // Every row lines up with the header.
    let width = so.lines().find(|l| l.trim_start().starts_with("#collective")).unwrap().len();
    for l in so.lines().filter(|l| l.contains(" mesh ")) {
        assert_eq!(l.len(), width, "{l}");
    }
}

#[test]
fn ring_allreduce_shows_its_algorithm() {
    let d = scratch("table", "ring");
    let out = pld(&[
        "run",
        "pld-cli/tests/corpus/builder_nranks_ring_and_mesh_sizes.py",
        "--ranks",
        "3",
        "--out",
        d.to_str().unwrap(),
    ]);
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}{}", text(&out.stderr));
    assert_eq!(
        rows(&so, "allreduce_ring")[0][..7],
        ["allreduce_ring", "384", "96", "fp32", "sum", "-1", "ring"]
    );
    assert_eq!(rows(&so, "allreduce")[0][6], "mesh");
}

#[test]
fn wrong_expect_fills_wrong_in_every_row_and_json_and_exits_4() {
    let d = scratch("table", "wrong");
    let first = pld(&["run", "examples/host_collectives.py", "--ranks", "4", "--out", d.to_str().unwrap()]);
    assert!(first.status.success());
    // Two elements of `summed` off by one.
    let bytes = std::fs::read(d.join("summed.npy")).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    let mut vals = npy.into_vec::<f32>().unwrap();
    vals[3] += 1.0;
    vals[200] -= 1.0;
    let want = d.join("want.npy");
    {
        use npyz::WriterBuilder;
        let mut buf = Vec::new();
        let mut w =
            npyz::WriteOptions::new().default_dtype().shape(&shape).writer(&mut buf).begin_nd().unwrap();
        w.extend(vals.iter().copied()).unwrap();
        w.finish().unwrap();
        std::fs::write(&want, buf).unwrap();
    }
    let json = d.join("report.json");
    let again = d.join("again");
    let out = pld(&[
        "run",
        "examples/host_collectives.py",
        "--ranks",
        "4",
        "--out",
        again.to_str().unwrap(),
        "--expect",
        &format!("summed={}", want.display()),
        "--report-json",
        json.to_str().unwrap(),
    ]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{so}{}", text(&out.stderr));
    for name in ["allreduce", "broadcast", "allgather", "all_to_all", "reduce_scatter"] {
        assert_eq!(rows(&so, name)[0][10], "2", "{name}: {so}");
    }
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let cols = doc["collectives"].as_array().unwrap();
    assert_eq!(cols.len(), 5);
    assert!(cols.iter().all(|c| c["wrong"] == 2), "{doc}");
    let ar = &cols[0];
    assert_eq!(
        (&ar["count"], &ar["type"], &ar["redop"], &ar["root"], &ar["algorithm"]),
        (
            &serde_json::json!(96),
            &serde_json::json!("fp32"),
            &serde_json::json!("sum"),
            &serde_json::Value::Null,
            &serde_json::json!("mesh")
        )
    );
    assert_eq!(cols[1]["root"], 0);
}

#[test]
fn sweep_prints_one_row_per_size_under_one_header_checked_by_the_golden() {
    let d = scratch("table", "sweep");
    let json = d.join("sweep.json");
    let out = pld(&[
        "run",
        "pld-cli/tests/corpus/sweep_allreduce_count.py",
        "--ranks",
        "3",
        "--out",
        d.to_str().unwrap(),
        "--check-golden",
        "--sweep",
        "count=64:1K:x4",
        "--report-json",
        json.to_str().unwrap(),
    ]);
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}{}", text(&out.stderr));
    assert_eq!(rows(&so, "#collective").len(), 1, "{so}");
    // The rank-count note is said once, not once per size.
    assert_eq!(
        text(&out.stderr).matches("note: builder parameter `nranks`").count(),
        1,
        "{}",
        text(&out.stderr)
    );
    let ar = rows(&so, "allreduce");
    let sizes: Vec<(&str, &str, &str)> = ar.iter().map(|r| (r[1], r[2], r[10])).collect();
    assert_eq!(sizes, [("256", "64", "0"), ("1024", "256", "0"), ("4096", "1024", "0")], "{so}");
    // Modeled time grows with the size.
    let t: Vec<f64> = ar.iter().map(|r| r[7].parse().unwrap()).collect();
    assert!(t[0] < t[2], "{t:?}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let swept: Vec<&serde_json::Value> =
        doc["collectives"].as_array().unwrap().iter().map(|c| &c["sweep"]).collect();
    assert_eq!(swept, [64, 256, 1024]);
    // The last size's outputs are in --out.
    let bytes = std::fs::read(d.join("summed.npy")).unwrap();
    assert_eq!(npyz::NpyFile::new(&bytes[..]).unwrap().shape(), [3, 1, 1024]);
}

#[test]
fn sweep_usage_errors_exit_2_with_the_expected_form() {
    let file = "pld-cli/tests/corpus/sweep_allreduce_count.py";
    let d = scratch("table", "sweep-bad");
    let o = d.to_str().unwrap();
    let out = pld(&["run", file, "--out", o, "--sweep", "count=64:1K:y3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected NAME=START:END[:STEP]"), "{}", text(&out.stderr));
    let out = pld(&["run", file, "--out", o, "--sweep", "cnt=64:128"]);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("--sweep cnt: no such builder parameter") && se.contains("count"), "{se}");
    let out = pld(&["verify", file, "--out", o, "--sweep", "count=64:128"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("drop --sweep"), "{}", text(&out.stderr));
    assert!(!text(&pld(&["verify", "--help"]).stdout).contains("--sweep"));
    let out = pld(&["run", file, "--out", o, "--sweep", "count=64:128", "--bind", "count=8"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("both bind `count`"), "{}", text(&out.stderr));
}
