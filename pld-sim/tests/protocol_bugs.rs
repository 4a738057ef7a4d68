//! Regression tests of the protocol bugs the simulator used to miss (issue #18, #17 item 7),
//! each a minimal program in the users' style: a race reported under every schedule (the
//! waiter acquires only the credit that satisfied it), a stale credit left by a forgotten
//! epilogue cell, the credit-leak report on a cell no epilogue touched, and a read of bytes
//! nobody wrote.

use pld_ir::DataType;
use pld_sim::{run, HostTensor, Inputs, ReportKind, Schedule, SimConfig, SimError};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()),
    }
}

fn inputs(p: usize, rows: usize) -> Inputs {
    let vals: Vec<f64> = (0..p * rows * 64).map(|i| (i % 97) as f64).collect();
    let mut m = Inputs::new();
    m.insert("inputs".into(), HostTensor::from_f64(DataType::FP32, vec![p, rows, 64], &vals));
    m
}

/// The 1-based line of the `nth` (0-based) line of `src` containing `pat`.
fn line_of(src: &str, pat: &str, nth: usize) -> usize {
    src.lines().enumerate().filter(|(_, l)| l.contains(pat)).nth(nth).expect(pat).0 + 1
}

fn sources(name: &str, src: &str) -> pld_ir::SourceMap {
    let mut map = pld_ir::SourceMap::default();
    map.add(name, src);
    map
}

fn fault(prog: &pld_ir::Program, p: usize, inp: &Inputs, schedule: Schedule) -> pld_sim::Report {
    let cfg = SimConfig { schedule, ..SimConfig::ranks(p) };
    match run(prog, "host_orch", inp, &cfg) {
        Err(SimError::Fault(r)) => r,
        Err(e) => panic!("{schedule:?}: invalid run: {e}"),
        Ok(_) => panic!("{schedule:?}: the broken protocol ran clean"),
    }
}

/// Two rounds through one window: round 1 stores into `data` while the peer may still be
/// reading round 0's row — nothing orders that read before the store. The round-r wait is on
/// one cell per rank counting rounds (`Ge rnd + 1`), so a fast peer's round-1 notify can land
/// before the waiter polls.
const TWO_ROUNDS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class TwoRounds:
    @pl.function(type=pl.FunctionType.InCore)
    def rounds(self, inp: pl.Tensor[[2, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[2, SIZE], pl.FP32]],
               data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[2, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        peer = (me + 1) % n
        prev = (me + n - 1) % n
        for rnd in pl.range(2):
            row = pl.load(inp, [rnd, 0], [1, SIZE])
            data = pl.store(row, [0, 0], data)
            pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(signal, [prev, 0], rnd + 1, cmp=pld.WaitCmp.Ge)
            theirs = pld.tile.remote_load(data, prev, [0, 0], [1, SIZE])
            out = pl.store(theirs, [rnd, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, inp: pl.Tensor[[2, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[2, SIZE], pl.FP32]],
                  data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                  signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        self.rounds(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[NR, 2, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 2, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
"#;

#[test]
fn a_round_overlap_race_is_reported_under_every_schedule() {
    let prog = parse(TWO_ROUNDS);
    for p in [2, 3] {
        let inp = inputs(p, 2);
        let mut schedules = vec![Schedule::Deterministic, Schedule::Parallel, Schedule::Parallel];
        schedules.extend((1..=12).map(Schedule::Random));
        schedules.extend((1..=6).map(Schedule::Pct));
        for s in schedules {
            let r = fault(&prog, p, &inp, s);
            assert_eq!(r.kind, ReportKind::Race, "P={p} {s:?}: {r}");
            assert!(r.text.contains("buffer 'data_buf'") && r.text.contains("rounds"), "P={p} {s:?}: {r}");
        }
    }
}

/// A self-clearing barrier kernel called twice on one signal; `__EPI__` is the epilogue's
/// peer range (the correct one is `pl.range(1, n)`).
const TWICE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class Twice:
    @pl.function(type=pl.FunctionType.InCore)
    def gather_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        row = pl.load(inp, [0, 0], [1, SIZE])
        data = pl.store(row, [0, 0], data)
        for k in pl.range(1, n):
            pld.system.notify(signal, (me + k) % n, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            pld.system.wait(signal, [(me + k) % n, 0], 1, cmp=pld.WaitCmp.Ge)
        acc = pl.load(data, [0, 0], [1, SIZE])
        for k, (partial,) in pl.range(1, n, init_values=(acc,)):
            theirs = pld.tile.remote_load(data, (me + k) % n, [0, 0], [1, SIZE])
            summed = pl.add(partial, theirs)
            total = pl.yield_(summed)
        out = pl.store(total, [0, 0], out)
        for k in pl.range(1, n):
            pld.system.notify(signal, (me + k) % n, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for k in pl.range(1, n):
            pld.system.wait(signal, [(me + k) % n, 0], 2, cmp=pld.WaitCmp.Ge)
        for k in __EPI__:
            pld.system.notify(signal, me, [(me + k) % n, 0], -2, op=pld.NotifyOp.AtomicAdd)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                  data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                  signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        self.gather_step(inp, out, data, signal)
        self.gather_step(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
"#;

#[test]
fn the_correct_self_clearing_barrier_runs_clean_twice_under_every_schedule() {
    let prog = parse(&TWICE.replace("__EPI__", "pl.range(1, n)"));
    for p in [2, 3, 4] {
        let inp = inputs(p, 1);
        let mut schedules = vec![Schedule::Deterministic, Schedule::Parallel];
        schedules.extend((1..=8).map(Schedule::Random));
        schedules.extend((1..=8).map(Schedule::Pct));
        let base =
            run(&prog, "host_orch", &inp, &SimConfig::ranks(p)).unwrap_or_else(|e| panic!("P={p}: {e}"));
        for s in schedules {
            let cfg = SimConfig { schedule: s, ..SimConfig::ranks(p) };
            let o = run(&prog, "host_orch", &inp, &cfg).unwrap_or_else(|e| panic!("P={p} {s:?}: {e}"));
            assert_eq!(o.outputs, base.outputs, "P={p} {s:?}");
        }
    }
}

#[test]
fn a_forgotten_epilogue_cell_is_a_stale_credit_in_the_next_call_under_every_schedule() {
    // The epilogue skips the cell of the peer one rank ahead: the next call's first wait on that
    // cell passes on the previous call's credits.
    let src = TWICE.replace("__EPI__", "pl.range(2, n)");
    let prog = parse(&src);
    let wait = line_of(&src, "[(me + k) % n, 0], 1, cmp", 0);
    let notify = line_of(&src, "[me, 0], 1, op", 0);
    for p in [3, 4] {
        let inp = inputs(p, 1);
        let mut schedules = vec![Schedule::Deterministic, Schedule::Parallel];
        schedules.extend((1..=8).map(Schedule::Random));
        schedules.extend((1..=4).map(Schedule::Pct));
        for s in schedules {
            let cfg =
                SimConfig { schedule: s, sources: Some(sources("twice.py", &src)), ..SimConfig::ranks(p) };
            let r = match run(&prog, "host_orch", &inp, &cfg) {
                Err(SimError::Fault(r)) => r,
                other => panic!("P={p} {s:?}: expected a stale credit, got {:?}", other.map(|o| o.warnings)),
            };
            assert_eq!(r.kind, ReportKind::StaleCredit, "P={p} {s:?}: {r}");
            assert!(
                r.text.contains("call 2 of rank") && r.text.contains("the credit to call 1"),
                "P={p} {s:?}: {r}"
            );
            assert!(r.text.contains("on signal cell signal_buf["), "P={p} {s:?}: {r}");
            assert!(r.text.contains(&format!("--> twice.py:{wait}:")), "P={p} {s:?}: wait line {wait}: {r}");
            assert!(
                r.text.contains(&format!("deposited the credit is at twice.py:{notify}:")),
                "P={p} {s:?}: {r}"
            );
        }
    }
}

#[test]
fn a_forgotten_epilogue_cell_of_a_single_call_is_a_credit_leak_naming_the_cell_and_notify() {
    let src = TWICE.replace("__EPI__", "pl.range(2, n)").replace(
        "        self.gather_step(inp, out, data, signal)\n        self.gather_step(inp, out, data, signal)\n",
        "        self.gather_step(inp, out, data, signal)\n",
    );
    let prog = parse(&src);
    let map = sources("twice.py", &src);
    let notify = line_of(&src, "[me, 0], 1, op", 1);
    let epilogue = line_of(&src, "-2, op", 0);
    for p in [3, 4] {
        let inp = inputs(p, 1);
        for s in [Schedule::Deterministic, Schedule::Parallel, Schedule::Random(5), Schedule::Pct(3)] {
            let cfg = SimConfig { schedule: s, sources: Some(map.clone()), ..SimConfig::ranks(p) };
            let r = match run(&prog, "host_orch", &inp, &cfg) {
                Err(SimError::Fault(r)) => r,
                other => panic!("P={p} {s:?}: expected a leak, got {:?}", other.map(|o| o.warnings)),
            };
            assert_eq!(r.kind, ReportKind::CreditLeak, "P={p} {s:?}: {r}");
            // Every rank's cell of the peer one ahead holds that call's two credits.
            assert!(r.text.contains(&format!("{p} cell(s)")), "P={p} {s:?}: {r}");
            assert!(r.text.contains("signal_buf[1] on rank 0 = 2"), "P={p} {s:?}: {r}");
            assert!(
                r.text.contains(&format!(
                    "the last notify to write it (+1 by rank 1) is at twice.py:{notify}:"
                )),
                "P={p} {s:?}: {r}"
            );
            assert!(r.text.contains(&format!("self-clearing epilogue of 'signal_buf' (the collective's call site) is at twice.py:{epilogue}:")), "P={p} {s:?}: {r}");
        }
    }
}

/// Every rank atomically adds its row into rank 0's window; rank 0 copies the sum out. The adds
/// commute as a protocol (no race), but FP32 rounding depends on their order: 2^24 + 1 + 1 is
/// 2^24 while 1 + 1 + 2^24 is 2^24 + 2. No check fires; only the outputs differ by schedule.
const ATOMIC_SUM: &str = include_str!("programs/atomic_sum.py");

#[test]
fn outputs_that_depend_on_the_schedule_fail_verify_with_both_schedules_and_the_first_byte() {
    let prog = parse(ATOMIC_SUM);
    let p = 3;
    let mut vals = vec![1.0f32; p * 8];
    vals[..8].fill(16_777_216.0);
    let mut inp = Inputs::new();
    inp.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, 8], &vals));
    let cfg = SimConfig::ranks(p);
    match pld_sim::verify::verify(&prog, "host_orch", &inp, &cfg, 16) {
        Err(pld_sim::verify::VerifyFailure::Differ { first, second, what }) => {
            assert_eq!(first, "det");
            assert!(second.starts_with("pct:"), "{second}");
            assert!(
                what.starts_with("output 'outputs' first differs at byte 0 (element 0): 16777216"),
                "{what}"
            );
        }
        Err(e) => panic!("expected differing outputs, got {e}"),
        Ok(_) => panic!("16 PCT schedules all summed in det's order"),
    }
    // With exactly representable sums every order agrees.
    let mut inp = Inputs::new();
    inp.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, 8], &vec![1.0; p * 8]));
    let (out, ran) =
        pld_sim::verify::verify(&prog, "host_orch", &inp, &cfg, 16).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ran, 17);
    assert_eq!(out.outputs["outputs"].to_f32()[..8], [3.0; 8]);
}

#[test]
fn a_barrier_generation_that_waits_for_the_previous_generations_credit_is_reported_under_every_schedule() {
    // The read-done barrier (generation 2) waits `Ge 1`: the ready barrier's credit passes it,
    // so a rank may store the next call's row while a peer still reads this one.
    let src = TWICE
        .replace("__EPI__", "pl.range(1, n)")
        .replace("[(me + k) % n, 0], 2, cmp=pld.WaitCmp.Ge", "[(me + k) % n, 0], 1, cmp=pld.WaitCmp.Ge");
    let prog = parse(&src);
    let wait = line_of(&src, "[(me + k) % n, 0], 1, cmp", 1);
    for p in [2, 3] {
        let inp = inputs(p, 1);
        let mut schedules = vec![Schedule::Deterministic, Schedule::Parallel];
        schedules.extend((1..=6).map(Schedule::Random));
        schedules.extend((1..=6).map(Schedule::Pct));
        for s in schedules {
            let cfg =
                SimConfig { schedule: s, sources: Some(sources("gen.py", &src)), ..SimConfig::ranks(p) };
            let r = match run(&prog, "host_orch", &inp, &cfg) {
                Err(SimError::Fault(r)) => r,
                other => panic!("P={p} {s:?}: expected a stale credit, got {:?}", other.map(|o| o.warnings)),
            };
            assert_eq!(r.kind, ReportKind::StaleCredit, "P={p} {s:?}: {r}");
            assert!(r.text.contains("earlier barrier generation"), "P={p} {s:?}: {r}");
            assert!(
                r.text.contains("(generation expected: 2)") && r.text.contains("(generation 1)"),
                "P={p} {s:?}: {r}"
            );
            assert!(r.text.contains(&format!("--> gen.py:{wait}:")), "P={p} {s:?}: line {wait}: {r}");
        }
    }
}

/// A kernel that copies its own window row out; nothing ever writes the window.
const READ_OWN: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 64


@pl.program
class ReadOwn:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_out(self, out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                 data: pld.DistributedTensor[[1, SIZE], pl.FP32]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        row = pl.load(data, [0, 0], [1, SIZE])
        out = pl.store(row, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]], data: pld.DistributedTensor[[1, SIZE], pl.FP32]):
        self.copy_out(out, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            self.chip_orch(outputs[r], data, device=r)
"#;

#[test]
fn an_unwritten_window_is_undefined_until_a_persistent_reset_zeroes_it() {
    let prog = parse(READ_OWN);
    let src = READ_OWN;
    let line = line_of(src, "row = pl.load(data", 0);
    let cfg = SimConfig { sources: Some(sources("read_own.py", src)), ..SimConfig::ranks(2) };
    let mut worker = pld_sim::Persistent::new(true);
    match worker.call(&prog, "host_orch", &Inputs::new(), &cfg) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::UninitRead, "{r}");
            assert!(r.text.contains(&format!("--> read_own.py:{line}:")), "{r}");
            assert!(
                r.text.contains("bytes [0, 256) of buffer 'data'") && r.text.contains("no rank wrote"),
                "{r}"
            );
        }
        other => panic!("expected an uninitialised read, got {:?}", other.map(|o| o.warnings)),
    }
    // `reset_persistent_windows`: the next call's windows are zero by contract.
    let out = worker.call(&prog, "host_orch", &Inputs::new(), &cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.outputs["outputs"].to_f32(), vec![0.0; 2 * 64]);
    // Allowed, the read is a warning and sees the garbage pattern.
    let cfg = SimConfig { allow_uninit_reads: true, ..SimConfig::ranks(2) };
    let out = run(&prog, "host_orch", &Inputs::new(), &cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.outputs["outputs"].to_f32().iter().all(|x| x.is_nan()));
    assert!(out.warnings.iter().any(|w| w.contains("buffer 'data'")), "{:?}", out.warnings);
}
