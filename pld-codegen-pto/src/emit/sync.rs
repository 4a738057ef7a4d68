//! Memory-consistency markers: `system.fence` and `system.cacheinvalid` (codegen.md §3.10).
//!
//! Guarantees: a region invalidate always goes through a partition view (a raw pointer is
//! rejected by ptoas), the whole-GM form is `all #pto.address_space<gm>`, and the fence is
//! `pto.fence.barrier_all #pto.fence_scope<gm>`.

use crate::func::{FnCx, Val};
use crate::pto::{Inst, SyncOp};
use crate::register_emitter;
use pld_ir::{Call, Diagnostic, ValueId};

fn emit_fence(cx: &mut FnCx<'_>, _call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    cx.push(Inst::Sync(SyncOp::FenceGm));
    Ok(Val::Unit)
}

fn emit_cacheinvalid(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    if call.args.is_empty() {
        cx.push(Inst::Sync(SyncOp::CacheInvalidAll));
        return Ok(Val::Unit);
    }
    let t = cx.tensor(cx.arg(call, 0, "target")?, "system.cacheinvalid target")?;
    let shape = cx.tuple_arg(call, 1, "shape")?.to_vec();
    let offsets = cx.tuple_arg(call, 2, "offsets")?.to_vec();
    let view = cx.local_view(&t)?;
    let (pv, pty) = cx.partition(&view, &t, &offsets, &shape, &format!("{}_pview", t.name))?;
    cx.push(Inst::CacheInvalidLine { view: pv, ty: pty });
    Ok(Val::Unit)
}

register_emitter!("system.fence", emit_fence);
register_emitter!("system.cacheinvalid", emit_cacheinvalid);
