//! Builtin collective kernels: every `builtin.tensor.*` variant a host orchestrator dispatches
//! is rendered as its own PTO module, `<entry>_kernel.pto`.
//!
//! The reference ships these as prebuilt C++ templates; pld renders them from the same
//! algorithm the InCore collectives use: a vector kernel whose parameters are the builtin's
//! window arguments (plus one CommContext each) is built with the builder, the collective's
//! registered `Composite` lowering expands it into notify/wait/remote_load/put/get and tile
//! arithmetic, the data-before-signal markers of `InsertCommFence` are added, and the result
//! goes through the ordinary function emitter.
//!
//! Guarantees: one kernel per distinct variant, in variant order; a rank-1 signal is viewed as
//! the `[NR, 1]` mesh signal the lowering addresses; dynamic extents become `index`
//! parameters; anything the lowering or the emitter cannot express is a diagnostic naming
//! the builtin. The rendered kernel is single-block (a requested `core_num` is recorded in the
//! orchestration description but not used for block-cyclic chunking).

use crate::CodegenOptions;
use pld_ir::registry::{DeduceEnv, LoweringKind};
use pld_ir::{
    Attr, Block, Call, Callee, Diagnostic, Direction, Expr, Function, FunctionBuilder, FunctionKind, Program,
    Span, Stmt, StmtKind, TensorType, Type, Values,
};
use std::collections::BTreeMap;

/// The entry symbol of a variant: non-alphanumerics become `_`.
pub fn entry_symbol(variant: &str) -> String {
    variant.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Every builtin call of the host/chip orchestrators, one per variant (first occurrence).
pub fn builtin_calls<'p>(
    program: &'p Program,
    opts: &CodegenOptions,
) -> BTreeMap<String, (&'p Function, Call)> {
    let mut out = BTreeMap::new();
    for f in &program.functions {
        if !matches!(f.kind, FunctionKind::Host | FunctionKind::ChipOrch) {
            continue;
        }
        f.body.walk_exprs(&mut |e| {
            if let Some(c) = e.as_call() {
                if let Callee::Op(def) = &c.callee {
                    if def.name.starts_with("builtin.tensor.") {
                        let (variant, _) = crate::orch::builtin_spec(c, opts);
                        out.entry(variant).or_insert_with(|| (f, c.clone()));
                    }
                }
            }
        });
    }
    out
}

/// A kernel parameter type for a host argument: dynamic dims become symbols, the window
/// binding is dropped (kernel parameters do not carry it).
fn kernel_type(tt: &TensorType, dist: bool, param: &str) -> Type {
    let shape: Vec<Expr> = tt
        .shape
        .iter()
        .enumerate()
        .map(|(k, d)| if d.as_int().is_some() { d.clone() } else { Expr::sym(format!("{param}_dim{k}")) })
        .collect();
    if dist {
        Type::dist_tensor(shape, tt.dtype)
    } else {
        Type::tensor(shape, tt.dtype)
    }
}

/// Renders the kernel of one builtin variant.
pub fn render(
    variant: &str,
    host: &Function,
    call: &Call,
    opts: &CodegenOptions,
) -> Result<Function, Diagnostic> {
    let op = call.callee.name();
    let span = Span::DUMMY;
    let err = |m: String| Diagnostic::error(span, format!("builtin kernel {variant}: {m}"));
    let Some(def) = call.op() else { return Err(err("not an op call".into())) };
    let short = op.trim_start_matches("builtin.tensor.");
    let (composite, mut attrs): (String, Vec<(&str, Attr)>) = match short {
        "allreduce" | "allreduce_ring" => {
            let mode = if short == "allreduce_ring" { "ring" } else { "mesh" };
            (
                "pld.tensor.allreduce".into(),
                vec![
                    ("op", Attr::Int(call.attr_int("op").unwrap_or(0))),
                    ("mode", Attr::Str(mode.into())),
                    ("core_num", Attr::Int(1)),
                ],
            )
        }
        other => (format!("pld.tensor.{other}"), Vec::new()),
    };
    for (k, v) in &call.attrs {
        if !matches!(k.as_str(), "dtype" | "core_num" | "op" | "mode") {
            attrs.push((k.as_str(), v.clone()));
        }
    }
    if short == "reduce_scatter" {
        attrs.push(("op", Attr::Int(call.attr_int("op").unwrap_or(0))));
    }
    let Some(cdef) = pld_ir::registry().lookup(&composite) else {
        return Err(err(format!("the collective {composite} is not registered")));
    };
    let Some(lowering) = cdef.lowering(LoweringKind::Composite) else {
        return Err(err(format!("{composite} has no composite lowering to render it from")));
    };
    let name = format!("{}_kernel", entry_symbol(variant));
    let mut fb = FunctionBuilder::new(&name, FunctionKind::Aiv).target(opts.target);
    let mut params = Vec::new();
    let mut dists = Vec::new();
    for (i, a) in call.args.iter().enumerate() {
        let pname = def.params.get(i).map_or_else(|| format!("arg{i}"), |p| p.name.to_string());
        let ty = a.ty(&host.values);
        let Some(tt) = ty.as_tensor_like() else {
            return Err(err(format!("argument {pname} is a {}, not a tensor", ty.kind_name())));
        };
        // Inputs read only locally are plain tensors on the InCore path.
        let dist = matches!(ty, Type::DistTensor(_)) && !matches!(pname.as_str(), "input" | "send_counts");
        let kt = kernel_type(tt, dist, &pname);
        let dir = if def.params.get(i).is_some_and(|p| p.effect.writes()) {
            Direction::InOut
        } else {
            Direction::In
        };
        let id = fb.param(&pname, kt, dir);
        if dist {
            dists.push(pname.clone());
        }
        params.push((pname, id));
    }
    for d in &dists {
        fb.param(format!("{d}_ctx"), Type::CommCtx, Direction::In);
    }
    let built = fb.body(|b| {
        let mut args = Vec::new();
        for (pname, id) in &params {
            let mut e = Expr::var(*id);
            if pname == "signal" {
                if let Some(tt) = b.values.ty(*id).as_tensor_like().cloned() {
                    if tt.rank() == 1 {
                        let shape = Expr::tuple(vec![tt.shape[0].clone(), Expr::int(1)]);
                        let v = b.assign_op("signal_2d", "tensor.view", vec![e, shape], vec![])?;
                        e = Expr::var(v);
                    } else if tt.rank() == 2 && tt.shape[1].as_int() != Some(1) && short == "allreduce" {
                        // `[NR, stride]` multi-block signal: the single block uses column 0.
                        let shape = Expr::tuple(vec![tt.shape[0].clone(), Expr::int(1)]);
                        let v = b.assign_op(
                            "signal_col0",
                            "tensor.slice",
                            vec![e, shape, Expr::ints(&[0, 0])],
                            vec![],
                        )?;
                        e = Expr::var(v);
                    }
                }
            }
            args.push(e);
        }
        let c = b.op(&composite, args, attrs.clone())?;
        let Some(c) = c.as_call().cloned() else { return Ok(()) };
        (lowering.run)(b, &c, &[], span)
    });
    built.map_err(|d| err(d.message))?;
    let mut f = fb.finish();
    let env_values = f.values.clone();
    insert_fences(&env_values, &mut f.body, opts).map_err(|d| err(d.message))?;
    Ok(f)
}

fn op_stmt(values: &Values, opts: &CodegenOptions, op: &str, args: Vec<Expr>) -> Result<Stmt, Diagnostic> {
    let env = DeduceEnv { values, target: opts.target, func_kind: Some(FunctionKind::Aiv) };
    let e = Expr::op_call(op, args, Vec::new(), Span::DUMMY, &env)?;
    Ok(Stmt::new(StmtKind::Eval(e), Span::DUMMY))
}

/// The data-before-signal markers of `InsertCommFence` (passes.md §9.5) for a synthesized
/// body: region invalidate + fence after a local publishing write into a window, a fence after
/// a remote write, a whole-GM invalidate after a wait.
fn insert_fences(values: &Values, block: &mut Block, opts: &CodegenOptions) -> Result<(), Diagnostic> {
    let mut out = Vec::with_capacity(block.stmts.len());
    for mut s in std::mem::take(&mut block.stmts) {
        for b in s.blocks_mut() {
            insert_fences(values, b, opts)?;
        }
        let call = s.call().cloned();
        out.push(s);
        let Some(c) = call else { continue };
        let window_arg =
            |i: usize| c.args.get(i).filter(|a| matches!(a.ty(values), Type::DistTensor(_))).cloned();
        match c.callee.name() {
            "tile.store" | "pld.tile.get" => {
                let i = if c.callee.name() == "tile.store" { 2 } else { 0 };
                if let Some(t) = window_arg(i) {
                    if let Some(tt) = t.ty(values).as_tensor_like().cloned() {
                        let shape = Expr::tuple(tt.shape.clone());
                        let zeros = Expr::tuple(vec![Expr::int(0); tt.rank()]);
                        out.push(op_stmt(values, opts, "system.cacheinvalid", vec![t, shape, zeros])?);
                        out.push(op_stmt(values, opts, "system.fence", vec![])?);
                    }
                }
            }
            "pld.tile.remote_store" | "pld.tile.put" => {
                out.push(op_stmt(values, opts, "system.fence", vec![])?)
            }
            "pld.system.wait" => out.push(op_stmt(values, opts, "system.cacheinvalid", vec![])?),
            _ => {}
        }
    }
    block.stmts = out;
    Ok(())
}
