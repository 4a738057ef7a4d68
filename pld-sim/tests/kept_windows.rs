//! Window mappings kept between the runs of a process (`arena::keep_freed_heap`): a later run's
//! window that takes an earlier run's mapping starts as a fresh one would — zero under
//! `zero_windows`, the garbage pattern (and an uninitialised read when read unwritten)
//! otherwise — never holding the earlier run's bytes. Its own test binary: the setting is
//! process-wide.

use pld_sim::{arena, run, HostTensor, Inputs, ReportKind, SimConfig, SimError};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {d:?}"),
    }
}

/// Elements per rank's window: just over `arena::HUGE_MIN` bytes of FP32, so each window is its
/// own mapping.
const N: usize = arena::HUGE_MIN / 4 + 1024;

/// A program whose kernel runs `body` (kernel indentation) on its rank's window `data`, then
/// copies the window's first 64 elements to the host output `outs[r]`.
fn program(body: &str) -> pld_ir::Program {
    parse(&format!(
        r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Kept:
    @pl.function(type=pl.FunctionType.InCore)
    def touch(self, data: pl.InOut[pld.DistributedTensor[[1, {N}], pl.FP32]], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
{body}
        t = pl.load(data, [0, 0], [1, 64])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, data: pl.InOut[pld.DistributedTensor[[1, {N}], pl.FP32]], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
        out = self.touch(data, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, outs: pl.Out[pl.Tensor[[2, 1, 64], pl.FP32]]):
        buf = pld.alloc_window_buffer({N} * 4, name="data")
        data = pld.window(buf, [1, {N}], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.orch(data, outs[r], device=r)
"#
    ))
}

fn outs(out: &pld_sim::SimOutcome) -> Vec<f64> {
    out.outputs.get("outs").map(HostTensor::to_f64).expect("outs")
}

#[test]
fn a_window_in_a_kept_mapping_starts_as_a_fresh_one() {
    arena::keep_freed_heap();
    let write =
        program("        fill = pl.full([1, 64], 7.0, dtype=pl.FP32)\n        pl.store(fill, [0, 0], data)");
    let read = program("        pass");
    let zero = SimConfig { zero_windows: true, ..SimConfig::ranks(2) };
    let first = run(&write, "host", &Inputs::new(), &zero).unwrap_or_else(|e| panic!("{e}"));
    assert!(outs(&first).iter().all(|&x| x == 7.0), "the writing run reads back what it wrote");

    // The next runs' windows have the same length: they take the mappings the last run left.
    let taken = arena::kept_taken();
    let second = run(&read, "host", &Inputs::new(), &zero).unwrap_or_else(|e| panic!("{e}"));
    assert!(outs(&second).iter().all(|&x| x == 0.0), "a zeroed window holds no old bytes");
    let mapped = arena::Arena::zeroed(arena::HUGE_MIN).is_mapped();
    if mapped {
        assert_eq!(arena::kept_taken() - taken, 2 * N * 4, "both ranks' windows were kept ones");
    }

    let _ = run(&write, "host", &Inputs::new(), &zero).unwrap_or_else(|e| panic!("{e}"));
    match run(&read, "host", &Inputs::new(), &SimConfig::ranks(2)) {
        Err(SimError::Fault(r)) => assert_eq!(r.kind, ReportKind::UninitRead, "{r}"),
        Err(e) => panic!("{e}"),
        Ok(out) => panic!("an unwritten kept window was read without a report: {:?}", outs(&out)),
    }
    let cfg = SimConfig { allow_uninit_reads: true, ..SimConfig::ranks(2) };
    let _ = run(&write, "host", &Inputs::new(), &zero).unwrap_or_else(|e| panic!("{e}"));
    let garbage = run(&read, "host", &Inputs::new(), &cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(outs(&garbage).iter().all(|x| x.is_nan()), "the garbage pattern, not 7: {:?}", outs(&garbage));
}
