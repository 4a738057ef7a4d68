//! `MaterializeBuiltinKernels`: every builtin dispatch of a lowered host becomes the contexts of
//! its windows and `device=` calls of new AIV kernels (one per block of a multi-block launch,
//! each specialised to its block), whose bodies carry the comm fences.

mod common;
use common::{check_in_order, count, func_text, init, messages};

const HOST: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 600
NR = pl.dynamic("NR")

@pl.program
class MultiBlock:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = self.publish_step(inp, data)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 2 * 4, name="signal")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR, 2], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.publish_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=2)
"#;

#[test]
fn a_two_block_allreduce_becomes_two_kernel_dispatches_per_device() {
    init();
    let mut p = pld_frontend::parse_str(HOST).unwrap_or_else(|d| panic!("{}", messages(&d)));
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())
        .unwrap_or_else(|d| panic!("{}", messages(&d)));
    assert!(func_text(&p, "host").contains("builtin.tensor.allreduce("));
    let before = p.functions.len();
    pld_passes::materialize_builtin_kernels(&mut p, &pld_passes::PipelineOptions::default())
        .unwrap_or_else(|d| panic!("{}", messages(&d)));
    let host = func_text(&p, "host");
    assert!(!host.contains("builtin.tensor."), "{host}");
    check_in_order(
        &host,
        &[
            "pld.system.get_comm_ctx(data)",
            "pld.system.get_comm_ctx(signal)",
            "_b0(data, signal, data_ctx",
            ", device=r",
            "_b1(data, signal, data_ctx",
            ", device=r",
        ],
    );
    let kernels: Vec<&pld_ir::Function> = p.functions[before..].iter().collect();
    assert_eq!(kernels.len(), 2, "one kernel per block");
    for (b, k) in kernels.iter().enumerate() {
        assert_eq!(k.kind, pld_ir::FunctionKind::Aiv);
        let text = pld_ir::print_function(k);
        // Specialised: no block symbol survives; block b addresses signal column b.
        assert!(!text.contains(pld_ir::BLOCK_IDX_SYM) && !text.contains(pld_ir::BLOCK_NUM_SYM), "{text}");
        assert!(text.contains(&format!("[0, {b}]")), "block {b}: {text}");
        // Data before signal: the comm fences are in place, one ready wait per block.
        assert!(count(&text, "pl.system.fence()") >= 1, "{text}");
        assert_eq!(count(&text, ", 1, cmp=pld.WaitCmp.Ge)"), 1, "{text}");
    }
}
