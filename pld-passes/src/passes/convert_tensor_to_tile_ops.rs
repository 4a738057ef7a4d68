//! `ConvertTensorToTileOps`: tensor-level ops in InCore kernels become tile-level ops.
//!
//! Afterwards: no op offering a `TensorToTile` lowering remains in an InCore function (each
//! op's own lowering decides the rewrite — staging tiles for put/get, the 1:1 remote_store
//! with a Vec bridge, …), and every tensor-like parameter of an InCore kernel that is still
//! `In` but written has its direction upgraded: written only → `Out`, read and written →
//! `InOut`. Reads and writes come from the registry's per-argument effects (through views,
//! rebinds and loop carries); any other use of a parameter counts as a read. A kernel result
//! that became a tile is stored (`tile.store`) into a new trailing `Out` parameter of the
//! declared tensor type, which every caller allocates with `tensor.create` and passes. A GM
//! parameter written both by a bulk tile store and by a scalar `tensor.write` is rejected.

use crate::pass::{Pass, PassCx};
use crate::util::apply_lowerings;
use pld_ir::{
    Block, Diagnostic, Diagnostics, Direction, Effect, ExprKind, Function, FunctionKind, LoweringKind,
    Program, StmtKind, StoreKind, ValueId,
};
use std::collections::HashMap;

/// See the module docs.
pub struct ConvertTensorToTileOps;

impl Pass for ConvertTensorToTileOps {
    crate::pass_info!("ConvertTensorToTileOps", produced: [IncoreTileOps]);
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), pld_ir::Diagnostics> {
        // Changes: every InCore kernel (conservatively) and the functions lowerings add; the
        // callers too when a kernel gains an exit-store parameter (then: everything).
        cx.report_changes();
        let mut arity = Vec::new();
        for f in program.functions.iter().filter(|f| f.kind == FunctionKind::InCore) {
            cx.changed(&f.name);
            arity.push(f.params.len());
        }
        apply_lowerings(program, LoweringKind::TensorToTile, cx.target, &|f| f.kind == FunctionKind::InCore)?;
        let mut diags = Diagnostics::new();
        exit_stores(program, cx.target, &mut diags);
        let kernels = program.functions.iter().filter(|f| f.kind == FunctionKind::InCore);
        if kernels.map(|f| f.params.len()).ne(arity.iter().copied()) {
            cx.changed_everything();
        }
        for f in program.functions.iter_mut().filter(|f| f.kind == FunctionKind::InCore) {
            if let Err(d) = upgrade_directions(f) {
                diags.push(d);
            }
        }
        diags.into_result(())
    }
}

#[derive(Default, Clone, Copy)]
struct Access {
    read: bool,
    write: bool,
    bulk: bool,
    scalar: bool,
}

/// Upgrades the directions of written `In` tensor-like parameters of `f`; rejects a GM
/// parameter written both by a bulk (MTE3) store and by a scalar store.
pub fn upgrade_directions(f: &mut Function) -> Result<(), Diagnostic> {
    let mut origin: HashMap<ValueId, usize> = HashMap::new();
    for (i, p) in f.params.iter().enumerate() {
        if f.values.ty(p.value).as_tensor_like().is_some() {
            origin.insert(p.value, i);
        }
    }
    let mut access = vec![Access::default(); f.params.len()];
    scan(&f.body, f, &mut origin, &mut access);
    for (p, a) in f.params.iter().zip(&access) {
        if a.bulk && a.scalar {
            return Err(Diagnostic::error(
                f.span,
                format!(
                    "`{}` is written both by a bulk tile store and by a scalar tensor.write in `{}`; MTE3 and scalar stores to one GM tensor are not coherent",
                    f.values.name(p.value),
                    f.name
                ),
            )
            .with_note("write the tensor one way only (store a tile, or write scalars)"));
        }
    }
    for (p, a) in f.params.iter_mut().zip(access) {
        if p.dir == Direction::In && a.write {
            p.dir = if a.read { Direction::InOut } else { Direction::Out };
        }
    }
    Ok(())
}

fn scan(block: &Block, f: &Function, origin: &mut HashMap<ValueId, usize>, access: &mut [Access]) {
    for s in &block.stmts {
        // A view or rebind (a call returning a tensor over its first argument, reading it
        // only) aliases that argument rather than reading it.
        let aliasing = match &s.kind {
            StmtKind::Assign { value, .. } => value.as_call().is_some_and(|c| {
                c.ty.as_tensor_like().is_some()
                    && c.op().is_some_and(|d| d.arg_effects(c).first() == Some(&Effect::Read))
            }),
            _ => false,
        };
        // Accesses made by this statement's own expressions.
        s.for_each_expr(&mut |e| {
            e.walk(&mut |x| {
                if let ExprKind::Call(c) = &x.kind {
                    let accesses = c.op().map(|d| pld_ir::arg_accesses(d, c)).unwrap_or_default();
                    let top = std::ptr::eq(x, e);
                    for (a, acc) in c.args.iter().zip(&accesses) {
                        if let Some(&p) = a.as_var().and_then(|v| origin.get(&v)) {
                            match acc.store {
                                StoreKind::Bulk => access[p].bulk = true,
                                StoreKind::Scalar => access[p].scalar = true,
                                StoreKind::None => {}
                            }
                        }
                    }
                    for (i, a) in c.args.iter().enumerate() {
                        if top && aliasing && i == 0 {
                            continue;
                        }
                        if let Some(&p) = a.as_var().and_then(|v| origin.get(&v)) {
                            match accesses.get(i).map_or(Effect::Read, |acc| acc.effect) {
                                Effect::Write => access[p].write = true,
                                Effect::ReadWrite => {
                                    access[p].write = true;
                                    access[p].read = true;
                                }
                                Effect::Read | Effect::None => access[p].read = true,
                            }
                        }
                    }
                }
            });
            // A parameter used outside any call argument position (returned, yielded) is read.
            let mut direct = Vec::new();
            collect_non_arg_vars(e, &mut direct);
            for v in direct {
                if let Some(&p) = origin.get(&v) {
                    access[p].read = true;
                }
            }
        });
        // Alias propagation.
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                let src = match &value.kind {
                    ExprKind::Var(v) => Some(*v),
                    // The operand a writing op returns (any position), else a view's first.
                    ExprKind::Call(c) => c
                        .written_result_operand(&f.values)
                        .map_or_else(|| c.args.first(), |i| c.args.get(i))
                        .and_then(|a| a.as_var())
                        .filter(|_| c.ty.as_tensor_like().is_some()),
                    _ => None,
                };
                if let (Some(src), [t]) = (src, targets.as_slice()) {
                    if let Some(&p) = origin.get(&src) {
                        if f.values.ty(*t).as_tensor_like().is_some() {
                            origin.insert(*t, p);
                        }
                    }
                }
            }
            StmtKind::For { iter_args, results, .. } | StmtKind::While { iter_args, results, .. } => {
                for (a, r) in iter_args.iter().zip(results) {
                    if let Some(&p) = a.init.as_var().and_then(|v| origin.get(&v)) {
                        origin.insert(a.value, p);
                        origin.insert(*r, p);
                    }
                }
            }
            _ => {}
        }
        for b in s.blocks() {
            scan(b, f, origin, access);
        }
    }
}

/// Vars that appear in `e` other than as a direct call argument.
fn collect_non_arg_vars(e: &pld_ir::Expr, out: &mut Vec<ValueId>) {
    match &e.kind {
        ExprKind::Var(v) => out.push(*v),
        ExprKind::Call(c) => {
            for a in &c.args {
                if a.as_var().is_none() {
                    collect_non_arg_vars(a, out);
                }
            }
        }
        ExprKind::Binary(_, a, b) => {
            collect_non_arg_vars(a, out);
            collect_non_arg_vars(b, out);
        }
        ExprKind::Unary(_, a) => collect_non_arg_vars(a, out),
        ExprKind::Tuple(items) => items.iter().for_each(|i| collect_non_arg_vars(i, out)),
        _ => {}
    }
}

/// Exit stores for kernel results that became tiles, and the matching caller allocations.
fn exit_stores(program: &mut Program, target: pld_ir::Target, diags: &mut Diagnostics) {
    use crate::ops::{EXIT_STORE, TENSOR_CREATE};
    use pld_ir::{Builder, Callee, Expr, Param, Stmt, Type};
    // Per kernel: the return positions whose value became a tile (and their tensor types).
    let mut added: HashMap<String, Vec<Type>> = HashMap::new();
    for f in program.functions.iter_mut().filter(|f| f.kind == FunctionKind::InCore) {
        let mut outs: HashMap<usize, ValueId> = HashMap::new();
        let mut body = std::mem::take(&mut f.body);
        let ret_types = f.ret.clone();
        crate::util::map_block(
            &mut body,
            &mut |s| {
                let StmtKind::Return(vals) = &s.kind else { return Ok(vec![s]) };
                let mut vals = vals.clone();
                let mut pre: Vec<Stmt> = Vec::new();
                for (i, v) in vals.iter_mut().enumerate() {
                    let Some(rt) = ret_types.get(i).filter(|t| t.as_tensor_like().is_some()) else {
                        continue;
                    };
                    if v.ty(&f.values).as_tile().is_none() {
                        continue;
                    }
                    let out = *outs.entry(i).or_insert_with(|| {
                        let name = format!("ret{i}_out");
                        let ov = f.values.add(name, rt.clone(), s.span);
                        f.params.push(Param { value: ov, dir: Direction::Out });
                        ov
                    });
                    let rank = rt.shape().map_or(0, |sh| sh.len());
                    let mut b = Builder::new(&mut f.values, f.kind);
                    b.target = target;
                    b.span = s.span;
                    let zeros = Expr::tuple((0..rank).map(|_| Expr::int(0)).collect());
                    let stored = b.assign_op(
                        format!("ret{i}"),
                        EXIT_STORE,
                        vec![v.clone(), zeros, Expr::var(out)],
                        vec![],
                    )?;
                    pre.extend(b.finish().0);
                    *v = Expr::var(stored);
                }
                pre.push(Stmt::new(StmtKind::Return(vals), s.span));
                Ok(pre)
            },
            diags,
        );
        f.body = body;
        if !outs.is_empty() {
            let mut idx: Vec<usize> = outs.keys().copied().collect();
            idx.sort();
            added.insert(f.name.clone(), idx.iter().map(|i| f.ret[*i].clone()).collect());
        }
    }
    if added.is_empty() {
        return;
    }
    for f in program.functions.iter_mut() {
        let mut body = std::mem::take(&mut f.body);
        crate::util::map_block(
            &mut body,
            &mut |mut s| {
                let mut pre: Vec<Stmt> = Vec::new();
                let mut err = None;
                let span = s.span;
                s.for_each_expr_mut(&mut |e| {
                    e.walk_mut(&mut |x| {
                        let Some(c) = x.as_call_mut() else { return };
                        let Callee::Func(name) = &c.callee else { return };
                        let Some(tys) = added.get(name) else { return };
                        for t in tys {
                            let Some(tt) = t.as_tensor_like() else { continue };
                            let mut b = Builder::new(&mut f.values, f.kind);
                            b.target = target;
                            b.span = span;
                            match b.assign_op(
                                "kernel_out",
                                TENSOR_CREATE,
                                vec![Expr::tuple(tt.shape.clone())],
                                vec![("dtype", pld_ir::Attr::DType(tt.dtype))],
                            ) {
                                Ok(v) => {
                                    c.args.push(Expr::var(v));
                                    pre.extend(b.finish().0);
                                }
                                Err(d) => err = Some(d),
                            }
                        }
                    })
                });
                if let Some(d) = err {
                    return Err(d);
                }
                pre.push(s);
                Ok(pre)
            },
            diags,
        );
        f.body = body;
    }
}
