//! Fault reports that show the code: deadlock, race and bounds reports carry the source line
//! with a caret, the rank, core and kernel, a deadlock's wait-for graph, and the same report
//! as JSON.

use pld_sim::{run, HostTensor, Inputs, Report, SimConfig, SimError};
use serde_json::Value;
use std::sync::LazyLock;

/// The hand-written mesh program of p2p.rs at `SIZE = 64`; the reports below quote its lines.
static MESH: LazyLock<String> =
    LazyLock::new(|| include_str!("programs/mesh_reduce.py").replace("SIZE = 256", "SIZE = 64"));

/// Runs `text` (named `mesh.py`) on `p` ranks and returns its fault report.
fn fault(text: &str, p: usize) -> Report {
    let _ = pld_ops::registry();
    let mut sources = pld_ir::SourceMap::new();
    let prog =
        pld_frontend::parse_program(&mut sources, "mesh.py", text, &pld_frontend::ParseOptions::default())
            .unwrap_or_else(|d| panic!("{d:?}"));
    let mut inputs = Inputs::new();
    inputs.insert("inputs".into(), HostTensor::zeros(pld_ir::DataType::FP32, vec![p, 1, 64]));
    let cfg = SimConfig { sources: Some(sources), ..SimConfig::ranks(p) };
    match run(&prog, "host", &inputs, &cfg) {
        Err(SimError::Fault(r)) => r,
        other => panic!("expected a fault, got {other:?}"),
    }
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect("line") + 1
}

/// The report shows `line` of mesh.py with a caret line under it.
fn assert_shows_line(rep: &Report, text: &str, needle: &str) {
    let n = line_of(text, needle);
    let src = text.lines().nth(n - 1).expect("source line");
    let lines: Vec<&str> = rep.text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("{n:>2} | ")) && l.ends_with(src))
        .unwrap_or_else(|| panic!("line {n} not shown:\n{}", rep.text));
    assert!(lines[at - 2].contains(&format!("--> mesh.py:{n}:")), "{}", rep.text);
    let caret = lines[at + 1];
    let col = src.find(needle).expect("col");
    assert_eq!(caret.find('^'), Some(5 + col), "caret under `{needle}`:\n{}", rep.text);
}

fn json(rep: &Report) -> Value {
    // Through text, as a tool reading `--report-json` would.
    let text = serde_json::to_string(&rep.json).expect("serializes");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("report JSON: {e}\n{text}"))
}

#[test]
fn a_deadlock_shows_the_wait_and_the_missing_notifier() {
    let text = MESH.replace(
        "if peer != me:\n                pld.system.notify",
        "if peer != me and me != 0:\n                pld.system.notify",
    );
    let rep = fault(&text, 2);
    assert_shows_line(&rep, &text, "pld.system.wait");
    assert!(rep.text.contains("wait-for graph:"), "{}", rep.text);
    assert!(
        rep.text.contains("rank 1 core 0 'reduce_step' waits on signal[0] on rank 1 >= 1 (value 0)"),
        "{}",
        rep.text
    );
    assert!(
        rep.text.contains("missing notifier: no unfinished rank is left to notify signal[0] on rank 1"),
        "{}",
        rep.text
    );
    assert!(rep.text.contains("finished without writing it: ranks 0"), "{}", rep.text);
    let j = json(&rep);
    assert_eq!(j["kind"], "deadlock");
    assert_eq!(j["location"]["line"], line_of(&text, "pld.system.wait"));
    let w = &j["wait_for"];
    assert_eq!(w["waits"][0]["rank"], 1);
    assert_eq!(w["waits"][0]["core"], 0);
    assert_eq!(w["waits"][0]["cell"], "signal[0] on rank 1");
    assert_eq!(w["finished"], serde_json::json!([0]));
    assert_eq!(w["missing_notifier"], serde_json::json!(["signal[0] on rank 1"]));
    assert!(w["cycle"].is_null());
    assert_eq!(j["text"], rep.text.as_str());
}

#[test]
fn a_deadlock_among_blocked_ranks_shows_their_cycle() {
    // Rank 0 never notifies; ranks 1 and 2 block on its cell while it finishes.
    let text = MESH.replace(
        "if peer != me:\n                pld.system.notify",
        "if peer != me and me != 0:\n                pld.system.notify",
    );
    let rep = fault(&text, 3);
    assert!(rep.text.contains("cycle: rank 1 -> rank 2 -> rank 1"), "{}", rep.text);
    assert!(rep.text.contains("could still be notified by: ranks 2 (each blocked itself)"), "{}", rep.text);
    assert!(rep.text.contains("finished without writing it: ranks 0"), "{}", rep.text);
    let j = json(&rep);
    assert_eq!(j["wait_for"]["cycle"], serde_json::json!([1, 2, 1]));
    assert_eq!(j["wait_for"]["live"], serde_json::json!([1, 2]));
}

#[test]
fn a_race_shows_the_access_rank_core_and_kernel() {
    let text = MESH.replace("pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)", "w = src");
    let rep = fault(&text, 2);
    assert_eq!(rep.kind, pld_sim::ReportKind::Race, "{rep}");
    let j = json(&rep);
    let line = j["location"]["line"].as_u64().expect("a located race") as usize;
    let needle = if line == line_of(&text, "remote_load") { "pld.tile.remote_load" } else { "pl.store(t" };
    assert_shows_line(&rep, &text, needle);
    let rank = j["rank"].as_u64().expect("rank");
    assert_eq!(j["core"], 0);
    assert_eq!(j["kernel"], "reduce_step");
    assert!(rep.text.contains(&format!("= on rank {rank}, core 0, kernel 'reduce_step'")), "{}", rep.text);
}

#[test]
fn a_bounds_fault_shows_the_access() {
    let text = MESH.replace(
        "pld.tile.remote_load(data, peer, [0, 0], [1, SIZE])",
        "pld.tile.remote_load(data, peer, [0, me + 8], [1, SIZE])",
    );
    let rep = fault(&text, 2);
    assert_eq!(rep.kind, pld_sim::ReportKind::OutOfBounds, "{rep}");
    assert_shows_line(&rep, &text, "pld.tile.remote_load");
    let j = json(&rep);
    assert_eq!(j["kind"], "out-of-bounds window access");
    assert!(j["rank"].is_u64() && j["core"] == 0 && j["kernel"] == "reduce_step", "{j}");
}

#[test]
fn a_credit_leak_shows_the_notify_that_left_the_cell_non_zero() {
    // Each rank takes two credits back from the cell its next peer filled with one.
    let text = MESH.replace(
        "        acc0 = pl.load(data, [0, 0], [1, SIZE])",
        "        pld.system.notify(signal, me, [(me + 1) % n, 0], -2, op=pld.NotifyOp.AtomicAdd)\n        acc0 = pl.load(data, [0, 0], [1, SIZE])",
    );
    let rep = fault(&text, 2);
    assert_eq!(rep.kind, pld_sim::ReportKind::CreditLeak, "{rep}");
    // The caret is on the last notify that wrote the first leaking cell: the injected -2.
    let culprit = "pld.system.notify(signal, me, [(me + 1) % n, 0], -2";
    assert_shows_line(&rep, &text, culprit);
    assert!(
        rep.text
            .contains("signal[1] on rank 0 = -1; the last notify to write it (-2 by rank 0) is at mesh.py:"),
        "{}",
        rep.text
    );
    let j = json(&rep);
    assert_eq!(j["kind"], "credit leak");
    assert_eq!(j["location"]["line"], line_of(&text, culprit));
    assert!(j["rank"].is_u64(), "{j}");
}
