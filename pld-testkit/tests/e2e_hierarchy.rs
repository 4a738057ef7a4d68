//! Hierarchy scopes: `with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator)` regions of a
//! host function become chip orchestrations (OutlineHierarchyScopes), their CORE_GROUP
//! regions kernels; the host dispatches them without `device=`, which places them
//! round-robin over the chips in submit order. Against a golden on 1, 2 and 3 ranks.

use pld_ir::DataType;
use pld_sim::{HostTensor, Schedule, SimConfig, SimError};
use pld_testkit::e2e::{inputs, lower, parse, run_ok};

const INLINE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Inline:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                  sum_buf: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
                  diff_buf: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                s = pl.add(a, b)
                out_sum = pl.assemble(sum_buf, s, [0, 0])
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.assemble(diff_buf, pl.sub(a, b), [0, 0])
        return out_sum
"#;

fn data() -> (Vec<f64>, Vec<f64>) {
    let a: Vec<f64> = (0..16 * 32).map(|i| i as f64 * 0.25).collect();
    let b: Vec<f64> = (0..16 * 32).map(|i| (i % 7) as f64 - 3.0).collect();
    (a, b)
}

#[test]
fn chip_regions_become_chip_orchestrations_dispatched_round_robin() {
    let prog = lower(&parse(INLINE)).unwrap_or_else(|d| panic!("{d:?}"));
    let host = pld_ir::print_function(prog.function("host_orch").unwrap());
    assert!(host.contains("self.host_orch_chip_0(") && host.contains("self.host_orch_chip_0_1("), "{host}");
    assert!(!host.contains("pl.at("), "{host}");
    let chip = prog.function("host_orch_chip_0").unwrap();
    assert_eq!(chip.kind, pld_ir::FunctionKind::ChipOrch);
    let (a, b) = data();
    let ins = inputs(vec![
        ("a", HostTensor::from_f64(DataType::FP32, vec![16, 32], &a)),
        ("b", HostTensor::from_f64(DataType::FP32, vec![16, 32], &b)),
    ]);
    for p in [1, 2, 3] {
        let out = run_ok(&prog, "host_orch", p, &ins, Schedule::Deterministic, "inline");
        let want_sum: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let want_diff: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        assert_eq!(out.outputs["sum_buf"].to_f64(), want_sum, "P={p}");
        assert_eq!(out.outputs["diff_buf"].to_f64(), want_diff, "P={p}");
        // First dispatch on chip 0, the second on chip 1 (mod P).
        let busy: Vec<bool> = (0..p).map(|r| out.stats.local_bytes.keys().any(|(rr, _)| *rr == r)).collect();
        let want: Vec<bool> = (0..p).map(|r| r == 0 || r == 1 % p).collect();
        assert_eq!(busy, want, "P={p}: {:?}", out.stats.local_bytes);
    }
}

#[test]
fn a_dispatch_passing_windows_must_name_its_device() {
    let text = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, w: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]]):
        return w

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[1, 8], pl.FP32]):
        buf = pld.alloc_window_buffer(32)
        w = pld.window(buf, [1, 8], dtype=pl.FP32)
        self.chip(w)
"#;
    // The pipeline refuses it (MaterializeCommDomainScopes finds no device for the window)...
    let e = lower(&parse(text)).unwrap_err();
    assert!(
        e.iter().any(|d| d.message.contains("is not consumed by any chip orchestration dispatch")),
        "{e:?}"
    );
    // ...and the simulator, running it as written, does not guess a rank either.
    let prog = parse(text);
    let ins = inputs(vec![("x", HostTensor::from_f64(DataType::FP32, vec![1, 8], &[0.0; 8]))]);
    match pld_sim::run(&prog, "host_orch", &ins, &SimConfig::ranks(2)) {
        Err(SimError::Fault(r)) => {
            assert!(r.to_string().contains("so it needs device=r to pick a rank"), "{r}")
        }
        other => panic!("expected a fault, got {:?}", other.map(|o| o.stats.steps)),
    }
}

#[test]
fn a_comm_less_dispatch_may_sit_in_a_return() {
    let text = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 8])
        return pl.store(pl.add(t, t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        return self.twice(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        return self.chip(x, y)
"#;
    let prog = lower(&parse(text)).unwrap_or_else(|d| panic!("{d:?}"));
    let x: Vec<f64> = (0..32).map(|i| i as f64).collect();
    let ins = inputs(vec![("x", HostTensor::from_f64(DataType::FP32, vec![4, 8], &x))]);
    let out = run_ok(&prog, "host_orch", 2, &ins, Schedule::Deterministic, "return dispatch");
    assert_eq!(out.outputs["y"].to_f64(), x.iter().map(|v| v * 2.0).collect::<Vec<_>>());
}
