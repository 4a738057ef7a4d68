//! Core tile ops: `tile.load` / `tile.store` through local partition views, `tile.create`,
//! `tile.move`, and elementwise tile-tile and tile-scalar arithmetic.
//!
//! Guarantees: loads and stores size their partition view by the tile's effective valid
//! shape (so a tstore's static element count equals the tile's valid count, V10); a store
//! prints `atomicType` only for atomic add; every tile result gets its own `pto.alloc_tile`.

use super::{atomic_for, attr_int, check_tload_dst, check_tstore_src, Region};
use crate::func::{FnCx, Val};
use crate::mlir::{self, MTy};
use crate::pto::{Dps, Inst, OpName, Operand, TileBuf};
use crate::register_emitter;
use pld_ir::{Call, DataType, Diagnostic, TileType, Type, ValueId};

fn result_tile(cx: &FnCx<'_>, call: &Call) -> Result<TileType, Diagnostic> {
    match &call.ty {
        Type::Tile(t) => Ok(t.clone()),
        other => {
            Err(cx.err(format!("{} result must be a tile, got {}", call.callee.name(), other.kind_name())))
        }
    }
}

fn emit_load(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let t = cx.tensor(cx.arg(call, 0, "tensor")?, "tile.load tensor")?;
    let tt = result_tile(cx, call)?;
    check_tload_dst(cx, "tile.load", &tt)?;
    let hint = cx.result_hint(targets, "tile");
    let tile = cx.alloc_tile(&hint, &tt)?;
    let view = cx.local_view(&t)?;
    let region = Region { call, offsets_arg: 1, view: &view, tensor: &t, suffix: "pview" };
    super::tload(cx, &region, (&tile, &tt))?;
    Ok(Val::Tile { ssa: tile, tile: tt })
}

fn emit_store(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (ts, tt) = cx.tile(cx.arg(call, 0, "tile")?, "tile.store tile")?;
    let t = cx.tensor(cx.arg(call, 2, "output_tensor")?, "tile.store output_tensor")?;
    check_tstore_src(cx, "tile.store", &tt)?;
    let atomic = atomic_for(cx, call, t.ty.dtype)?;
    let view = cx.local_view(&t)?;
    let region = Region { call, offsets_arg: 1, view: &view, tensor: &t, suffix: "pview" };
    super::tstore(cx, &region, (&ts, &tt), atomic)?;
    Ok(Val::Tensor(t))
}

fn emit_create(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let ssa = cx.alloc_tile(&hint, &tt)?;
    Ok(Val::Tile { ssa, tile: tt })
}

fn unary_into(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: OpName) -> Result<Val, Diagnostic> {
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, &format!("{} tile", call.callee.name()))?;
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let (sty, dty) = (cx.tile_ty(&src, &st)?, cx.tile_ty(&dst, &tt)?);
    let dps = Dps::new(inst, vec![Operand::new(src, sty)], vec![Operand::new(&dst, dty)]);
    cx.push(Inst::Dps(dps));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

fn emit_move(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    unary_into(cx, call, targets, "pto.tmov")
}

/// The destination of an elementwise op, allocated on the tile type of its first source
/// `a` (one tile type for sources and destination): `(ssa, IR type, source type, type)`.
fn like_source(
    cx: &mut FnCx<'_>,
    call: &Call,
    targets: &[ValueId],
    a: &str,
    at: &TileType,
) -> Result<(String, TileType, TileBuf, TileBuf), Diagnostic> {
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let like = cx.tile_ty(a, at)?;
    let dst = cx.alloc_tile_like(&hint, &tt, &like)?;
    let dty = cx.tile_ty(&dst, &tt)?;
    Ok((dst, tt, like, dty))
}

fn binary(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: OpName) -> Result<Val, Diagnostic> {
    let op = call.callee.name();
    let (a, at) = cx.tile(cx.arg(call, 0, "lhs")?, &format!("{op} lhs"))?;
    let (b, bt) = cx.tile(cx.arg(call, 1, "rhs")?, &format!("{op} rhs"))?;
    let (dst, tt, aty, dty) = like_source(cx, call, targets, &a, &at)?;
    let ins = vec![Operand::new(a, aty), Operand::new(&b, cx.tile_ty(&b, &bt)?)];
    cx.push(Inst::Dps(Dps::elementwise(inst, ins, vec![Operand::new(&dst, dty)])));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

fn with_scalar(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: OpName) -> Result<Val, Diagnostic> {
    let op = call.callee.name();
    let (a, at) = cx.tile(cx.arg(call, 0, "tile")?, &format!("{op} tile"))?;
    let sty = MTy::of_scalar(at.dtype).map_err(|m| cx.err(m))?;
    let s = cx.scalar_as(cx.arg(call, 1, "scalar")?, sty)?;
    let (dst, tt, aty, dty) = like_source(cx, call, targets, &a, &at)?;
    let ins = vec![Operand::new(a, aty), Operand::new(s, sty)];
    cx.push(Inst::Dps(Dps::elementwise(inst, ins, vec![Operand::new(&dst, dty)])));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

macro_rules! elementwise {
    ($($f:ident = $op:literal => $inst:literal, $kind:ident;)*) => {$(
        fn $f(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
            $kind(cx, call, targets, $inst)
        }
        register_emitter!($op, $f);
    )*};
}

elementwise! {
    emit_add = "tile.add" => "pto.tadd", binary;
    emit_sub = "tile.sub" => "pto.tsub", binary;
    emit_mul = "tile.mul" => "pto.tmul", binary;
    emit_div = "tile.div" => "pto.tdiv", binary;
    emit_max = "tile.maximum" => "pto.tmax", binary;
    emit_min = "tile.minimum" => "pto.tmin", binary;
    emit_adds = "tile.adds" => "pto.tadds", with_scalar;
    emit_subs = "tile.subs" => "pto.tsubs", with_scalar;
    emit_muls = "tile.muls" => "pto.tmuls", with_scalar;
    emit_divs = "tile.divs" => "pto.tdivs", with_scalar;
}

/// `tensor.view`: the same bytes under a new shape/valid region/layout — a fresh
/// `pto.make_tensor_view` of the same base pointer (ctx pairing kept).
fn emit_tensor_view(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let base = cx.tensor(cx.arg(call, 0, "tensor")?, "tensor.view tensor")?;
    let Some(ty) = call.ty.as_tensor_like() else {
        return Err(cx.err("tensor.view result must be a tensor"));
    };
    Ok(Val::Tensor(cx.derive_view(&base, ty.clone())?))
}

/// The `pad=` field for a fill value: 1 zero, 2 max (+inf), 3 min (-inf).
fn pad_of(e: &pld_ir::Expr) -> Option<u8> {
    use pld_ir::ExprKind;
    let v = match &e.kind {
        ExprKind::Int(i) => *i as f64,
        ExprKind::Float(b) => b.get(),
        ExprKind::Unary(pld_ir::UnOp::Neg, a) => -match &a.kind {
            ExprKind::Int(i) => *i as f64,
            ExprKind::Float(b) => b.get(),
            _ => return None,
        },
        _ => return None,
    };
    if v == 0.0 {
        Some(1)
    } else if v == f64::INFINITY || v == f64::from(f32::MAX) {
        Some(2)
    } else if v == f64::NEG_INFINITY || v == f64::from(f32::MIN) {
        Some(3)
    } else {
        None
    }
}

/// `tile.fillpad_inplace(tile, value)`: `pto.tfillpad` into a fully valid tile whose type
/// carries the pad value (only 0, +inf and -inf are representable).
fn emit_fillpad(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, "tile.fillpad_inplace tile")?;
    let value = cx.arg(call, 1, "value")?;
    let Some(pad) = pad_of(value) else {
        return Err(cx.err(format!(
            "tile.fillpad_inplace value `{value}` has no pto pad encoding; use 0, +inf or -inf"
        )));
    };
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "filled");
    let dst = cx.alloc_tile_padded(&hint, &tt, pad)?;
    let (sty, dty) = (cx.tile_ty(&src, &st)?, cx.tile_ty(&dst, &tt)?);
    let dps = Dps::new("pto.tfillpad", vec![Operand::new(src, sty)], vec![Operand::new(&dst, dty)]);
    cx.push(Inst::Dps(dps));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

/// `tile.set_validshape(tile, rows, cols)` and `tile.reshape(tile, shape)`: a new
/// `pto.alloc_tile` on the same buffer address with the result's shape and valid extent (no
/// data movement).
fn emit_same_buffer(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let what = format!("{} tile", call.callee.name());
    let (src, _) = cx.tile(cx.arg(call, 0, "tile")?, &what)?;
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "tile");
    let dst = cx.alloc_tile_aliasing(&hint, &tt, &src)?;
    Ok(Val::Tile { ssa: dst, tile: tt })
}

/// `tile.full(shape, value)`: allocate, then broadcast the scalar with `pto.texpands`.
fn emit_full(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let tt = result_tile(cx, call)?;
    let sty = MTy::of_scalar(tt.dtype).map_err(|m| cx.err(m))?;
    let v = cx.scalar_as(cx.arg(call, 1, "value")?, sty)?;
    let hint = cx.result_hint(targets, "tile");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let dty = cx.tile_ty(&dst, &tt)?;
    let dps = Dps::new("pto.texpands", vec![Operand::new(v, sty)], vec![Operand::new(&dst, dty)]);
    cx.push(Inst::Dps(dps));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

/// `tile.cast(tile, dtype, mode=None)`: `pto.tcvt` into a tile of the new dtype; a rounding
/// mode becomes `{rmode = #pto<round_mode CAST_…>}` on the source operand.
fn emit_cast(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, "tile.cast tile")?;
    let rmode = match call.attr("mode").and_then(|a| a.as_str()) {
        None => None,
        Some(m) => {
            let k = match m.to_ascii_lowercase().as_str() {
                "rint" => "#pto<round_mode CAST_RINT>",
                "round" => "#pto<round_mode CAST_ROUND>",
                "floor" => "#pto<round_mode CAST_FLOOR>",
                "ceil" => "#pto<round_mode CAST_CEIL>",
                "trunc" => "#pto<round_mode CAST_TRUNC>",
                "odd" => "#pto<round_mode CAST_ODD>",
                "none" => "#pto<round_mode CAST_NONE>",
                _ => {
                    return Err(cx.err(format!(
                        "tile.cast mode {m:?} has no pto rounding mode (rint, round, floor, ceil, trunc, odd, none)"
                    )))
                }
            };
            Some(k)
        }
    };
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "cast");
    let like = cx.tile_ty(&src, &st)?;
    let dst = cx.alloc_tile_like(&hint, &tt, &like)?;
    let (sty, dty) = (cx.tile_ty(&src, &st)?, cx.tile_ty(&dst, &tt)?);
    let mut source = Operand::new(src, sty);
    if let Some(k) = rmode {
        source = source.with_attr("rmode", k);
    }
    cx.push(Inst::Dps(Dps::convert("pto.tcvt", vec![source], vec![Operand::new(&dst, dty)])));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

/// `tensor.slice(tensor, shape, offsets[, valid_shape])`: a sub-tensor view at the advanced
/// base pointer (remote access to a window slice adds the peer delta to that pointer).
fn emit_tensor_slice(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let base = cx.tensor(cx.arg(call, 0, "tensor")?, "tensor.slice tensor")?;
    let offsets = cx.tuple_arg(call, 2, "offsets")?.to_vec();
    let Some(ty) = call.ty.as_tensor_like() else {
        return Err(cx.err("tensor.slice result must be a tensor"));
    };
    Ok(Val::Tensor(cx.derive_slice(&base, ty.clone(), &offsets)?))
}

/// Row reductions (`tile.row_sum/max/min`): `pto.trow* ins(%src, %tmp) outs(%dst)` with the
/// caller's `tmp_tile` (or a fresh scratch tile of the source's type) and an `[R, 1]`
/// (col_major) destination.
fn row_reduce(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: OpName) -> Result<Val, Diagnostic> {
    let op = call.callee.name();
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, &format!("{op} tile"))?;
    // The caller's scratch tile (`tmp_tile`) when given, else a fresh one of the source type.
    let (tmp, mt) = match call.args.get(1) {
        Some(t) => cx.tile(t, &format!("{op} tmp_tile"))?,
        None => (cx.alloc_tile(&format!("{}_tmp", cx.result_hint(targets, "reduce")), &st)?, st.clone()),
    };
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "reduce");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let (sty, mty, dty) = (cx.tile_ty(&src, &st)?, cx.tile_ty(&tmp, &mt)?, cx.tile_ty(&dst, &tt)?);
    let ins = vec![Operand::new(src, sty), Operand::new(tmp, mty)];
    cx.push(Inst::Dps(Dps::new(inst, ins, vec![Operand::new(&dst, dty)])));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

elementwise! {
    emit_row_sum = "tile.row_sum" => "pto.trowsum", row_reduce;
    emit_row_max = "tile.row_max" => "pto.trowmax", row_reduce;
    emit_row_min = "tile.row_min" => "pto.trowmin", row_reduce;
}

/// Column reductions (`tile.col_sum/max/min`): `pto.tcol* ins(%src) outs(%dst)` into a
/// `[1, C]` row tile (sequential accumulation). `tile.col_sum` with a `tmp_tile` selects the
/// binary-tree path: `pto.tcolsum ins(%src, %tmp {isBinary = true} : …)` — ptoas requires the
/// tmp operand and `isBinary` together, as PyPTO `e2d0f78` emits them. The instructions run
/// on the vector unit only (TCOL* checks `TileType::Vec`), so a non-vec operand is rejected.
fn col_reduce(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId], inst: OpName) -> Result<Val, Diagnostic> {
    use pld_ir::MemorySpace;
    let op = call.callee.name();
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, &format!("{op} tile"))?;
    if !matches!(st.memory, None | Some(MemorySpace::Vec)) {
        return Err(cx
            .err(format!(
                "{op} reduces a {} tile; {inst} works only on vec tiles",
                st.memory.map_or("?", |m| m.dsl_name())
            ))
            .with_note("move the tile to Vec first with tile.move(t, target_memory=\"Vec\")"));
    }
    // pto-isa TCOL* on A2/A3: half, float, int16_t or int32_t sources only.
    if cx.opts.target == pld_ir::Target::A2A3
        && !matches!(st.dtype, DataType::FP16 | DataType::FP32 | DataType::INT16 | DataType::INT32)
    {
        return Err(cx.err(format!(
            "{op} of a {} tile is not supported on the 'a2a3' backend; {inst} takes fp16, fp32, int16 or int32",
            st.dtype
        )));
    }
    let tmp = match call.args.get(1) {
        None => None,
        Some(_) if inst != "pto.tcolsum" => {
            return Err(cx.err(format!("{op} takes no tmp_tile; {inst} has no scratch operand")))
        }
        Some(t) => Some(cx.tile(t, &format!("{op} tmp_tile"))?),
    };
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "reduce");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let (sty, dty) = (cx.tile_ty(&src, &st)?, cx.tile_ty(&dst, &tt)?);
    let mut ins = vec![Operand::new(src, sty)];
    if let Some((m, mt)) = tmp {
        let mty = cx.tile_ty(&m, &mt)?;
        ins.push(Operand::new(m, mty).with_attr("isBinary", "true"));
    }
    cx.push(Inst::Dps(Dps::new(inst, ins, vec![Operand::new(&dst, dty)])));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

elementwise! {
    emit_col_sum = "tile.col_sum" => "pto.tcolsum", col_reduce;
    emit_col_max = "tile.col_max" => "pto.tcolmax", col_reduce;
    emit_col_min = "tile.col_min" => "pto.tcolmin", col_reduce;
}

/// `tile.slice(tile, shape, offsets[, valid_shape])`: a pure view of the source buffer,
/// `%v = pto.subview %src[%row, %col] sizes [R, C] valid [%vr, %vc] : srcT -> viewT`, as
/// PyPTO `e2d0f78` emits it (no data movement). The view type keeps the source's location,
/// layouts, fractal and pad, with `rows`/`cols` = the slice shape and a static `v_row`/`v_col`
/// wherever the valid operand is a constant (ptoas checks the two agree). The `valid` clause
/// is always explicit and is the IR result's valid shape (the deducer's: `valid_shape` when
/// given, else the full slice shape), so later ops see the same valid region as the IR.
fn emit_tile_slice(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let (src, st) = cx.tile(cx.arg(call, 0, "tile")?, "tile.slice tile")?;
    let tt = result_tile(cx, call)?;
    if st.shape.len() != 2 {
        return Err(cx.err(format!(
            "tile.slice of a rank-{} tile has no pto form; pto.subview slices 2-D tiles",
            st.shape.len()
        )));
    }
    let Some([rows, cols]) = tt.static_shape().and_then(|s| <[i64; 2]>::try_from(s).ok()) else {
        return Err(cx
            .err("tile.slice shape must be static: pto.subview sizes are compile-time integers")
            .with_note("slice a static maximum extent and give the runtime extent as valid_shape"));
    };
    let offsets = cx.tuple_arg(call, 2, "offsets")?.to_vec();
    let (r, _) = cx.offset(&offsets[0])?;
    let (c, _) = cx.offset(&offsets[1])?;
    let mut valid = Vec::with_capacity(2);
    for d in tt.effective_valid_shape().to_vec() {
        valid.push(cx.size(&d)?);
    }
    let sty = cx.tile_ty(&src, &st)?;
    let mut vty = sty.clone();
    (vty.rows, vty.cols, vty.valid) = (rows, cols, [valid[0].1, valid[1].1]);
    let hint = cx.result_hint(targets, "slice");
    let view = cx.named(&hint);
    let valid = [valid[0].0.clone(), valid[1].0.clone()];
    let (result, ty) = (view.clone(), vty.clone());
    cx.push(Inst::Subview { result, src, offsets: [r, c], sizes: [rows, cols], valid, src_ty: sty, ty });
    cx.bind_tile_view(&view, vty);
    Ok(Val::Tile { ssa: view, tile: tt })
}

register_emitter!("tile.slice", emit_tile_slice);

/// `tensor.assemble(target, source, offsets)` of two global-memory tensors inside a kernel:
/// a GM-to-GM copy staged through one `vec` tile — `pto.tload` of the whole source, then
/// `pto.tstore` into the target region at `offsets` (a tile source never reaches codegen:
/// the deducer only accepts tensors). The reference compiler has no kernel-level form for a
/// tensor-to-tensor assemble, so this one only uses forms the checklist accepts, and it is
/// limited to what one staging tile holds: a static source whose leading dims (all but the
/// last two) are 1 and whose bytes fit the target's vec memory. `atomic=Add` is rejected as
/// PyPTO rejects it (a tensor-to-tensor assemble has no compute result to combine).
fn emit_tensor_assemble(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    use pld_ir::{Expr, MemorySpace};
    let target = cx.tensor(cx.arg(call, 0, "target")?, "tensor.assemble target")?;
    let source = cx.tensor(cx.arg(call, 1, "source")?, "tensor.assemble source")?;
    if attr_int(call, "atomic").unwrap_or(0) != 0 {
        return Err(cx
            .err("tensor.assemble with atomic=AtomicType.Add needs a tile source; copying one tensor into another has no compute result to combine")
            .with_note("load the source, compute, and use tile.store(..., atomic=AtomicType.Add)"));
    }
    let rank = source.ty.rank();
    let Some(dims) = source.ty.shape.iter().map(|d| d.as_int()).collect::<Option<Vec<i64>>>() else {
        return Err(cx.err(format!(
            "tensor.assemble source '{}' has a dynamic shape; the kernel copy stages it through one static vec tile",
            source.name
        )));
    };
    let (rows, cols) = match dims.as_slice() {
        [] => (1, 1),
        [n] => (1, *n),
        [lead @ .., r, c] if lead.iter().all(|d| *d == 1) => (*r, *c),
        _ => {
            return Err(cx.err(format!(
                "tensor.assemble source '{}' of shape {dims:?} has leading dims other than 1; the kernel copy stages one 2-D tile",
                source.name
            )))
        }
    };
    let bytes = (rows * cols).max(0) as u64 * source.ty.dtype.bytes();
    let cap = mlir::capacity("vec", cx.opts.target);
    if bytes > cap {
        return Err(cx
            .err(format!(
                "tensor.assemble source '{}' is {bytes} bytes, more than one vec staging tile holds ({cap} bytes on '{}')",
                source.name,
                cx.opts.target.name()
            ))
            .with_note("assemble it in chunks: tile.load a region, then tile.store it at its offset"));
    }
    let stage =
        TileType::new(vec![Expr::int(rows), Expr::int(cols)], source.ty.dtype, Some(MemorySpace::Vec));
    check_tload_dst(cx, "tensor.assemble", &stage)?;
    let hint = format!("{}_stage", cx.result_hint(targets, &target.name));
    let tile = cx.alloc_tile(&hint, &stage)?;
    let tty = cx.tile_ty(&tile, &stage)?;
    let sizes = FnCx::tile_region(&stage, rank);
    let zeros = vec![Expr::int(0); rank];
    let sview = cx.local_view(&source)?;
    let (spv, spty) = cx.partition(&sview, &source, &zeros, &sizes, &format!("{}_pview", source.name))?;
    let dps = Dps::new("pto.tload", vec![Operand::new(spv, spty)], vec![Operand::new(&tile, tty.clone())]);
    cx.push(Inst::Dps(dps));
    let offsets = cx.tuple_arg(call, 2, "offsets")?.to_vec();
    let tview = cx.local_view(&target)?;
    let (tpv, tpty) = cx.partition(&tview, &target, &offsets, &sizes, &format!("{}_pview", target.name))?;
    let dps = Dps::new("pto.tstore", vec![Operand::new(tile, tty)], vec![Operand::new(tpv, tpty)]);
    cx.push(Inst::Dps(dps));
    Ok(Val::Tensor(target))
}

register_emitter!("tensor.assemble", emit_tensor_assemble);

/// `tensor.create` inside a kernel has no PTO form: a kernel cannot allocate global memory
/// (PyPTO rewrites it to a `vec` `tile.create` in ConvertTensorToTileOps before codegen).
/// This emitter only turns the generic "no emitter" error into one that says what to write.
fn emit_tensor_create(cx: &mut FnCx<'_>, _call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    Err(cx
        .err("tensor.create inside a kernel has no pto form: a kernel cannot allocate global memory")
        .with_note(
        "allocate the tensor in the orchestration and pass it in, or use tile.create for an on-chip buffer",
    ))
}

register_emitter!("tensor.create", emit_tensor_create);

/// `tensor.reshape`: the same packed bytes under a new shape (a fresh view of the pointer).
fn emit_tensor_reshape(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let base = cx.tensor(cx.arg(call, 0, "tensor")?, "tensor.reshape tensor")?;
    let Some(ty) = call.ty.as_tensor_like() else {
        return Err(cx.err("tensor.reshape result must be a tensor"));
    };
    Ok(Val::Tensor(cx.derive_view(&base, ty.clone())?))
}

/// `tile.matmul(lhs, rhs)`: `pto.tmatmul` from a `left` and a `right` tile into an `acc` tile.
fn emit_matmul(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    use pld_ir::MemorySpace;
    let (a, at) = cx.tile(cx.arg(call, 0, "lhs")?, "tile.matmul lhs")?;
    let (b, bt) = cx.tile(cx.arg(call, 1, "rhs")?, "tile.matmul rhs")?;
    if at.memory != Some(MemorySpace::Left) || bt.memory != Some(MemorySpace::Right) {
        return Err(cx
            .err("tile.matmul needs its lhs in Left and its rhs in Right memory for pto.tmatmul")
            .with_note("move the operands with tile.move(t, target_memory=\"Left\") / \"Right\""));
    }
    let tt = result_tile(cx, call)?;
    let hint = cx.result_hint(targets, "acc");
    let dst = cx.alloc_tile(&hint, &tt)?;
    let (aty, bty, dty) = (cx.tile_ty(&a, &at)?, cx.tile_ty(&b, &bt)?, cx.tile_ty(&dst, &tt)?);
    let ins = vec![Operand::new(a, aty), Operand::new(b, bty)];
    cx.push(Inst::Dps(Dps::new("pto.tmatmul", ins, vec![Operand::new(&dst, dty)])));
    Ok(Val::Tile { ssa: dst, tile: tt })
}

/// `scalar.cast(value, dtype)`: an arith conversion to the target scalar type.
fn emit_scalar_cast(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let Some(d) = call.ty.as_scalar() else { return Err(cx.err("scalar.cast result must be a scalar")) };
    let ty = MTy::of_scalar(d).map_err(|m| cx.err(m))?;
    let ssa = cx.scalar_as(cx.arg(call, 0, "value")?, ty)?;
    Ok(Val::Scalar { ssa, ty })
}

register_emitter!("tensor.reshape", emit_tensor_reshape);
register_emitter!("tile.reshape", emit_same_buffer);
register_emitter!("tile.matmul", emit_matmul);
register_emitter!("scalar.cast", emit_scalar_cast);
register_emitter!("tensor.slice", emit_tensor_slice);
register_emitter!("tile.cast", emit_cast);
register_emitter!("tensor.view", emit_tensor_view);
register_emitter!("tile.fillpad_inplace", emit_fillpad);
register_emitter!("tile.set_validshape", emit_same_buffer);
register_emitter!("tile.full", emit_full);
register_emitter!("tile.load", emit_load);
register_emitter!("tile.store", emit_store);
register_emitter!("tile.create", emit_create);
register_emitter!("tile.move", emit_move);

/// The element spelling of a tile's dtype (re-exported for family modules).
pub fn tile_elem(cx: &FnCx<'_>, t: &TileType) -> Result<&'static str, Diagnostic> {
    mlir::elem(t.dtype).map_err(|m| cx.err(m))
}
