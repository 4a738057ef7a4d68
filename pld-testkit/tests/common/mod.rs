//! Shared support for the host-collective end-to-end tests: running a program as written and
//! after the pipeline (requiring byte-identical outputs and traffic, fences checked on the
//! lowered one), and the generic publish/consume program template with its per-round runner.
#![allow(dead_code)]

use pld_ir::DataType;
use pld_sim::Schedule;
use pld_testkit::e2e::{inputs, lower, parse, run_ok, stack, unstack};

/// Runs `prog` as written and after the pipeline (host collectives become per-rank
/// `builtin.tensor.*` dispatches); both must succeed with byte-identical outputs and traffic.
pub fn run_both(
    prog: &pld_ir::Program,
    p: usize,
    inp: &pld_sim::Inputs,
    schedule: Schedule,
    what: &str,
) -> pld_sim::SimOutcome {
    run_both_with(prog, p, inp, schedule, false, what)
}

/// [`run_both`], with reads of undefined window bytes downgraded to warnings when
/// `allow_uninit` is set.
pub fn run_both_with(
    prog: &pld_ir::Program,
    p: usize,
    inp: &pld_sim::Inputs,
    schedule: Schedule,
    allow_uninit: bool,
    what: &str,
) -> pld_sim::SimOutcome {
    let direct = if allow_uninit {
        let cfg = pld_sim::SimConfig { schedule, allow_uninit_reads: true, ..pld_sim::SimConfig::ranks(p) };
        pld_sim::run(prog, "host", inp, &cfg).unwrap_or_else(|e| panic!("{what} (direct): {e}"))
    } else {
        run_ok(prog, "host", p, inp, schedule, &format!("{what} (direct)"))
    };
    let low = lower(prog).unwrap_or_else(|d| {
        panic!("{what}: pipeline failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>())
    });
    let text = pld_ir::print_program(&low);
    assert!(
        text.contains("builtin.tensor.") && !text.contains("pld.tensor.allreduce("),
        "{what}: not lowered to a builtin:\n{text}"
    );
    // Lowered programs carry the pipeline's fences: check them too.
    let cfg = pld_sim::SimConfig {
        schedule,
        check_fences: true,
        allow_uninit_reads: allow_uninit,
        ..pld_sim::SimConfig::ranks(p)
    };
    let lowered = pld_sim::run(&low, "host", inp, &cfg).unwrap_or_else(|e| panic!("{what} (lowered): {e}"));
    assert_eq!(lowered.outputs, direct.outputs, "{what}: lowered and direct outputs differ");
    assert_eq!(
        lowered.stats.remote_bytes, direct.stats.remote_bytes,
        "{what}: lowered and direct traffic differ"
    );
    lowered
}

/// Publish/consume kernels over a `[ROWS, SIZE]` FP32 window plus a host body.
pub const GENERIC: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = __SIZE__
NR = pl.dynamic("NR")

@pl.program
class HostColl:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[__IROWS__, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[__IROWS__, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [__IROWS__, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[__OROWS__, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[__OROWS__, SIZE], pl.FP32]]):
        t = pl.load(data, [0, 0], [__OROWS__, SIZE])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[__IROWS__, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[__IROWS__, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[__OROWS__, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[__OROWS__, SIZE], pl.FP32]]):
        out = self.consume_step(data, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[__ROUNDS__, NR, __IROWS__, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[__ROUNDS__, NR, __OROWS__, SIZE], pl.FP32]]):
        sig_buf = pld.alloc_window_buffer(__SIGCELLS__ * 4, name="signal")
        signal = pld.window(sig_buf, __SIGSHAPE__, dtype=pl.INT32)
        for rd in pl.range(__ROUNDS__):
            in_buf = pld.alloc_window_buffer(__IROWS__ * SIZE * 4, name="stage")
            stage = pld.window(in_buf, [__IROWS__, SIZE], dtype=pl.FP32)
            __DATA_ALLOC__
            for r in pl.range(pld.world_size()):
                self.publish_orch(inputs[rd, r], stage, device=r)
            __BODY__
            for r in pl.range(pld.world_size()):
                self.consume_orch(data, outputs[rd, r], device=r)
"#;

pub struct Generic<'a> {
    pub size: usize,
    pub in_rows: &'a str,
    pub out_rows: &'a str,
    pub rounds: usize,
    pub sig_cells: &'a str,
    pub sig_shape: &'a str,
    pub body: &'a str,
}

/// [`generic`] with the mesh collectives' one-cell-per-rank `[NR]` signal.
pub fn mesh_program(
    size: usize,
    in_rows: &str,
    out_rows: &str,
    rounds: usize,
    body: &str,
) -> pld_ir::Program {
    generic(&Generic {
        size,
        in_rows,
        out_rows,
        rounds,
        sig_cells: "pld.world_size()",
        sig_shape: "[NR]",
        body,
    })
}

pub fn generic(g: &Generic<'_>) -> pld_ir::Program {
    parse(
        &GENERIC
            .replace("__SIZE__", &g.size.to_string())
            .replace("__IROWS__", g.in_rows)
            .replace("__OROWS__", g.out_rows)
            .replace("__ROUNDS__", &g.rounds.to_string())
            .replace("__SIGCELLS__", g.sig_cells)
            .replace("__SIGSHAPE__", g.sig_shape)
            .replace(
                "__DATA_ALLOC__",
                if g.body.contains("stage, data, signal") {
                    "out_buf = pld.alloc_window_buffer(__OROWS__ * SIZE * 4, name=\"data\")\n            data = pld.window(out_buf, [__OROWS__, SIZE], dtype=pl.FP32)"
                } else {
                    ""
                },
            )
            .replace("__OROWS__", g.out_rows)
            .replace("__BODY__", g.body),
    )
}

/// Runs a generic program: `inputs[rd][r]` given per round and rank; returns `outputs[rd][r]`.
pub fn run_generic(
    prog: &pld_ir::Program,
    p: usize,
    per: &[Vec<Vec<f64>>],
    in_shape: &[usize],
    schedule: Schedule,
) -> (Vec<Vec<Vec<f64>>>, pld_sim::SimOutcome) {
    let rounds = per.len();
    let flat: Vec<Vec<f64>> = per.iter().flat_map(|rd| rd.iter().cloned()).collect();
    let mut shape = vec![p];
    shape.extend_from_slice(in_shape);
    let t = stack(DataType::FP32, &flat, &shape);
    let t = pld_sim::HostTensor { shape: [vec![rounds], t.shape[1..].to_vec()].concat(), ..t };
    let out = run_both(prog, p, &inputs(vec![("inputs", t)]), schedule, "generic host collective");
    let all = unstack(&out.outputs["outputs"]);
    let res = all.iter().map(|rd| rd.chunks(rd.len() / p).map(<[f64]>::to_vec).collect()).collect();
    (res, out)
}

pub fn rounds_of(p: usize, rounds: usize, f: impl Fn(usize) -> Vec<f64>) -> Vec<Vec<Vec<f64>>> {
    (0..rounds)
        .map(|rd| (0..p).map(|r| f(r).iter().map(|x| x + 10000.0 * rd as f64).collect()).collect())
        .collect()
}
