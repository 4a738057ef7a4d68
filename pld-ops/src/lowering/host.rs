//! Host-builtin lowerings of the tensor collectives (`LowerHostTensorCollectives`).
//!
//! A collective in a host orchestration becomes one `builtin.tensor.<name>` dispatch per
//! participating device (`device=` on the call): a `for r in range(world_size())` loop for
//! an all-ranks comm domain, or one statement per rank of an explicit domain (the pass puts
//! the domain's rank list in the builder context as `devices`; `all_to_all_v` is rejected
//! inside a host loop, `loop_depth` in the context). Kwargs: the reduce `op`,
//! `dtype` of the data operand, `core_num` (mesh allreduce), `root` (broadcast). Operands
//! that the builtin reads on the host must be window-bound. An assigned result is rebound to
//! the data operand it aliases. Static checks that need the device count run here.

use pld_ir::{
    register_lowerings, Attr, Builder, Call, Diagnostic, Expr, Lowered, LoweringKind, Span, Type, ValueId,
};

struct Rule {
    builtin: &'static str,
    /// Operand whose dtype is the `dtype` kwarg, and which an assigned result aliases.
    data: usize,
    /// Operands that must be window-bound DistributedTensors on the host.
    host_bound: &'static [usize],
}

fn rule(op: &str, mode: &str) -> Option<Rule> {
    Some(match op {
        "pld.tensor.allreduce" if mode == "ring" => {
            Rule { builtin: "builtin.tensor.allreduce_ring", data: 0, host_bound: &[] }
        }
        "pld.tensor.allreduce" => Rule { builtin: "builtin.tensor.allreduce", data: 0, host_bound: &[] },
        "pld.tensor.barrier" => Rule { builtin: "builtin.tensor.barrier", data: 0, host_bound: &[] },
        "pld.tensor.broadcast" => Rule { builtin: "builtin.tensor.broadcast", data: 0, host_bound: &[] },
        "pld.tensor.reduce_scatter" => {
            Rule { builtin: "builtin.tensor.reduce_scatter", data: 0, host_bound: &[] }
        }
        "pld.tensor.allgather" => Rule { builtin: "builtin.tensor.allgather", data: 1, host_bound: &[0] },
        "pld.tensor.all_to_all" => Rule { builtin: "builtin.tensor.all_to_all", data: 1, host_bound: &[0] },
        "pld.tensor.all_to_all_v" => {
            Rule { builtin: "builtin.tensor.all_to_all_v", data: 1, host_bound: &[0, 3] }
        }
        _ => return None,
    })
}

fn lower_host(b: &mut Builder<'_>, call: &Call, results: &[ValueId], span: Span) -> Lowered {
    b.span = span;
    let op = call.callee.name();
    let mode = call.attr("mode").and_then(Attr::as_str).unwrap_or("mesh").to_string();
    if op == "pld.tensor.allreduce" && mode != "mesh" && mode != "ring" {
        return Err(Diagnostic::error(span, format!("{op} mode must be \"mesh\" or \"ring\", got {mode:?}")));
    }
    let rule = rule(op, &mode).ok_or_else(|| Diagnostic::error(span, format!("{op} has no host builtin")))?;
    let params = call.op().map_or(&[][..], |d| d.params);
    for &i in rule.host_bound {
        let bound =
            matches!(call.args.get(i).map(|a| b.type_of(a)), Some(Type::DistTensor(d)) if d.window.is_some());
        if !bound {
            let role = params.get(i).map_or("operand", |p| p.name);
            return Err(Diagnostic::error(
                call.args.get(i).map_or(span, |a| a.span.or(span)),
                format!("{op} {role} must be a window-bound DistributedTensor (a view of an alloc_window_buffer) when called from a HOST orchestrator; a plain Tensor or an unbound DistributedTensor parameter is only supported on the InCore composite path"),
            ));
        }
    }
    if op == "pld.tensor.all_to_all_v" && b.context.loop_depth > 0 {
        return Err(Diagnostic::error(
            span,
            format!("{op} is not supported inside a for/while loop in a HOST orchestrator; hoist it out of the loop or call it from a chip orchestration"),
        ));
    }
    let Some(devices) = b.context.devices.clone() else {
        return Err(Diagnostic::error(
            span,
            format!("{op} in a host orchestration must be inside the comm domain of its windows (run MaterializeCommDomainScopes first)"),
        ));
    };
    let data = call
        .args
        .get(rule.data)
        .cloned()
        .ok_or_else(|| Diagnostic::error(span, format!("{op} is missing its data operand")))?;
    let dtype = b.type_of(&data).dtype().unwrap_or(pld_ir::DataType::FP32);
    let n = (!devices.is_empty()).then_some(devices.len() as i64);
    let mut attrs: Vec<(&str, Attr)> = Vec::new();
    match op {
        "pld.tensor.allreduce" => {
            attrs.push(("op", Attr::Int(call.attr_int("op").unwrap_or(0))));
            attrs.push(("dtype", Attr::DType(dtype)));
            let core_num = call.attr_int("core_num").unwrap_or(1);
            if mode == "mesh" {
                attrs.push(("core_num", Attr::Int(core_num)));
            } else {
                check_ring(b, op, call, n, core_num, span)?;
            }
        }
        "pld.tensor.reduce_scatter" => {
            attrs.push(("op", Attr::Int(call.attr_int("op").unwrap_or(0))));
            attrs.push(("dtype", Attr::DType(dtype)));
        }
        "pld.tensor.broadcast" => {
            let root = call.attr_int("root").unwrap_or(0);
            if let Some(n) = n {
                if !(0..n).contains(&root) {
                    return Err(Diagnostic::error(
                        span,
                        format!("{op} root ({root}) must be a valid rank in [0, {n}) for this explicit device subset"),
                    ));
                }
            }
            attrs.push(("root", Attr::Int(root)));
            attrs.push(("dtype", Attr::DType(dtype)));
        }
        "pld.tensor.barrier" => {}
        "pld.tensor.all_to_all_v" => {
            attrs.push(("dtype", Attr::DType(dtype)));
            attrs.push(("core_num", Attr::Int(call.attr_int("core_num").unwrap_or(1))));
        }
        _ => attrs.push(("dtype", Attr::DType(dtype))),
    }
    // The signal covers every participating rank.
    if let (Some(n), Some(sig)) = (n, call.args.iter().rev().find(|a| is_int32_dist(b, a))) {
        if mode != "ring" {
            if let Some(rows) = b.type_of(sig).shape().and_then(|s| s.first()).and_then(Expr::as_int) {
                if rows < n {
                    return Err(Diagnostic::error(
                        span,
                        format!("{op} signal first dimension ({rows}) is smaller than the {n} participating devices"),
                    ));
                }
            }
        }
    }
    let proto = b.op(rule.builtin, call.args.clone(), attrs)?;
    let dispatch = |b: &mut Builder<'_>, device: Expr| {
        let mut e = proto.clone();
        if let Some(c) = e.as_call_mut() {
            c.device = Some(device);
        }
        b.eval(e);
    };
    if devices.is_empty() {
        let ws = b.assign_op("world_size", "pld.system.world_size", vec![], vec![])?;
        b.for_range("r", (Expr::int(0), Expr::var(ws), Expr::int(1)), vec![], |b, r, _| {
            dispatch(b, Expr::var(r));
            Ok(vec![])
        })?;
    } else {
        for d in devices {
            dispatch(b, Expr::int(d));
        }
    }
    if !results.is_empty() {
        b.push(pld_ir::StmtKind::Assign { targets: results.to_vec(), value: data });
    }
    Ok(())
}

fn is_int32_dist(b: &Builder<'_>, e: &Expr) -> bool {
    matches!(b.type_of(e), Type::DistTensor(d) if d.tensor.dtype == pld_ir::DataType::INT32)
}

fn check_ring(
    b: &Builder<'_>,
    op: &str,
    call: &Call,
    n: Option<i64>,
    core_num: i64,
    span: Span,
) -> Result<(), Diagnostic> {
    if core_num != 1 {
        return Err(Diagnostic::error(
            span,
            format!("{op} mode=\"ring\" does not support core_num={core_num}"),
        ));
    }
    let (Some(n), Some(sig)) = (n, call.args.get(1)) else { return Ok(()) };
    let shape = b.type_of(sig).shape().map(|s| s.to_vec()).unwrap_or_default();
    if n > 16 {
        return Err(Diagnostic::error(
            span,
            format!("{op} mode=\"ring\" supports at most 16 ranks, got {n}"),
        ));
    }
    if let [r, c] = shape.as_slice() {
        if c.as_int().is_some_and(|c| c != n) || r.as_int().is_some_and(|r| r < 2 * (n - 1) + 1) {
            return Err(Diagnostic::error(
                span,
                format!("{op} mode=\"ring\" on {n} devices needs an INT32 [{}, {n}] signal", 2 * (n - 1) + 1),
            ));
        }
    }
    if let Some(numel) = b.type_of(&call.args[0]).as_tensor_like().and_then(|t| t.static_numel()) {
        if numel % n != 0 {
            return Err(Diagnostic::error(
                span,
                format!("{op} mode=\"ring\" on the host needs an element count divisible by the {n} devices, got {numel}"),
            ));
        }
    }
    Ok(())
}

register_lowerings!(super::RAIL_COLLECTIVES, LoweringKind::HostBuiltin, lower_host);
