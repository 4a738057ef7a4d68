//! Window / CommContext queries: `pld.system.get_comm_ctx`, `pld.system.rank`,
//! `pld.system.nranks` (codegen.md §3.2).
//!
//! Guarantees: `get_comm_ctx` emits nothing (its result is the paired ctx argument); rank and
//! nranks read slot 2 of that ctx as `i64` and yield signless `i32` (rank: `trunci`; nranks:
//! `shrui 32` then `trunci`).

use crate::func::{FnCx, Val};
use crate::mlir::MTy;
use crate::pto::{Inst, PtoType};
use crate::register_emitter;
use pld_ir::{Call, Diagnostic, ValueId};

fn emit_get_comm_ctx(cx: &mut FnCx<'_>, call: &Call, _targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let t = cx.tensor(cx.arg(call, 0, "target")?, "pld.system.get_comm_ctx target")?;
    match t.ctx {
        Some(ssa) => Ok(Val::Ctx { ssa }),
        None => Err(cx
            .err(format!(
                "pld.system.get_comm_ctx: '{}' has no CommContext parameter in kernel '{}'",
                t.name, cx.func.name
            ))
            .with_note("run the pass pipeline (MaterializeDistTensorCtx pairs each DistributedTensor with a CommCtx parameter)")),
    }
}

fn slot_pair(cx: &mut FnCx<'_>, call: &Call) -> Result<String, Diagnostic> {
    let op = call.callee.name();
    let ctx = cx.ctx(cx.arg(call, 0, "ctx")?, &format!("{op} ctx"))?;
    let slot = cx.const_int(pld_runtime_abi::SLOT_RANK_PAIR as i64, MTy::Index);
    let (ptr_ty, ty) = (PtoType::Ptr("i64"), MTy::Int(64));
    Ok(cx.def(|result| Inst::LoadScalar { result, ptr: ctx, offset: slot, ptr_ty, ty }))
}

/// The low 32 bits of the `i64` `word` as an `i32` named after `hint`.
fn low_word(cx: &mut FnCx<'_>, word: String, hint: &str) -> Val {
    let r = cx.named(hint);
    let (from, to) = (MTy::Int(64), MTy::Int(32));
    cx.push(Inst::Cast { result: r.clone(), op: "arith.trunci", operand: word, from, to });
    Val::Scalar { ssa: r, ty: to }
}

fn emit_rank(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let p = slot_pair(cx, call)?;
    Ok(low_word(cx, p, &cx.result_hint(targets, "rank")))
}

fn emit_nranks(cx: &mut FnCx<'_>, call: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
    let p = slot_pair(cx, call)?;
    let c32 = cx.const_int(32, MTy::Int(64));
    let hi = cx.arith("arith.shrui", &[&p, &c32], MTy::Int(64));
    Ok(low_word(cx, hi, &cx.result_hint(targets, "nranks")))
}

register_emitter!("pld.system.get_comm_ctx", emit_get_comm_ctx);
register_emitter!("pld.system.rank", emit_rank);
register_emitter!("pld.system.nranks", emit_nranks);
