//! The builtin kernels the simulator runs are the functions codegen emits: for every host
//! collective, the kernel `builtin::render` hands to the function emitter and the kernel
//! `MaterializeBuiltinKernels` adds to the program for the simulator are the same function
//! (with static extents; with dynamic ones codegen's form names them as `index` parameters).

mod common;
use common::init;
use pld_codegen_pto::{builtin, CodegenOptions};

const HOST: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 300
NR = 4

@pl.program
class Builtins:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[__ROWS__, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[__ROWS__, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [__ROWS__, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[__ROWS__, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[__ROWS__, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(type=pl.FunctionType.InCore)
    def fill_step(self, inp: pl.Tensor[[NR, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [NR, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def fill_orch(self, inp: pl.Tensor[[NR, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[NR, SIZE], pl.FP32]]):
        data = self.fill_step(inp, data)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, __ROWS__, SIZE], pl.FP32], more: pl.Tensor[[NR, NR, SIZE], pl.FP32]):
        sig_buf = pld.alloc_window_buffer(__SIGCELLS__ * 4, name="signal")
        signal = pld.window(sig_buf, __SIGSHAPE__, dtype=pl.INT32)
        in_buf = pld.alloc_window_buffer(__ROWS__ * SIZE * 4, name="stage")
        stage = pld.window(in_buf, [__ROWS__, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], stage, device=r)
        __DATA__
        __BODY__
"#;

const DATA: &str = r#"out_buf = pld.alloc_window_buffer(NR * SIZE * 4, name="data")
        data = pld.window(out_buf, [NR, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.fill_orch(more[r], data, device=r)"#;

#[test]
fn the_simulators_builtin_kernels_are_the_rendered_ones() {
    init();
    let cases = [
        ("1", "NR", "[NR]", "stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Max)"),
        (
            "1",
            "7 * NR",
            "[7, NR]",
            "stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Sum, mode=\"ring\")",
        ),
        ("1", "NR", "[NR]", "stage = pld.tensor.broadcast(stage, signal, root=2)"),
        ("NR", "NR", "[NR]", "stage = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)"),
        ("1", "NR", "[NR]", "data = pld.tensor.allgather(stage, data, signal)"),
        ("NR", "NR", "[NR]", "data = pld.tensor.all_to_all(stage, data, signal)"),
        (
            "1",
            "NR",
            "[NR]",
            "stage = pld.tensor.broadcast(stage, signal, root=0)\n        pld.tensor.barrier(signal)",
        ),
    ];
    for (rows, cells, shape, body) in cases {
        let text = HOST
            .replace("__ROWS__", rows)
            .replace("__SIGCELLS__", cells)
            .replace("__SIGSHAPE__", shape)
            .replace("__DATA__", if body.contains("data") { DATA } else { "" })
            .replace("__BODY__", body);
        let mut p =
            pld_frontend::parse_str(&text).unwrap_or_else(|d| panic!("{body}: {:?}", d.iter().next()));
        pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())
            .unwrap_or_else(|d| panic!("{body}: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
        let opts = CodegenOptions::default();
        let (calls, diags) = builtin::builtin_calls(&p, &opts);
        assert!(diags.is_empty(), "{body}");
        let sites = if body.contains("barrier") { 2 } else { 1 };
        assert_eq!(calls.len(), sites, "{body}: one variant per collective");
        let mut sim = p.clone();
        pld_passes::materialize_builtin_kernels(&mut sim, &pld_passes::PipelineOptions::default())
            .unwrap_or_else(|d| panic!("{body}: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
        let added: Vec<&pld_ir::Function> =
            sim.functions.iter().filter(|f| p.function(&f.name).is_none()).collect();
        assert_eq!(added.len(), sites, "{body}: one kernel per dispatch site");
        let printed = |f: &pld_ir::Function| {
            let mut g = f.clone();
            g.name = "kernel".into();
            pld_ir::print_function(&g)
        };
        for (variant, (host, call)) in &calls {
            let rendered = builtin::render(variant, host, call, &opts)
                .unwrap_or_else(|d| panic!("{body}: {}", d.message));
            let want = printed(&rendered);
            assert!(
                added.iter().any(|k| printed(k) == want),
                "{body}: no kernel of the simulator's program is {variant}'s rendered kernel:\n{want}\n--- the simulator's:\n{}",
                added.iter().map(|k| printed(k)).collect::<Vec<_>>().join("\n")
            );
        }
    }
}
