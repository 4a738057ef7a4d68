//! The InCore lowering of `pld.tensor.allreduce`: the mesh schedule (default) and the ring
//! schedule (`mode="ring"`), both on the self-clearing credit barrier of [`super::comm`].
//!
//! Mesh: a fully valid packed target is one logical `[1, N]` stream processed in UB chunks
//! of at most 16 KiB; a static `N` below that shrinks the chunk to the smallest 32-byte
//! aligned width covering `N`. The last chunk keeps the physical width and carries
//! `valid_shape=[1, min(chunk, N - col)]`. A ready barrier (generation 1) precedes the chunk
//! loop; each chunk loads, accumulates every peer's chunk, then passes a barrier at
//! generation `2 + chunk index` (read done) before storing back. The epilogue subtracts
//! `1 + ceil(N / chunk)`. A partially valid target is reduced as one rectangle (at most 16
//! KiB) with barriers 1 and 2.
//!
//! Ring: reduce-scatter then allgather over `NR` segments with balanced FP32 boundaries
//! (`floor(i*SIZE/NR)`) or FP16 boundaries rounded up to 16 elements; every sub-chunk
//! passes a ready barrier (`2k+1`) and a read-done barrier (`2k+2`) on its round's signal
//! row; the epilogue clears every row.

use super::comm::{
    add, bind_result, ceil_div, check_mesh_signal, floordiv, min, mul, product, store_valid_row, sub, Cells,
    Comm,
};
use pld_ir::{
    register_lowering, Attr, BinOp, Builder, Call, DataType, Diagnostic, Expr, Lowered, LoweringKind, Span,
    TensorType, Type, ValueId,
};
use pld_runtime_abi::ReduceOp;

/// Internal call attribute (never a DSL kwarg: the frontend rejects unknown kwargs) that the
/// builtin-kernel lowering sets on the collective call it expands: the tile width, in elements,
/// the seed gives the host builtin ("the host builtin uses 256-element chunks"), in place of
/// the InCore lowering's UB-bounded chunk.
pub const BUILTIN_TILE_ELEMS_ATTR: &str = "__builtin_tile_elems";

/// Bytes of one UB chunk.
pub const CHUNK_BYTES: i64 = pld_runtime_abi::UB_CHUNK_BYTES;
/// PTO tile alignment in bytes.
pub const ALIGN_BYTES: i64 = 32;

const OP: &str = "pld.tensor.allreduce";

pub(super) fn reduce_op_name(op: i64) -> Result<&'static str, Diagnostic> {
    match ReduceOp::from_i64(op).ok() {
        Some(ReduceOp::Sum) => Ok("tile.add"),
        Some(ReduceOp::Max) => Ok("tile.maximum"),
        Some(ReduceOp::Min) => Ok("tile.minimum"),
        Some(ReduceOp::Prod) => Ok("tile.mul"),
        None => Err(Diagnostic::error(Span::DUMMY, format!("{OP} op must be a ReduceOp (got int {op})"))),
    }
}

/// The mesh chunk width for `dtype` and flat extent `n`.
pub fn mesh_chunk_cols(dtype: DataType, n: Option<i64>) -> i64 {
    let eb = dtype.bytes() as i64;
    let chunk = CHUNK_BYTES / eb;
    let align = ALIGN_BYTES / eb;
    match n {
        Some(e) if e > 0 && e < chunk => (e + align - 1) / align * align,
        _ => chunk,
    }
}

fn lower_allreduce(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    b.span = span;
    if call.args.len() != 2 {
        return Err(Diagnostic::error(
            span,
            format!("{OP} inside a kernel requires an explicit signal window (target, signal); only a host orchestrator may omit it"),
        ));
    }
    let core_num = call.attr_int("core_num").unwrap_or(1);
    if core_num != 1 {
        return Err(Diagnostic::error(
            span,
            format!("{OP} core_num={core_num} is only supported in a host orchestrator; an InCore allreduce runs on one core"),
        ));
    }
    let mode = call.attr("mode").and_then(Attr::as_str).unwrap_or("mesh").to_string();
    let target = call.args[0].clone();
    let tt = target_tensor(b, &target)?;
    if let Some(v) = &tt.view {
        if v.layout != pld_ir::Layout::Nd {
            return Err(Diagnostic::error(span, format!("{OP} target view only supports ND layout")));
        }
        if !v.stride.is_empty() && !is_packed(&tt.shape, &v.stride) {
            return Err(Diagnostic::error(
                span,
                format!("{OP} target shape reinterpret requires a packed source"),
            ));
        }
    }
    let reduce = reduce_op_name(call.attr_int("op").unwrap_or(0))?;
    match mode.as_str() {
        "mesh" => mesh(b, call, &tt, reduce, results),
        "ring" => ring(b, call, &tt, reduce, results),
        other => {
            Err(Diagnostic::error(span, format!("{OP} mode must be \"mesh\" or \"ring\", got {other:?}")))
        }
    }
}

fn target_tensor(b: &Builder<'_>, target: &Expr) -> Result<TensorType, Diagnostic> {
    match b.type_of(target) {
        Type::DistTensor(d) => Ok(d.tensor),
        other => Err(Diagnostic::error(
            b.span,
            format!("{OP} target must be a DistributedTensor (window-bound), got {}", other.kind_name()),
        )),
    }
}

fn is_packed(shape: &[Expr], stride: &[Expr]) -> bool {
    let mut expect = Expr::int(1);
    for (d, s) in shape.iter().zip(stride).rev() {
        if *s != expect {
            return false;
        }
        expect = mul(expect, d.clone());
    }
    true
}

/// Loads `[1, chunk]` at `[row, col]` with `valid` columns, zero-padded to a fully valid tile.
#[allow(clippy::too_many_arguments)]
pub(super) fn load_chunk(
    b: &mut Builder<'_>,
    t2d: &Expr,
    row: Expr,
    col: Expr,
    chunk: i64,
    valid: Expr,
    name: &str,
) -> Result<ValueId, Diagnostic> {
    let loaded = b.assign_op(
        format!("{name}_loaded"),
        "tile.load",
        vec![
            t2d.clone(),
            Expr::tuple(vec![row, col]),
            Expr::ints(&[1, chunk]),
            Expr::tuple(vec![Expr::int(1), valid]),
        ],
        vec![("target_memory", Attr::Str("Vec".into()))],
    )?;
    b.assign_op(name, "tile.fillpad_inplace", vec![Expr::var(loaded), Expr::float(0.0)], vec![])
}

/// Pulls `[1, chunk]` at `[row, col]` from `peer` with `valid` columns; FP16 rounds only the
/// physical read span to 32 bytes and restores the logical valid shape; zero-padded.
#[allow(clippy::too_many_arguments)]
pub(super) fn remote_chunk(
    b: &mut Builder<'_>,
    t2d: &Expr,
    peer: Expr,
    row: Expr,
    col: Expr,
    chunk: i64,
    valid: Expr,
    dtype: DataType,
) -> Result<ValueId, Diagnostic> {
    let offsets = Expr::tuple(vec![row, col]);
    let shape = Expr::ints(&[1, chunk]);
    let recv = if dtype.bytes() == 2 {
        let align = ALIGN_BYTES / 2;
        let span = min(mul(ceil_div(valid.clone(), align), Expr::int(align)), Expr::int(chunk));
        let padded = b.assign_op(
            "recv_padded",
            "pld.tile.remote_load",
            vec![t2d.clone(), peer, offsets, shape, Expr::tuple(vec![Expr::int(1), span])],
            vec![("allow_physical_tail_padding", Attr::Bool(true))],
        )?;
        b.assign_op("recv", "tile.set_validshape", vec![Expr::var(padded), Expr::int(1), valid], vec![])?
    } else {
        b.assign_op(
            "recv",
            "pld.tile.remote_load",
            vec![t2d.clone(), peer, offsets, shape, Expr::tuple(vec![Expr::int(1), valid])],
            vec![],
        )?
    };
    b.assign_op("recv_full", "tile.fillpad_inplace", vec![Expr::var(recv), Expr::float(0.0)], vec![])
}

/// `acc0` combined (`reduce`) with what `pull(b, peer)` brings from every other rank, in rank
/// order: the peer loop of every mesh-style reduction (the allreduce's chunks and rectangle,
/// the reduce_scatter's chunks). Returns the combined tile.
pub(super) fn fold_peers(
    b: &mut Builder<'_>,
    (me, nranks): (ValueId, ValueId),
    acc0: ValueId,
    reduce: &str,
    pull: impl FnOnce(&mut Builder<'_>, ValueId) -> Result<ValueId, Diagnostic>,
) -> Result<ValueId, Diagnostic> {
    let acc = b.for_range(
        "peer",
        (Expr::int(0), Expr::var(nranks), Expr::int(1)),
        vec![("acc", Expr::var(acc0))],
        |b, peer, carried| {
            let acc = carried[0];
            let merged = b.if_else(
                Expr::binary(BinOp::Ne, Expr::var(peer), Expr::var(me)),
                &["acc_next"],
                |b| {
                    let recv = pull(b, peer)?;
                    let r = b.assign_op("acc_sum", reduce, vec![Expr::var(acc), Expr::var(recv)], vec![])?;
                    Ok(vec![Expr::var(r)])
                },
                |_| Ok(vec![Expr::var(acc)]),
            )?;
            Ok(vec![Expr::var(merged[0])])
        },
    )?;
    Ok(acc[0])
}

fn mesh(b: &mut Builder<'_>, call: &Call, tt: &TensorType, reduce: &str, results: &[ValueId]) -> Lowered {
    let target = call.args[0].clone();
    let signal = call.args[1].clone();
    check_mesh_signal(b, OP, &signal)?;
    let cells = Cells::Mesh;
    let mut comm = Comm::setup(b, &target, signal)?;
    let dtype = tt.dtype;
    let chunk_elems = CHUNK_BYTES / dtype.bytes() as i64;
    let partial = tt.view.as_ref().is_some_and(|v| !v.valid_shape.is_empty());
    if partial {
        return mesh_rect(b, &mut comm, &cells, tt, &target, reduce, chunk_elems, results);
    }
    let e = product(&tt.shape);
    // A builtin kernel's renderer asks for the seed's host-builtin tile; a kernel's own
    // allreduce uses the UB-bounded chunk.
    let chunk = match call.attr_int(BUILTIN_TILE_ELEMS_ATTR) {
        Some(t) if t > 0 => t.min(chunk_elems),
        _ => mesh_chunk_cols(dtype, e.as_int()),
    };
    let t2d = b.assign_op(
        "target_2d",
        "tensor.view",
        vec![target.clone(), Expr::tuple(vec![Expr::int(1), e.clone()])],
        vec![],
    )?;
    let t2d = Expr::var(t2d);
    comm.barrier(b, &cells)?;
    let me = comm.my_rank;
    let nranks = comm.nranks;
    let comm_ref = &comm;
    b.for_range("col", (Expr::int(0), e.clone(), Expr::int(chunk)), vec![], |b, col, _| {
        let col = Expr::var(col);
        let valid = b.assign("valid_cols", min(Expr::int(chunk), sub(e.clone(), col.clone())));
        let valid = Expr::var(valid);
        let acc0 = load_chunk(b, &t2d, Expr::int(0), col.clone(), chunk, valid.clone(), "acc")?;
        let acc = fold_peers(b, (me, nranks), acc0, reduce, |b, peer| {
            remote_chunk(b, &t2d, Expr::var(peer), Expr::int(0), col.clone(), chunk, valid.clone(), dtype)
        })?;
        comm_ref.barrier_at(b, &cells, add(Expr::int(2), floordiv(col.clone(), Expr::int(chunk))))?;
        store_valid_row(b, acc, valid.clone(), (Expr::int(0), col), &t2d)?;
        Ok(vec![])
    })?;
    comm.epilogue(b, &cells, add(Expr::int(1), ceil_div(e, chunk)))?;
    bind_result(b, results, target);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn mesh_rect(
    b: &mut Builder<'_>,
    comm: &mut Comm,
    cells: &Cells,
    tt: &TensorType,
    target: &Expr,
    reduce: &str,
    chunk_elems: i64,
    results: &[ValueId],
) -> Result<(), Diagnostic> {
    let valid = tt.effective_valid_shape().to_vec();
    let rank = tt.shape.len();
    // The valid box must collapse contiguously: every dim strictly between the first and
    // the last must be fully valid.
    for (i, (v, d)) in valid.iter().zip(&tt.shape).enumerate().take(rank.saturating_sub(1)).skip(1) {
        if v != d {
            return Err(Diagnostic::error(
                b.span,
                format!("{OP} partial valid_shape must be row-major contiguous; dimension {i} is only partially valid"),
            ));
        }
    }
    let (lead, last) = tt.shape.split_at(rank - 1);
    let (vlead, vlast) = valid.split_at(rank - 1);
    let phys = [product(lead), last[0].clone()];
    let vrect = [product(vlead), vlast[0].clone()];
    let mut rect: [Expr; 2] =
        if vrect.iter().all(|d| d.as_int().is_some()) { vrect.clone() } else { phys.clone() };
    let elems = match (rect[0].as_int(), rect[1].as_int()) {
        (Some(r), Some(c)) => r * c,
        _ => i64::MAX,
    };
    if elems > chunk_elems {
        return Err(Diagnostic::error(
            b.span,
            format!(
                "{OP} partial valid region must fit one 16 KiB UB tile ({chunk_elems} elements), got {}",
                if elems == i64::MAX { "a dynamic extent".to_string() } else { elems.to_string() }
            ),
        ));
    }
    // Whole 32-byte tile rows (the bound above is on the logical rectangle, which stays the
    // tiles' valid extent).
    if let Some(c) = rect[1].as_int() {
        rect[1] = Expr::int(super::row_aligned_cols(c, tt.dtype.bytes() as i64));
    }
    let t2d = b.assign_op(
        "target_2d",
        "tensor.view",
        vec![target.clone(), Expr::tuple(phys.to_vec()), Expr::tuple(vrect.to_vec())],
        vec![],
    )?;
    let t2d = Expr::var(t2d);
    comm.barrier(b, cells)?;
    let zero = Expr::ints(&[0, 0]);
    let acc0 = b.assign_op(
        "acc",
        "tile.load",
        vec![t2d.clone(), zero.clone(), Expr::tuple(rect.to_vec()), Expr::tuple(vrect.to_vec())],
        vec![("target_memory", Attr::Str("Vec".into()))],
    )?;
    let acc = fold_peers(b, (comm.my_rank, comm.nranks), acc0, reduce, |b, peer| {
        b.assign_op(
            "recv",
            "pld.tile.remote_load",
            vec![
                t2d.clone(),
                Expr::var(peer),
                zero.clone(),
                Expr::tuple(rect.to_vec()),
                Expr::tuple(vrect.to_vec()),
            ],
            vec![],
        )
    })?;
    comm.barrier(b, cells)?;
    b.eval_op("tile.store", vec![Expr::var(acc), zero, t2d], vec![])?;
    comm.epilogue(b, cells, Expr::int(2))?;
    bind_result(b, results, target.clone());
    Ok(())
}

/// Ring segment boundary `b(i)` for `size` elements over `nr` ranks.
pub fn ring_boundary(dtype: DataType, i: Expr, size: Expr, nr: Expr) -> Expr {
    if dtype.bytes() == 2 {
        let align = ALIGN_BYTES / 2;
        let num = mul(i, size.clone());
        let den = mul(nr, Expr::int(align));
        // ceil(num / den) * 16, capped at size.
        let c = floordiv(add(num, sub(den.clone(), Expr::int(1))), den);
        min(size, mul(c, Expr::int(align)))
    } else {
        floordiv(mul(i, size), nr)
    }
}

/// The ring signal must be an INT32 `[2*(NR-1), NR]` window; returns its static `NR`, if any.
fn check_ring_signal(b: &Builder<'_>, signal: &Expr) -> Result<Option<i64>, Diagnostic> {
    let sig_ty = b.type_of(signal);
    let Some(st) = sig_ty.as_dist() else {
        return Err(Diagnostic::error(
            b.span,
            format!(
                "{OP} ring signal must be a DistributedTensor (window-bound), got {}",
                sig_ty.kind_name()
            ),
        ));
    };
    if st.rank() != 2 {
        return Err(Diagnostic::error(
            b.span,
            format!("{OP} ring signal must be 2-D [2*(NR-1), NR], got rank {}", st.rank()),
        ));
    }
    if st.dtype != DataType::INT32 {
        return Err(Diagnostic::error(
            b.span,
            format!("{OP} ring signal must have INT32 element type, got {}", st.dtype),
        ));
    }
    if let (Some(r), Some(c)) = (st.shape[0].as_int(), st.shape[1].as_int()) {
        if r != 2 * (c - 1) {
            return Err(Diagnostic::error(
                b.span,
                format!("{OP} ring signal shape must be [2*(NR-1), NR]; got [{r}, {c}] (expected {} rows for NR={c})", 2 * (c - 1)),
            ));
        }
    }
    Ok(st.shape[1].as_int())
}

/// What the active branch of a ring sub-chunk computes: the left neighbour's chunk reduced
/// into mine (reduce-scatter) or copied (allgather).
fn ring_chunk_value(
    b: &mut Builder<'_>,
    phase: Phase,
    t2d: &Expr,
    left: Expr,
    (col, chunk, valid): (Expr, i64, Expr),
    dtype: DataType,
    reduce: &str,
) -> Result<Vec<Expr>, Diagnostic> {
    let recv = remote_chunk(b, t2d, left, Expr::int(0), col.clone(), chunk, valid.clone(), dtype)?;
    let v = match phase {
        Phase::ReduceScatter => {
            let local = load_chunk(b, t2d, Expr::int(0), col, chunk, valid, "local")?;
            b.assign_op("reduced", reduce, vec![Expr::var(local), Expr::var(recv)], vec![])?
        }
        Phase::AllGather => b.assign_op(
            "gathered",
            "tile.move",
            vec![Expr::var(recv)],
            vec![("target_memory", Attr::Str("Vec".into()))],
        )?,
    };
    Ok(vec![Expr::var(v)])
}

fn ring(b: &mut Builder<'_>, call: &Call, tt: &TensorType, reduce: &str, results: &[ValueId]) -> Lowered {
    let target = call.args[0].clone();
    let signal = call.args[1].clone();
    let nr_static = check_ring_signal(b, &signal)?;
    // Valid prefix: every dim but the first must be fully valid.
    let valid = tt.effective_valid_shape().to_vec();
    for (i, (v, d)) in valid.iter().zip(&tt.shape).enumerate().skip(1) {
        if v != d {
            return Err(Diagnostic::error(
                b.span,
                format!("{OP} ring partial valid_shape must be a contiguous row-major prefix; dimension {i} is only partially valid"),
            ));
        }
    }
    let phys = product(&tt.shape);
    let size = product(&valid);
    let dtype = tt.dtype;
    let eb = dtype.bytes() as i64;
    let chunk_elems = CHUNK_BYTES / eb;
    let align = ALIGN_BYTES / eb;
    let cells_row = |row: Expr| Cells::Ring { row };
    let mut comm = Comm::setup(b, &target, signal)?;
    let nr = nr_static.map_or(Expr::var(comm.nranks), Expr::int);
    let mut max_seg = ceil_div_expr(size.clone(), nr.clone());
    if eb == 2 {
        max_seg = min(add(max_seg, Expr::int(15)), size.clone());
    }
    let chunk = match max_seg.as_int() {
        Some(m) if m > 0 && m < chunk_elems => (m + align - 1) / align * align,
        _ => chunk_elems,
    };
    let t2d = b.assign_op(
        "target_2d",
        "tensor.view",
        vec![
            target.clone(),
            Expr::tuple(vec![Expr::int(1), phys]),
            Expr::tuple(vec![Expr::int(1), size.clone()]),
        ],
        vec![],
    )?;
    let t2d = Expr::var(t2d);
    let me = Expr::var(comm.my_rank);
    let left = b
        .assign("left", Expr::binary(BinOp::Mod, add(sub(me.clone(), Expr::int(1)), nr.clone()), nr.clone()));
    let rounds = sub(nr.clone(), Expr::int(1));
    for phase in [Phase::ReduceScatter, Phase::AllGather] {
        let comm_ref = &comm;
        b.for_range("step", (Expr::int(0), rounds.clone(), Expr::int(1)), vec![], |b, s, _| {
            let s = Expr::var(s);
            let (seg, row) = match phase {
                Phase::ReduceScatter => (
                    Expr::binary(
                        BinOp::Mod,
                        add(sub(me.clone(), add(s.clone(), Expr::int(2))), mul(Expr::int(2), nr.clone())),
                        nr.clone(),
                    ),
                    s.clone(),
                ),
                Phase::AllGather => (
                    Expr::binary(
                        BinOp::Mod,
                        add(sub(me.clone(), add(s.clone(), Expr::int(1))), nr.clone()),
                        nr.clone(),
                    ),
                    add(s.clone(), rounds.clone()),
                ),
            };
            let seg = b.assign("seg", seg);
            let start = b.assign("seg_start", ring_boundary(dtype, Expr::var(seg), size.clone(), nr.clone()));
            let end = ring_boundary(dtype, add(Expr::var(seg), Expr::int(1)), size.clone(), nr.clone());
            let seg_cols = b.assign("seg_cols", sub(end, Expr::var(start)));
            let cells = cells_row(row);
            let col_name = match phase {
                Phase::ReduceScatter => "rs_col",
                Phase::AllGather => "ag_col",
            };
            b.for_range(
                col_name,
                (Expr::int(0), max_seg.clone(), Expr::int(chunk)),
                vec![],
                |b, sub_col, _| {
                    let subcol = Expr::var(sub_col);
                    let k = floordiv(subcol.clone(), Expr::int(chunk));
                    let active =
                        b.assign("active", Expr::binary(BinOp::Lt, subcol.clone(), Expr::var(seg_cols)));
                    // Clamp so an inactive sub-chunk still builds in-bounds expressions.
                    let valid = b.assign(
                        "valid_cols",
                        max(min(Expr::int(chunk), sub(Expr::var(seg_cols), subcol.clone())), Expr::int(1)),
                    );
                    let col = b.assign(
                        "col",
                        min(add(Expr::var(start), subcol.clone()), sub(size.clone(), Expr::var(valid))),
                    );
                    comm_ref.barrier_at(b, &cells, add(mul(Expr::int(2), k.clone()), Expr::int(1)))?;
                    let (col, valid) = (Expr::var(col), Expr::var(valid));
                    let value = b.if_else(
                        Expr::var(active),
                        &["chunk_value"],
                        |b| {
                            let at = (col.clone(), chunk, valid.clone());
                            ring_chunk_value(b, phase, &t2d, Expr::var(left), at, dtype, reduce)
                        },
                        |b| {
                            // Same tile type as the active branch, without touching memory.
                            let p = b.assign_op(
                                "placeholder",
                                "tile.full",
                                vec![Expr::ints(&[1, chunk]), Expr::float(0.0)],
                                vec![
                                    ("dtype", Attr::DType(dtype)),
                                    ("target_memory", Attr::Str("Vec".into())),
                                ],
                            )?;
                            Ok(vec![Expr::var(p)])
                        },
                    )?;
                    comm_ref.barrier_at(b, &cells, add(mul(Expr::int(2), k), Expr::int(2)))?;
                    b.if_then(Expr::var(active), |b| {
                        store_valid_row(b, value[0], valid.clone(), (Expr::int(0), col.clone()), &t2d)
                    })?;
                    Ok(vec![])
                },
            )?;
            Ok(vec![])
        })?;
    }
    let rows = mul(Expr::int(2), rounds);
    let total = mul(Expr::int(2), ceil_div_expr(max_seg, Expr::int(chunk)));
    let comm_ref = &mut comm;
    b.for_range("row", (Expr::int(0), rows, Expr::int(1)), vec![], |b, row, _| {
        comm_ref.epilogue(b, &cells_row(Expr::var(row)), total)?;
        Ok(vec![])
    })?;
    bind_result(b, results, target);
    Ok(())
}

#[derive(Clone, Copy)]
enum Phase {
    ReduceScatter,
    AllGather,
}

fn ceil_div_expr(a: Expr, b: Expr) -> Expr {
    floordiv(add(a, sub(b.clone(), Expr::int(1))), b)
}

fn max(a: Expr, b: Expr) -> Expr {
    super::comm::max(a, b)
}

register_lowering!("pld.tensor.allreduce", LoweringKind::Composite, lower_allreduce);
