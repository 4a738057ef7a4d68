//! Which operand a call's result *is* (`Call::written_result_operand`), read from the
//! registry's effects on a kernel written as users write it: a rebinding store returns its
//! third operand, a collective the window it reduces or gathers into, whatever its position;
//! a load or a pure computation returns none.

use pld_ir::{ExprKind, StmtKind};

const KERNEL: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")


@pl.jit.incore
def k(
    inp: pl.Tensor[[1, 64], pl.FP32],
    data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
    rows: pl.InOut[pld.DistributedTensor[[NR, 64], pl.FP32]],
    sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    t = pl.load(inp, [0, 0], [1, 64])
    data = pl.store(t, [0, 0], data)
    data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max)
    rows = pld.tensor.allgather(inp, rows, sig)
    u = pl.add(t, t)
"#;

#[test]
fn a_writing_op_returns_the_operand_it_wrote() {
    let _ = pld_ops::registry();
    let p = pld_frontend::parse_str(KERNEL).expect("parses");
    let f = &p.functions[0];
    let got: Vec<(String, Option<usize>)> = f
        .body
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { value, .. } => match &value.kind {
                ExprKind::Call(c) => Some((c.callee.name().to_string(), c.written_result_operand(&f.values))),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let want: Vec<(String, Option<usize>)> = [
        ("tile.load", None),
        ("tile.store", Some(2)),
        ("pld.tensor.allreduce", Some(0)),
        ("pld.tensor.allgather", Some(1)),
        ("tile.add", None),
    ]
    .iter()
    .map(|(n, i)| (n.to_string(), *i))
    .collect();
    assert_eq!(got, want);
}
