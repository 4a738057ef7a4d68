//! `tensor.assemble` inside a kernel is the `tile.store` it means after
//! ConvertTensorToTileOps: of a computed value (a tile) directly, of a GM tensor through a Vec
//! load; a tensor op nested in its argument is lowered as well. All run on the simulator
//! against a golden and compile to PTO.

use pld_ir::DataType;
use pld_sim::Schedule;
use pld_testkit::e2e::{inputs, lower, parse, run_ok, stack, unstack};

const ROWS: usize = 4;
const COLS: usize = 16;

const ROW_UPDATE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class RowUpdate:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]],
                z: pl.Out[pl.Tensor[[4, 16], pl.FP32]], w: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        for row in pl.range(4):
            x_row = pl.slice(x, [1, 16], [row, 0])
            y_row = pl.add(x_row, 1.0)
            y = pl.assemble(y, y_row, [row, 0])
        z = pl.assemble(z, x, [0, 0])
        pl.assemble(w, pl.mul(x, x), [0, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def child(self, x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]],
              z: pl.Out[pl.Tensor[[4, 16], pl.FP32]], w: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        y = self.add_one(x, y, z, w)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[pl.dynamic("NR"), 4, 16], pl.FP32],
                  y: pl.Out[pl.Tensor[[pl.dynamic("NR"), 4, 16], pl.FP32]],
                  z: pl.Out[pl.Tensor[[pl.dynamic("NR"), 4, 16], pl.FP32]],
                  w: pl.Out[pl.Tensor[[pl.dynamic("NR"), 4, 16], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.child(x[r], y[r], z[r], w[r], device=r)
"#;

#[test]
fn assemble_of_a_computed_row_is_a_tile_store() {
    let prog = lower(&parse(ROW_UPDATE)).unwrap_or_else(|d| panic!("{d:?}"));
    let k = pld_ir::print_function(prog.function("add_one").expect("kernel"));
    assert!(k.contains("pl.tile.store(y_row"), "{k}");
    assert!(k.contains("pl.tile.store(x_vec"), "the GM source is loaded first:\n{k}");
    assert!(!k.contains("pl.tensor.assemble("), "{k}");
    // A tensor op nested in an argument is lowered too (hoisted into its own statement).
    assert!(k.contains("pl.tile.mul(") && !k.contains("pl.tensor.mul("), "{k}");
    pld_codegen_pto::emit_program(&prog, &pld_codegen_pto::CodegenOptions::default())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
    for p in [2, 3] {
        let per: Vec<Vec<f64>> =
            (0..p).map(|r| (0..ROWS * COLS).map(|i| (r * 1000 + i) as f64 * 0.5).collect()).collect();
        let ins = inputs(vec![("x", stack(DataType::FP32, &per, &[ROWS, COLS]))]);
        let out = run_ok(&prog, "host_orch", p, &ins, Schedule::Deterministic, "row update");
        let (ys, zs, ws) =
            (unstack(&out.outputs["y"]), unstack(&out.outputs["z"]), unstack(&out.outputs["w"]));
        for r in 0..p {
            let want: Vec<f64> = per[r].iter().map(|v| v + 1.0).collect();
            assert_eq!(ys[r], want, "y rank {r}");
            assert_eq!(zs[r], per[r], "z rank {r}");
            assert_eq!(ws[r], per[r].iter().map(|v| v * v).collect::<Vec<_>>(), "w rank {r}");
        }
    }
}
