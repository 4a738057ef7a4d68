//! InCore lowerings of the other tensor collectives (`LowerCompositeOps`), all on the
//! shared self-clearing credit barrier of [`super::comm`] with a mesh `[NR, 1]` signal:
//!
//! - `barrier(signal)`: one barrier, epilogue 1.
//! - `broadcast(target, signal, root)`: ready barrier, every rank pulls root's slice with
//!   `pld.tile.get`, epilogue 1.
//! - `reduce_scatter(target [NR, SIZE], signal)`: ready barrier; row `my_rank` in UB chunks
//!   (as the mesh allreduce's), each loaded, summed with every peer's and stored back; read-done
//!   barrier; epilogue 2.
//! - `allgather(local [1, SIZE], target [NR, SIZE], signal)`: push the local row into row
//!   `my_rank` of every rank (self included), barrier, epilogue 1.
//! - `all_to_all(input [NR, SIZE], target, signal)`: push row `dest` into row `my_rank` of
//!   every `dest`, barrier, epilogue 1.
//! - `all_to_all_v(input, target [NR*MAX_RECV, SIZE], signal, send_counts, recv_counts)`: per
//!   destination, clamp `send_counts[dest]` to `[0, MAX_RECV]`, publish the clamped count
//!   into `recv_counts[my_rank, 0]` on `dest` with a Set notify, and push exactly that many
//!   rows; barrier, epilogue 1. `MAX_RECV` is folded when the rank count is static, else
//!   computed as `target.shape[0] // nranks` at run time.
//!
//! Every put/get stages through a Vec tile of at most one UB chunk (`pld_runtime_abi::ub_stage`,
//! D-ops-13), which pto-isa slides over the transfer, and reduce_scatter's row goes in UB
//! chunks (D-ops-12): no collective's kernel outgrows UB, however long its rows.

use super::allreduce::{fold_peers, load_chunk, mesh_chunk_cols};
use super::comm::{
    bind_result, check_mesh_signal, floordiv, max, min, mul, store_valid_row, sub, tensor_of, ub_stage_tile,
    Cells, Comm, StagedPush,
};
use pld_ir::{
    register_lowering, register_lowerings, Attr, Builder, Call, Diagnostic, Expr, Lowered, LoweringKind,
    Span, Type, ValueId,
};
use pld_runtime_abi::NotifyOp;

fn arity(call: &Call, n: usize, span: Span) -> Result<(), Diagnostic> {
    if call.args.len() != n {
        return Err(Diagnostic::error(
            span,
            format!(
                "{} requires {n} positional argument(s), but got {}",
                call.callee.name(),
                call.args.len()
            ),
        ));
    }
    Ok(())
}

fn static_dim(b: &Builder<'_>, op: &str, what: &str, e: &Expr) -> Result<i64, Diagnostic> {
    e.as_int().ok_or_else(|| {
        Diagnostic::error(b.span, format!("{op} {what} must be a compile-time constant on the InCore path"))
    })
}

fn lower_barrier(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    b.span = span;
    arity(call, 1, span)?;
    let signal = call.args[0].clone();
    check_mesh_signal(b, "pld.tensor.barrier", &signal)?;
    let comm = Comm::setup(b, &signal, signal.clone())?;
    comm.close(b, Expr::int(1), results, signal)
}

/// The `(target, signal)` operands of a targeted collective on the InCore path: two
/// arguments, a mesh signal, a tensor target (whose fields come third).
fn target_and_signal(
    b: &mut Builder<'_>,
    call: &Call,
    op: &str,
    span: Span,
) -> Result<(Expr, Expr, pld_ir::TensorType), Diagnostic> {
    b.span = span;
    arity(call, 2, span)?;
    let (target, signal) = (call.args[0].clone(), call.args[1].clone());
    check_mesh_signal(b, op, &signal)?;
    let t = tensor_of(b, op, "target", &target)?;
    Ok((target, signal, t))
}

fn lower_broadcast(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    const OP: &str = "pld.tensor.broadcast";
    let (target, signal, t) = target_and_signal(b, call, OP, span)?;
    let (last, lead) = t
        .shape
        .split_last()
        .ok_or_else(|| Diagnostic::error(span, format!("{OP} target must have a dimension")))?;
    let cols = static_dim(b, OP, "target's innermost dim", last)?;
    // A dynamic leading dim (an `[NR, SIZE]` target) takes a stage of as many rows as fit one
    // UB chunk: pto-isa slides the transfer through the stage, and a stage taller than the
    // runtime extent moves the whole target at once.
    let rows: Option<i64> = lead.iter().map(Expr::as_int).product();
    let root = call.attr_int("root").unwrap_or(0);
    let mut comm = Comm::setup(b, &target, signal)?;
    comm.barrier(b, &Cells::Mesh)?;
    let stage = ub_stage_tile(b, "bcast_stage", rows.unwrap_or(i64::MAX), cols, t.dtype)?;
    b.eval_op(
        "pld.tile.get",
        vec![target.clone(), Expr::int(root), target.clone(), Expr::var(stage)],
        vec![],
    )?;
    comm.epilogue(b, &Cells::Mesh, Expr::int(1))?;
    bind_result(b, results, target);
    Ok(())
}

fn lower_reduce_scatter(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    const OP: &str = "pld.tensor.reduce_scatter";
    let (target, signal, t) = target_and_signal(b, call, OP, span)?;
    if t.rank() != 2 {
        return Err(Diagnostic::error(
            span,
            format!("{OP} target must be 2D [NR, SIZE], got {} dims", t.rank()),
        ));
    }
    let size = static_dim(b, OP, "SIZE", &t.shape[1])?;
    // Row `my_rank` in UB chunks (D-ops-12): each is reduced and stored before the next, so no
    // tile outgrows UB however long the row.
    let chunk = mesh_chunk_cols(t.dtype, Some(size));
    let mut comm = Comm::setup(b, &target, signal)?;
    comm.barrier(b, &Cells::Mesh)?;
    let (me, nranks) = (comm.my_rank, comm.nranks);
    b.for_range("col", (Expr::int(0), Expr::int(size), Expr::int(chunk)), vec![], |b, col, _| {
        let col = Expr::var(col);
        let valid = b.assign("valid_cols", min(Expr::int(chunk), sub(Expr::int(size), col.clone())));
        let valid = Expr::var(valid);
        let acc0 = load_chunk(b, &target, Expr::var(me), col.clone(), chunk, valid.clone(), "acc")?;
        let acc = fold_peers(b, (me, nranks), acc0, "tile.add", |b, peer| {
            let recv = b.assign_op(
                "recv",
                "pld.tile.remote_load",
                vec![
                    target.clone(),
                    Expr::var(peer),
                    Expr::tuple(vec![Expr::var(me), col.clone()]),
                    Expr::ints(&[1, chunk]),
                    Expr::tuple(vec![Expr::int(1), valid.clone()]),
                ],
                vec![],
            )?;
            b.assign_op("recv_full", "tile.fillpad_inplace", vec![Expr::var(recv), Expr::float(0.0)], vec![])
        })?;
        store_valid_row(b, acc, valid, (Expr::var(me), col), &target)?;
        Ok(vec![])
    })?;
    // Read done: every peer has finished reading my window before I return.
    comm.close(b, Expr::int(2), results, target)
}

/// The shape of a row-push collective: every rank TPUTs one `[1, SIZE]` row of its plain
/// `input` into row `me` of every peer's `target`, then joins one barrier. allgather sends
/// row 0 to everyone; all_to_all sends row `dest` to rank `dest`.
struct RowPush {
    op: &'static str,
    what: &'static str,
    stage: &'static str,
    loop_var: &'static str,
    row_per_dest: bool,
}

/// The row-push collectives: (op, what its input must be, stage tile name, loop variable,
/// whether rank `dest` gets row `dest` rather than row 0).
const ROW_PUSHES: [RowPush; 2] = [
    RowPush::new(
        "pld.tensor.allgather",
        "local_data must be a plain Tensor [1, SIZE]",
        "gather_stage",
        "peer",
        false,
    ),
    RowPush::new(
        "pld.tensor.all_to_all",
        "input must be a plain Tensor [NR, SIZE]",
        "a2a_stage",
        "dest",
        true,
    ),
];

impl RowPush {
    const fn new(
        op: &'static str,
        what: &'static str,
        stage: &'static str,
        loop_var: &'static str,
        row_per_dest: bool,
    ) -> RowPush {
        RowPush { op, what, stage, loop_var, row_per_dest }
    }
}

fn lower_row_push(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    let Some(spec) = ROW_PUSHES.iter().find(|p| p.op == call.callee.name()) else {
        return Err(Diagnostic::error(span, format!("{} is not a row-push collective", call.callee.name())));
    };
    let op = spec.op;
    b.span = span;
    arity(call, 3, span)?;
    let (input, target, signal) = (call.args[0].clone(), call.args[1].clone(), call.args[2].clone());
    let it = b.type_of(&input);
    let Type::Tensor(i) = it else {
        return Err(Diagnostic::error(
            input.span.or(span),
            format!("{op} {} on the InCore path, got {}", spec.what, it.kind_name()),
        ));
    };
    check_mesh_signal(b, op, &signal)?;
    let size = static_dim(b, op, "SIZE", i.shape.last().unwrap_or(&Expr::int(0)))?;
    let comm = Comm::setup(b, &target, signal)?;
    let stage = ub_stage_tile(b, spec.stage, 1, size, i.dtype)?;
    let push = StagedPush { target, src: input, stage };
    let me = comm.my_rank;
    b.for_range(
        spec.loop_var,
        (Expr::int(0), Expr::var(comm.nranks), Expr::int(1)),
        vec![],
        |b, dest, _| {
            let src_row = if spec.row_per_dest { Expr::var(dest) } else { Expr::int(0) };
            let offsets =
                (Expr::tuple(vec![Expr::var(me), Expr::int(0)]), Expr::tuple(vec![src_row, Expr::int(0)]));
            push.to_peer(b, Expr::var(dest), offsets, Expr::ints(&[1, size]))?;
            Ok(vec![])
        },
    )?;
    comm.close(b, Expr::int(1), results, push.target)
}

fn lower_all_to_all_v(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    const OP: &str = "pld.tensor.all_to_all_v";
    b.span = span;
    arity(call, 5, span)?;
    let [input, target, signal, send, recv] = [0, 1, 2, 3, 4].map(|i| call.args[i].clone());
    if let Some(c) = call.attr_int("core_num") {
        if c != 1 {
            return Err(Diagnostic::error(
                span,
                format!("{OP} core_num={c} is not supported; only core_num=1"),
            ));
        }
    }
    check_mesh_signal(b, OP, &signal)?;
    let t = tensor_of(b, OP, "target", &target)?;
    let s = tensor_of(b, OP, "signal", &signal)?;
    let sc = tensor_of(b, OP, "send_counts", &send)?;
    let size = static_dim(b, OP, "SIZE", t.shape.last().unwrap_or(&Expr::int(0)))?;
    // MAX_RECV = target rows / NR: folded when both are static, else derived at run time
    // from the rank count (as the seed's HOST rail does).
    let static_max_recv = match (s.shape[0].as_int(), t.shape[0].as_int()) {
        (Some(nr), Some(cap)) => {
            if nr <= 0 || cap % nr != 0 {
                return Err(Diagnostic::error(
                    span,
                    format!("{OP} signal dim 0 ({nr}) must divide target dim 0 ({cap})"),
                ));
            }
            Some(cap / nr)
        }
        _ => None,
    };
    let comm = Comm::setup(b, &target, signal)?;
    let max_recv = match static_max_recv {
        Some(m) => Expr::int(m),
        None => Expr::var(b.assign("max_recv", floordiv(t.shape[0].clone(), Expr::var(comm.nranks)))),
    };
    let stage = ub_stage_tile(b, "a2av_stage", 1, size, t.dtype)?;
    let push = StagedPush { target, src: input, stage };
    let me = comm.my_rank;
    b.for_range("dest", (Expr::int(0), Expr::var(comm.nranks), Expr::int(1)), vec![], |b, dest, _| {
        let idx = if sc.rank() == 1 {
            Expr::tuple(vec![Expr::var(dest)])
        } else {
            Expr::tuple(vec![Expr::var(dest), Expr::int(0)])
        };
        let cnt = b.assign_op("count", "tensor.read", vec![send.clone(), idx], vec![])?;
        let rows = b.assign("rows", min(max(Expr::var(cnt), Expr::int(0)), max_recv.clone()));
        b.eval_op(
            "pld.system.notify",
            vec![
                recv.clone(),
                Expr::var(dest),
                Expr::tuple(vec![Expr::var(me), Expr::int(0)]),
                Expr::var(rows),
            ],
            vec![("op", Attr::Int(NotifyOp::Set as i64))],
        )?;
        let offsets = (
            Expr::tuple(vec![mul(Expr::var(me), max_recv.clone()), Expr::int(0)]),
            Expr::tuple(vec![mul(Expr::var(dest), max_recv.clone()), Expr::int(0)]),
        );
        push.to_peer(b, Expr::var(dest), offsets, Expr::tuple(vec![Expr::var(rows), Expr::int(size)]))?;
        Ok(vec![])
    })?;
    comm.close(b, Expr::int(1), results, push.target)
}

register_lowering!("pld.tensor.barrier", LoweringKind::Composite, lower_barrier);
register_lowering!("pld.tensor.broadcast", LoweringKind::Composite, lower_broadcast);
register_lowering!("pld.tensor.reduce_scatter", LoweringKind::Composite, lower_reduce_scatter);
register_lowerings!(&[ROW_PUSHES[0].op, ROW_PUSHES[1].op], LoweringKind::Composite, lower_row_push);
register_lowering!("pld.tensor.all_to_all_v", LoweringKind::Composite, lower_all_to_all_v);
