//! A collective defined only in this file — `test.tensor.neighbor_sum(target, signal)`: every
//! rank's window row becomes its own row plus its left neighbour's — goes through the pass
//! pipeline, PTO codegen and the simulator with no edit to any of them.
//!
//! The file holds the op record (its deducer) and its `Composite` lowering, written with the
//! same building blocks as pld's own InCore collectives (`pld_ops::lowering::comm`: the seed's
//! self-clearing credit barrier). `LowerCompositeOps` expands it because the lowering is
//! registered, `InsertCommFence` fences the remote load it produces because the ops it lowers
//! to say what they touch, codegen emits those ops, and the simulator runs them with the fence,
//! race and credit-leak checks on — so the protocol it builds is checked, not trusted.

use pld_ir::{
    register_lowering, register_op, Affinity, Builder, Call, DeduceCx, Diagnostic, Effect, Expr,
    LoweringKind, OpDef, ParamDef, SignalRole, Span, Type, ValueId,
};
use pld_ops::lowering::comm::{bind_result, Cells, Comm};
use pld_sim::{Schedule, SimConfig};
use pld_testkit::e2e::{inputs, lower, parse, stack, unstack};

const OP: &str = "test.tensor.neighbor_sum";

static NEIGHBOR_SUM: OpDef = OpDef {
    name: OP,
    family: "test",
    summary: "add the left neighbour's window row into every rank's own (test-only collective)",
    aliases: &["pld.test_neighbor_sum"],
    params: &[ParamDef::mem("target", Effect::ReadWrite), ParamDef::mem("signal", Effect::ReadWrite)],
    attrs: &[],
    affinity: Affinity::Shared,
    no_duplicate: false,
    signal_role: SignalRole::None,
    rank_role: pld_ir::RankRole::Collective,
    builtin_variant: None,
    internal: false,
    effects: None,
    deduce: deduce_neighbor_sum,
    lowerings: &[],
};
register_op!(NEIGHBOR_SUM);

/// The same collective without its read-done barrier: a rank may store its new row while its
/// right neighbour still pulls the old one. The simulator must report the race.
static NEIGHBOR_SUM_RACY: OpDef = OpDef {
    name: "test.tensor.neighbor_sum_racy",
    aliases: &["pld.test_neighbor_sum_racy"],
    summary: "neighbor_sum without its read-done barrier (test-only protocol bug)",
    ..NEIGHBOR_SUM
};
register_op!(NEIGHBOR_SUM_RACY);

fn deduce_neighbor_sum(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match (cx.ty(0), cx.ty(1)) {
        (Type::DistTensor(t), Type::DistTensor(_)) if t.tensor.shape.len() == 2 => Ok(cx.ty(0).clone()),
        (a, b) => Err(cx.error(format!(
            "{OP} takes a 2-D window and a signal window, got {} and {}",
            a.kind_name(),
            b.kind_name()
        ))),
    }
}

fn lower_neighbor_sum(
    b: &mut Builder<'_>,
    call: &Call,
    results: &[ValueId],
    span: Span,
) -> Result<(), Diagnostic> {
    expand(b, call, results, span, true)
}

fn lower_neighbor_sum_racy(
    b: &mut Builder<'_>,
    call: &Call,
    results: &[ValueId],
    span: Span,
) -> Result<(), Diagnostic> {
    expand(b, call, results, span, false)
}

/// Ready barrier; pull the left neighbour's row and add it to mine; read-done barrier (nobody
/// may overwrite a row a peer still reads) unless `read_done` is off; store; the
/// self-clearing epilogue of every credit the call deposited.
fn expand(
    b: &mut Builder<'_>,
    call: &Call,
    results: &[ValueId],
    span: Span,
    read_done: bool,
) -> Result<(), Diagnostic> {
    b.span = span;
    let (target, signal) = (call.args[0].clone(), call.args[1].clone());
    let Type::DistTensor(t) = b.type_of(&target) else {
        return Err(Diagnostic::error(span, format!("{OP} target must be a window")));
    };
    let shape = Expr::tuple(t.tensor.shape.clone());
    let origin = Expr::ints(&[0, 0]);
    let cells = Cells::Mesh;
    let mut comm = Comm::setup(b, &target, signal)?;
    comm.barrier(b, &cells)?;
    let n = Expr::var(comm.nranks);
    let left = Expr::binary(
        pld_ir::BinOp::Mod,
        Expr::binary(
            pld_ir::BinOp::Add,
            Expr::var(comm.my_rank),
            Expr::binary(pld_ir::BinOp::Sub, n, Expr::int(1)),
        ),
        Expr::var(comm.nranks),
    );
    let mine = b.assign_op(
        "mine",
        "tile.load",
        vec![target.clone(), origin.clone(), shape.clone()],
        vec![("target_memory", pld_ir::Attr::Str("Vec".into()))],
    )?;
    let theirs = b.assign_op(
        "theirs",
        "pld.tile.remote_load",
        vec![target.clone(), left, origin.clone(), shape],
        vec![],
    )?;
    let sum = b.assign_op("sum", "tile.add", vec![Expr::var(mine), Expr::var(theirs)], vec![])?;
    let credits = if read_done { comm.barrier(b, &cells)? } else { 1 };
    let stored = b.assign_op("stored", "tile.store", vec![Expr::var(sum), origin, target], vec![])?;
    comm.epilogue(b, &cells, Expr::int(credits))?;
    bind_result(b, results, Expr::var(stored));
    Ok(())
}
register_lowering!(OP, LoweringKind::Composite, lower_neighbor_sum);
register_lowering!("test.tensor.neighbor_sum_racy", LoweringKind::Composite, lower_neighbor_sum_racy);

const NEIGHBORS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
C = 40

@pl.program
class Neighbors:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[1, C], pl.FP32], out: pl.Out[pl.Tensor[[1, C], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[1, C], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[1, C], pl.FP32]:
        row = pl.load(inp, [0, 0], [1, C])
        data = pl.store(row, [0, 0], data)
        data = pld.test_neighbor_sum(data, signal)
        got = pl.load(data, [0, 0], [1, C])
        out = pl.store(got, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, C], pl.FP32], out: pl.Out[pl.Tensor[[1, C], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[1, C], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        out = self.step(inp, out, data, signal)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, C], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, C], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(C * 4, name="data")
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, C], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], data, signal, device=r)
"#;

#[test]
fn a_test_only_collective_is_lowered_emitted_and_simulated() {
    let prog = lower(&parse(NEIGHBORS)).unwrap_or_else(|d| panic!("{d:?}"));
    let kernel = pld_ir::print_function(prog.function("step").expect("kernel"));
    assert!(!kernel.contains(OP), "the collective is lowered away:\n{kernel}");
    assert!(kernel.contains("pld.tile.remote_load("), "{kernel}");
    // Two barriers and the epilogue: notifies of +1 and of -2.
    assert!(kernel.contains("pld.system.wait("), "{kernel}");
    assert!(kernel.contains("-2"), "the epilogue clears both credits:\n{kernel}");

    let out = pld_codegen_pto::emit_program(&prog, &pld_codegen_pto::CodegenOptions::default())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
    let (_, module) = out.modules.iter().find(|(name, _)| name.starts_with("step")).expect("kernel module");
    for needle in ["pto.comm.tnotify", "pto.comm.twait", "pto.tadd"] {
        assert!(module.contains(needle), "{needle} missing:\n{module}");
    }

    for p in [2, 3, 4, 8] {
        let per: Vec<Vec<f64>> =
            (0..p).map(|r| (0..40).map(|i| (r * 1000 + i) as f64 * 0.5).collect()).collect();
        let ins = inputs(vec![("inputs", stack(pld_ir::DataType::FP32, &per, &[1, 40]))]);
        for schedule in [Schedule::Deterministic, Schedule::Random(3), Schedule::Random(11)] {
            let cfg = SimConfig { schedule, check_fences: true, ..SimConfig::ranks(p) };
            let got =
                pld_sim::run(&prog, "host", &ins, &cfg).unwrap_or_else(|e| panic!("P={p} {schedule:?}: {e}"));
            let outs = unstack(&got.outputs["outputs"]);
            for r in 0..p {
                let left = &per[(r + p - 1) % p];
                let want: Vec<f64> = per[r].iter().zip(left).map(|(a, b)| a + b).collect();
                assert_eq!(outs[r], want, "P={p} {schedule:?} rank {r}");
            }
        }
    }
}

#[test]
fn the_collective_without_its_read_done_barrier_is_a_reported_race() {
    let prog = lower(&parse(&NEIGHBORS.replace("pld.test_neighbor_sum(", "pld.test_neighbor_sum_racy(")))
        .unwrap_or_else(|d| panic!("{d:?}"));
    let per: Vec<Vec<f64>> = (0..3).map(|r| vec![r as f64; 40]).collect();
    let ins = inputs(vec![("inputs", stack(pld_ir::DataType::FP32, &per, &[1, 40]))]);
    for schedule in [Schedule::Deterministic, Schedule::Random(5)] {
        let cfg = SimConfig { schedule, check_fences: true, ..SimConfig::ranks(3) };
        let err = match pld_sim::run(&prog, "host", &ins, &cfg) {
            Ok(_) => panic!("{schedule:?}: the missing read-done barrier went unreported"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("data race") && err.contains("pld.tile.remote_load"), "{schedule:?}: {err}");
    }
}
