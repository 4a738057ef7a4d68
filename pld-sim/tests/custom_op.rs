//! An op defined only in this test file runs on the simulator once it registers semantics
//! here (no edit to the simulator); an op without semantics is a runtime report naming it.

use pld_ir::{register_op, Affinity, DeduceCx, Diagnostic, OpDef, ParamDef, SignalRole, Type};
use pld_sim::sem::{Flow, OpCx};
use pld_sim::value::{Tile, Val};
use pld_sim::{register_semantics, run, HostTensor, Inputs, ReportKind, SimConfig, SimError};
use std::sync::Arc;

fn deduce_same_tile(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Ok(cx.ty(0).clone())
}

static TEST_SQUARE: OpDef = OpDef {
    name: "test.square",
    family: "test",
    summary: "square every lane of a tile (test-only op)",
    aliases: &["pl.test_square"],
    params: &[ParamDef::value("tile")],
    attrs: &[],
    affinity: Affinity::FromFirstTileArg,
    no_duplicate: false,
    signal_role: SignalRole::None,
    rank_role: pld_ir::RankRole::None,
    builtin_variant: None,
    internal: false,
    effects: None,
    deduce: deduce_same_tile,
    lowerings: &[],
};
register_op!(TEST_SQUARE);

static TEST_NOSEM: OpDef =
    OpDef { name: "test.no_semantics", aliases: &["pl.test_no_semantics"], ..TEST_SQUARE };
register_op!(TEST_NOSEM);

fn square(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, pld_sim::report::Fault> {
    let t = cx.tile(args, 0)?;
    let squares: Vec<f64> = t.lanes().iter().map(|x| x * x).collect();
    let out: Tile = t.with_lanes(&squares);
    Ok(Flow::Val(Val::Tile(Arc::new(out))))
}
register_semantics!("test.square", square);

const PROG: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Custom:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, inp: pl.Tensor[[1, 8], pl.FP32], out: pl.Out[pl.Tensor[[1, 8], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, 8])
        s = pl.__OP__(t)
        pl.store(s, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, 8], pl.FP32], out: pl.Out[pl.Tensor[[1, 8], pl.FP32]]):
        out = self.k(inp, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[2, 1, 8], pl.FP32], outputs: pl.Out[pl.Tensor[[2, 1, 8], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(inputs[r], outputs[r], device=r)
"#;

fn inputs() -> Inputs {
    let v: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let mut i = Inputs::new();
    i.insert("inputs".into(), HostTensor::from_f32(vec![2, 1, 8], &v));
    i
}

#[test]
fn test_only_op_runs_with_its_registered_semantics() {
    let _ = pld_ops::registry();
    assert!(pld_sim::sem::names().contains(&"test.square"));
    let prog =
        pld_frontend::parse_str(&PROG.replace("__OP__", "test_square")).unwrap_or_else(|d| panic!("{d:?}"));
    let out = run(&prog, "host", &inputs(), &SimConfig::ranks(2)).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = (0..16).map(|i| (i * i) as f32).collect();
    assert_eq!(out.outputs["outputs"].to_f32(), want);
}

#[test]
fn op_without_semantics_is_reported_by_name() {
    let _ = pld_ops::registry();
    let prog = pld_frontend::parse_str(&PROG.replace("__OP__", "test_no_semantics"))
        .unwrap_or_else(|d| panic!("{d:?}"));
    match run(&prog, "host", &inputs(), &SimConfig::ranks(2)) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::Runtime, "{r}");
            assert!(r.text.contains("op 'test.no_semantics' has no simulator semantics"), "{r}");
        }
        other => panic!("expected a report, got {other:?}"),
    }
}
