//! A kernel that returns from inside an `if` (`if my_rank == root: ...; return store(...)`,
//! then `return out`): NormalizeReturns turns it into an `if` yielding the returned value,
//! the simulator gives the same result as the program as written, and it compiles to PTO.

use pld_ir::DataType;
use pld_sim::Schedule;
use pld_testkit::e2e::{inputs, lower, parse, run_ok, stack, unstack};

const EARLY: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Early:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, x: pl.Tensor[[2, 16], pl.FP32], out: pl.Out[pl.Tensor[[1, 16], pl.FP32]],
             which: pl.Scalar[pl.INDEX]) -> pl.Tensor[[1, 16], pl.FP32]:
        first = pl.load(x, [0, 0], [1, 16])
        if which == 0:
            doubled = pl.add(first, first)
            return pl.store(doubled, [0, 0], out)
        second = pl.load(x, [1, 0], [1, 16])
        out = pl.store(second, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[2, 16], pl.FP32], out: pl.Out[pl.Tensor[[1, 16], pl.FP32]],
             which: pl.Scalar[pl.INDEX]) -> pl.Tensor[[1, 16], pl.FP32]:
        return self.pick(x, out, which)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, xs: pl.Tensor[[pl.dynamic("NR"), 2, 16], pl.FP32],
                  outs: pl.Out[pl.Tensor[[pl.dynamic("NR"), 1, 16], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(xs[r], outs[r], r, device=r)
"#;

#[test]
fn a_return_in_a_branch_becomes_a_yield_with_the_same_behaviour() {
    let written = parse(EARLY);
    let lowered = lower(&written).unwrap_or_else(|d| panic!("{d:?}"));
    let k = pld_ir::print_function(lowered.function("pick").expect("kernel"));
    // One return, at the end; the if yields in both branches.
    assert_eq!(k.matches("return ").count(), 1, "{k}");
    assert_eq!(k.matches("pl.yield_(").count(), 2, "{k}");
    assert!(k.trim_end().lines().last().is_some_and(|l| l.trim_start().starts_with("return ret0")), "{k}");
    let out = pld_codegen_pto::emit_program(&lowered, &pld_codegen_pto::CodegenOptions::default())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
    let pto =
        out.modules.iter().find(|(n, _)| n.starts_with("pick")).map(|(_, t)| t.clone()).expect("pick module");
    assert!(pto.contains("scf.if"), "{pto}");
    let per: Vec<Vec<f64>> = (0..3).map(|r| (0..32).map(|i| (r * 100 + i) as f64).collect()).collect();
    let ins = inputs(vec![("xs", stack(DataType::FP32, &per, &[2, 16]))]);
    for prog in [&written, &lowered] {
        let got =
            unstack(&run_ok(prog, "host_orch", 3, &ins, Schedule::Deterministic, "early").outputs["outs"]);
        // Rank 0 takes the early return (twice row 0); the others store row 1.
        assert_eq!(got[0], per[0][..16].iter().map(|v| v * 2.0).collect::<Vec<_>>());
        assert_eq!(got[1], per[1][16..]);
        assert_eq!(got[2], per[2][16..]);
    }
}
