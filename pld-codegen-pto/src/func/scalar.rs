//! Constants and scalar arithmetic of [`FnCx`].
//!
//! Guarantees: every constant is hoisted and deduplicated; every SSA value has one type (P8);
//! binary operands are cast to a common type first; a constant is a typed literal the printer
//! spells.

use super::{val_kind, FnCx, Idx, Val, BLOCK_IDX_SYM, BLOCK_NUM_SYM};
use crate::mlir::MTy;
use crate::pto::{print, Inst, Literal};
use pld_ir::{BinOp, Diagnostic, Expr, ExprKind, UnOp};

impl FnCx<'_> {
    /// The hoisted constant `value` of type `ty` (one per value and type).
    pub(super) fn constant(&mut self, value: Literal, ty: MTy) -> String {
        let key = (print::literal(value, ty), ty);
        if let Some(n) = self.consts.by_value.get(&key) {
            return n.clone();
        }
        let mut name = print::const_name(value, ty);
        if !self.names.reserve(&name) {
            name = self.tmp();
        }
        let inst = Inst::Const { result: name.clone(), value, ty };
        self.consts.lines.push(crate::pto::Line { indent: 1, inst, span: self.span });
        self.consts.by_value.insert(key, name.clone());
        name
    }

    /// A hoisted integer constant (`%c16_index`, `%cn1_i32`).
    pub fn const_int(&mut self, v: i64, ty: MTy) -> String {
        if ty == MTy::I1 {
            return self.constant(Literal::Bool(v != 0), ty);
        }
        if ty.is_float() {
            return self.const_float(v as f64, ty);
        }
        self.constant(Literal::Int(v), ty)
    }

    /// A hoisted float constant.
    pub fn const_float(&mut self, v: f64, ty: MTy) -> String {
        self.constant(Literal::Float((v as f32).to_bits()), ty)
    }

    /// Emits the instruction `make(%N)` for a fresh temporary `%N` and returns `%N`.
    pub fn def(&mut self, make: impl FnOnce(String) -> Inst) -> String {
        let result = self.tmp();
        self.push(make(result.clone()));
        result
    }

    /// Emits `%N = <op> <operands> : <ty>` for a fresh temporary `%N` and returns it.
    pub fn arith(&mut self, op: &'static str, operands: &[&str], ty: MTy) -> String {
        self.arith_pred(op, None, operands, ty)
    }

    /// Emits `%N = <op> <pred>, <operands> : <ty>` (a comparison when `pred` is given) for a
    /// fresh temporary `%N` and returns it.
    pub fn arith_pred(
        &mut self,
        op: &'static str,
        pred: Option<&'static str>,
        operands: &[&str],
        ty: MTy,
    ) -> String {
        let result = self.tmp();
        self.arith_into(&result, op, pred, operands, ty);
        result
    }

    /// Emits `<result> = <op> [<pred>, ]<operands> : <ty>`.
    pub fn arith_into(
        &mut self,
        result: &str,
        op: &'static str,
        pred: Option<&'static str>,
        operands: &[&str],
        ty: MTy,
    ) {
        let operands = operands.iter().map(|o| o.to_string()).collect();
        self.push(Inst::Arith { result: result.to_string(), op, pred, operands, ty });
    }

    /// Emits `%N = <op> <v> : <from> to <to>` for a fresh temporary `%N` and returns it.
    pub fn convert(&mut self, op: &'static str, v: &str, from: MTy, to: MTy) -> String {
        let result = self.tmp();
        self.push(Inst::Cast { result: result.clone(), op, operand: v.to_string(), from, to });
        result
    }

    /// Folds `term` into the running combination `acc` with the binary op `op` over `ty`
    /// (`arith.addi` / `index` for a sum, `arith.ori` / `i1` for a disjunction): the first term
    /// starts it, each later one emits `op acc, term`. Returns the new running value.
    pub fn accumulate(&mut self, acc: Option<String>, term: String, op: &'static str, ty: MTy) -> String {
        match acc {
            None => term,
            Some(prev) => self.arith(op, &[&prev, &term], ty),
        }
    }

    /// Materialises an [`Idx`].
    pub fn idx(&mut self, i: &Idx) -> String {
        match i {
            Idx::Const(v) => self.const_int(*v, MTy::Index),
            Idx::Ssa(s) => s.clone(),
        }
    }

    /// `a * b` over `index`, folded when both are constant.
    pub fn mul_idx(&mut self, a: &Idx, b: &Idx) -> Idx {
        match (a, b) {
            (Idx::Const(x), Idx::Const(y)) => Idx::Const(x.saturating_mul(*y)),
            (Idx::Const(1), other) | (other, Idx::Const(1)) => other.clone(),
            _ => {
                let (x, y) = (self.idx(a), self.idx(b));
                Idx::Ssa(self.arith("arith.muli", &[&x, &y], MTy::Index))
            }
        }
    }

    /// Converts SSA value `v` of type `from` to type `to`.
    pub fn cast(&mut self, v: &str, from: MTy, to: MTy) -> Result<String, Diagnostic> {
        if from == to {
            return Ok(v.to_string());
        }
        let op = match (from, to) {
            (MTy::Index, _) if to.int_width().is_some() => "arith.index_cast",
            (_, MTy::Index) if from.int_width().is_some() => "arith.index_cast",
            (MTy::I1, _) if to.int_width().is_some() => "arith.extui",
            (_, _) if from.int_width().is_some() && to.int_width().is_some() => {
                if to.int_width() > from.int_width() {
                    "arith.extsi"
                } else {
                    "arith.trunci"
                }
            }
            (_, _) if from.int_width().is_some() && to.is_float() => {
                if from == MTy::Index {
                    let i = self.cast(v, from, MTy::Int(64))?;
                    return self.cast(&i, MTy::Int(64), to);
                }
                "arith.sitofp"
            }
            (_, _) if from.is_float() && to.int_width().is_some() => {
                if to == MTy::Index {
                    let i = self.cast(v, from, MTy::Int(64))?;
                    return self.cast(&i, MTy::Int(64), to);
                }
                "arith.fptosi"
            }
            (_, _) if from.is_float() && to.is_float() => {
                if to.float_width() > from.float_width() {
                    "arith.extf"
                } else {
                    "arith.truncf"
                }
            }
            _ => return Err(self.err(format!("cannot convert a {} value to {}", from.name(), to.name()))),
        };
        Ok(self.convert(op, v, from, to))
    }

    /// Evaluates a scalar expression in its natural type.
    pub fn scalar(&mut self, e: &Expr) -> Result<(String, MTy), Diagnostic> {
        match &e.kind {
            ExprKind::Int(v) => Ok((self.const_int(*v, MTy::Index), MTy::Index)),
            ExprKind::Float(b) => Ok((self.const_float(b.get(), MTy::F32), MTy::F32)),
            ExprKind::Bool(b) => Ok((self.const_int(i64::from(*b), MTy::I1), MTy::I1)),
            ExprKind::Sym(s) if s == BLOCK_IDX_SYM || s == BLOCK_NUM_SYM => {
                // The trailing i32 parameter the wrapper fills from the runtime's context; cast
                // at each use, so a use inside a region never defines an SSA value a later use
                // outside the region would reference.
                let arg = super::BLOCK_ID_PARAMS[usize::from(s != BLOCK_IDX_SYM)];
                Ok((self.convert("arith.index_cast", arg, MTy::Int(32), MTy::Index), MTy::Index))
            }
            ExprKind::Sym(s) => match self.env.sym_params.get(s) {
                Some(p) => Ok((p.clone(), MTy::Index)),
                None => Err(self.err(format!(
                    "dynamic dim '{s}' is not bound by any tensor parameter of kernel '{}'; pto codegen needs every symbolic extent to be a runtime parameter",
                    self.func.name
                ))),
            },
            ExprKind::Var(v) => match self.env.values.get(v) {
                Some(Val::Scalar { ssa, ty }) => Ok((ssa.clone(), *ty)),
                Some(other) => Err(self.err(format!(
                    "value '{}' is used as a scalar but is a {}",
                    self.func.values.name(*v),
                    val_kind(other)
                ))),
                None => Err(self.err(format!(
                    "value '{}' has no pto binding in kernel '{}'",
                    self.func.values.name(*v),
                    self.func.name
                ))),
            },
            ExprKind::Call(c) => match self.emit_call(c, &[])? {
                Val::Scalar { ssa, ty } => Ok((ssa, ty)),
                other => Err(self.err(format!("{} is used as a scalar but yields a {}", c.callee.name(), val_kind(&other)))),
            },
            ExprKind::Unary(UnOp::Neg, a) => {
                let (x, t) = self.scalar(a)?;
                let r = self.tmp();
                if t.is_float() {
                    self.arith_into(&r, "arith.negf", None, &[&x], t);
                } else {
                    let z = self.const_int(0, t);
                    self.arith_into(&r, "arith.subi", None, &[&z, &x], t);
                }
                Ok((r, t))
            }
            ExprKind::Unary(UnOp::Not, a) => {
                let x = self.scalar_as(a, MTy::I1)?;
                let one = self.const_int(1, MTy::I1);
                Ok((self.arith("arith.xori", &[&x, &one], MTy::I1), MTy::I1))
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
            ExprKind::Str(_) | ExprKind::DType(_) | ExprKind::Tuple(_) => {
                Err(self.err(format!("`{e}` is not a scalar expression pto codegen can evaluate")))
            }
        }
    }

    pub(super) fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Result<(String, MTy), Diagnostic> {
        if matches!(op, BinOp::And | BinOp::Or) {
            let x = self.scalar_as(a, MTy::I1)?;
            let y = self.scalar_as(b, MTy::I1)?;
            let o = if op == BinOp::And { "arith.andi" } else { "arith.ori" };
            return Ok((self.arith(o, &[&x, &y], MTy::I1), MTy::I1));
        }
        // The operand type: a literal adopts the other side's type.
        let lit = |e: &Expr| matches!(e.kind, ExprKind::Int(_) | ExprKind::Float(_));
        let (x, y, t) = if lit(a) && !lit(b) {
            let (y, t) = self.scalar(b)?;
            (self.scalar_as(a, t)?, y, t)
        } else if lit(b) {
            let (x, t) = self.scalar(a)?;
            (x, self.scalar_as(b, t)?, t)
        } else {
            let (x, ta) = self.scalar(a)?;
            let (y, tb) = self.scalar(b)?;
            let t = common_type(ta, tb);
            (self.cast(&x, ta, t)?, self.cast(&y, tb, t)?, t)
        };
        let f = t.is_float();
        let r = self.tmp();
        let pick = |int: &'static str, float: &'static str| if f { float } else { int };
        let (inst, pred) = match op {
            BinOp::Add => (pick("arith.addi", "arith.addf"), None),
            BinOp::Sub => (pick("arith.subi", "arith.subf"), None),
            BinOp::Mul => (pick("arith.muli", "arith.mulf"), None),
            BinOp::Div => (pick("arith.divsi", "arith.divf"), None),
            BinOp::FloorDiv if !f => ("arith.floordivsi", None),
            BinOp::Mod if f => ("arith.remf", None),
            BinOp::Mod => return self.floor_mod(&r, &x, &y, t),
            BinOp::Min => (pick("arith.minsi", "arith.minimumf"), None),
            BinOp::Max => (pick("arith.maxsi", "arith.maximumf"), None),
            BinOp::Eq => (pick("arith.cmpi", "arith.cmpf"), Some(pick("eq", "oeq"))),
            BinOp::Ne => (pick("arith.cmpi", "arith.cmpf"), Some(pick("ne", "one"))),
            BinOp::Lt => (pick("arith.cmpi", "arith.cmpf"), Some(pick("slt", "olt"))),
            BinOp::Le => (pick("arith.cmpi", "arith.cmpf"), Some(pick("sle", "ole"))),
            BinOp::Gt => (pick("arith.cmpi", "arith.cmpf"), Some(pick("sgt", "ogt"))),
            BinOp::Ge => (pick("arith.cmpi", "arith.cmpf"), Some(pick("sge", "oge"))),
            _ => {
                return Err(self.err(format!(
                    "operator `{}` on {} is not supported by pto codegen",
                    op.symbol(),
                    t.name()
                )))
            }
        };
        self.arith_into(&r, inst, pred, &[&x, &y], t);
        Ok((r, if op.is_comparison() { MTy::I1 } else { t }))
    }

    /// Python's `%` on integers: the remainder takes the divisor's sign (`arith.remsi`
    /// truncates, so a non-zero remainder whose sign differs from the divisor's is shifted).
    pub(super) fn floor_mod(
        &mut self,
        r: &str,
        x: &str,
        y: &str,
        t: MTy,
    ) -> Result<(String, MTy), Diagnostic> {
        self.arith_into(r, "arith.remsi", None, &[x, y], t);
        let z = self.const_int(0, t);
        let nz = self.arith_pred("arith.cmpi", Some("ne"), &[r, &z], t);
        let rn = self.arith_pred("arith.cmpi", Some("slt"), &[r, &z], t);
        let yn = self.arith_pred("arith.cmpi", Some("slt"), &[y, &z], t);
        let sd = self.arith("arith.xori", &[&rn, &yn], MTy::I1);
        let fix = self.arith("arith.andi", &[&nz, &sd], MTy::I1);
        let adj = self.arith("arith.addi", &[r, y], t);
        let res = self.arith("arith.select", &[&fix, &adj, r], t);
        Ok((res, t))
    }

    /// Evaluates a scalar expression as type `ty` (literals are emitted directly in `ty`).
    pub fn scalar_as(&mut self, e: &Expr, ty: MTy) -> Result<String, Diagnostic> {
        match &e.kind {
            ExprKind::Int(v) => Ok(self.const_int(*v, ty)),
            ExprKind::Float(b) if ty.is_float() => Ok(self.const_float(b.get(), ty)),
            ExprKind::Bool(b) => {
                let one = self.const_int(i64::from(*b), MTy::I1);
                self.cast(&one, MTy::I1, ty)
            }
            ExprKind::Var(v) if ty == MTy::Index => {
                let (x, t) = self.scalar(e)?;
                if t == MTy::Index {
                    return Ok(x);
                }
                if t.int_width().is_none() {
                    return self.cast(&x, t, ty);
                }
                let name = self.named(&format!("{}_idx", self.value_name(*v)));
                let inst =
                    Inst::Cast { result: name.clone(), op: "arith.index_cast", operand: x, from: t, to: ty };
                self.push(inst);
                Ok(name)
            }
            _ => {
                let (x, t) = self.scalar(e)?;
                self.cast(&x, t, ty)
            }
        }
    }

    /// An `index` offset clamped at 0: constants fold, runtime values get `arith.maxsi` (V7).
    pub fn offset(&mut self, e: &Expr) -> Result<(String, Option<i64>), Diagnostic> {
        if let Some(v) = e.as_int() {
            let v = v.max(0);
            return Ok((self.const_int(v, MTy::Index), Some(v)));
        }
        let x = self.scalar_as(e, MTy::Index)?;
        let z = self.const_int(0, MTy::Index);
        Ok((self.arith("arith.maxsi", &[&x, &z], MTy::Index), None))
    }

    /// An `index` size: a constant or a runtime value (no clamp).
    pub fn size(&mut self, e: &Expr) -> Result<(String, Option<i64>), Diagnostic> {
        if let Some(v) = e.as_int() {
            return Ok((self.const_int(v, MTy::Index), Some(v)));
        }
        Ok((self.scalar_as(e, MTy::Index)?, None))
    }
}

/// The type two operands of a binary operation are brought to.
pub(super) fn common_type(a: MTy, b: MTy) -> MTy {
    if a == b {
        a
    } else if a.is_float() || b.is_float() {
        if a.float_width() >= b.float_width() && a.is_float() {
            a
        } else {
            b
        }
    } else if a == MTy::Index || b == MTy::Index {
        MTy::Index
    } else if a.int_width() >= b.int_width() {
        a
    } else {
        b
    }
}
