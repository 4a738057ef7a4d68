//! Op emitters, one module per op family, each registering its emitters by op name with
//! [`crate::register_emitter!`] (and [`builtin_variant`]: the builtin collective family's
//! variant names). Adding an op's PTO form touches only its family's file.
//!
//! Guarantees: emitters only produce forms the checklist of codegen.md §6 accepts; where an
//! IR program would need a rejected form (a non-`i32` signal, a non-VEC staging tile,
//! bf16 atomic add on A5, …) the emitter returns a diagnostic naming the op instead.

pub mod array;
pub mod builtin_variant;
pub mod comm;
pub mod core;
pub mod scalar;
pub mod sync;
pub mod window;

use crate::func::FnCx;
use crate::pto::{Dps, Inst, Operand, PtoType};
use pld_ir::{Call, Diagnostic, Target};

/// The integer attribute `name` of a call (declared default when absent).
pub fn attr_int(call: &Call, name: &str) -> Option<i64> {
    call.attr_int(name)
}

/// The `atomicType` attribute value for an IR atomic value, checking dtype and target.
pub fn atomic_for(cx: &FnCx<'_>, call: &Call, dtype: pld_ir::DataType) -> Result<i64, Diagnostic> {
    let v = attr_int(call, "atomic").unwrap_or(0);
    let op = call.callee.name();
    match v {
        0 => Ok(0),
        1 => {
            if !dtype.supports_atomic_add() {
                return Err(cx.err(format!(
                    "{op} with atomic=AtomicType.Add requires an fp32/bf16/fp16/int32/int16/int8 dtype (hardware atomic-add dtypes), but got {dtype}"
                )));
            }
            if dtype == pld_ir::DataType::BF16 && cx.opts.target != Target::A2A3 {
                return Err(cx.err(format!(
                    "{op} with atomic=AtomicType.Add into a bf16 window is not supported on the '{}' backend; bf16 atomic add exists only on a2a3",
                    cx.opts.target.name()
                )));
            }
            Ok(1)
        }
        other => Err(cx.err(format!("{op} atomic must be AtomicType.None_ or AtomicType.Add, got {other}"))),
    }
}

/// The region of a tensor a tile transfer reads or writes: at the offsets of argument
/// `offsets_arg` of `call`, in `view` (a local or peer view of `tensor`); its partition view
/// is named `<tensor>_<suffix>`.
pub struct Region<'a> {
    /// The op call whose argument holds the offsets.
    pub call: &'a Call,
    /// The index of the offsets tuple argument.
    pub offsets_arg: usize,
    /// The tensor view the region is cut from.
    pub view: &'a str,
    /// The tensor behind `view`.
    pub tensor: &'a crate::func::TensorRef,
    /// The partition view's name suffix.
    pub suffix: &'a str,
}

impl Region<'_> {
    /// Emits the region's `pto.partition_view` of extent `sizes`; returns `(ssa, type)`.
    fn partition(&self, cx: &mut FnCx<'_>, sizes: &[pld_ir::Expr]) -> Result<(String, PtoType), Diagnostic> {
        let offsets = cx.tuple_arg(self.call, self.offsets_arg, "offsets")?.to_vec();
        let hint = format!("{}_{}", self.tensor.name, self.suffix);
        let sizes = cx.sizes(sizes)?;
        cx.partition_sized(self.view, self.tensor, &offsets, &sizes, &hint, self.tail_slack())
    }

    /// How far the innermost dim may run past the tensor's extent: a call with
    /// `allow_physical_tail_padding` (a padded FP16 tail) reads its span rounded up to 32 bytes,
    /// less than one 32-byte unit past the last element; any other region, none.
    fn tail_slack(&self) -> i64 {
        let padded = self.call.attr("allow_physical_tail_padding").and_then(pld_ir::Attr::as_bool);
        match padded {
            Some(true) => 32 / self.tensor.ty.dtype.bytes().max(1) as i64 - 1,
            _ => 0,
        }
    }
}

/// `pto.tload` into `tile` (of type `tt`) of `region`, the region's extent being `tt`'s
/// valid shape.
pub fn tload(
    cx: &mut FnCx<'_>,
    region: &Region<'_>,
    (tile, tt): (&str, &pld_ir::TileType),
) -> Result<(), Diagnostic> {
    let (pv, pty) = region.partition(cx, tt.effective_valid_shape())?;
    let tty = cx.tile_ty(tile, tt)?;
    let dps = Dps::new("pto.tload", vec![Operand::new(pv, pty)], vec![Operand::new(tile, tty)]);
    cx.push(Inst::Dps(dps));
    Ok(())
}

/// `pto.tstore` of `tile` (of type `tt`) into `region`, atomically adding when `atomic` is 1.
/// Returns the region's partition view and its type.
pub fn tstore(
    cx: &mut FnCx<'_>,
    region: &Region<'_>,
    (tile, tt): (&str, &pld_ir::TileType),
    atomic: i64,
) -> Result<(String, PtoType), Diagnostic> {
    let (pv, pty) = region.partition(cx, &FnCx::tile_region(tt, region.tensor.ty.rank()))?;
    let tty = cx.tile_ty(tile, tt)?;
    let mut dps = Dps::new("pto.tstore", vec![Operand::new(tile, tty)], vec![Operand::new(&pv, pty.clone())]);
    if let Some(a) = (atomic == 1).then(|| crate::mlir::atomic_attr(atomic)).flatten() {
        dps.attrs.push(("atomicType", a));
    }
    cx.push(Inst::Dps(dps));
    Ok((pv, pty))
}

/// V9: a `pto.tload` destination is a `vec` or `mat` tile, and A2/A3 has no low-precision
/// (fp8/hif8/fp4) loads.
pub fn check_tload_dst(cx: &FnCx<'_>, op: &str, t: &pld_ir::TileType) -> Result<(), Diagnostic> {
    use pld_ir::{DataType, MemorySpace};
    if !matches!(t.memory, None | Some(MemorySpace::Vec) | Some(MemorySpace::Mat)) {
        return Err(cx.err(format!(
            "{op} loads into a {} tile; ptoas accepts a tload destination only in vec or mat",
            t.memory.map_or("?", |m| m.dsl_name())
        )));
    }
    let low = matches!(
        t.dtype,
        DataType::FP8E4M3FN | DataType::FP8E5M2 | DataType::FP8E8M0 | DataType::HF8 | DataType::FP4
    );
    if low && cx.opts.target == Target::A2A3 {
        return Err(cx.err(format!("{op} of a {} tile is not supported on the 'a2a3' backend", t.dtype)));
    }
    Ok(())
}

/// V10: a `pto.tstore` source is `vec`/`mat`/`acc` on A2/A3 and `vec`/`acc` on A5.
pub fn check_tstore_src(cx: &FnCx<'_>, op: &str, t: &pld_ir::TileType) -> Result<(), Diagnostic> {
    use pld_ir::MemorySpace;
    let ok = match cx.opts.target {
        Target::A2A3 => {
            matches!(
                t.memory,
                None | Some(MemorySpace::Vec) | Some(MemorySpace::Mat) | Some(MemorySpace::Acc)
            )
        }
        Target::A5 => matches!(t.memory, None | Some(MemorySpace::Vec) | Some(MemorySpace::Acc)),
    };
    if !ok {
        return Err(cx.err(format!(
            "{op} stores from a {} tile, which ptoas does not accept as a tstore source on the '{}' backend",
            t.memory.map_or("?", |m| m.dsl_name()),
            cx.opts.target.name()
        )));
    }
    Ok(())
}
