//! The default budget measures liveness, not size: a correct run of many times the idle budget
//! in steps completes (it keeps writing data and changing signal cells), while loops that
//! change nothing — scalar work, re-storing the same bytes, setting a cell to the value it
//! holds — stop after the idle budget with a budget report naming the loop.

use pld_sim::{run, Inputs, ReportKind, Schedule, SimConfig, SimError};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {d:?}"),
    }
}

/// A one-kernel program whose kernel runs `BODY` (indented for the kernel) on a window.
fn kernel_loop(body: &str) -> pld_ir::Program {
    let text = format!(
        r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")

@pl.program
class Spin:
    @pl.function(type=pl.FunctionType.InCore)
    def spin(self, data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]], signal: pl.InOut[pld.DistributedTensor[[NR], pl.INT32]]):
        t = pl.load(data, [0, 0], [1, 64])
{body}
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]], signal: pl.InOut[pld.DistributedTensor[[NR], pl.INT32]]):
        data = self.spin(data, signal)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        data_buf = pld.alloc_window_buffer(64 * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        data = pld.window(data_buf, [1, 64], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.orch(data, signal, device=r)
"#
    );
    parse(&text)
}

#[test]
fn loops_that_change_nothing_stop_on_the_idle_budget() {
    let forever = "        for i in pl.range(1000000000000):\n";
    let bodies = [
        ("scalar work", format!("{forever}            x = i * 2\n")),
        ("re-storing the same bytes", format!("{forever}            pl.store(t, [0, 0], data)\n")),
        (
            "setting a cell to the value it holds",
            format!("{forever}            pld.system.notify(signal, 0, [0], 1, op=pld.NotifyOp.Set)\n"),
        ),
    ];
    for (what, body) in bodies {
        let prog = kernel_loop(&body);
        let cfg = SimConfig { zero_windows: true, max_idle_steps: 20_000, ..SimConfig::ranks(2) };
        match run(&prog, "host", &Inputs::new(), &cfg) {
            Err(SimError::Fault(r)) => {
                assert_eq!(r.kind, ReportKind::Budget, "{what}: {r:?}");
                let text = format!("{r:?}");
                assert!(text.contains("without progress") && text.contains("spin"), "{what}: {text}");
            }
            Err(e) => panic!("{what}: {e}"),
            Ok(out) => panic!("{what}: the loop ended after {} steps", out.stats.steps),
        }
    }
}

#[test]
fn a_correct_run_many_times_the_idle_budget_long_completes() {
    // Every iteration adds a credit to the rank's own counter cell: the cell changes each
    // time. The rank then waits for its credits and clears them, so none is left over.
    let (iters, idle) = (2000u64, 100u64);
    let body = format!(
        "        me = pld.rank(pld.get_comm_ctx(signal))\n        for i in pl.range({iters}):\n            pld.system.notify(signal, me, [0], 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0], {iters}, cmp=pld.WaitCmp.Ge)\n        pld.system.notify(signal, me, [0], -{iters}, op=pld.NotifyOp.AtomicAdd)\n"
    );
    let prog = kernel_loop(&body);
    for schedule in [Schedule::Deterministic, Schedule::Parallel] {
        let cfg = SimConfig { schedule, zero_windows: true, max_idle_steps: idle, ..SimConfig::ranks(2) };
        let out = run(&prog, "host", &Inputs::new(), &cfg).unwrap_or_else(|e| panic!("{schedule:?}: {e}"));
        assert_eq!(out.stats.notifies.iter().sum::<u64>(), 2 * (iters + 1), "{schedule:?}");
        // A total budget of the same size would have stopped it.
        assert!(out.stats.steps > 10 * idle, "{schedule:?}: {} steps", out.stats.steps);
    }
}

#[test]
fn a_parallel_run_past_the_step_budget_in_all_is_a_budget_report() {
    // Each rank takes ~60,000 steps: under the budget on its own, over it together. Two fixed
    // workers (no first window run as det) hold each rank's steps in a handle of its own.
    let prog = kernel_loop("        for i in pl.range(60000):\n            x = i * 2\n");
    for workers in [None, Some(2)] {
        let cfg = SimConfig {
            schedule: Schedule::Parallel,
            parallel_workers: workers,
            zero_windows: true,
            max_steps: 100_000,
            ..SimConfig::ranks(2)
        };
        match run(&prog, "host", &Inputs::new(), &cfg) {
            Err(SimError::Fault(r)) => {
                assert_eq!(r.kind, ReportKind::Budget, "{workers:?}: {r:?}");
                assert!(format!("{r:?}").contains("more than 100000 steps"), "{workers:?}: {r:?}");
            }
            Err(e) => panic!("{workers:?}: {e}"),
            Ok(out) => panic!("{workers:?}: the run ended after {} steps", out.stats.steps),
        }
    }
}
