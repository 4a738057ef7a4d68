//! Tensor-to-tile lowerings of the tensor-level transfer ops (`ConvertTensorToTileOps`).
//!
//! - `pld.tensor.put` / `pld.tensor.get` get a Vec staging tile `[rows, cols]` sized from the
//!   flattened transfer (`rows` = product of the leading dims, `cols` = the innermost dim),
//!   each capped by `chunk_rows` / `chunk_cols` when set (a dynamic dim takes the chunk), or
//!   two distinct tiles (ping, pong) when `pipeline=True` — each padded to whole 32-byte rows
//!   with the transfer width as its valid region (`tile.set_validshape`); then the internal
//!   `pld.tile.put` / `pld.tile.get` with the staging tile(s) and only `atomic` (put) kept.
//! - `pld.tensor.put` of a computed value (a tile) is a user error pointing at
//!   `pld.tensor.remote_store`.

use super::comm::{emit, product};
use pld_ir::{register_lowering, Attr, Builder, Call, Diagnostic, Expr, LoweringKind, Span, Type, ValueId};

fn stage_dim(extent: &Expr, chunk: i64, op: &str, what: &str, span: Span) -> Result<i64, Diagnostic> {
    match extent.as_int() {
        Some(e) if chunk > 0 => Ok(e.min(chunk)),
        Some(e) => Ok(e),
        None if chunk > 0 => Ok(chunk),
        None => Err(Diagnostic::error(
            span,
            format!(
                "{op}: a dynamic {what} transfer dim needs a static chunk_{} to bound the VEC staging tile",
                if what == "innermost" { "cols" } else { "rows" }
            ),
        )),
    }
}

fn lower_transfer(
    b: &mut Builder<'_>,
    call: &Call,
    results: &[ValueId],
    span: Span,
    is_put: bool,
) -> Result<(), Diagnostic> {
    let op = call.callee.name();
    b.span = span;
    if call.args.len() != 3 && call.args.len() != 6 {
        return Err(Diagnostic::error(
            span,
            format!("{op} requires 3 or 6 positional arguments, but got {}", call.args.len()),
        ));
    }
    let dst_ty = b.type_of(&call.args[0]);
    let Some(dst) = dst_ty.as_tensor_like().cloned() else {
        return Err(Diagnostic::error(
            span,
            format!("{op} dst must be a tensor, got {}", dst_ty.kind_name()),
        ));
    };
    if is_put {
        if let Type::Tile(_) = b.type_of(&call.args[2]) {
            return Err(Diagnostic::error(
                call.args[2].span.or(span),
                "pld.tensor.put src must be a GM tensor, but got a computed value that lowers to a tile: TPUT transfers between two GM regions, and a UB tile has no GM address",
            )
            .with_note("use pld.tensor.remote_store(src, target, peer, offsets) to push a computed value straight to a peer (pld.remote_store dispatches to it automatically)"));
        }
    }
    let transfer: Vec<Expr> = if call.args.len() == 6 {
        match call.args[5].as_tuple() {
            Some(t) => t.to_vec(),
            None => return Err(Diagnostic::error(span, format!("{op} shape must be a tuple"))),
        }
    } else {
        dst.shape.clone()
    };
    let Some((last, lead)) = transfer.split_last() else {
        return Err(Diagnostic::error(span, format!("{op} requires at least one dimension on dst/src")));
    };
    let chunk_rows = call.attr_int("chunk_rows").unwrap_or(0);
    let chunk_cols = call.attr_int("chunk_cols").unwrap_or(0);
    let pipeline = call.attr("pipeline").and_then(Attr::as_bool).unwrap_or(false);
    let cols = stage_dim(last, chunk_cols, op, "innermost", span)?;
    let rows = stage_dim(&product(lead), chunk_rows, op, "leading", span)?;
    let prefix = if is_put { "tput_stage" } else { "tget_stage" };
    // A row-major tile row is a whole number of 32-byte blocks: the physical stage is padded
    // to that width and carries the transfer's width as its valid region.
    let mk =
        |b: &mut Builder<'_>, name: &str| super::comm::padded_stage_tile(b, name, (rows, cols), dst.dtype);
    let mut args = vec![call.args[0].clone(), call.args[1].clone(), call.args[2].clone()];
    if pipeline {
        let ping = mk(b, &format!("{prefix}_ping"))?;
        let pong = mk(b, &format!("{prefix}_pong"))?;
        args.push(Expr::var(ping));
        args.push(Expr::var(pong));
    } else {
        let stage = mk(b, prefix)?;
        args.push(Expr::var(stage));
    }
    args.extend(call.args.iter().skip(3).cloned());
    let attrs: Vec<(&str, Attr)> =
        if is_put { vec![("atomic", Attr::Int(call.attr_int("atomic").unwrap_or(0)))] } else { vec![] };
    let tile_op = if is_put { "pld.tile.put" } else { "pld.tile.get" };
    let e = b.op(tile_op, args, attrs)?;
    emit(b, results, e);
    Ok(())
}

fn lower_put(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Result<(), Diagnostic> {
    lower_transfer(b, call, results, span, true)
}

fn lower_get(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Result<(), Diagnostic> {
    lower_transfer(b, call, results, span, false)
}

register_lowering!("pld.tensor.put", LoweringKind::TensorToTile, lower_put);
register_lowering!("pld.tensor.get", LoweringKind::TensorToTile, lower_get);
