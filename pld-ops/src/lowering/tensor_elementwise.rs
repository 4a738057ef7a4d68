//! Tensor-to-tile lowerings of the core elementwise tensor ops (`ConvertTensorToTileOps`):
//! `tensor.<op>(a, b)` becomes `tile.<op>` over Vec tiles; an operand that is still a GM
//! tensor is bridged by a whole-shape `tile.load` into Vec, an operand that already became
//! a tile (a computed value) passes through. The result value is re-typed as the tile.
//! `tensor.assemble(target, source, offsets)` is the store it means,
//! `tile.store(source, offsets, target)`, its source bridged to a Vec tile like an operand;
//! a 2-D GM source with dynamic rows (`out[:, 0:C] = win[:, 0:C]` over `[NR, C]`) is copied
//! a row at a time, since a PTO tile buffer needs static rows.

use super::comm::emit;
use pld_ir::{
    register_lowering, register_lowerings, Builder, Call, Diagnostic, Expr, Lowered, LoweringKind, Span,
    ValueId,
};

/// A tile operand for `e`: `e` itself when it is a tile, else a Vec load of the whole tensor
/// (rows padded to whole 32-byte blocks, the tensor's shape as the valid region).
pub fn as_tile(b: &mut Builder<'_>, e: &Expr) -> Result<Expr, Diagnostic> {
    let ty = b.type_of(e);
    let Some(t) = ty.as_tensor_like().cloned() else {
        return Ok(e.clone());
    };
    super::whole_vec_load(b, e, &t, "operand")
}

fn lower(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Result<(), Diagnostic> {
    b.span = span;
    let name = call.callee.name();
    let tile_op = format!("tile.{}", name.trim_start_matches("tensor."));
    let mut args = Vec::with_capacity(call.args.len());
    for (i, a) in call.args.iter().enumerate() {
        // Tile-tile ops convert both operands; tile-scalar ops only the first.
        let is_operand =
            i == 0 || b.type_of(a).as_tensor_like().is_some() || b.type_of(a).as_tile().is_some();
        args.push(if is_operand { as_tile(b, a)? } else { a.clone() });
    }
    let attrs = call.attr_args();
    let e = b.op(&tile_op, args, attrs)?;
    emit(b, results, e);
    Ok(())
}

fn lower_assemble(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    b.span = span;
    let attrs = call.attr_args();
    let [target, source, offsets] = call.args.as_slice() else {
        return Err(Diagnostic::error(span, "tensor.assemble takes (target, source, offsets)"));
    };
    if let Some(t) = b.type_of(source).as_tensor_like().cloned() {
        if let (2, None, Some(cols)) = (t.rank(), t.shape[0].as_int(), t.shape[1].as_int()) {
            assemble_by_rows(b, (target, source, offsets), (&t, cols), &attrs)?;
            emit(b, results, target.clone());
            return Ok(());
        }
    }
    let tile = as_tile(b, source)?;
    let e = b.op("tile.store", vec![tile, offsets.clone(), target.clone()], attrs)?;
    emit(b, results, e);
    Ok(())
}

/// `tensor.assemble` of a `[rows, cols]` GM source whose `rows` is dynamic: one `[1, cols]`
/// Vec load and store per row (rows padded to whole 32-byte blocks), the same bytes as the
/// whole-shape copy.
fn assemble_by_rows(
    b: &mut Builder<'_>,
    (target, source, offsets): (&Expr, &Expr, &Expr),
    (t, cols): (&pld_ir::TensorType, i64),
    attrs: &[(&str, pld_ir::Attr)],
) -> Result<(), Diagnostic> {
    let Some([row0, col0]) = offsets.as_tuple() else {
        return Err(Diagnostic::error(b.span, "tensor.assemble of a 2-D source needs two offsets"));
    };
    let (row0, col0) = (row0.clone(), col0.clone());
    let padded = super::row_aligned_cols(cols, t.dtype.bytes() as i64);
    b.for_range("row", (Expr::int(0), t.shape[0].clone(), Expr::int(1)), vec![], |b, i, _| {
        let row = b.assign_op(
            "row_vec",
            "tile.load",
            vec![
                source.clone(),
                Expr::tuple(vec![Expr::var(i), Expr::int(0)]),
                Expr::tuple(vec![Expr::int(1), Expr::int(padded)]),
                Expr::tuple(vec![Expr::int(1), Expr::int(cols)]),
            ],
            vec![("target_memory", pld_ir::Attr::Str("Vec".into()))],
        )?;
        let at =
            Expr::tuple(vec![Expr::binary(pld_ir::BinOp::Add, row0.clone(), Expr::var(i)), col0.clone()]);
        b.eval_op("tile.store", vec![Expr::var(row), at, target.clone()], attrs.to_vec())?;
        Ok(vec![])
    })?;
    Ok(())
}

register_lowering!("tensor.assemble", LoweringKind::TensorToTile, lower_assemble);
register_lowerings!(
    &["tensor.add", "tensor.sub", "tensor.mul", "tensor.div", "tensor.maximum", "tensor.minimum"],
    LoweringKind::TensorToTile,
    lower
);
register_lowerings!(
    &["tensor.adds", "tensor.subs", "tensor.muls", "tensor.divs", "tensor.cast"],
    LoweringKind::TensorToTile,
    lower
);
