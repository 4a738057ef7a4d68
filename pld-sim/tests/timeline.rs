//! Modeled time and the trace: the cost model's formula for mesh and ring allreduce at two
//! sizes and rank counts, modeled times identical across schedules, core lanes that follow
//! the core count, one flow per released wait, blocked-wait slices, and the trace JSON
//! checked against the trace-event format.

use pld_sim::{run, HostTensor, Inputs, Schedule, SimConfig};
use serde_json::Value;
use std::sync::LazyLock;

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    pld_frontend::parse_str(text).unwrap_or_else(|d| panic!("parse failed: {d:?}"))
}

/// A host-level allreduce (mesh or ring) of a `[1, SIZE]` FP32 window.
const HOST_ALLREDUCE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = __SIZE__
STAGE = 1024
NR = pl.dynamic("NR")

@pl.program
class HostAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        for col in pl.range(0, SIZE, STAGE):
            t = pl.load(inp, [0, col], [1, STAGE])
            pl.store(t, [0, col], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(__SIGCELLS__ * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, __SIGSHAPE__, dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode="__MODE__")
"#;

fn host_allreduce(size: usize, mode: &str) -> pld_ir::Program {
    let (cells, shape) = match mode {
        "ring" => ("2 * (pld.world_size() - 1) * pld.world_size()", "[2 * (NR - 1), NR]"),
        _ => ("pld.world_size()", "[NR]"),
    };
    parse(
        &HOST_ALLREDUCE
            .replace("__SIZE__", &size.to_string())
            .replace("__MODE__", mode)
            .replace("__SIGCELLS__", cells)
            .replace("__SIGSHAPE__", shape),
    )
}

fn ramp(p: usize, n: usize) -> Inputs {
    let v: Vec<f32> = (0..p * n).map(|i| (i % 97) as f32).collect();
    let mut inputs = Inputs::new();
    inputs.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, n], &v));
    inputs
}

/// Only the link bandwidth costs anything (10 ps per remote byte); local traffic is free.
fn link_only() -> pld_sim::cost::CostModel {
    let mut m = pld_sim::cost::CostModel::default();
    for kv in
        ["alpha_ns=0", "notify_ns=0", "poll_ns=0", "op_ns=0", "launch_ns=0", "hbm_gbps=1e12", "link_gbps=100"]
    {
        m.set(kv).expect("override");
    }
    m
}

#[test]
fn allreduce_time_follows_the_model_with_bytes_and_ranks() {
    for (mode, p) in [("mesh", 2usize), ("mesh", 4), ("ring", 2), ("ring", 4)] {
        for size in [4096usize, 8192] {
            let prog = host_allreduce(size, mode);
            let cfg = SimConfig { cost: link_only(), ..SimConfig::ranks(p) };
            let out =
                run(&prog, "host", &ramp(p, size), &cfg).unwrap_or_else(|e| panic!("{mode} P={p}: {e}"));
            let [call] = out.timing.collectives.as_slice() else {
                panic!("{mode} P={p}: one collective call expected, got {:?}", out.timing.collectives)
            };
            let bytes = (size * 4) as f64;
            // Mesh: every rank pulls (P-1) peers' whole buffers one after another; ring: 2(P-1)
            // steps of one S/P segment each. At 100 GB/s a byte takes 10 ps.
            let remote = match mode {
                "mesh" => (p - 1) as f64 * bytes,
                _ => 2.0 * (p - 1) as f64 / p as f64 * bytes,
            };
            let want = remote * 10.0;
            assert_eq!(call.time_ps as f64, want, "{mode} P={p} S={size}: {call:?}");
            assert_eq!(call.bytes, (size * 4) as u64);
            assert_eq!(call.ranks, p);
            // busbw = algbw * 2(P-1)/P, nccl-tests' allreduce factor.
            let algbw = bytes / (want / 1000.0);
            let bus = call.busbw_gbps.expect("allreduce has a bus factor");
            assert!((bus - algbw * 2.0 * (p - 1) as f64 / p as f64).abs() < 1e-9, "{call:?}");
            assert!((call.algbw_gbps - algbw).abs() < 1e-9);
        }
    }
}

#[test]
fn modeled_time_is_the_same_under_every_schedule() {
    let prog = host_allreduce(4096, "ring");
    let base =
        run(&prog, "host", &ramp(4, 4096), &SimConfig { trace: true, ..SimConfig::ranks(4) }).expect("det");
    assert!(base.timing.rank_ps.iter().all(|&t| t > 0), "{:?}", base.timing);
    let slices = |t: &str| -> Vec<(i64, i64, f64, f64, String)> {
        let v: Value = serde_json::from_str(t).expect("json");
        let mut s: Vec<_> = v["traceEvents"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                let n = |k: &str| e[k].as_f64().expect("number");
                (
                    e["pid"].as_i64().unwrap_or(-1),
                    e["tid"].as_i64().unwrap_or(-1),
                    n("ts"),
                    n("dur"),
                    e["name"].to_string(),
                )
            })
            .collect();
        s.sort_by(|a, b| a.partial_cmp(b).expect("ordered"));
        s
    };
    let want = slices(base.trace.as_deref().expect("trace"));
    for seed in 0..12u64 {
        let cfg = SimConfig { trace: true, schedule: Schedule::Random(seed), ..SimConfig::ranks(4) };
        let out = run(&prog, "host", &ramp(4, 4096), &cfg).expect("random");
        assert_eq!(out.timing, base.timing, "seed {seed}");
        assert_eq!(slices(out.trace.as_deref().expect("trace")), want, "seed {seed}: slices differ");
    }
}

/// The hand-written 4-rank mesh allreduce: store, AtomicAdd credit barrier, remote loads.
/// The hand-written mesh program of p2p.rs, with the last rank first moving 8192 extra tiles.
static MESH: LazyLock<String> = LazyLock::new(|| {
    include_str!("programs/mesh_reduce.py").replacen(
        "        n = pld.nranks(ctx)\n",
        concat!(
            "        n = pld.nranks(ctx)\n",
            "        # The last rank moves 8192 extra tiles first, so its peers wait for it.\n",
            "        extra = 0\n",
            "        if me == n - 1:\n",
            "            extra = 8192\n",
            "        for i in pl.range(extra):\n",
            "            w = pl.load(inp, [0, 0], [1, SIZE])\n",
            "            pl.store(w, [0, 0], out)\n",
        ),
        1,
    )
});

/// Four independent copy kernels per rank, each on its own output row.
const FOUR_TASKS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 4096
NR = pl.dynamic("NR")

@pl.program
class FourTasks:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        for col in pl.range(0, SIZE, 512):
            t = pl.load(inp, [0, col], [1, 512])
            pl.store(t, [0, col], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[1, SIZE], pl.FP32], oa: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             ob: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]], oc: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             od: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        oa = self.copy(a, oa)
        ob = self.copy(a, ob)
        oc = self.copy(a, oc)
        od = self.copy(a, od)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32], oa: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
             ob: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]], oc: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
             od: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(inputs[r], oa[r], ob[r], oc[r], od[r], device=r)
"#;

fn events(trace: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(trace).unwrap_or_else(|e| panic!("trace is not JSON: {e}"));
    v["traceEvents"].as_array().expect("traceEvents is an array").clone()
}

/// Checks every event against the fields the trace-event format requires of its kind, as
/// Perfetto's JSON importer and chrome://tracing read them:
/// - every event: `name` (string), `ph` (one of the kinds used: M, X, s, f, C), `pid` (int);
/// - `M` (metadata): `tid` (int) and `args` — `process_name`/`thread_name` carry a string
///   `args.name`, `*_sort_index` an integer `args.sort_index`;
/// - `X` (complete slice): `tid` (int), `ts` and `dur` (non-negative numbers, microseconds);
/// - `s`/`f` (flow start/end): `id`, `cat` (string), `tid`, `ts`; `f` binds to its enclosing
///   slice with `bp: "e"`; every id has exactly one `s` and one `f`, each inside an `X` slice
///   of its thread;
/// - `C` (counter): `ts` and `args` whose values are all numbers.
fn check_trace_event_format(ev: &[Value]) {
    let int = |e: &Value, k: &str| e[k].as_i64().unwrap_or_else(|| panic!("`{k}` must be an integer: {e}"));
    let num = |e: &Value, k: &str| e[k].as_f64().unwrap_or_else(|| panic!("`{k}` must be a number: {e}"));
    let mut flows: std::collections::HashMap<i64, (u32, u32)> = Default::default();
    let slices: Vec<(i64, i64, f64, f64)> = ev
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| (int(e, "pid"), int(e, "tid"), num(e, "ts"), num(e, "dur")))
        .collect();
    for e in ev {
        assert!(e["name"].is_string(), "name: {e}");
        int(e, "pid");
        match e["ph"].as_str().expect("ph") {
            "M" => {
                int(e, "tid");
                match e["name"].as_str() {
                    Some("process_name" | "thread_name") => assert!(e["args"]["name"].is_string(), "{e}"),
                    Some("process_sort_index" | "thread_sort_index") => {
                        assert!(e["args"]["sort_index"].is_i64(), "{e}")
                    }
                    other => panic!("unknown metadata {other:?}"),
                }
            }
            "X" => {
                int(e, "tid");
                assert!(num(e, "ts") >= 0.0 && num(e, "dur") >= 0.0, "{e}");
                assert!(e["args"].is_object(), "{e}");
            }
            ph @ ("s" | "f") => {
                let (pid, tid, ts) = (int(e, "pid"), int(e, "tid"), num(e, "ts"));
                assert!(e["cat"].is_string(), "{e}");
                let id = int(e, "id");
                let c = flows.entry(id).or_default();
                if ph == "s" {
                    c.0 += 1;
                } else {
                    assert_eq!(e["bp"], "e", "{e}");
                    c.1 += 1;
                }
                assert!(
                    slices.iter().any(|&(p, t, s, d)| p == pid && t == tid && s <= ts && ts <= s + d),
                    "flow event outside every slice of its thread: {e}"
                );
            }
            "C" => {
                num(e, "ts");
                let args = e["args"].as_object().expect("counter args");
                assert!(!args.is_empty() && args.values().all(Value::is_number), "{e}");
            }
            other => panic!("event kind {other} is not one this trace uses: {e}"),
        }
    }
    for (id, c) in flows {
        assert_eq!(c, (1, 1), "flow {id} needs one start and one end");
    }
}

#[test]
fn mesh_trace_has_one_flow_per_released_wait_and_blocked_slices() {
    let prog = parse(&MESH);
    let inputs = {
        let mut i = Inputs::new();
        let v: Vec<f32> = (0..4 * 256).map(|x| (x % 13) as f32).collect();
        i.insert("inputs".into(), HostTensor::from_f32(vec![4, 1, 256], &v));
        i
    };
    let out = run(&prog, "host", &inputs, &SimConfig { trace: true, ..SimConfig::ranks(4) }).expect("mesh");
    let ev = events(out.trace.as_deref().expect("trace"));
    check_trace_event_format(&ev);
    let waits: u64 = out.stats.waits.iter().sum();
    assert_eq!(waits, 12, "{:?}", out.stats);
    let releases = ev.iter().filter(|e| e["ph"] == "f" && e["name"] == "notify → wait").count();
    assert_eq!(releases as u64, waits, "one flow per notify → wait release");
    // Every wait slice (blocked or not) receives exactly one of them.
    let notifies = ev.iter().filter(|e| e["ph"] == "X" && e["args"]["op"] == "pld.system.notify").count();
    assert_eq!(notifies, 12);
    // Rank 3 works longer before its barrier: every other rank's wait for it blocks, from
    // the first poll to the landing of rank 3's notify, and that slice is where its flow ends.
    for r in 0..3 {
        let blocked: Vec<&Value> =
            ev.iter().filter(|e| e["ph"] == "X" && e["pid"] == r && e["name"] == "wait (blocked)").collect();
        assert!(!blocked.is_empty(), "rank {r} waited");
        for b in &blocked {
            assert!(b["dur"].as_f64().unwrap_or(0.0) > 0.0);
            assert!(b["args"]["cell"].as_str().is_some_and(|c| c.contains("signal[")), "{b}");
            assert!(
                ev.iter()
                    .any(|f| f["ph"] == "f" && f["pid"] == r && f["tid"] == b["tid"] && f["ts"] == b["ts"]),
                "blocked slice without its release flow: {b}"
            );
        }
    }
    assert!(
        !ev.iter().any(|e| e["ph"] == "X" && e["pid"] == 3 && e["name"] == "wait (blocked)"),
        "rank 3 notifies last and never waits"
    );
    // A counter tracks remote bytes in flight (one 1 KiB remote load at a time per rank).
    assert!(ev.iter().any(|e| e["ph"] == "C" && e["pid"] == 0 && e["args"]["bytes"] == 1024));
    // A run this small keeps every slice (merging starts past pld_sim::aggregate::SLICE_LIMIT):
    // each remote load is a slice of its own with its peer, bytes and source location, and
    // --trace-all changes nothing.
    let loads: Vec<&Value> =
        ev.iter().filter(|e| e["ph"] == "X" && e["name"] == "pld.tile.remote_load").collect();
    assert_eq!(loads.len(), 12);
    assert!(
        loads.iter().all(|e| e["args"]["bytes"] == 1024
            && e["args"]["peer"].is_u64()
            && e["args"]["loc"].as_str().is_some_and(|l| l.contains("bytes"))),
        "{loads:?}"
    );
    let cfg = SimConfig { trace: true, trace_all: true, ..SimConfig::ranks(4) };
    let all = run(&prog, "host", &inputs, &cfg).expect("mesh, every slice");
    assert_eq!(all.timing, out.timing);
    assert_eq!(all.trace, out.trace);
    // Tracing does not change modeled time.
    let untraced = run(&prog, "host", &inputs, &SimConfig::ranks(4)).expect("mesh, untraced");
    assert_eq!(untraced.timing, out.timing);
    // Everyone waits for rank 3, which cannot notify before its extra 8192 load + store pairs
    // of 1 KiB (at least 8192 * 2048 B / 1600 GB/s = 10.49 us) are done.
    let t = &out.timing.rank_ps;
    assert!(t.iter().all(|&x| x > 10_485_760), "{t:?}");
}

#[test]
fn core_lanes_follow_the_core_count() {
    let prog = parse(FOUR_TASKS);
    let mut inputs = Inputs::new();
    inputs.insert("inputs".into(), HostTensor::zeros(pld_ir::DataType::FP32, vec![2, 1, 4096]));
    let mut times = Vec::new();
    for cores in [1usize, 2, 4, 48] {
        // Launches cost nothing here, so the copies' own time decides.
        let mut cost = pld_sim::cost::CostModel::default();
        cost.set("launch_ns=0").expect("override");
        let cfg = SimConfig { trace: true, cores_per_rank: cores, cost, ..SimConfig::ranks(2) };
        let out = run(&prog, "host", &inputs, &cfg).unwrap_or_else(|e| panic!("cores {cores}: {e}"));
        let ev = events(out.trace.as_deref().expect("trace"));
        check_trace_event_format(&ev);
        let mut lanes: Vec<String> = ev
            .iter()
            .filter(|e| e["name"] == "thread_name" && e["pid"] == 0)
            .map(|e| e["args"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        lanes.sort();
        let mut want: Vec<String> = (0..cores.min(4)).map(|c| format!("core {c}")).collect();
        want.push("chip orchestrator".into());
        want.sort();
        assert_eq!(lanes, want, "cores {cores}");
        times.push(out.timing.rank_ps[0]);
    }
    // More cores run the four copies side by side: modeled time falls until four.
    assert!(times[0] > times[1] && times[1] > times[2] && times[2] == times[3], "{times:?}");
}
