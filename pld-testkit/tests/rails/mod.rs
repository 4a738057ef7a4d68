//! The collective programs both rails are tested with (issue #19 item 2): one host program
//! template whose collective runs in the host orchestrator (builtin dispatches) or in a chip
//! orchestration (one synthesized AIV task per rank), per-rank inputs exact in every dtype,
//! and the runs that compare the protocol models with the kernels codegen emits.
#![allow(dead_code)]

use pld_ir::{DataType, Program};
use pld_sim::{HostTensor, Inputs, Schedule, SimConfig, SimOutcome};
use pld_testkit::e2e::{inputs, lower, parse};

pub const HOST: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = __SIZE__
NR = pl.dynamic("NR")

@pl.program
class HostCrossCheck:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[__IROWS__, SIZE], pl.__DT__], data: pl.Out[pld.DistributedTensor[[__IROWS__, SIZE], pl.__DT__]]):
        t = pl.load(inp, [0, 0], [__IROWS__, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[__OROWS__, SIZE], pl.__DT__], out: pl.Out[pl.Tensor[[__OROWS__, SIZE], pl.__DT__]]):
        t = pl.load(data, [0, 0], [__OROWS__, SIZE])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[__IROWS__, SIZE], pl.__DT__], data: pl.Out[pld.DistributedTensor[[__IROWS__, SIZE], pl.__DT__]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume_orch(self, data: pld.DistributedTensor[[__OROWS__, SIZE], pl.__DT__], out: pl.Out[pl.Tensor[[__OROWS__, SIZE], pl.__DT__]]):
        out = self.consume_step(data, out)
        return out

__CHIP_FN__
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, __IROWS__, SIZE], pl.__DT__], outputs: pl.Out[pl.Tensor[[NR, __OROWS__, SIZE], pl.__DT__]]):
        sig_buf = pld.alloc_window_buffer(__SIGCELLS__ * 4, name="signal")
        signal = pld.window(sig_buf, __SIGSHAPE__, dtype=pl.INT32)
        in_buf = pld.alloc_window_buffer(__IROWS__ * SIZE * __BYTES__, name="stage")
        stage = pld.window(in_buf, [__IROWS__, SIZE], dtype=pl.__DT__)
        __DATA_ALLOC__
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], stage, device=r)
        __BODY__
        for r in pl.range(pld.world_size()):
            self.consume_orch(__RESULT__, outputs[r], device=r)
"#;

/// One host collective call of the cross-check.
pub struct Case {
    /// Rows of the published `stage` window and of the consumed result (`"1"` or `"NR"`).
    pub in_rows: &'static str,
    pub out_rows: &'static str,
    /// The collective statement; `stage` is the input window, `data` a second window.
    pub body: &'static str,
    /// The window the consumers read afterwards.
    pub result: &'static str,
    /// Signal cells and shape.
    pub sig_cells: &'static str,
    pub sig_shape: &'static str,
}

pub const MESH_SIG: (&str, &str) = ("pld.world_size()", "[NR]");

/// Where the collective runs: in the host orchestrator (builtin dispatches) or in a chip
/// orchestration dispatched to every rank (one synthesized AIV task each).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rail {
    Host,
    Chip,
}

pub const CHIP_FN: &str = r#"
    @pl.function(type=pl.FunctionType.Orchestration)
    def coll(self, stage: __STAGE_TYPE__,__DATA_PARAM__
             signal: pl.InOut[pld.DistributedTensor[__SIGSHAPE__, pl.INT32]]):
        __BODY__
"#;

pub fn program(case: &Case, size: usize, dt: DataType) -> Program {
    program_on(case, size, dt, Rail::Host)
}

pub fn program_on(case: &Case, size: usize, dt: DataType, rail: Rail) -> Program {
    let data = if case.body.contains("data") {
        "out_buf = pld.alloc_window_buffer(__OROWS__ * SIZE * __BYTES__, name=\"data\")\n        data = pld.window(out_buf, [__OROWS__, SIZE], dtype=pl.__DT__)"
    } else {
        ""
    };
    let (chip_fn, body) = match rail {
        Rail::Host => (String::new(), case.body.to_string()),
        Rail::Chip => {
            let with_data = case.body.contains("data");
            let param = if with_data {
                "\n             data: pl.InOut[pld.DistributedTensor[[__OROWS__, SIZE], pl.__DT__]],"
            } else {
                ""
            };
            // allgather / all_to_all read their input locally: on the chip rail it is the
            // rank's plain input tensor (the InCore path takes no window there).
            let (args, stage_ty) = if with_data {
                ("inputs[r], data, signal", "pl.Tensor[[__IROWS__, SIZE], pl.__DT__]")
            } else {
                ("stage, signal", "pl.InOut[pld.DistributedTensor[[__IROWS__, SIZE], pl.__DT__]]")
            };
            (
                CHIP_FN
                    .replace("__STAGE_TYPE__", stage_ty)
                    .replace("__DATA_PARAM__", param)
                    .replace("__BODY__", case.body),
                format!("for r in pl.range(pld.world_size()):\n            self.coll({args}, device=r)"),
            )
        }
    };
    parse(
        &HOST
            .replace("__CHIP_FN__", &chip_fn)
            .replace("__DATA_ALLOC__", data)
            .replace("__BODY__", &body)
            .replace("__RESULT__", case.result)
            .replace("__SIZE__", &size.to_string())
            .replace("__IROWS__", case.in_rows)
            .replace("__OROWS__", case.out_rows)
            .replace("__SIGCELLS__", case.sig_cells)
            .replace("__SIGSHAPE__", case.sig_shape)
            .replace("__DT__", dt.dsl_name())
            .replace("__BYTES__", &dt.bytes().to_string()),
    )
}

/// Deterministic per-rank inputs of `n` elements, quarter steps in [-2, 2] (exact in FP16 and
/// FP32; a product over 8 ranks stays finite in FP16).
pub fn rank_inputs(p: usize, n: usize, dt: DataType) -> Vec<f64> {
    (0..p)
        .flat_map(|r| {
            (0..n).map(move |i| match dt {
                DataType::INT32 => (r as i64 * 1000 + i as i64 % 997 - 300) as f64,
                _ => ((r * 7 + i * 3) % 17) as f64 * 0.25 - 2.0,
            })
        })
        .collect()
}

/// The traffic both runs must agree on, per rank: remote bytes, local bytes (both summed
/// over op kinds: a model books its accesses under the builtin's name, a kernel under its tile
/// ops), notifies, waits and barrier rounds. Not `rw_bytes`: a model's load-combine counts the
/// accumulator it reads and writes, where the kernel's separate tile add moves no memory.
pub fn traffic(o: &SimOutcome, p: usize) -> Vec<(u64, u64, u64, u64, u64)> {
    (0..p)
        .map(|r| {
            let local = o.stats.local_bytes.iter().filter(|((q, _), _)| *q == r).map(|(_, b)| b).sum();
            (o.stats.remote_total(r), local, o.stats.notifies[r], o.stats.waits[r], o.stats.barrier_rounds[r])
        })
        .collect()
}

/// Runs `case` both ways on `p` ranks and asserts identical bytes and traffic; returns the
/// kernel run's outcome.
pub fn crosscheck(case: &Case, p: usize, size: usize, dt: DataType, schedule: Schedule) -> SimOutcome {
    let what = format!("{} P={p} size={size} {dt} {schedule:?}", case.body);
    let rows = case.in_rows.parse().unwrap_or(p);
    let inp: Inputs = inputs(vec![(
        "inputs",
        HostTensor::from_f64(dt, vec![p, rows, size], &rank_inputs(p, rows * size, dt)),
    )]);
    compare(&program(case, size, dt), &inp, p, schedule, false, &what)
}

/// Lowers `prog`, runs it with the builtin dispatches on the protocol models and, after
/// `MaterializeBuiltinKernels`, on the kernels, and asserts identical output bytes and
/// traffic (both runs check fences and races).
pub fn compare(
    prog: &Program,
    inp: &Inputs,
    p: usize,
    schedule: Schedule,
    allow_uninit: bool,
    what: &str,
) -> SimOutcome {
    let low = lower(prog).unwrap_or_else(|d| panic!("{what}: pipeline: {:?}", messages(&d)));
    let mut kernels = low.clone();
    pld_passes::materialize_builtin_kernels(&mut kernels, &pld_passes::PipelineOptions::default())
        .unwrap_or_else(|d| panic!("{what}: MaterializeBuiltinKernels: {:?}", messages(&d)));
    let text = pld_ir::print_program(&kernels);
    assert!(pld_ir::print_program(&low).contains("builtin.tensor."), "{what}: no builtin dispatch");
    assert!(!text.contains("builtin.tensor."), "{what}: a builtin dispatch remains:\n{text}");
    let cfg =
        SimConfig { schedule, check_fences: true, allow_uninit_reads: allow_uninit, ..SimConfig::ranks(p) };
    let model = pld_sim::run(&low, "host", inp, &cfg).unwrap_or_else(|e| panic!("{what} (model): {e}"));
    let kernel = pld_sim::run(&kernels, "host", inp, &cfg).unwrap_or_else(|e| panic!("{what} (kernel): {e}"));
    assert_eq!(kernel.outputs, model.outputs, "{what}: output bytes differ");
    assert_eq!(
        traffic(&kernel, p),
        traffic(&model, p),
        "{what}: traffic (remote, local, notifies, waits, barriers) differs"
    );
    kernel
}

pub fn messages(d: &pld_ir::Diagnostics) -> Vec<String> {
    d.iter().map(|x| x.message.clone()).collect()
}

pub const RING_SIG: (&str, &str) =
    ("(2 * (pld.world_size() - 1) + 1) * pld.world_size()", "[2 * (NR - 1) + 1, NR]");
pub const BLOCK_SIG: (&str, &str) = ("pld.world_size() * 4", "[NR, 4]");

pub const fn case(
    in_rows: &'static str,
    out_rows: &'static str,
    body: &'static str,
    result: &'static str,
) -> Case {
    Case { in_rows, out_rows, body, result, sig_cells: MESH_SIG.0, sig_shape: MESH_SIG.1 }
}

pub fn mesh_allreduce(op: &str, core_num: i64) -> Case {
    let body =
        format!("stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.{op}, core_num={core_num})");
    let (sig_cells, sig_shape) = if core_num > 1 { BLOCK_SIG } else { MESH_SIG };
    Case { body: leak(body), sig_cells, sig_shape, ..case("1", "1", "", "stage") }
}

pub fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// `tests/programs/host_all_to_all_v.py` at `p` ranks (3 capacity rows of 19 elements).
pub fn a2av_program(p: usize) -> String {
    include_str!("../programs/host_all_to_all_v.py").replace("pl.dynamic(\"NR\")", &p.to_string())
}

/// The chip rail: the unlowered program runs each chip-orchestration collective through its
/// protocol model; the pipeline turns it into a synthesized AIV task whose body is the
/// collective's composite expansion (the code codegen emits), which the simulator runs as a
/// kernel. Both must give identical bytes and traffic.
pub fn crosscheck_chip(case: &Case, p: usize, size: usize, dt: DataType, schedule: Schedule) -> SimOutcome {
    let what = format!("chip rail: {} P={p} size={size} {dt} {schedule:?}", case.body);
    let rows = case.in_rows.parse().unwrap_or(p);
    let inp: Inputs = inputs(vec![(
        "inputs",
        HostTensor::from_f64(dt, vec![p, rows, size], &rank_inputs(p, rows * size, dt)),
    )]);
    let prog = program_on(case, size, dt, Rail::Chip);
    let low = lower(&prog).unwrap_or_else(|d| panic!("{what}: pipeline: {:?}", messages(&d)));
    let text = pld_ir::print_program(&low);
    let coll = case.body.split("pld.tensor.").nth(1).and_then(|t| t.split('(').next()).unwrap_or("?");
    assert!(
        !text.contains(&format!("pld.tensor.{coll}(")) && !text.contains("builtin.tensor."),
        "{what}: not lowered to a task:\n{text}"
    );
    let cfg = SimConfig { schedule, ..SimConfig::ranks(p) };
    let model = pld_sim::run(&prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("{what} (model): {e}"));
    let cfg = SimConfig { check_fences: true, ..cfg };
    let kernel = pld_sim::run(&low, "host", &inp, &cfg).unwrap_or_else(|e| panic!("{what} (kernel): {e}"));
    assert_eq!(kernel.outputs, model.outputs, "{what}: output bytes differ");
    assert_eq!(
        traffic(&kernel, p),
        traffic(&model, p),
        "{what}: traffic (remote, local, notifies, waits, barriers) differs"
    );
    kernel
}

pub const CHIP_SIG: (&str, &str) = ("pld.world_size()", "[NR, 1]");

pub fn chip_case(in_rows: &'static str, out_rows: &'static str, body: &'static str) -> Case {
    Case {
        sig_cells: CHIP_SIG.0,
        sig_shape: CHIP_SIG.1,
        ..case(in_rows, out_rows, body, if body.contains("data") { "data" } else { "stage" })
    }
}

pub const SCHEDULES: [Schedule; 2] = [Schedule::Deterministic, Schedule::Random(11)];
pub const RANKS: [usize; 4] = [2, 3, 4, 8];
