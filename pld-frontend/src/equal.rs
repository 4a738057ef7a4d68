//! Structural equality of programs, up to renaming of values.
//!
//! Guarantees: two programs are equal when their names, symbolic dims and functions (in
//! order: names, kinds, parameter types and directions, return types, attributes, statement
//! trees, expressions, call types) agree, where value ids are matched by position of
//! definition (the n-th value defined on one side must correspond to the n-th on the
//! other). Spans and value name hints are ignored. The error names the first difference.

use pld_ir::{
    Block, Call, Callee, Expr, ExprKind, ForKind, Function, Program, ScopeKind, Stmt, StmtKind, Type, ValueId,
};
use std::collections::HashMap;

/// `Ok(())` when `a` and `b` are equal up to renaming of values, else the first difference.
pub fn structurally_equal(a: &Program, b: &Program) -> Result<(), String> {
    agree("program names", &a.name, &b.name, |n| format!("`{n}`"))?;
    debugs("dynamic symbols", &a.dyn_syms, &b.dyn_syms)?;
    counts("function counts", a.functions.len(), b.functions.len())?;
    for (fa, fb) in a.functions.iter().zip(&b.functions) {
        function_eq(fa, fb).map_err(|e| format!("in function `{}`: {e}", fa.name))?;
    }
    Ok(())
}

/// `Ok(())` when the two sides agree, else "`what` differ: a vs b" as `show` prints them.
fn agree<T: PartialEq>(what: &str, a: T, b: T, show: fn(&T) -> String) -> Result<(), String> {
    if a == b {
        Ok(())
    } else {
        Err(format!("{what} differ: {} vs {}", show(&a), show(&b)))
    }
}

/// [`agree`] for two counts.
fn counts(what: &str, a: usize, b: usize) -> Result<(), String> {
    agree(what, a, b, usize::to_string)
}

/// [`agree`] for two values printed with `Debug`.
fn debugs<T: PartialEq + std::fmt::Debug>(what: &str, a: &T, b: &T) -> Result<(), String> {
    agree(what, a, b, |x| format!("{x:?}"))
}

struct Eq<'f> {
    a: &'f Function,
    b: &'f Function,
    map: HashMap<ValueId, ValueId>,
}

fn function_eq(a: &Function, b: &Function) -> Result<(), String> {
    agree("names", &a.name, &b.name, |n| format!("`{n}`"))?;
    debugs("kinds", &a.kind, &b.kind)?;
    counts("parameter counts", a.params.len(), b.params.len())?;
    debugs("attributes", &a.attrs, &b.attrs)?;
    let mut cx = Eq { a, b, map: HashMap::new() };
    for (i, (pa, pb)) in a.params.iter().zip(&b.params).enumerate() {
        debugs(&format!("parameter {i}: directions"), &pa.dir, &pb.dir)?;
        cx.def(pa.value, pb.value).map_err(|e| format!("parameter {i}: {e}"))?;
    }
    counts("return counts", a.ret.len(), b.ret.len())?;
    for (ta, tb) in a.ret.iter().zip(&b.ret) {
        cx.ty(ta, tb).map_err(|e| format!("return type: {e}"))?;
    }
    cx.block(&a.body, &b.body)
}

impl Eq<'_> {
    fn def(&mut self, va: ValueId, vb: ValueId) -> Result<(), String> {
        if let Some(prev) = self.map.get(&va) {
            if *prev != vb {
                return Err(format!("value {va} is defined twice with different counterparts"));
            }
        }
        self.map.insert(va, vb);
        let (ta, tb) = (self.a.values.ty(va).clone(), self.b.values.ty(vb).clone());
        self.ty(&ta, &tb).map_err(|e| format!("type of `{}`: {e}", self.a.values.name(va)))
    }

    fn defs(&mut self, a: &[ValueId], b: &[ValueId]) -> Result<(), String> {
        counts("defined value counts", a.len(), b.len())?;
        a.iter().zip(b).try_for_each(|(x, y)| self.def(*x, *y))
    }

    fn ty(&self, a: &Type, b: &Type) -> Result<(), String> {
        let same = match (a, b) {
            (Type::Tensor(x), Type::Tensor(y)) => self.tensor(x, y),
            (Type::DistTensor(x), Type::DistTensor(y)) => {
                x.window == y.window && self.tensor(&x.tensor, &y.tensor)
            }
            (Type::Tile(x), Type::Tile(y)) => {
                x.dtype == y.dtype
                    && x.memory == y.memory
                    && self.exprs_ok(&x.shape, &y.shape)
                    && self.exprs_ok(&x.valid_shape, &y.valid_shape)
            }
            (Type::Tuple(x), Type::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| self.ty(p, q).is_ok())
            }
            _ => a == b,
        };
        if same {
            Ok(())
        } else {
            Err(format!("types differ: {a} vs {b}"))
        }
    }

    fn tensor(&self, x: &pld_ir::TensorType, y: &pld_ir::TensorType) -> bool {
        x.dtype == y.dtype
            && self.exprs_ok(&x.shape, &y.shape)
            && match (&x.view, &y.view) {
                (None, None) => true,
                (Some(p), Some(q)) => {
                    p.layout == q.layout
                        && self.exprs_ok(&p.stride, &q.stride)
                        && self.exprs_ok(&p.valid_shape, &q.valid_shape)
                }
                _ => false,
            }
    }

    fn exprs_ok(&self, a: &[Expr], b: &[Expr]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| self.expr(x, y).is_ok())
    }

    fn exprs(&self, a: &[Expr], b: &[Expr]) -> Result<(), String> {
        counts("expression counts", a.len(), b.len())?;
        a.iter().zip(b).try_for_each(|(x, y)| self.expr(x, y))
    }

    fn expr(&self, a: &Expr, b: &Expr) -> Result<(), String> {
        let differ = || Err(format!("expressions differ: {a} vs {b}"));
        match (&a.kind, &b.kind) {
            (ExprKind::Var(x), ExprKind::Var(y)) => match self.map.get(x) {
                Some(m) if m == y => Ok(()),
                Some(_) => Err(format!("`{}` refers to different values", self.a.values.name(*x))),
                None => Err(format!("`{}` is used before its definition is matched", self.a.values.name(*x))),
            },
            (ExprKind::Binary(o1, a1, b1), ExprKind::Binary(o2, a2, b2)) => {
                if o1 != o2 {
                    return differ();
                }
                self.expr(a1, a2)?;
                self.expr(b1, b2)
            }
            (ExprKind::Unary(o1, a1), ExprKind::Unary(o2, a2)) => {
                if o1 != o2 {
                    return differ();
                }
                self.expr(a1, a2)
            }
            (ExprKind::Tuple(x), ExprKind::Tuple(y)) => self.exprs(x, y),
            (ExprKind::Call(x), ExprKind::Call(y)) => self.call(x, y),
            (x, y) => {
                if std::mem::discriminant(x) == std::mem::discriminant(y) && x == y {
                    Ok(())
                } else {
                    differ()
                }
            }
        }
    }

    fn call(&self, a: &Call, b: &Call) -> Result<(), String> {
        let same_callee = match (&a.callee, &b.callee) {
            (Callee::Op(x), Callee::Op(y)) => x.name == y.name,
            (Callee::Func(x), Callee::Func(y)) => x == y,
            _ => false,
        };
        if !same_callee {
            return Err(format!("callees differ: {} vs {}", a.callee.name(), b.callee.name()));
        }
        let name = a.callee.name();
        self.exprs(&a.args, &b.args).map_err(|e| format!("call of {name}: {e}"))?;
        debugs(&format!("call of {name}: attributes"), &a.attrs, &b.attrs)?;
        match (&a.device, &b.device) {
            (None, None) => {}
            (Some(x), Some(y)) => self.expr(x, y).map_err(|e| format!("call of {name}: device: {e}"))?,
            _ => return Err(format!("call of {name}: one call has a device and the other not")),
        }
        match (&a.deps, &b.deps) {
            (None, None) => {}
            (Some(x), Some(y)) => self.exprs(x, y).map_err(|e| format!("call of {name}: deps: {e}"))?,
            _ => return Err(format!("call of {name}: one call is a task submit and the other not")),
        }
        self.ty(&a.ty, &b.ty).map_err(|e| format!("call of {name}: result {e}"))
    }

    fn block(&mut self, a: &Block, b: &Block) -> Result<(), String> {
        counts("statement counts", a.stmts.len(), b.stmts.len())?;
        for (i, (x, y)) in a.stmts.iter().zip(&b.stmts).enumerate() {
            self.stmt(x, y).map_err(|e| format!("statement {i}: {e}"))?;
        }
        Ok(())
    }

    fn stmt(&mut self, a: &Stmt, b: &Stmt) -> Result<(), String> {
        if std::mem::discriminant(&a.kind) == std::mem::discriminant(&b.kind) {
            if let (Some(x), Some(y)) = (Region::of(&a.kind), Region::of(&b.kind)) {
                return self.region(x, y);
            }
        }
        match (&a.kind, &b.kind) {
            (StmtKind::Assign { targets: t1, value: v1 }, StmtKind::Assign { targets: t2, value: v2 }) => {
                self.expr(v1, v2)?;
                self.defs(t1, t2)
            }
            (StmtKind::Eval(x), StmtKind::Eval(y)) => self.expr(x, y),
            (StmtKind::Yield(x), StmtKind::Yield(y)) => self.exprs(x, y),
            (StmtKind::Return(x), StmtKind::Return(y)) => self.exprs(x, y),
            (
                StmtKind::Scope { kind: k1, attrs: a1, args: x1, body: b1 },
                StmtKind::Scope { kind: k2, attrs: a2, args: x2, body: b2 },
            ) => {
                match (k1, k2) {
                    (ScopeKind::SplitAiv { lane: l1 }, ScopeKind::SplitAiv { lane: l2 }) => match (l1, l2) {
                        (None, None) => {}
                        (Some(p), Some(q)) => self.def(*p, *q)?,
                        _ => return Err("split_aiv lanes differ".into()),
                    },
                    (ScopeKind::At { task: t1 }, ScopeKind::At { task: t2 }) => {
                        if t1.is_some() != t2.is_some() {
                            return Err("one pl.at binds a task id and the other not".into());
                        }
                    }
                    (x, y) if x == y => {}
                    (x, y) => return Err(format!("scope kinds differ: {x:?} vs {y:?}")),
                }
                if a1 != a2 {
                    return Err(format!("scope attributes differ: {a1:?} vs {a2:?}"));
                }
                self.exprs(x1, x2)?;
                self.block(b1, b2)?;
                match (k1, k2) {
                    (ScopeKind::At { task: Some(p) }, ScopeKind::At { task: Some(q) }) => self.def(*p, *q),
                    _ => Ok(()),
                }
            }
            _ => Err(format!("statement kinds differ: {:?} vs {:?}", kind_name(&a.kind), kind_name(&b.kind))),
        }
    }

    /// Two control-flow statements of one kind, part by part.
    fn region(&mut self, a: Region<'_>, b: Region<'_>) -> Result<(), String> {
        if let (Some(k1), Some(k2)) = (a.loop_kind, b.loop_kind) {
            debugs("loop kinds", k1, k2)?;
        }
        a.before.iter().zip(&b.before).try_for_each(|(x, y)| self.expr(x, y))?;
        self.iter_args(a.iter_args, b.iter_args)?;
        if let (Some(x), Some(y)) = (a.var, b.var) {
            self.def(x, y)?;
        }
        if let (Some(x), Some(y)) = (a.cond, b.cond) {
            self.expr(x, y)?;
        }
        a.bodies.iter().zip(&b.bodies).try_for_each(|(x, y)| self.block(x, y))?;
        self.defs(a.results, b.results)
    }

    /// Loop-carried values: their inits agree, then their values are defined.
    fn iter_args(&mut self, a: &[pld_ir::IterArg], b: &[pld_ir::IterArg]) -> Result<(), String> {
        counts("iter-arg counts", a.len(), b.len())?;
        a.iter().zip(b).try_for_each(|(x, y)| self.expr(&x.init, &y.init))?;
        a.iter().zip(b).try_for_each(|(x, y)| self.def(x.value, y.value))
    }
}

/// A control-flow statement's parts, in the order they are compared (a value is defined
/// before anything that uses it is compared): the loop kind, expressions evaluated before the
/// statement, its carried values, its loop variable, a condition evaluated with them, its
/// bodies and its results.
struct Region<'s> {
    loop_kind: Option<&'s ForKind>,
    before: Vec<&'s Expr>,
    iter_args: &'s [pld_ir::IterArg],
    var: Option<ValueId>,
    cond: Option<&'s Expr>,
    bodies: Vec<&'s Block>,
    results: &'s [ValueId],
}

impl<'s> Region<'s> {
    /// The parts of a `for`, `while` or `if`.
    fn of(k: &'s StmtKind) -> Option<Region<'s>> {
        let none = Region {
            loop_kind: None,
            before: Vec::new(),
            iter_args: &[],
            var: None,
            cond: None,
            bodies: Vec::new(),
            results: &[],
        };
        Some(match k {
            StmtKind::For { var, start, stop, step, iter_args, body, results, kind } => Region {
                loop_kind: Some(kind),
                before: vec![start, stop, step],
                iter_args,
                var: Some(*var),
                bodies: vec![body],
                results,
                ..none
            },
            StmtKind::While { iter_args, cond, body, results } => {
                Region { iter_args, cond: Some(cond), bodies: vec![body], results, ..none }
            }
            StmtKind::If { cond, then_body, else_body, results } => {
                Region { before: vec![cond], bodies: vec![then_body, else_body], results, ..none }
            }
            _ => return None,
        })
    }
}

fn kind_name(k: &StmtKind) -> &'static str {
    match k {
        StmtKind::Assign { .. } => "assign",
        StmtKind::Eval(_) => "eval",
        StmtKind::For { .. } => "for",
        StmtKind::While { .. } => "while",
        StmtKind::If { .. } => "if",
        StmtKind::Scope { .. } => "scope",
        StmtKind::Yield(_) => "yield",
        StmtKind::Return(_) => "return",
    }
}
