//! Tensor-to-tile lowerings of the core elementwise tensor ops (`ConvertTensorToTileOps`):
//! `tensor.<op>(a, b)` becomes `tile.<op>` over Vec tiles; an operand that is still a GM
//! tensor is bridged by a whole-shape `tile.load` into Vec, an operand that already became
//! a tile (a computed value) passes through. The result value is re-typed as the tile.
//! `tensor.assemble(target, source, offsets)` is the store it means,
//! `tile.store(source, offsets, target)`, its source bridged to a Vec tile like an operand.

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
    let tile = as_tile(b, source)?;
    let e = b.op("tile.store", vec![tile, offsets.clone(), target.clone()], attrs)?;
    emit(b, results, e);
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
