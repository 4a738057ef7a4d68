//! The trace's write → read arrows: each remote write links to the first read of its bytes,
//! on the rank whose window it wrote, later in modeled time.

use pld_sim::{run, HostTensor, Inputs, SimConfig};
use serde_json::Value;

const PUSH: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
ROWS = 4
HALF = 32

@pl.program
class Push:
    @pl.function(type=pl.FunctionType.InCore)
    def push(self, inp: pl.Tensor[[ROWS, HALF], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, HALF], pl.FP32]],
             win: pl.InOut[pld.DistributedTensor[[ROWS, HALF], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        ctx = pld.get_comm_ctx(win)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        prv = (me + n - 1) % n
        t = pl.load(inp, [0, 0], [ROWS, HALF])
        pld.tile.remote_store(t, win, nxt, [0, 0])
        pld.system.notify(signal, nxt, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal, [prv, 0], 1, cmp=pld.WaitCmp.Ge)
        got = pl.load(win, [0, 0], [ROWS, HALF])
        pl.store(got, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[ROWS, HALF], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, HALF], pl.FP32]],
             win: pl.InOut[pld.DistributedTensor[[ROWS, HALF], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        self.push(inp, out, win, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, ROWS, HALF], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, ROWS, HALF], pl.FP32]]):
        win_buf = pld.alloc_window_buffer(ROWS * HALF * 4, name="win")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [ROWS, HALF], dtype=pl.FP32)
            signal = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], win, signal, device=r)
"#;

#[test]
fn each_remote_write_links_to_the_read_that_consumed_it() {
    let _ = pld_ops::registry();
    let prog = pld_frontend::parse_str(PUSH).unwrap_or_else(|d| panic!("{d:?}"));
    let p = 3;
    let mut inputs = Inputs::new();
    let v: Vec<f32> = (0..p * 4 * 32).map(|i| i as f32).collect();
    inputs.insert("inputs".into(), HostTensor::from_f32(vec![p, 4, 32], &v));
    let out =
        run(&prog, "host", &inputs, &SimConfig { trace: true, ..SimConfig::ranks(p) }).expect("push ring");
    let t: Value = serde_json::from_str(out.trace.as_deref().expect("trace")).expect("json");
    let ev = t["traceEvents"].as_array().expect("events");
    let at = |ph: &str, id: &Value| {
        ev.iter().find(|e| e["ph"] == ph && &e["id"] == id).unwrap_or_else(|| panic!("flow {id} has no {ph}"))
    };
    // The slice a flow event sits in (same thread, starting at its timestamp).
    let slice = |f: &Value| {
        ev.iter()
            .find(|e| e["ph"] == "X" && e["pid"] == f["pid"] && e["tid"] == f["tid"] && e["ts"] == f["ts"])
            .unwrap_or_else(|| panic!("no slice under {f}"))
    };
    let writes: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "s" && e["name"] == "write → read").collect();
    assert_eq!(writes.len(), p, "one arrow per pushed tile");
    let mut targets = Vec::new();
    for s in writes {
        let f = at("f", &s["id"]);
        let (src, dst) = (slice(s), slice(f));
        assert_eq!(src["name"], "pld.tile.remote_store", "{src}");
        assert_eq!(dst["name"], "tile.load", "{dst}");
        // Rank r pushed into rank r+1's window; r+1 read it after its wait.
        let (from, to) = (s["pid"].as_u64().expect("pid"), f["pid"].as_u64().expect("pid"));
        assert_eq!(to, (from + 1) % p as u64);
        assert_eq!(src["args"]["peer"], to);
        assert!(f["ts"].as_f64() > s["ts"].as_f64(), "the read follows the write");
        targets.push(to);
    }
    targets.sort_unstable();
    assert_eq!(targets, [0, 1, 2]);
}
