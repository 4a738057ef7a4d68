//! `ConvertTensorToTileOps`: tensor-level ops in InCore kernels become tile-level ops.
//!
//! Afterwards: no op offering a `TensorToTile` lowering remains in an InCore function (each
//! op's own lowering decides the rewrite — staging tiles for put/get, the 1:1 remote_store
//! with a Vec bridge, …), and every tensor-like parameter of an InCore kernel that is still
//! `In` but written has its direction upgraded: written only → `Out`, read and written →
//! `InOut`. Reads and writes come from the registry's per-argument effects (through views,
//! rebinds and loop carries); any other use of a parameter counts as a read.

use crate::ops::{BULK_STORES, SCALAR_STORES};
use crate::pass::{Pass, PassCx, Property};
use crate::util::apply_lowerings;
use pld_ir::{
    Block, Diagnostic, Diagnostics, Direction, Effect, ExprKind, Function, FunctionKind, LoweringKind,
    Program, StmtKind, ValueId,
};
use std::collections::HashMap;

/// See the module docs.
pub struct ConvertTensorToTileOps;

impl Pass for ConvertTensorToTileOps {
    fn name(&self) -> &'static str {
        "ConvertTensorToTileOps"
    }
    fn produced(&self) -> &'static [Property] {
        &[Property::IncoreTileOps]
    }
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), pld_ir::Diagnostics> {
        apply_lowerings(program, LoweringKind::TensorToTile, cx.target, &|f| f.kind == FunctionKind::InCore)?;
        let mut diags = Diagnostics::new();
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
                    let effects = c.op().map(|d| d.arg_effects(c)).unwrap_or_default();
                    let top = std::ptr::eq(x, e);
                    let name = c.callee.name();
                    for (list, scalar) in [(BULK_STORES, false), (SCALAR_STORES, true)] {
                        for &(_, i) in list.iter().filter(|(n, _)| *n == name) {
                            if let Some(&p) =
                                c.args.get(i).and_then(|a| a.as_var()).and_then(|v| origin.get(&v))
                            {
                                if scalar {
                                    access[p].scalar = true;
                                } else {
                                    access[p].bulk = true;
                                }
                            }
                        }
                    }
                    for (i, a) in c.args.iter().enumerate() {
                        if top && aliasing && i == 0 {
                            continue;
                        }
                        if let Some(&p) = a.as_var().and_then(|v| origin.get(&v)) {
                            match effects.get(i).copied().unwrap_or(Effect::Read) {
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
                    ExprKind::Call(c) => {
                        c.args.first().and_then(|a| a.as_var()).filter(|_| c.ty.as_tensor_like().is_some())
                    }
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
