//! Tensor-to-tile lowering of `pld.tensor.remote_store` (`ConvertTensorToTileOps`): it
//! becomes `pld.tile.remote_store` 1:1 with the same arguments and `atomic`; a GM tensor
//! source is bridged by a `tile.load` of its whole shape into Vec, a tile source (a computed
//! value, Vec or Acc) passes through unchanged. No staging tile.

use super::comm::emit;
use pld_ir::{register_lowering, Builder, Call, Diagnostic, Lowered, LoweringKind, Span, Type, ValueId};

fn lower_remote_store(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    b.span = span;
    let mut args = call.args.clone();
    let Some(src) = args.first().cloned() else {
        return Err(Diagnostic::error(
            span,
            "pld.tensor.remote_store requires 4 positional arguments (src, target, peer, offsets)",
        ));
    };
    if let Type::Tensor(t) = b.type_of(&src) {
        args[0] = super::whole_vec_load(b, &src, &t, "src")?;
    }
    let attrs = call.attr_args();
    let e = b.op("pld.tile.remote_store", args, attrs)?;
    emit(b, results, e);
    Ok(())
}

register_lowering!("pld.tensor.remote_store", LoweringKind::TensorToTile, lower_remote_store);
