//! §6 of tests_e2e.md: window slices inside kernels, two overlapping comm domains on three
//! devices (after the pipeline materialises them), and a comm-anchored GEMM.

use pld_ir::DataType;
use pld_sim::Schedule;
use pld_testkit::e2e::{inputs, lower, parse, run_ok, stack, unstack};

const MULTI_GROUP: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 64

@pl.program
class MultiGroup:
    @pl.function(type=pl.FunctionType.InCore)
    def swap_step(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
                  scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
                  signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]], peer: pl.Scalar[pl.INDEX]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], scratch)
        pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)
        x = pld.tile.remote_load(scratch, peer, [0, 0], [1, SIZE])
        pl.store(x, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[1, SIZE], pl.FP32], out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
             scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]], peer: pl.Scalar[pl.INDEX]):
        out = self.swap_step(inp, out, scratch, signal, peer)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[3, 1, SIZE], pl.FP32], outputs_a: pl.Out[pl.Tensor[[3, 1, SIZE], pl.FP32]],
             outputs_b: pl.Out[pl.Tensor[[3, 1, SIZE], pl.FP32]]):
        scratch_a_buf = pld.alloc_window_buffer(SIZE * 4, name="scratch_a")
        signal_a_buf = pld.alloc_window_buffer(4, name="signal_a")
        scratch_b_buf = pld.alloc_window_buffer(SIZE * 4, name="scratch_b")
        signal_b_buf = pld.alloc_window_buffer(4, name="signal_b")
        for r in pl.range(2):
            scratch_a = pld.window(scratch_a_buf, [SIZE], dtype=pl.FP32)
            signal_a = pld.window(signal_a_buf, [1], dtype=pl.INT32)
            self.chip(inputs[r], outputs_a[r], scratch_a, signal_a, 1 - r, device=r)
        for r in pl.range(1, 3):
            scratch_b = pld.window(scratch_b_buf, [SIZE], dtype=pl.FP32)
            signal_b = pld.window(signal_b_buf, [1], dtype=pl.INT32)
            self.chip(inputs[r], outputs_b[r], scratch_b, signal_b, 2 - r, device=r)
"#;

#[test]
fn two_overlapping_comm_domains_on_three_devices() {
    let low = lower(&parse(MULTI_GROUP))
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()));
    let text = pld_ir::print_program(&low);
    assert!(text.contains("devices=[0, 1]") && text.contains("devices=[1, 2]"), "{text}");
    if std::env::var("PLD_DUMP").is_ok() {
        println!("{text}");
    }
    let per: Vec<Vec<f64>> = (0..3).map(|d| vec![(10 + d) as f64; 64]).collect();
    let inp = inputs(vec![("inputs", stack(DataType::FP32, &per, &[1, 64]))]);
    for sched in [Schedule::Deterministic, Schedule::Random(3), Schedule::Random(4)] {
        let out = run_ok(&low, "host", 3, &inp, sched, "multi-group");
        let a = unstack(&out.outputs["outputs_a"]);
        let b = unstack(&out.outputs["outputs_b"]);
        assert_eq!(a, vec![per[1].clone(), per[0].clone(), vec![0.0; 64]]);
        assert_eq!(b, vec![vec![0.0; 64], per[2].clone(), per[1].clone()]);
    }
}

const SLICES_AND_GEMM: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

N = 16
W = 64

@pl.program
class SlicesGemm:
    @pl.function(type=pl.FunctionType.InCore)
    def slice_step(self, inp: pl.Tensor[[N, W], pl.FP32], out: pl.Out[pl.Tensor[[8, W], pl.FP32]],
                   win: pl.InOut[pld.DistributedTensor[[N, W], pl.FP32]]):
        t = pl.load(inp, [0, 0], [N, W])
        pl.store(t, [0, 0], win)
        s = win[8:16, 0:W]
        x = pl.load(s, [0, 0], [8, W])
        pl.store(x, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def gemm(self, a: pl.Tensor[[W, W], pl.FP32], b: pl.Tensor[[W, W], pl.FP32], c: pl.Out[pl.Tensor[[W, W], pl.FP32]]):
        ta = pl.load(a, [0, 0], [W, W], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [W, W], target_memory=pl.MemorySpace.Mat)
        la = pl.move(ta, target_memory=pl.MemorySpace.Left)
        rb = pl.move(tb, target_memory=pl.MemorySpace.Right)
        tc = pl.matmul(la, rb)
        pl.store(tc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[N, W], pl.FP32], out: pl.Out[pl.Tensor[[8, W], pl.FP32]],
             win: pl.InOut[pld.DistributedTensor[[N, W], pl.FP32]],
             a: pl.Tensor[[W, W], pl.FP32], b: pl.Tensor[[W, W], pl.FP32], c: pl.Out[pl.Tensor[[W, W], pl.FP32]]):
        out = self.slice_step(inp, out, win)
        c = self.gemm(a, b, c)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[2, N, W], pl.FP32], outputs: pl.Out[pl.Tensor[[2, 8, W], pl.FP32]],
             a: pl.Tensor[[2, W, W], pl.FP32], b: pl.Tensor[[W, W], pl.FP32], c: pl.Out[pl.Tensor[[2, W, W], pl.FP32]]):
        win_buf = pld.alloc_window_buffer(N * W * 4, name="win")
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [N, W], dtype=pl.FP32)
            self.chip(inputs[r], outputs[r], win, a[r], b, c[r], device=r)
"#;

#[test]
fn window_slices_in_kernels_and_gemm() {
    let prog = parse(SLICES_AND_GEMM);
    let per: Vec<Vec<f64>> = (0..2).map(|r| (0..16 * 64).map(|i| (i + 10000 * r) as f64).collect()).collect();
    let a: Vec<Vec<f64>> =
        (0..2).map(|r| (0..64 * 64).map(|i| ((i * 7 + r * 3) % 11) as f64 - 5.0).collect()).collect();
    let b: Vec<f64> = (0..64 * 64).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
    let inp = inputs(vec![
        ("inputs", stack(DataType::FP32, &per, &[16, 64])),
        ("a", stack(DataType::FP32, &a, &[64, 64])),
        ("b", pld_sim::HostTensor::from_f64(DataType::FP32, vec![64, 64], &b)),
    ]);
    // The pipeline splits the GEMM kernel into its cube and vector halves (a Mat load is cube
    // work); both the program as written and the lowered one compute the product.
    let low = lower(&prog)
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()));
    for prog in [prog, low] {
        let out = run_ok(&prog, "host", 2, &inp, Schedule::Deterministic, "slices");
        let got = unstack(&out.outputs["outputs"]);
        for r in 0..2 {
            assert_eq!(got[r], per[r][8 * 64..].to_vec(), "rank {r}");
        }
        let c = unstack(&out.outputs["c"]);
        for r in 0..2 {
            for i in 0..64 {
                for j in 0..64 {
                    let want: f64 = (0..64).map(|k| a[r][i * 64 + k] * b[k * 64 + j]).sum();
                    assert_eq!(c[r][i * 64 + j], want, "gemm rank {r} [{i},{j}]");
                }
            }
        }
    }
}
