//! The statement walk of [`FnCx`]: blocks, `for`/`if`/`while` as `scf` regions, and calls.
//!
//! Guarantees: scalar carries become `scf` region values, buffers are carried in place; the
//! walk never names an op: calls go through the emitter table; a missing emitter is a
//! diagnostic naming the op (with a note when a pass would have lowered it).

use super::{FnCx, Val};
use crate::emitters;
use crate::mlir::MTy;
use crate::pto::{print, Dps, Inst, Operand, Results, ScfFor, ScfIf, ScfWhile};
use pld_ir::registry::LoweringKind;
use pld_ir::{Call, Callee, Diagnostic, Expr, ExprKind, Stmt, StmtKind, Type, ValueId};

impl FnCx<'_> {
    pub(super) fn emit_top_block(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        for (i, s) in stmts.iter().enumerate() {
            if let StmtKind::Return(_) = s.kind {
                if i + 1 != stmts.len() {
                    self.span = s.span;
                    return Err(self.err("an early return has no pto form; return at the end of the kernel"));
                }
                continue;
            }
            self.emit_stmt(s)?;
        }
        Ok(())
    }

    /// Emits a nested block; returns its trailing yield values, if any. Tiles allocated in
    /// the block are released at its end (values defined inside never escape it).
    pub(super) fn emit_nested(&mut self, stmts: &[Stmt]) -> Result<Option<Vec<Expr>>, Diagnostic> {
        let frame = self.open_frame();
        let r = self.emit_nested_inner(stmts);
        self.release_frame(frame);
        r
    }

    pub(super) fn emit_nested_inner(&mut self, stmts: &[Stmt]) -> Result<Option<Vec<Expr>>, Diagnostic> {
        let mut yields = None;
        for s in stmts {
            match &s.kind {
                StmtKind::Yield(v) => {
                    // The yield's own lines (its expression, the moves into carried tiles)
                    // carry its span.
                    self.span = s.span;
                    yields = Some(v.clone());
                }
                StmtKind::Return(_) => {
                    self.span = s.span;
                    return Err(self.err("a return inside a loop or branch has no pto form"));
                }
                _ => self.emit_stmt(s)?,
            }
        }
        Ok(yields)
    }

    pub(super) fn emit_stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        self.span = s.span;
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                let val = match &value.kind {
                    ExprKind::Call(c) => self.emit_call(c, targets)?,
                    _ => self.value(value)?,
                };
                match targets.as_slice() {
                    [t] => self.bind(*t, val),
                    [] => {}
                    _ => {
                        return Err(
                            self.err("tuple unpacking has no pto form; assign one value per statement")
                        );
                    }
                }
                Ok(())
            }
            StmtKind::Eval(e) => {
                match &e.kind {
                    ExprKind::Call(c) => {
                        self.emit_call(c, &[])?;
                    }
                    _ => {
                        self.value(e)?;
                    }
                }
                Ok(())
            }
            StmtKind::For { var, start, stop, step, iter_args, body, results, .. } => {
                self.emit_for(var, [start, stop, step], iter_args, body, results)
            }
            StmtKind::If { cond, then_body, else_body, results } => {
                self.emit_if(cond, then_body, else_body, results)
            }
            StmtKind::While { iter_args, cond, body, results } => {
                self.emit_while(iter_args, cond, body, results)
            }
            StmtKind::Scope { body, .. } => {
                for s in &body.stmts {
                    if let StmtKind::Yield(_) = s.kind {
                        continue;
                    }
                    self.emit_stmt(s)?;
                }
                Ok(())
            }
            StmtKind::Yield(_) => Ok(()),
            StmtKind::Return(_) => Ok(()),
        }
    }

    /// `scf.for`: scalar carries become `iter_args`; buffers (tiles, tensors) are carried in place.
    fn emit_for(
        &mut self,
        var: &ValueId,
        bounds: [&Expr; 3],
        iter_args: &[pld_ir::IterArg],
        body: &pld_ir::Block,
        results: &[ValueId],
    ) -> Result<(), Diagnostic> {
        let [start, stop, step] = bounds;
        let lb = self.scalar_as(start, MTy::Index)?;
        let ub = self.scalar_as(stop, MTy::Index)?;
        let st = self.scalar_as(step, MTy::Index)?;
        let iv = self.named(&format!("{}_idx", self.value_name(*var)));
        self.bind(*var, Val::Scalar { ssa: iv.clone(), ty: MTy::Index });
        // Scalar carries become scf iter_args; buffers (tiles, tensors) are carried in place.
        let mut scf_args = Vec::new();
        let mut carried = Vec::new();
        for (k, a) in iter_args.iter().enumerate() {
            let init = self.value(&a.init)?;
            match init {
                Val::Scalar { ssa, ty } => {
                    let n = self.named(&self.value_name(a.value));
                    self.bind(a.value, Val::Scalar { ssa: n.clone(), ty });
                    scf_args.push((k, n, ssa, ty));
                }
                other => {
                    self.bind(a.value, other.clone());
                    carried.push((k, other));
                }
            }
        }
        let res_name = if scf_args.is_empty() { None } else { Some(self.tmp()) };
        let results_ty =
            res_name.clone().map(|name| Results { name, types: scf_args.iter().map(|a| a.3).collect() });
        let iter_args = scf_args.iter().map(|(_, n, i, _)| (n.clone(), i.clone())).collect();
        self.code.indent += 1;
        self.open_region();
        let ys = self.emit_nested(&body.stmts);
        let kinds: Vec<(usize, MTy)> = scf_args.iter().map(|(k, _, _, t)| (*k, *t)).collect();
        let yielded = ys.and_then(|ys| self.yield_carried(&ys.unwrap_or_default(), &kinds, &carried));
        let body = self.close_region();
        self.code.indent -= 1;
        yielded?;
        let bounds = [lb, ub, st];
        self.push(Inst::For(ScfFor { results: results_ty, iv, bounds, iter_args, body }));
        self.bind_loop_results(res_name.as_deref(), &kinds, carried, results);
        Ok(())
    }

    /// `scf.if`: scalar results are `scf.if` results; tile results are allocated before the
    /// branches and carried in place; tensor and context results must be the same in both.
    fn emit_if(
        &mut self,
        cond: &Expr,
        then_body: &pld_ir::Block,
        else_body: &pld_ir::Block,
        results: &[ValueId],
    ) -> Result<(), Diagnostic> {
        let c = self.scalar_as(cond, MTy::I1)?;
        // Result kinds are decided by the then-branch's yield types after emission; we
        // pre-declare tiles (carried in place) and use scf results for scalars.
        let rtys: Vec<Type> = results.iter().map(|r| self.func.values.ty(*r).clone()).collect();
        let mut scalar_res = Vec::new();
        let mut tile_res = Vec::new();
        // Tensors and contexts are not values in PTO: both branches must yield the same one.
        let mut same_res = Vec::new();
        for (k, t) in rtys.iter().enumerate() {
            match t {
                Type::Scalar(d) => scalar_res.push((k, MTy::of_scalar(*d).map_err(|m| self.err(m))?)),
                Type::Tile(tt) => {
                    let name = self.value_name(results[k]);
                    let ssa = self.alloc_tile(&name, tt)?;
                    tile_res.push((k, Val::Tile { ssa, tile: tt.clone() }));
                }
                Type::Tensor(_) | Type::DistTensor(_) | Type::CommCtx | Type::Array(_) => same_res.push(k),
                other => {
                    return Err(self.err(format!("an if yielding a {} has no pto form", other.kind_name())));
                }
            }
        }
        let res_name = if scalar_res.is_empty() { None } else { Some(self.tmp()) };
        let results_ty =
            res_name.clone().map(|name| Results { name, types: scalar_res.iter().map(|r| r.1).collect() });
        self.code.indent += 1;
        self.open_region();
        let same_vals = self.emit_branch(then_body, &scalar_res, &tile_res, &same_res, None);
        let then_region = self.close_region();
        let same_vals = same_vals?;
        let mut else_region = None;
        if !else_body.stmts.is_empty() || res_name.is_some() || !tile_res.is_empty() || !same_res.is_empty() {
            self.open_region();
            let checked = self.emit_branch(else_body, &scalar_res, &tile_res, &same_res, Some(&same_vals));
            else_region = Some(self.close_region());
            checked?;
        }
        self.code.indent -= 1;
        self.push(Inst::If(ScfIf {
            results: results_ty,
            cond: c,
            then_body: then_region,
            else_body: else_region,
        }));
        for (j, k) in same_res.iter().enumerate() {
            self.bind(results[*k], same_vals[j].clone());
        }
        for (j, (k, ty)) in scalar_res.iter().enumerate() {
            if let Some(r) = &res_name {
                let ssa = print::result_ref(r, j, scalar_res.len());
                self.bind(results[*k], Val::Scalar { ssa, ty: *ty });
            }
        }
        for (k, v) in tile_res {
            self.bind(results[k], v);
        }
        Ok(())
    }

    /// Emits one branch of an `scf.if` into the open region: its statements, its yield of
    /// the scalar and tile results, and the tensors it yields for `same_res`. The then branch
    /// (`then_vals` none) returns those tensors; the else branch checks it yields the same.
    fn emit_branch(
        &mut self,
        body: &pld_ir::Block,
        scalar_res: &[(usize, MTy)],
        tile_res: &[(usize, Val)],
        same_res: &[usize],
        then_vals: Option<&[Val]>,
    ) -> Result<Vec<Val>, Diagnostic> {
        let ys = self.emit_nested(&body.stmts)?.unwrap_or_default();
        self.yield_carried(&ys, scalar_res, tile_res)?;
        let mut vals = Vec::new();
        for (j, k) in same_res.iter().enumerate() {
            let v = match ys.get(*k) {
                Some(y) => self.value(y)?,
                None => return Err(self.err("an if branch yields fewer values than the if defines")),
            };
            if then_vals.is_some_and(|t| t.get(j) != Some(&v)) {
                return Err(
                    self.err("the branches of an if yield different tensors; pto has no tensor select")
                );
            }
            vals.push(v);
        }
        Ok(vals)
    }

    /// `scf.while`: scalar carries are region arguments (condition region, then body region);
    /// buffers are carried in place like in `for`.
    pub(super) fn emit_while(
        &mut self,
        iter_args: &[pld_ir::IterArg],
        cond: &Expr,
        body: &pld_ir::Block,
        results: &[ValueId],
    ) -> Result<(), Diagnostic> {
        let mut scalars = Vec::new();
        let mut carried = Vec::new();
        for (k, a) in iter_args.iter().enumerate() {
            match self.value(&a.init)? {
                Val::Scalar { ssa, ty } => scalars.push((k, a.value, ssa, ty)),
                other => {
                    self.bind(a.value, other.clone());
                    carried.push((k, other));
                }
            }
        }
        let types: Vec<MTy> = scalars.iter().map(|s| s.3).collect();
        let mut before = Vec::new();
        for (_, v, init, ty) in &scalars {
            let n = self.named(&self.value_name(*v));
            self.bind(*v, Val::Scalar { ssa: n.clone(), ty: *ty });
            before.push((n, init.clone()));
        }
        let res = if scalars.is_empty() { None } else { Some(self.tmp()) };
        let results_ty = res.clone().map(|name| Results { name, types: types.clone() });
        self.code.indent += 1;
        self.open_region();
        let c = self.scalar_as(cond, MTy::I1);
        let values: Vec<String> = before.iter().map(|(n, _)| n.clone()).collect();
        if let Ok(cond) = &c {
            self.push(Inst::Condition { cond: cond.clone(), values, types: types.clone() });
        }
        let before_region = self.close_region();
        self.code.indent -= 1;
        c?;
        let mut after_args = Vec::new();
        for (_, v, _, ty) in &scalars {
            let n = self.named(&format!("{}_body", self.value_name(*v)));
            self.bind(*v, Val::Scalar { ssa: n.clone(), ty: *ty });
            after_args.push((n, *ty));
        }
        self.code.indent += 1;
        self.open_region();
        let kinds: Vec<(usize, MTy)> = scalars.iter().map(|(k, _, _, t)| (*k, *t)).collect();
        let ys = self.emit_nested(&body.stmts);
        let yielded = ys.and_then(|ys| self.yield_carried(&ys.unwrap_or_default(), &kinds, &carried));
        if kinds.is_empty() {
            self.push(Inst::Yield { values: Vec::new(), types: Vec::new() });
        }
        let after = self.close_region();
        self.code.indent -= 1;
        yielded?;
        let inits = before;
        self.push(Inst::While(ScfWhile {
            results: results_ty,
            inits,
            types,
            before: before_region,
            after_args,
            after,
        }));
        self.bind_loop_results(res.as_deref(), &kinds, carried, results);
        Ok(())
    }

    /// After a loop: binds its results — scalar carries to the scf result `res` (`%r` or
    /// `%r#j`), buffers carried in place to their buffer.
    pub(super) fn bind_loop_results(
        &mut self,
        res: Option<&str>,
        scalars: &[(usize, MTy)],
        carried: Vec<(usize, Val)>,
        results: &[ValueId],
    ) {
        for (j, (k, ty)) in scalars.iter().enumerate() {
            if let (Some(r), Some(rv)) = (res, results.get(*k)) {
                let ssa = print::result_ref(r, j, scalars.len());
                self.bind(*rv, Val::Scalar { ssa, ty: *ty });
            }
        }
        for (k, v) in carried {
            if let Some(rv) = results.get(k) {
                self.bind(*rv, v);
            }
        }
    }

    /// Ends a loop or branch body: `scf.yield` for scalar carries, `pto.tmov` into carried
    /// buffers whose yielded tile differs, and a check that carried tensors stay the same.
    pub(super) fn yield_carried(
        &mut self,
        ys: &[Expr],
        scalars: &[(usize, MTy)],
        bufs: &[(usize, Val)],
    ) -> Result<(), Diagnostic> {
        for (k, v) in bufs {
            let Some(y) = ys.get(*k) else { continue };
            let yv = self.value(y)?;
            match (v, &yv) {
                (Val::Tile { ssa: dst, tile: dt }, Val::Tile { ssa: src, tile: st }) if dst != src => {
                    let (sty, dty) = (self.tile_ty(src, st)?, self.tile_ty(dst, dt)?);
                    let dps =
                        Dps::new("pto.tmov", vec![Operand::new(src, sty)], vec![Operand::new(dst, dty)]);
                    self.push(Inst::Dps(dps));
                }
                (Val::Tile { .. }, Val::Tile { .. }) => {}
                (a, b) if a == b => {}
                _ => return Err(self.err("a loop-carried or branch-merged buffer must stay the same tensor")),
            }
        }
        if !scalars.is_empty() {
            let mut values = Vec::new();
            let mut types = Vec::new();
            for (k, t) in scalars {
                let Some(y) = ys.get(*k) else {
                    return Err(self.err("a loop or branch body yields fewer values than it carries"));
                };
                values.push(self.scalar_as(y, *t)?);
                types.push(*t);
            }
            self.push(Inst::Yield { values, types });
        }
        Ok(())
    }

    /// Emits one op call through the emitter table.
    pub fn emit_call(&mut self, c: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
        let def = match &c.callee {
            Callee::Op(d) => *d,
            Callee::Func(name) => {
                return Err(self.err(format!(
                    "kernel '{}' calls function '{name}'; pto kernels cannot call helper functions (a helper without pto.kernel_kind breaks mixed modules)",
                    self.func.name
                ))
                .with_note("inline the helper into the kernel"));
            }
        };
        let Some(reg) = emitters().of(def) else {
            let mut d = self.err(format!("op {} has no pto emitter", def.name));
            if def.lowering(LoweringKind::TensorToTile).is_some() {
                d = d.with_note(format!(
                    "{} is lowered by ConvertTensorToTileOps; run the pass pipeline before pto codegen",
                    def.name
                ));
            } else if def.lowering(LoweringKind::Composite).is_some() {
                d = d.with_note(format!(
                    "{} is expanded by LowerCompositeOps; run the pass pipeline before pto codegen",
                    def.name
                ));
            }
            return Err(d.about_call(c));
        };
        (reg.emit)(self, c, targets).map_err(|d| d.about_call(c))
    }
}
