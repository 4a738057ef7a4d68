//! On-core scalar arrays (`pl.array`): `array.create`, `array.get_element`,
//! `array.update_element`.
//!
//! Guarantees: a created array holds `extent` zeros of its dtype; every stored element is
//! wrapped to the element type (two's complement for integers, 0/1 for BOOL), so a read
//! returns what the device's C-stack array would hold; `update_element` is functional (the
//! input value is unchanged — the elements are copied only while shared); an index outside
//! `[0, extent)` at run time is a fault report at the call's span, never a panic.

use super::{Flow, OpCx};
use crate::register_semantics;
use crate::report::Fault;
use crate::value::Val;
use pld_ir::DataType;
use std::sync::Arc;

/// `v` as the element type `dt` holds it.
pub fn wrap(dt: DataType, v: i64) -> i64 {
    match dt {
        DataType::BOOL => i64::from(v != 0),
        DataType::INT8 => i64::from(v as i8),
        DataType::INT16 => i64::from(v as i16),
        DataType::INT32 => i64::from(v as i32),
        DataType::UINT8 => i64::from(v as u8),
        DataType::UINT16 => i64::from(v as u16),
        DataType::UINT32 => i64::from(v as u32),
        DataType::INT4 => (v << 60) >> 60,
        DataType::UINT4 => v & 0xF,
        _ => v,
    }
}

fn array<'v>(cx: &OpCx<'_>, args: &'v [Val]) -> Result<(DataType, &'v Arc<Vec<i64>>), Fault> {
    match args.first() {
        Some(Val::Array { dtype, elems }) => Ok((*dtype, elems)),
        Some(v) => Err(cx.err(format!("argument 0 must be an array, got {}", v.kind()))),
        None => Err(cx.err("missing argument 0")),
    }
}

/// Argument 1 as an index inside `[0, extent)`.
fn index(cx: &OpCx<'_>, args: &[Val], extent: usize) -> Result<usize, Fault> {
    let i = cx.int(args, 1)?;
    usize::try_from(i)
        .ok()
        .filter(|&k| k < extent)
        .ok_or_else(|| cx.err(format!("index {i} is out of range for an array of extent {extent}")))
}

fn create(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let n = cx.int(args, 0)?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| cx.err(format!("extent {n} must be positive")))?;
    // One i64 per element: an extent the memory limit cannot hold is a fault, not an abort.
    let bytes = (n as u64).saturating_mul(std::mem::size_of::<i64>() as u64);
    let cap = cx.world.tile_cap();
    if bytes > cap {
        return Err(cx.err(format!(
            "an array of extent {n} needs {} of simulator memory, more than the limit of {} (--max-memory)",
            crate::limits::human(bytes),
            crate::limits::human(cap)
        )));
    }
    let dtype = cx.call.attr("dtype").and_then(|a| a.as_dtype()).ok_or_else(|| cx.err("missing dtype"))?;
    Ok(Flow::Val(Val::Array { dtype, elems: Arc::new(vec![0; n]) }))
}

fn get_element(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let (dtype, elems) = array(cx, args)?;
    let v = elems[index(cx, args, elems.len())?];
    Ok(Flow::Val(if dtype == DataType::BOOL { Val::Bool(v != 0) } else { Val::Int(v) }))
}

fn update_element(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let (dtype, elems) = array(cx, args)?;
    let k = index(cx, args, elems.len())?;
    let v =
        args.get(2).and_then(Val::as_i64).ok_or_else(|| cx.err("argument 2 must be an integer scalar"))?;
    let mut elems = Arc::clone(elems);
    Arc::make_mut(&mut elems)[k] = wrap(dtype, v);
    Ok(Flow::Val(Val::Array { dtype, elems }))
}

register_semantics!("array.create", create);
register_semantics!("array.get_element", get_element);
register_semantics!("array.update_element", update_element);

#[cfg(test)]
mod tests {
    use super::wrap;
    use pld_ir::DataType;

    #[test]
    fn elements_wrap_to_their_type() {
        assert_eq!(wrap(DataType::INT32, i64::from(i32::MAX) + 1), i64::from(i32::MIN));
        assert_eq!(wrap(DataType::UINT8, -1), 255);
        assert_eq!(wrap(DataType::INT8, 130), -126);
        assert_eq!(wrap(DataType::BOOL, 7), 1);
        assert_eq!(wrap(DataType::INT4, 9), -7);
        assert_eq!(wrap(DataType::INT64, -5), -5);
    }
}
