//! `scalar.cast` rounds to nearest when the target is an integer (the only mode the op
//! accepts is `"round"`), and the cast value feeds later tile arithmetic.

use pld_ir::DataType;
use pld_sim::{run, HostTensor, Inputs, SimConfig};

const PROGRAM: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Cast:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 4], pl.FP32], y: pl.Out[pl.Tensor[[1, 4], pl.FP32]]):
        v = pl.tensor.read(x, [0, 3])
        i = pl.cast(v, pl.INT32)
        t = pl.load(x, [0, 0], [1, 4])
        u = pl.adds(t, i)
        pl.store(u, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[1, 4], pl.FP32], y: pl.Out[pl.Tensor[[1, 4], pl.FP32]]):
        self.k(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[1, 1, 4], pl.FP32], y: pl.Out[pl.Tensor[[1, 1, 4], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.chip(x[r], y[r], device=r)
"#;

fn cast_of(last: f32) -> Vec<f32> {
    let _ = pld_ops::registry();
    let prog = pld_frontend::parse_str(PROGRAM).expect("parses");
    let mut inputs = Inputs::new();
    inputs.insert("x".into(), HostTensor::from_f32(vec![1, 1, 4], &[0.0, 1.0, 2.0, last]));
    let out = run(&prog, "host", &inputs, &SimConfig::ranks(1)).expect("runs");
    assert_eq!(out.outputs["y"].dtype, DataType::FP32);
    out.outputs["y"].to_f32()
}

#[test]
fn float_to_int_cast_rounds_to_nearest() {
    assert_eq!(cast_of(3.7), vec![4.0, 5.0, 6.0, 7.7]);
    assert_eq!(cast_of(-1.6), vec![-2.0, -1.0, 0.0, -3.6]);
    assert_eq!(cast_of(2.2), vec![2.0, 3.0, 4.0, 4.2]);
}
