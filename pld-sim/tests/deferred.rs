//! Deferred completion (§4.7): waiter kernels register `defer_wait` conditions, retire at once
//! and release their core; consumers ordered after a waiter start only once its condition
//! holds. With a blocking `wait` instead and fewer cores than waiters, the rank saturates and
//! the run ends in a deadlock report (the AIV-saturation hazard defer_wait exists for).

use pld_ir::DataType;
use pld_sim::{run, HostTensor, Inputs, ReportKind, Schedule, SimConfig, SimError};

const DEFERRED: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

W = 8

@pl.program
class Deferred:
    @pl.function(type=pl.FunctionType.InCore)
    def waiter(self, signal: pld.DistributedTensor[[1, 1], pl.INT32], tok: pl.Out[pl.Tensor[[1, 1], pl.INT32]], epoch: pl.Scalar[pl.INDEX]):
        pld.system.defer_wait(signal, [0, 0], epoch, cmp=pld.WaitCmp.Ge)
        return tok

    @pl.function(type=pl.FunctionType.InCore)
    def consumer(self, payload: pld.DistributedTensor[[1, 8], pl.INT32], tok: pl.Tensor[[1, 1], pl.INT32], out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        t = pl.load(payload, [0, 0], [1, 8])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def publisher(self, inp: pl.Tensor[[1, 8], pl.INT32], payload: pld.DistributedTensor[[1, 8], pl.INT32],
                  signal: pld.DistributedTensor[[1, 1], pl.INT32], peer: pl.Scalar[pl.INDEX], epoch: pl.Scalar[pl.INDEX]):
        t = pl.load(inp, [0, 0], [1, 8])
        pld.tile.remote_store(t, payload, peer, [0, 0])
        pld.system.notify(signal, peer, [0, 0], epoch, op=pld.NotifyOp.Set)
        return inp

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[W, 8], pl.INT32]], tokens: pl.Out[pl.Tensor[[W, 1], pl.INT32]],
             payload: pld.DistributedTensor[[1, 8], pl.INT32], signal: pld.DistributedTensor[[1, 1], pl.INT32],
             peer: pl.Scalar[pl.INDEX], epoch: pl.Scalar[pl.INDEX]):
        for slot in pl.range(W):
            tok = tokens[slot:slot + 1, 0:1]
            o = out[slot:slot + 1, 0:8]
            t2 = self.waiter(signal, tok, epoch)
            o2 = self.consumer(payload, tok, o)
        self.publisher(inp, payload, signal, peer, epoch)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[2, 1, 8], pl.INT32], outs: pl.Out[pl.Tensor[[2, W, 8], pl.INT32]], tokens: pl.Out[pl.Tensor[[2, W, 1], pl.INT32]]):
        payload_buf = pld.alloc_window_buffer(32, name="payload")
        signal_buf = pld.alloc_window_buffer(4, name="signal")
        for r in pl.range(2):
            payload = pld.window(payload_buf, [1, 8], dtype=pl.INT32)
            signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
            self.chip(inputs[r], outs[r], tokens[r], payload, signal, 1 - r, 1, device=r)
"#;

fn inputs() -> Inputs {
    let mut v = vec![1.0; 8];
    v.extend(vec![2.0; 8]);
    v[0] = 1.0;
    v[8] = 1.0;
    let mut i = Inputs::new();
    i.insert("inputs".into(), HostTensor::from_f64(DataType::INT32, vec![2, 1, 8], &v));
    i
}

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    pld_frontend::parse_str(text)
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()))
}

#[test]
fn deferred_waiters_release_cores_and_gate_consumers() {
    let prog = parse(DEFERRED);
    for sched in [Schedule::Deterministic, Schedule::Random(1), Schedule::Random(2), Schedule::Random(9)] {
        let cfg = SimConfig { cores_per_rank: 4, schedule: sched, ..SimConfig::ranks(2) };
        let out = run(&prog, "host", &inputs(), &cfg).unwrap_or_else(|e| panic!("{sched:?}: {e}"));
        let o = out.outputs["outs"].to_f64();
        for r in 0..2 {
            let tag = if r == 0 { 2.0 } else { 1.0 };
            for slot in 0..8 {
                let row = &o[(r * 8 + slot) * 8..(r * 8 + slot + 1) * 8];
                assert_eq!(row[0], 1.0, "rank {r} slot {slot} epoch lane");
                assert!(row[1..].iter().all(|&x| x == tag), "rank {r} slot {slot}: {row:?} ({sched:?})");
            }
        }
    }
}

#[test]
fn blocking_waiters_saturate_the_cores_and_deadlock() {
    let prog = parse(&DEFERRED.replace("pld.system.defer_wait(", "pld.system.wait("));
    let cfg = SimConfig { cores_per_rank: 4, ..SimConfig::ranks(2) };
    match run(&prog, "host", &inputs(), &cfg) {
        Err(SimError::Fault(r)) => {
            let ReportKind::Deadlock(parked) = &r.kind else { panic!("{r}") };
            assert_eq!(parked.len(), 8, "{r}");
            assert!(
                parked.iter().all(|p| p.kernel == "waiter"
                    && p.cell.starts_with("signal[0]")
                    && p.predicate == ">= 1"),
                "{r}"
            );
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
    // With enough cores the blocking form completes too.
    let cfg = SimConfig { cores_per_rank: 16, ..SimConfig::ranks(2) };
    run(&prog, "host", &inputs(), &cfg).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn never_satisfied_deferred_condition_is_a_deadlock() {
    let prog = parse(&DEFERRED.replace("        self.publisher(inp, payload, signal, peer, epoch)\n", ""));
    match run(&prog, "host", &inputs(), &SimConfig::ranks(2)) {
        Err(SimError::Fault(r)) => {
            let ReportKind::Deadlock(parked) = &r.kind else { panic!("{r}") };
            assert_eq!(parked.len(), 16, "{r}");
            assert!(
                parked
                    .iter()
                    .all(|p| p.kernel == "waiter (deferred completion)" && p.predicate == "unsigned >= 1"),
                "{r}"
            );
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn deferred_limits_are_enforced() {
    // 65 waiters whose condition never holds: the 65th concurrently deferred task is error 102.
    let prog = parse(
        &DEFERRED
            .replace("W = 8", "W = 65")
            .replace("        self.publisher(inp, payload, signal, peer, epoch)\n", ""),
    );
    let cfg = SimConfig { cores_per_rank: 128, ..SimConfig::ranks(2) };
    match run(&prog, "host", &inputs(), &cfg) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::Deferred, "{r}");
            assert!(r.text.contains("65 concurrently deferred tasks") && r.text.contains("error 102"), "{r}");
        }
        other => panic!("expected a deferred-limit report, got {other:?}"),
    }
    // One waiter registering 65 conditions.
    let prog = parse(&DEFERRED.replace(
        "        pld.system.defer_wait(signal, [0, 0], epoch, cmp=pld.WaitCmp.Ge)\n",
        "        for i in pl.range(65):\n            pld.system.defer_wait(signal, [0, 0], epoch, cmp=pld.WaitCmp.Ge)\n",
    ));
    match run(&prog, "host", &inputs(), &SimConfig::ranks(2)) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::Deferred, "{r}");
            assert!(r.text.contains("registered 65 deferred conditions"), "{r}");
        }
        other => panic!("expected a condition-limit report, got {other:?}"),
    }
    // A negative threshold is error 101.
    let prog = parse(&DEFERRED.replace(
        "pld.system.defer_wait(signal, [0, 0], epoch,",
        "pld.system.defer_wait(signal, [0, 0], epoch - 2,",
    ));
    match run(&prog, "host", &inputs(), &SimConfig::ranks(2)) {
        Err(SimError::Fault(r)) => {
            assert!(r.kind == ReportKind::Deferred && r.text.contains("error 101"), "{r}")
        }
        other => panic!("expected a threshold report, got {other:?}"),
    }
}
