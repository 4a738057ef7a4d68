//! Scenarios run after the pass pipeline (the level the CLI runs) and, for comparison, as
//! written (the simulator runs unlowered collectives as builtin protocols): InCore composite
//! collectives (§2) and host collectives lowered to builtins (§3), against the references.

use pld_ir::{DataType, Program};
use pld_runtime_abi::ReduceOp;
use pld_sim::Schedule;
use pld_testkit::e2e::{assert_ranks, inputs, lower, parse, run_ok, stack, tol, unstack};
use pld_testkit::reference as gold;

fn lowered(text: &str) -> Program {
    let prog = parse(text);
    match lower(&prog) {
        Ok(p) => p,
        Err(d) => {
            let msgs: Vec<String> = d.iter().map(|x| x.message.clone()).collect();
            panic!("pipeline failed:\n{}", msgs.join("\n"))
        }
    }
}

const INCORE_ALLREDUCE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = __SIZE__
STAGE = __STAGE__
NR = pl.dynamic("NR")

@pl.program
class IntrinsicAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def allreduce_step(self, inp: pl.Tensor[[1, SIZE], pl.__DT__], out: pl.Out[pl.Tensor[[1, SIZE], pl.__DT__]],
                       data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.__DT__]],
                       signal: pl.InOut[pld.DistributedTensor[__SIGSHAPE__, pl.INT32]]):
        for col in pl.range(0, SIZE, STAGE):
            valid = min(STAGE, SIZE - col)
            t = pl.load(inp, [0, col], [1, STAGE], [1, valid])
            pl.store(t, [0, col], data)
        res = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.__OP__, mode="__MODE__")
        for col in pl.range(0, SIZE, STAGE):
            valid = min(STAGE, SIZE - col)
            t = pl.load(res, [0, col], [1, STAGE], [1, valid])
            pl.store(t, [0, col], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, SIZE], pl.__DT__], out: pl.Out[pl.Tensor[[1, SIZE], pl.__DT__]],
             data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.__DT__]],
             signal: pl.InOut[pld.DistributedTensor[__SIGSHAPE__, pl.INT32]]):
        out = self.allreduce_step(inp, out, data, signal)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.__DT__], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.__DT__]]):
        data_buf = pld.alloc_window_buffer(SIZE * __BYTES__, name="data")
        sig_buf = pld.alloc_window_buffer(__SIGCELLS__ * 4, name="signal")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, SIZE], dtype=pl.__DT__)
            signal = pld.window(sig_buf, __SIGSHAPE__, dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], data, signal, device=r)
"#;

fn incore_allreduce_text(size: usize, dt: DataType, op: ReduceOp, ring: bool) -> String {
    let stage = if dt == DataType::FP16 { size.div_ceil(16) * 16 } else { size }.min(8192);
    let (sig_shape, sig_cells, mode) = if ring {
        ("[2 * (NR - 1), NR]", "2 * (pld.world_size() - 1) * pld.world_size()", "ring")
    } else {
        ("[NR, 1]", "pld.world_size()", "mesh")
    };
    INCORE_ALLREDUCE
        .replace("__SIZE__", &size.to_string())
        .replace("__STAGE__", &stage.to_string())
        .replace("__DT__", dt.dsl_name())
        .replace("__BYTES__", &dt.bytes().to_string())
        .replace("__OP__", op.dsl_name())
        .replace("__SIGSHAPE__", sig_shape)
        .replace("__SIGCELLS__", sig_cells)
        .replace("__MODE__", mode)
}

fn check_incore_allreduce(
    prog: &Program,
    p: usize,
    size: usize,
    dt: DataType,
    op: ReduceOp,
    schedule: Schedule,
    what: &str,
) -> pld_sim::SimOutcome {
    let per: Vec<Vec<f64>> = (0..p)
        .map(|r| {
            if dt == DataType::FP16 || op == ReduceOp::Prod {
                gold::fp16ramp(r, size)
            } else {
                gold::ramp(r, size)
            }
        })
        .collect();
    let per = per.iter().map(|v| gold::round(dt, v)).collect::<Vec<_>>();
    let inp = inputs(vec![("inputs", stack(dt, &per, &[1, size]))]);
    let what = format!("{what} P={p} size={size} {dt} {op:?} {schedule:?}");
    let out = run_ok(prog, "host", p, &inp, schedule, &what);
    let got = unstack(&out.outputs["outputs"]);
    let (rtol, atol) = tol(dt);
    // Lowered InCore reductions may combine in a per-rank order: compare with tolerance.
    let want = gold::allreduce(&per, op, dt);
    let (rtol, atol) = if dt == DataType::FP32 { (1e-5, 1e-5) } else { (rtol, atol) };
    assert_ranks(&got, &want, rtol, atol, &what);
    out
}

#[test]
fn incore_mesh_allreduce_direct_and_lowered() {
    for size in [1, 17, 4097] {
        let text = incore_allreduce_text(size, DataType::FP32, ReduceOp::Sum, false);
        let direct = parse(&text);
        let low = lowered(&text);
        for p in [2, 3, 4, 8] {
            check_incore_allreduce(
                &direct,
                p,
                size,
                DataType::FP32,
                ReduceOp::Sum,
                Schedule::Deterministic,
                "direct mesh",
            );
            let out = check_incore_allreduce(
                &low,
                p,
                size,
                DataType::FP32,
                ReduceOp::Sum,
                Schedule::Deterministic,
                "lowered mesh",
            );
            for r in 0..p {
                assert_eq!(
                    out.stats.remote_total(r),
                    ((p - 1) * size * 4) as u64,
                    "lowered mesh traffic P={p} size={size} rank {r}"
                );
            }
        }
    }
}

fn assert_lowered(prog: &Program, gone: &str) {
    let text = pld_ir::print_program(prog);
    assert!(
        text.contains("pld.system.wait") && text.contains("pld.system.notify"),
        "not lowered to notify/wait:\n{text}"
    );
    assert!(!text.contains(&format!("{gone}(")), "{gone} survived the pipeline:\n{text}");
}

#[test]
fn incore_allreduce_ring_fp16_and_reduce_ops_lowered() {
    for size in [1, 17, 4097] {
        let text = incore_allreduce_text(size, DataType::FP32, ReduceOp::Sum, true);
        let low = lowered(&text);
        assert_lowered(&low, "pld.tensor.allreduce");
        for p in [2, 3, 4, 8] {
            let out = check_incore_allreduce(
                &low,
                p,
                size,
                DataType::FP32,
                ReduceOp::Sum,
                Schedule::Deterministic,
                "lowered ring",
            );
            // Ring: 2(P-1)/P·S per rank, up to segment and chunk rounding.
            for r in 0..p {
                let bytes = out.stats.remote_total(r) as f64;
                let ideal = 2.0 * (p - 1) as f64 / p as f64 * (size * 4) as f64;
                assert!(
                    (bytes - ideal).abs() <= (2 * (p - 1) * 4) as f64 + 1.0,
                    "ring traffic P={p} size={size} rank {r}: {bytes} vs {ideal}"
                );
            }
        }
    }
    for size in [1, 17, 8193] {
        for ring in [false, true] {
            let low = lowered(&incore_allreduce_text(size, DataType::FP16, ReduceOp::Sum, ring));
            // P=1 is the degenerate single-rank allreduce (2.1 runs it for FP16).
            for p in [1, 2, 4] {
                check_incore_allreduce(
                    &low,
                    p,
                    size,
                    DataType::FP16,
                    ReduceOp::Sum,
                    Schedule::Deterministic,
                    "lowered fp16",
                );
            }
        }
    }
    for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
        for dt in [DataType::FP32, DataType::FP16] {
            for ring in [false, true] {
                let low = lowered(&incore_allreduce_text(17, dt, op, ring));
                check_incore_allreduce(&low, 2, 17, dt, op, Schedule::Deterministic, "lowered ops");
            }
        }
    }
}

#[test]
fn incore_allreduce_random_schedules_lowered() {
    for ring in [false, true] {
        let low = lowered(&incore_allreduce_text(300, DataType::FP32, ReduceOp::Sum, ring));
        for seed in 0..100 {
            check_incore_allreduce(
                &low,
                4,
                300,
                DataType::FP32,
                ReduceOp::Sum,
                Schedule::Random(seed),
                "random",
            );
        }
    }
}

/// Removes every `pld.system.wait` that comes after the first `pld.tile.remote_load` (in
/// program order) from the kernels: the mesh allreduce keeps its ready barrier and loses the
/// per-chunk read-done barrier.
fn drop_waits_after_remote_load(prog: &mut Program) -> usize {
    fn calls(s: &pld_ir::Stmt, name: &str) -> bool {
        let mut found = false;
        s.for_each_expr(&mut |e| {
            e.walk(&mut |x| found |= x.as_call().is_some_and(|c| c.callee.name() == name))
        });
        found
    }
    fn walk(b: &mut pld_ir::Block, seen: &mut bool, removed: &mut usize) {
        let mut out = Vec::new();
        for mut s in std::mem::take(&mut b.stmts) {
            if *seen && calls(&s, "pld.system.wait") && s.blocks().is_empty() {
                *removed += 1;
                continue;
            }
            if calls(&s, "pld.tile.remote_load") {
                *seen = true;
            }
            for inner in s.blocks_mut() {
                walk(inner, seen, removed);
            }
            out.push(s);
        }
        b.stmts = out;
    }
    let mut removed = 0;
    for f in prog.functions.iter_mut().filter(|f| f.kind.is_incore()) {
        walk(&mut f.body, &mut false, &mut removed);
    }
    removed
}

#[test]
fn mesh_allreduce_without_read_done_barrier_is_a_race() {
    let mut low = lowered(&incore_allreduce_text(300, DataType::FP32, ReduceOp::Sum, false));
    assert!(drop_waits_after_remote_load(&mut low) > 0);
    let per: Vec<Vec<f64>> = (0..2).map(|r| gold::ramp(r, 300)).collect();
    let inp = inputs(vec![("inputs", stack(DataType::FP32, &per, &[1, 300]))]);
    let cfg = pld_sim::SimConfig::ranks(2);
    match pld_sim::run(&low, "host", &inp, &cfg) {
        Err(pld_sim::SimError::Fault(r)) => {
            assert_eq!(r.kind, pld_sim::ReportKind::Race, "{r}");
            assert!(r.text.contains("buffer 'data'") && r.text.contains("pld.tile.remote_load"), "{r}");
        }
        other => panic!("expected a race report, got {other:?}"),
    }
}

#[test]
fn incore_allreduce_in_a_loop_reuses_its_signal() {
    // Three allreduces in a kernel loop on one signal: each call is a closed credit cycle.
    for ring in [false, true] {
        let text = incore_allreduce_text(100, DataType::FP32, ReduceOp::Sum, ring);
        let mode = if ring { "ring" } else { "mesh" };
        let text = text.replace(
            &format!("        res = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"{mode}\")\n"),
            &format!("        for it in pl.range(3):\n            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"{mode}\")\n        res = data\n"),
        );
        assert!(text.contains("for it in pl.range(3)"), "{text}");
        for (prog, level) in [(parse(&text), "direct"), (lowered(&text), "lowered")] {
            for p in [2, 3, 4] {
                let per: Vec<Vec<f64>> = (0..p).map(|r| gold::ramp(r, 100)).collect();
                let inp = inputs(vec![("inputs", stack(DataType::FP32, &per, &[1, 100]))]);
                let out = run_ok(
                    &prog,
                    "host",
                    p,
                    &inp,
                    Schedule::Random(p as u64),
                    &format!("loop {mode} {level} P={p}"),
                );
                // Three rounds: sum, then P·sum, then P²·sum.
                let once = gold::reduce(&per, ReduceOp::Sum, DataType::FP32);
                let want: Vec<f64> = once.iter().map(|x| x * (p * p) as f64).collect();
                assert_ranks(
                    &unstack(&out.outputs["outputs"]),
                    &vec![want; p],
                    1e-6,
                    1e-6,
                    &format!("loop {mode} {level} P={p}"),
                );
            }
        }
    }
}

#[test]
fn incore_allreduce_large_lengths() {
    for ring in [false, true] {
        let low = lowered(&incore_allreduce_text(65537, DataType::FP32, ReduceOp::Sum, ring));
        check_incore_allreduce(
            &low,
            4,
            65537,
            DataType::FP32,
            ReduceOp::Sum,
            Schedule::Deterministic,
            "large",
        );
    }
    let low = lowered(&incore_allreduce_text(32769, DataType::FP16, ReduceOp::Sum, true));
    check_incore_allreduce(
        &low,
        4,
        32769,
        DataType::FP16,
        ReduceOp::Sum,
        Schedule::Deterministic,
        "large fp16 ring",
    );
}

#[test]
fn one_rank_skipping_the_collective_is_a_deadlock_naming_the_cells() {
    // Rank 0 (my_rank from the context) skips the allreduce; the others wait for its credits.
    let text = incore_allreduce_text(64, DataType::FP32, ReduceOp::Sum, false).replace(
        "        res = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"mesh\")\n",
        "        ctx = pld.get_comm_ctx(data)\n        me = pld.rank(ctx)\n        res = data\n        if me != 0:\n            res2 = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"mesh\")\n",
    );
    assert!(text.contains("if me != 0:"), "{text}");
    // The pipeline refuses it at compile time (E0106, the rank-uniformity check) ...
    let refused = lower(&parse(&text)).err().map(|d| d.iter().map(|x| x.code()).collect::<Vec<_>>());
    assert_eq!(refused, Some(vec![Some("E0106")]));
    // ... and every pass after that check lowers it, for the simulator's own report.
    assert_eq!(pld_passes::pass_names()[0], "CheckRankUniformity");
    let mut past_check = parse(&text);
    let opts = pld_passes::PipelineOptions::default();
    for pass in &pld_passes::pass_names()[1..] {
        pld_passes::run_pass(&mut past_check, pass, &opts).unwrap_or_else(|d| panic!("{pass}: {d:?}"));
    }
    for (prog, level) in [(parse(&text), "direct"), (past_check, "lowered")] {
        let per: Vec<Vec<f64>> = (0..3).map(|r| gold::ramp(r, 64)).collect();
        let inp = inputs(vec![("inputs", stack(DataType::FP32, &per, &[1, 64]))]);
        match pld_sim::run(&prog, "host", &inp, &pld_sim::SimConfig::ranks(3)) {
            Err(pld_sim::SimError::Fault(r)) => {
                let pld_sim::ReportKind::Deadlock(parked) = &r.kind else { panic!("{level}: {r}") };
                let mut cells: Vec<(usize, String)> =
                    parked.iter().map(|p| (p.rank, p.cell.clone())).collect();
                cells.sort();
                assert_eq!(
                    cells,
                    vec![(1, "signal[0] on rank 1".to_string()), (2, "signal[0] on rank 2".to_string())],
                    "{level}: {r}"
                );
                assert!(r.text.contains("ranks that already finished all their work: [0]"), "{level}: {r}");
            }
            other => panic!("{level}: expected a deadlock, got {other:?}"),
        }
    }
}

#[test]
fn fence_checking_accepts_pipeline_output_and_flags_unfenced_notifies() {
    let text = incore_allreduce_text(300, DataType::FP32, ReduceOp::Sum, false);
    let per: Vec<Vec<f64>> = (0..3).map(|r| gold::ramp(r, 300)).collect();
    let inp = inputs(vec![("inputs", stack(DataType::FP32, &per, &[1, 300]))]);
    let cfg = pld_sim::SimConfig { check_fences: true, ..pld_sim::SimConfig::ranks(3) };
    // The pipeline's InsertCommFence makes every published write visible before its notify.
    for ring in [false, true] {
        let low = lowered(&incore_allreduce_text(300, DataType::FP32, ReduceOp::Sum, ring));
        pld_sim::run(&low, "host", &inp, &cfg).unwrap_or_else(|e| panic!("ring={ring}: {e}"));
    }
    // A hand-written kernel that stores into its window and notifies with no fence is flagged.
    let hand = text.replace(
        "        res = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"mesh\")\n",
        "        ctx = pld.get_comm_ctx(data)\n        me = pld.rank(ctx)\n        n = pld.nranks(ctx)\n        for q in pl.range(n):\n            if q != me:\n                pld.system.notify(signal, q, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        for q in pl.range(n):\n            if q != me:\n                pld.system.wait(signal, [q, 0], 1, cmp=pld.WaitCmp.Ge)\n        res = data\n",
    );
    match pld_sim::run(&parse(&hand), "host", &inp, &cfg) {
        Err(pld_sim::SimError::Fault(r)) => {
            assert_eq!(r.kind, pld_sim::ReportKind::UnfencedNotify, "{r}");
            assert!(r.text.contains("no GM fence") && r.text.contains("buffer 'data' (tile.store)"), "{r}");
        }
        other => panic!("expected an unfenced-notify report, got {other:?}"),
    }
    // The same kernel after the pipeline has its fence.
    let low = lowered(&hand);
    pld_sim::run(&low, "host", &inp, &cfg)
        .map(|_| ())
        .unwrap_or_else(|e| panic!("lowered hand-written: {e}"));
}

const MIXED: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64
W = 16

@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], a: pl.Tensor[[W, W], pl.FP32], b: pl.Tensor[[W, W], pl.FP32],
             c: pl.Out[pl.Tensor[[W, W], pl.FP32]], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             dst: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]], peer: pl.Scalar[pl.INDEX]):
        for lane in pl.split_aiv(2):
            t = pl.load(inp, [0, 0], [1, SIZE])
            pld.tile.remote_store(t, dst, peer, [0, 0])
__NOTIFY_IN__
__NOTIFY_OUT__
        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)
        x = pl.load(dst, [0, 0], [1, SIZE])
        pl.store(x, [0, 0], out)
        ta = pl.tile.create([W, W], dtype=pl.FP32, target_memory=pl.MemorySpace.Mat)
        tb = pl.tile.create([W, W], dtype=pl.FP32, target_memory=pl.MemorySpace.Mat)
        la = pl.move(ta, target_memory=pl.MemorySpace.Left)
        rb = pl.move(tb, target_memory=pl.MemorySpace.Right)
        tc = pl.matmul(la, rb)
        pl.store(tc, [0, 0], c)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, SIZE], pl.FP32], a: pl.Tensor[[W, W], pl.FP32], b: pl.Tensor[[W, W], pl.FP32],
             c: pl.Out[pl.Tensor[[W, W], pl.FP32]], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             dst: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]], peer: pl.Scalar[pl.INDEX]):
        out = self.step(inp, a, b, c, out, dst, signal, peer)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[2, 1, SIZE], pl.FP32], a: pl.Tensor[[2, W, W], pl.FP32], b: pl.Tensor[[W, W], pl.FP32],
             c: pl.Out[pl.Tensor[[2, W, W], pl.FP32]], outputs: pl.Out[pl.Tensor[[2, 1, SIZE], pl.FP32]]):
        dst_buf = pld.alloc_window_buffer(SIZE * 4, name="dst")
        sig_buf = pld.alloc_window_buffer(4, name="signal")
        for r in pl.range(2):
            dst = pld.window(dst_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(sig_buf, [1, 1], dtype=pl.INT32)
            self.chip(inputs[r], a[r], b, c[r], outputs[r], dst, signal, 1 - r, device=r)
"#;

const NOTIFY: &str = "pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)";

#[test]
fn mixed_kernel_lanes_run_together_and_duplicate_notifies_are_reported() {
    let per: Vec<Vec<f64>> = (0..2).map(|r| gold::ramp(r, 64)).collect();
    let a: Vec<Vec<f64>> = (0..2).map(|r| (0..256).map(|i| ((i + r) % 5) as f64).collect()).collect();
    let b: Vec<f64> = (0..256).map(|i| (i % 3) as f64).collect();
    let inp = inputs(vec![
        ("inputs", stack(DataType::FP32, &per, &[1, 64])),
        ("a", stack(DataType::FP32, &a, &[16, 16])),
        ("b", pld_sim::HostTensor::from_f64(DataType::FP32, vec![16, 16], &b)),
    ]);
    // Notify pinned to the vector lane: the AIC lane waits (gating the matmul) while the AIV
    // lane of the same task publishes; the lanes must run together, not one after the other.
    let good = lowered(
        &MIXED.replace("__NOTIFY_IN__", &format!("            {NOTIFY}")).replace("__NOTIFY_OUT__\n", ""),
    );
    let text = pld_ir::print_program(&good);
    assert!(text.contains("def step_aic") && text.contains("def step_aiv"), "{text}");
    for sched in [Schedule::Deterministic, Schedule::Random(1), Schedule::Random(2)] {
        let out = run_ok(&good, "host", 2, &inp, sched, "mixed kernel");
        assert_ranks(&unstack(&out.outputs["outputs"]), &gold::ring_pull(&per), 0.0, 0.0, "mixed kernel");
        // The cube lane multiplies two created (zero) Mat tiles.
        assert!(out.outputs["c"].to_f64().iter().all(|&x| x == 0.0));
    }
    // Notify outside every split_aiv region: duplicated onto both lanes.
    let bad = lowered(
        &MIXED.replace("__NOTIFY_IN__\n", "").replace("__NOTIFY_OUT__", &format!("        {NOTIFY}")),
    );
    match pld_sim::run(&bad, "host", &inp, &pld_sim::SimConfig::ranks(2)) {
        Err(pld_sim::SimError::Fault(r)) => {
            assert_eq!(r.kind, pld_sim::ReportKind::DuplicateNotify, "{r}");
            assert!(
                r.text.contains("runs on two lanes ('step_aic' and 'step_aiv')")
                    || r.text.contains("runs on two lanes ('step_aiv' and 'step_aic')"),
                "{r}"
            );
        }
        other => panic!("expected a duplicate-notify report, got {other:?}"),
    }
}

#[test]
fn dual_aiv_dispatch_runs_both_sub_lanes_and_flags_their_double_notify() {
    let per: Vec<Vec<f64>> = (0..2).map(|r| gold::ramp(r, 64)).collect();
    let a: Vec<Vec<f64>> = (0..2).map(|_| vec![0.0; 256]).collect();
    let inp = inputs(vec![
        ("inputs", stack(DataType::FP32, &per, &[1, 64])),
        ("a", stack(DataType::FP32, &a, &[16, 16])),
        ("b", pld_sim::HostTensor::from_f64(DataType::FP32, vec![16, 16], &[0.0; 256])),
    ]);
    let good = lowered(
        &MIXED.replace("__NOTIFY_IN__", &format!("            {NOTIFY}")).replace("__NOTIFY_OUT__\n", ""),
    );
    let text = pld_ir::print_program(&good);
    assert!(text.contains("dual_aiv_dispatch"), "{text}");
    // By default the AIV kernel runs once and the program is fine.
    run_ok(&good, "host", 2, &inp, Schedule::Deterministic, "single sub-lane");
    // On both sub-lanes the unsharded region notifies twice: reported.
    let cfg = pld_sim::SimConfig { dual_aiv: true, ..pld_sim::SimConfig::ranks(2) };
    match pld_sim::run(&good, "host", &inp, &cfg) {
        Err(pld_sim::SimError::Fault(r)) => {
            assert_eq!(r.kind, pld_sim::ReportKind::DuplicateNotify, "{r}");
            assert!(r.text.contains("step_aiv#sub0") && r.text.contains("step_aiv#sub1"), "{r}");
        }
        other => panic!("expected a duplicate-notify report, got {other:?}"),
    }
}
