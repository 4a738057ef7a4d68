//! Host callbacks (`role=pl.Role.SubWorker`) in the simulator, with a Rust
//! [`HostCallbacks`] in place of the Python bridge: a callback is a fence (it sees every
//! rank's earlier results and what follows sees its writes) under every schedule, a remote
//! write before it and a read after it are ordered for the race checker, and a run without a
//! bridge, or results of the wrong shape, are reports rather than zeros.

use pld_sim::{
    run, CallbackArg, CallbackError, HostCall, HostCallbacks, HostTensor, Inputs, ReportKind, Schedule,
    SimConfig, SimError,
};
use std::sync::{Arc, Mutex};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {d:?}"),
    }
}

const N: usize = 32;

/// Pass 1: `mid[r] = x[r] + 1`; callback `fold`: `acc[r] = sum_k mid[k]` (InOut, plus its
/// initial value); pass 2: `out[r] = acc[r] + x[r]`.
const PROGRAM: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 32

@pl.program
class Fence:
    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        pl.store(pl.add(pl.load(x, [0, 0], [1, N]), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def plus(self, a: pl.Tensor[[1, N], pl.FP32], x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        pl.store(pl.add(pl.load(a, [0, 0], [1, N]), pl.load(x, [0, 0], [1, N])), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def first(self, x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.inc(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def second(self, a: pl.Tensor[[1, N], pl.FP32], x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.plus(a, x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def fold(mid: pl.Tensor[[NR, 1, N], pl.FP32], acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]]):
        acc[:] = acc + mid.sum(axis=0)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], mid: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
             acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]], out: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.first(x[r], mid[r], device=r)
        self.fold(mid, acc)
        for r in pl.range(pld.world_size()):
            self.second(acc[r], x[r], out[r], device=r)
"#;

/// `fold` in Rust: `acc[r] += sum_k mid[k]`; records each call's name and `mid`.
#[derive(Debug, Default)]
struct Fold {
    seen: Mutex<Vec<(String, Vec<f32>)>>,
    wrong_shape: bool,
}

impl HostCallbacks for Fold {
    fn call(&self, call: &mut HostCall) -> Result<Vec<String>, CallbackError> {
        let CallbackArg::Tensor(mid) = &call.params[0].value else { panic!("mid is a tensor") };
        let mid = mid.to_f32();
        self.seen.lock().unwrap().push((call.name.clone(), mid.clone()));
        let CallbackArg::Tensor(acc) = &call.params[1].value else { panic!("acc is a tensor") };
        let (shape, mut vals) = (acc.shape.clone(), acc.to_f32());
        let p = shape[0];
        for (i, v) in vals.iter_mut().enumerate() {
            *v += (0..p).map(|k| mid[k * N + i % N]).sum::<f32>();
        }
        let shape = if self.wrong_shape { vec![p * N] } else { shape };
        call.params[1].value = CallbackArg::Tensor(HostTensor::from_f32(shape, &vals));
        Ok(vec!["fold ran".into()])
    }
}

fn inputs(p: usize) -> Inputs {
    let x: Vec<f32> = (0..p * N).map(|i| (i % 7) as f32 - 3.0).collect();
    let acc: Vec<f32> = (0..p * N).map(|i| (i % 3) as f32).collect();
    let mut m = Inputs::new();
    m.insert("x".into(), HostTensor::from_f32(vec![p, 1, N], &x));
    m.insert("acc".into(), HostTensor::from_f32(vec![p, 1, N], &acc));
    m
}

#[test]
fn a_callback_sees_every_rank_and_is_seen_by_what_follows() {
    let program = parse(PROGRAM);
    for schedule in [Schedule::Deterministic, Schedule::Random(5), Schedule::Parallel] {
        for p in [2usize, 3] {
            let fold = Arc::new(Fold::default());
            let cfg = SimConfig { schedule, host_callbacks: Some(fold.clone()), ..SimConfig::ranks(p) };
            let ins = inputs(p);
            let o = run(&program, "host", &ins, &cfg).unwrap_or_else(|e| panic!("{schedule:?} p={p}: {e}"));
            let x = ins["x"].to_f32();
            let acc0 = ins["acc"].to_f32();
            let seen = fold.seen.lock().unwrap();
            assert_eq!(seen.len(), 1, "one call");
            assert_eq!(seen[0].0, "fold");
            // The callback saw pass 1 of every rank ...
            let want_mid: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
            assert_eq!(seen[0].1, want_mid, "{schedule:?} p={p}");
            // ... and pass 2 saw what it wrote.
            let (acc, out) = (o.outputs["acc"].to_f32(), o.outputs["out"].to_f32());
            for i in 0..p * N {
                let col: f32 = (0..p).map(|k| want_mid[k * N + i % N]).sum();
                assert_eq!(acc[i], acc0[i] + col, "{schedule:?} p={p} acc[{i}]");
                assert_eq!(out[i], acc[i] + x[i], "{schedule:?} p={p} out[{i}]");
            }
            assert!(o.warnings.contains(&"fold ran".to_string()));
        }
    }
}

#[test]
fn without_a_bridge_or_with_wrong_results_it_is_a_report() {
    let program = parse(PROGRAM);
    let cfg = SimConfig::ranks(2);
    match run(&program, "host", &inputs(2), &cfg) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::HostCallback);
            assert!(r.text.contains("host callback 'fold' cannot run: this run has no Python bridge"), "{r}");
        }
        other => panic!("expected a report, got {:?}", other.map(|o| o.outputs)),
    }
    let fold = Arc::new(Fold { wrong_shape: true, ..Fold::default() });
    let cfg = SimConfig { host_callbacks: Some(fold), ..SimConfig::ranks(2) };
    match run(&program, "host", &inputs(2), &cfg) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::HostCallback);
            assert!(r.text.contains("result `acc` is fp32 [64], the parameter is fp32 [2, 1, 32]"), "{r}");
        }
        other => panic!("expected a report, got {:?}", other.map(|o| o.outputs)),
    }
}

/// Rank 0 writes rank 1's window with no notify; after a callback rank 1 reads it: the
/// callback orders the two (without it, the same program is a race).
const FENCED_WRITE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 32

@pl.program
class FencedWrite:
    @pl.function(type=pl.FunctionType.InCore)
    def put(self, x: pl.Tensor[[1, N], pl.FP32], win: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]):
        ctx = pld.get_comm_ctx(win)
        me = pld.rank(ctx)
        if me == 0:
            pld.tile.remote_store(pl.load(x, [0, 0], [1, N]), win, 1, [0, 0])

    @pl.function(type=pl.FunctionType.InCore)
    def take(self, win: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        pl.store(pl.load(win, [0, 0], [1, N]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def put_orch(self, x: pl.Tensor[[1, N], pl.FP32], win: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]):
        self.put(x, win)

    @pl.function(type=pl.FunctionType.Orchestration)
    def take_orch(self, win: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
        self.take(win, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def fold(mid: pl.Tensor[[NR, 1, N], pl.FP32], acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], mid: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
             acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]], out: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        buf = pld.alloc_window_buffer(N * 4)
        win = pld.window(buf, [1, N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.put_orch(x[r], win, device=r)
        CALLBACK
        self.take_orch(win, out[1], device=1)
"#;

#[test]
fn the_fence_orders_a_remote_write_before_it_and_a_read_after_it() {
    let fenced = parse(&FENCED_WRITE.replace("CALLBACK", "self.fold(mid, acc)"));
    let unfenced = parse(&FENCED_WRITE.replace("CALLBACK", "pass"));
    for schedule in [Schedule::Deterministic, Schedule::Random(9), Schedule::Parallel] {
        let cfg =
            SimConfig { schedule, host_callbacks: Some(Arc::new(Fold::default())), ..SimConfig::ranks(2) };
        let ins = inputs(2);
        let o = run(&fenced, "host", &ins, &cfg).unwrap_or_else(|e| panic!("{schedule:?}: {e}"));
        assert_eq!(
            o.outputs["out"].to_f32()[N..],
            ins["x"].to_f32()[..N],
            "{schedule:?}: rank 1 read rank 0's row"
        );
        if schedule == Schedule::Deterministic {
            match run(&unfenced, "host", &ins, &cfg) {
                Err(SimError::Fault(r)) => assert_eq!(r.kind, ReportKind::Race, "{r}"),
                Ok(_) => panic!("without the callback the same accesses are a race"),
                Err(e) => panic!("{e}"),
            }
        }
    }
}

#[test]
fn a_callback_called_on_a_device_is_rejected_before_it_runs() {
    let src = PROGRAM.replace(
        "    def second(self, a: pl.Tensor[[1, N], pl.FP32], x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):\n        self.plus(a, x, y)",
        "    def second(self, a: pl.Tensor[[1, N], pl.FP32], x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):\n        self.plus(a, x, y)\n        self.peek(a)\n\n    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n    def peek(a: pl.Tensor[[1, N], pl.FP32]):\n        print(a)",
    );
    assert_ne!(src, PROGRAM);
    // The frontend rejects the call before anything runs (the simulator's own report stays
    // as a backstop for IR built otherwise).
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(&src) {
        Err(d) => {
            let msgs: Vec<String> = d.iter().map(|x| x.message.clone()).collect();
            assert!(
                msgs.iter()
                    .any(|m| m
                        .starts_with("host callback `peek` is called from a chip orchestration function")),
                "{msgs:?}"
            );
        }
        Ok(_) => panic!("a host callback called from a chip orchestration parsed"),
    }
}

/// Rank 0 waits for a notify that rank 1 sends in a dispatch issued after the callback.
const WAIT_ACROSS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
N = 32

@pl.program
class WaitAcross:
    @pl.function(type=pl.FunctionType.InCore)
    def waiter(self, sig: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]):
        pld.system.wait(sig, [0, 0], 1, cmp=pld.WaitCmp.Eq)

    @pl.function(type=pl.FunctionType.InCore)
    def notifier(self, sig: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]):
        pld.system.notify(sig, 0, [0, 0], 1, op=pld.NotifyOp.Set)

    @pl.function(type=pl.FunctionType.Orchestration)
    def wait_orch(self, sig: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]):
        self.waiter(sig)

    @pl.function(type=pl.FunctionType.Orchestration)
    def notify_orch(self, sig: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]):
        self.notifier(sig)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def fold(mid: pl.Tensor[[NR, 1, N], pl.FP32], acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, N], pl.FP32], mid: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
             acc: pl.InOut[pl.Tensor[[NR, 1, N], pl.FP32]], out: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]]):
        buf = pld.alloc_window_buffer(4)
        sig = pld.window(buf, [1, 1], dtype=pl.INT32)
        self.wait_orch(sig, device=0)
        CALLBACK
        self.notify_orch(sig, device=1)
"#;

#[test]
fn a_wait_released_only_after_the_callback_is_a_deadlock_that_names_it() {
    let cfg = SimConfig { host_callbacks: Some(Arc::new(Fold::default())), ..SimConfig::ranks(2) };
    let ins = inputs(2);
    let free = parse(&WAIT_ACROSS.replace("CALLBACK", "pass"));
    run(&free, "host", &ins, &cfg).unwrap_or_else(|e| panic!("without the callback it runs: {e}"));
    let fenced = parse(&WAIT_ACROSS.replace("CALLBACK", "self.fold(mid, acc)"));
    match run(&fenced, "host", &ins, &cfg) {
        Err(SimError::Fault(r)) => {
            assert!(matches!(r.kind, ReportKind::Deadlock(_)), "{r}");
            assert!(
                r.text.contains("the work issued before host callback 'fold' had to finish first"),
                "{r}"
            );
        }
        other => panic!("expected a deadlock, got {:?}", other.map(|o| o.outputs)),
    }
}
