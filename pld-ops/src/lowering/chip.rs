//! Chip-builtin lowerings of the tensor collectives (`LowerL2TensorCollectives`).
//!
//! A collective written in a chip orchestration body becomes a call of a synthesized AIV
//! kernel `<caller>_<collective>_l2_<n>` whose parameters are the collective's operands and
//! whose body is the same collective; the InCore composite lowering then expands it, so the
//! collective runs as one AIV task of the caller's own pipeline (no per-device fan-out),
//! ordered against the surrounding tasks by ordinary data dependencies. An assigned result
//! is rebound to the operand it aliases.

use pld_ir::{
    register_lowerings, Attr, Builder, Call, Diagnostic, Direction, Expr, FunctionBuilder, FunctionKind,
    Lowered, LoweringKind, Span, Type, ValueId,
};

fn lower_chip(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    b.span = span;
    let op = call.callee.name();
    let caller = b.context.function.clone().unwrap_or_else(|| "chip".to_string());
    let short = op.rsplit('.').next().unwrap_or("collective");
    let name = format!("{caller}_{short}_l2_{}", b.values.len());
    let mut fb = FunctionBuilder::new(name.clone(), FunctionKind::Aiv).target(b.target);
    let mut kernel_args = Vec::new();
    let mut call_args = Vec::new();
    let params = call.op().map_or(&[][..], |d| d.params);
    for (i, a) in call.args.iter().enumerate() {
        let ty = b.type_of(a);
        let shaped = matches!(ty, Type::Tensor(_) | Type::DistTensor(_));
        if a.as_var().is_some() && (shaped || matches!(ty, Type::Scalar(_))) {
            let pname = a
                .as_var()
                .map(|v| b.values.name(v).to_string())
                .unwrap_or_else(|| params.get(i).map_or("arg", |p| p.name).to_string());
            let dir = if matches!(ty, Type::DistTensor(_)) { Direction::InOut } else { Direction::In };
            let v = fb.param(pname, ty, dir);
            kernel_args.push(Expr::var(v));
            call_args.push(a.clone());
        } else {
            kernel_args.push(a.clone());
        }
    }
    let attrs = call.attr_args();
    fb.body(|kb| {
        kb.span = span;
        kb.eval_op(op, kernel_args, attrs)?;
        kb.ret(vec![]);
        Ok(())
    })?;
    let mut kernel = fb.finish();
    kernel.span = span;
    kernel.attrs.push(("chip_collective".into(), Attr::Str(op.to_string())));
    b.new_functions.push(kernel);
    let e = b.func_call(&name, call_args, None, Type::Unknown);
    b.eval(e);
    if !results.is_empty() {
        let alias = call.args.iter().find(|a| b.type_of(a) == call.ty).cloned();
        let Some(alias) = alias else {
            return Err(Diagnostic::error(span, format!("{op} result aliases none of its operands")));
        };
        b.push(pld_ir::StmtKind::Assign { targets: results.to_vec(), value: alias });
    }
    Ok(())
}

register_lowerings!(super::RAIL_COLLECTIVES, LoweringKind::ChipBuiltin, lower_chip);
