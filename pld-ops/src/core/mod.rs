//! The core (non-distributed) ops the distributed programs and the lowerings use: tile and
//! tensor movement, creation, elementwise arithmetic, casts, reductions, views and scalar
//! access, on-core scalar arrays ([`mod@array`]), plus the two memory-consistency markers
//! `InsertCommFence` emits.
//!
//! Unified DSL spellings (`pl.add`, `pl.cast`, `pl.read`, …) are overloads that pick the tile
//! or tensor form from the first argument's type; everything else is an alias on its op. The
//! reference's other spellings (positional cast dtype/mode, `target_type=`, a scalar right
//! operand of `add`/`sub`/`mul`/`div`) are canonicalized at call-build time ([`canon`]).

use crate::record::{op, optional, optional_reads, value};
pub mod array;
pub mod canon;
pub mod tensor;
pub mod tile;

use pld_ir::registry::Overload;
use pld_ir::{register_op, register_overload, DeduceCx, Diagnostic, OpDef, Type};

/// `system.cacheinvalid(target=None, shape=None, offsets=None)`: invalidate the cache lines
/// of a tensor region, or of the whole GM when called with no arguments.
pub static CACHEINVALID: OpDef = op(
    "system.cacheinvalid",
    "core",
    "invalidate cached GM lines of a tensor region (no arguments: all of GM)",
)
.aliases(&["pl.system.cacheinvalid"])
.params(&[optional_reads("target"), optional("shape"), optional("offsets")])
.deduce(deduce_cacheinvalid);

fn deduce_cacheinvalid(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match cx.arity() {
        0 => Ok(Type::Unknown),
        3 => {
            let t = crate::util::tensor_like_arg(cx, 0, "target")?;
            let shape = crate::util::shape_arg(cx, 1, "shape")?;
            if shape.len() != t.rank() {
                return Err(cx.arg_error(1, "system.cacheinvalid shape rank must match the target rank"));
            }
            let offsets = crate::util::offsets_arg(cx, 2, t.rank(), "offsets")?;
            crate::util::check_in_bounds(cx, 2, offsets, shape, &t.shape, "region")?;
            Ok(Type::Unknown)
        }
        n => Err(cx.error(format!(
            "system.cacheinvalid takes either no arguments or (target, shape, offsets), got {n}"
        ))),
    }
}

/// `system.fence()`: a GM fence ordering earlier writes before later ones.
pub static FENCE: OpDef =
    op("system.fence", "core", "GM memory fence").aliases(&["pl.system.fence"]).deduce(deduce_fence);

fn deduce_fence(_: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    Ok(Type::Unknown)
}

/// `scalar.cast(value, *, dtype, mode=None, target_type=None)`: convert a scalar (e.g. an
/// INT32 count to INDEX). `pl.cast(v, pl.INDEX)` and `target_type=` are canonicalized to
/// `dtype=` ([`canon`]); a scalar cast supports only the default rounding mode `round`.
pub static SCALAR_CAST: OpDef = op("scalar.cast", "core", "convert a scalar to another element type")
    .aliases(&["pl.scalar.cast"])
    .params(&[value("value")])
    .attrs(CAST_ATTRS)
    .deduce(deduce_scalar_cast);

fn deduce_scalar_cast(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    crate::util::scalar_arg(cx, 0, "value")?;
    let dtype = cast_dtype(cx, pld_ir::DataType::INDEX)?;
    if let Some(m) = cx.attr_str("mode") {
        if !m.eq_ignore_ascii_case("round") {
            return Err(cx
                .error(format!("scalar.cast supports only the default rounding mode \"round\", got {m:?}"))
                .with_note("rounding modes apply to tile and tensor casts (tile.cast, tensor.cast)"));
        }
    }
    Ok(Type::Scalar(dtype))
}

/// The attributes of every cast (`tile.cast`, `tensor.cast`, `scalar.cast`), in canonical order.
pub(crate) const CAST_ATTRS: &[pld_ir::AttrDef] = &[
    pld_ir::AttrDef::required("dtype", pld_ir::AttrType::DType),
    pld_ir::AttrDef::optional("mode", pld_ir::AttrType::Str),
    pld_ir::AttrDef::optional("target_type", pld_ir::AttrType::DType),
];

/// The target dtype of a cast whose operand has dtype `from` (kept when `dtype=` is absent),
/// once the shared attribute rules ([`check_cast_attrs`]) hold.
fn cast_dtype(cx: &DeduceCx<'_>, from: pld_ir::DataType) -> Result<pld_ir::DataType, Diagnostic> {
    check_cast_attrs(cx)?;
    Ok(cx.attr("dtype").and_then(|a| a.as_dtype()).unwrap_or(from))
}

/// The attribute rules every cast shares once canonicalized: `target_type` only as a second
/// spelling of `dtype` (never both), and `mode` one of [`canon::CAST_MODES`] (an out-of-range
/// integer code stays an integer and fails the generic attribute type check).
fn check_cast_attrs(cx: &DeduceCx<'_>) -> Result<(), Diagnostic> {
    if cx.attr("target_type").is_some() {
        return Err(cx.error(format!(
            "{} takes the target dtype once: give dtype= or target_type=, not both",
            cx.def.name
        )));
    }
    if let Some(m) = cx.attr_str("mode") {
        if !canon::CAST_MODES.iter().any(|k| k.eq_ignore_ascii_case(&m)) {
            return Err(cx.error(format!(
                "{} mode must be one of {} (or its code 0-6), got {m:?}",
                cx.def.name,
                canon::CAST_MODES.join(", ")
            )));
        }
    }
    Ok(())
}

register_op!(CACHEINVALID, FENCE, SCALAR_CAST);

/// `pl.cast`: `tile.cast` for a tile, `scalar.cast` for a scalar, else `tensor.cast`.
pub static PL_CAST: Overload = Overload {
    name: "pl.cast",
    candidates: &["tile.cast", "scalar.cast", "tensor.cast"],
    pick: |t: &Type| match t {
        Type::Tile(_) => "tile.cast",
        Type::Scalar(_) => "scalar.cast",
        _ => "tensor.cast",
    },
};
register_overload!(PL_CAST);

macro_rules! unified {
    ($($id:ident = $name:literal => $tile:literal | $tensor:literal;)*) => {$(
        #[doc = concat!("`", $name, "`: `", $tile, "` for a tile first argument, else `", $tensor, "`.")]
        pub static $id: Overload = Overload {
            name: $name,
            candidates: &[$tile, $tensor],
            pick: |t: &Type| if matches!(t, Type::Tile(_)) { $tile } else { $tensor },
        };
        register_overload!($id);
    )*};
}

unified! {
    PL_ADD = "pl.add" => "tile.add" | "tensor.add";
    PL_SUB = "pl.sub" => "tile.sub" | "tensor.sub";
    PL_MUL = "pl.mul" => "tile.mul" | "tensor.mul";
    PL_DIV = "pl.div" => "tile.div" | "tensor.div";
    PL_MAXIMUM = "pl.maximum" => "tile.maximum" | "tensor.maximum";
    PL_MINIMUM = "pl.minimum" => "tile.minimum" | "tensor.minimum";
    PL_ADDS = "pl.adds" => "tile.adds" | "tensor.adds";
    PL_SUBS = "pl.subs" => "tile.subs" | "tensor.subs";
    PL_MULS = "pl.muls" => "tile.muls" | "tensor.muls";
    PL_DIVS = "pl.divs" => "tile.divs" | "tensor.divs";
    PL_READ = "pl.read" => "tile.read" | "tensor.read";
    PL_WRITE = "pl.write" => "tile.write" | "tensor.write";
    PL_SLICE = "pl.slice" => "tile.slice" | "tensor.slice";
    PL_RESHAPE = "pl.reshape" => "tile.reshape" | "tensor.reshape";
}
