//! A remote-write op defined only in this file — a push without a notify, its record saying
//! only that its `target` is a peer's window it writes (`ParamDef::peer`) — goes through the
//! pass pipeline, PTO codegen and the simulator with no edit to any of them: the passes read
//! its effects from the record, so `InsertCommFence` fences it as a remote write (a fence, no
//! region invalidate of the local window), and the simulator's fence check passes.
//!
//! Its codegen and simulator entries are registered here too; they reuse the TSTORE-to-peer
//! emitter and semantics of `pld.tile.remote_store`, which this op is a test double of.

use pld_codegen_pto::{register_emitter, FnCx, Val};
use pld_ir::{
    register_op, Affinity, Call, DeduceCx, Diagnostic, Effect, OpDef, ParamDef, SignalRole, Type, ValueId,
};
use pld_sim::sem::{Flow, OpCx, SemKind};
use pld_sim::value::Val as SimVal;
use pld_sim::{register_semantics, Schedule, SimConfig};
use pld_testkit::e2e::{inputs, lower, parse, stack, unstack};

static TEST_PUSH: OpDef = OpDef {
    name: "test.tile.push",
    family: "test",
    summary: "write a local tile into a peer rank's window region, without a notify (test-only op)",
    aliases: &["pld.test_push"],
    params: &[
        ParamDef::mem("src_tile", Effect::Read),
        ParamDef::mem("target", Effect::Write).peer(),
        ParamDef::value("peer"),
        ParamDef::value("offsets"),
    ],
    attrs: &[],
    affinity: Affinity::FromFirstTileArg,
    no_duplicate: false,
    signal_role: SignalRole::None,
    rank_role: pld_ir::RankRole::None,
    builtin_variant: None,
    internal: false,
    effects: None,
    deduce: deduce_push,
    lowerings: &[],
};
register_op!(TEST_PUSH);

fn deduce_push(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match (cx.ty(0), cx.ty(1)) {
        (Type::Tile(_), Type::DistTensor(_)) => Ok(Type::Unknown),
        (a, b) => Err(cx.error(format!(
            "test.tile.push takes a tile and a DistributedTensor, got {} and {}",
            a.kind_name(),
            b.kind_name()
        ))),
    }
}

fn emit_push(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let reg = pld_codegen_pto::emitters().get("pld.tile.remote_store").expect("remote_store emitter");
    (reg.emit)(cx, call, targets)
}
register_emitter!("test.tile.push", emit_push);

fn sim_push(cx: &mut OpCx<'_>, args: &[SimVal]) -> Result<Flow, pld_sim::report::Fault> {
    match pld_sim::sem::lookup("pld.tile.remote_store") {
        Some(SemKind::Op(f)) => f(cx, args),
        _ => Err(cx.err("no simulator semantics for pld.tile.remote_store")),
    }
}
register_semantics!("test.tile.push", sim_push);

const RING_SHIFT: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")

@pl.program
class RingShift:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, inp: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
              data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
              signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        nxt = (me + 1) % n
        row = pl.load(inp, [0, 0], [1, 64])
        pld.test_push(row, data, nxt, [0, 0])
        pld.system.notify(signal, nxt, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        prev = (me + n - 1) % n
        pld.system.wait(signal, [prev, 0], 1, cmp=pld.WaitCmp.Ge)
        got = pl.load(data, [0, 0], [1, 64])
        out = pl.store(got, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
             data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        self.shift(inp, out, data, signal)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, 64], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, 64], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(64 * 4)
        signal_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, 64], dtype=pl.FP32)
            signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], data, signal, device=r)
"#;

#[test]
fn a_test_only_remote_write_op_is_fenced_emitted_and_simulated() {
    let prog = lower(&parse(RING_SHIFT)).unwrap_or_else(|d| panic!("{d:?}"));
    let kernel = pld_ir::print_function(prog.function("shift").expect("kernel"));
    // The push is fenced as a remote write: a fence right after it, and no invalidate of the
    // local `data` window (which a local-write classification would have added).
    let push =
        kernel.lines().position(|l| l.contains("test.tile.push(")).unwrap_or_else(|| panic!("{kernel}"));
    let after: Vec<&str> = kernel.lines().skip(push + 1).map(str::trim).collect();
    assert_eq!(after.first().copied(), Some("pl.system.fence()"), "{kernel}");
    assert!(!kernel.contains("pl.system.cacheinvalid(data"), "{kernel}");

    let out = pld_codegen_pto::emit_program(&prog, &pld_codegen_pto::CodegenOptions::default())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
    let (_, module) = out.modules.iter().find(|(name, _)| name.starts_with("shift")).expect("kernel module");
    // The push renders as TSTORE into the peer's view, then the fence before the notify.
    let tstore = module.find("pto.tstore").unwrap_or_else(|| panic!("{module}"));
    let notify = module.find("pto.comm.tnotify").unwrap_or_else(|| panic!("{module}"));
    assert!(tstore < notify, "{module}");

    for p in [2, 3, 4] {
        let per: Vec<Vec<f64>> = (0..p).map(|r| (0..64).map(|i| (r * 100 + i) as f64).collect()).collect();
        let ins = inputs(vec![("inputs", stack(pld_ir::DataType::FP32, &per, &[1, 64]))]);
        for schedule in [Schedule::Deterministic, Schedule::Random(7)] {
            let cfg = SimConfig { schedule, check_fences: true, ..SimConfig::ranks(p) };
            let got = pld_sim::run(&prog, "host", &ins, &cfg).unwrap_or_else(|e| panic!("P={p}: {e}"));
            let outs = unstack(&got.outputs["outputs"]);
            for r in 0..p {
                assert_eq!(outs[r], per[(r + p - 1) % p], "P={p} rank {r}");
            }
        }
    }
}
