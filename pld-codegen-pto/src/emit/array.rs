//! On-core arrays (`pl.array`) as PTOAS stack-local arrays, in the reference's form:
//!
//! - `array.create` → `%a = pto.declare_local_array -> !pto.local_array<NxT>`;
//! - `array.get_element` → `%v = pto.local_array_get %a[%i] : !pto.local_array<NxT> -> T`;
//! - `array.update_element` → `pto.local_array_set %a[%i], %v : !pto.local_array<NxT>, T`.
//!
//! Guarantees: the IR's SSA-functional updates are realised in place — an update's result
//! binds to the same declaration as its input, so loops and ifs carry an array in place
//! (no scf iter_arg, no copy); indices are `index` operands (constants folded, integer
//! scalars `arith.index_cast`); an updated value is converted to the element type first
//! (loop variables are `index`); TASK_ID arrays (orchestration-only) and non-constant
//! extents are diagnostics naming the op.

use crate::func::{FnCx, Val};
use crate::mlir::{self, MTy};
use crate::pto::{Inst, PtoType};
use crate::register_emitter;
use pld_ir::{ArrayType, Call, DataType, Diagnostic, Type, ValueId};

/// `!pto.local_array<NxT>`.
fn local_array_ty(cx: &FnCx<'_>, op: &str, a: &ArrayType) -> Result<PtoType, Diagnostic> {
    if a.dtype == DataType::TASK_ID {
        return Err(cx.err(format!(
            "{op}: TASK_ID arrays are an orchestration-only construct (runtime dependency tracking) \
             and cannot be lowered to an incore !pto.local_array"
        )));
    }
    let Some(n) = a.static_extent() else {
        return Err(
            cx.err(format!("{op}: an array extent must be a compile-time constant for incore codegen"))
        );
    };
    let elem =
        if a.dtype == DataType::INDEX { "index" } else { mlir::elem(a.dtype).map_err(|m| cx.err(m))? };
    Ok(PtoType::LocalArray { len: n, elem })
}

/// The array behind argument 0.
fn array_operand(cx: &mut FnCx<'_>, call: &Call, op: &str) -> Result<(String, ArrayType), Diagnostic> {
    match cx.value(cx.arg(call, 0, "array")?)? {
        Val::Array { ssa, ty } => Ok((ssa, ty)),
        other => {
            Err(cx
                .err(format!("{op} array must be an on-core array, got a {}", crate::func::val_kind(&other))))
        }
    }
}

fn emit_create(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let Type::Array(a) = &call.ty else {
        return Err(cx.err("array.create must have an array type"));
    };
    let ty = local_array_ty(cx, "array.create", a)?;
    let hint = cx.result_hint(targets, "arr");
    let r = cx.named(&hint);
    cx.push(Inst::DeclareArray { result: r.clone(), ty });
    Ok(Val::Array { ssa: r, ty: a.clone() })
}

/// One element of an on-core array: the array's SSA name and type, its PTO type, the index
/// (argument 1, as `index`) and the element's scalar type.
struct Element {
    arr: String,
    array: ArrayType,
    aty: PtoType,
    index: String,
    ty: MTy,
}

fn element(cx: &mut FnCx<'_>, call: &Call, op: &str) -> Result<Element, Diagnostic> {
    let (arr, array) = array_operand(cx, call, op)?;
    let aty = local_array_ty(cx, op, &array)?;
    let index = cx.scalar_as(cx.arg(call, 1, "index")?, MTy::Index)?;
    let ty = MTy::of_scalar(array.dtype).map_err(|m| cx.err(m))?;
    Ok(Element { arr, array, aty, index, ty })
}

fn emit_get_element(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let Element { arr, aty, index, ty, .. } = element(cx, call, "array.get_element")?;
    let hint = cx.result_hint(targets, "elem");
    let r = cx.named(&hint);
    cx.push(Inst::ArrayGet { result: r.clone(), array: arr, index, array_ty: aty, ty });
    Ok(Val::Scalar { ssa: r, ty })
}

fn emit_update_element(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let Element { arr, array, aty, index, ty } = element(cx, call, "array.update_element")?;
    let v = cx.scalar_as(cx.arg(call, 2, "value")?, ty)?;
    cx.push(Inst::ArraySet { array: arr.clone(), index, value: v, array_ty: aty, ty });
    Ok(Val::Array { ssa: arr, ty: array })
}

register_emitter!("array.create", emit_create);
register_emitter!("array.get_element", emit_get_element);
register_emitter!("array.update_element", emit_update_element);
