//! Module-level constants: `SIZE = 256`, `N_RANKS * SIZE`, `pl.FP32.get_byte()`,
//! `NR = pl.dynamic("NR")`, dtype objects and ABI enum members.
//!
//! Guarantees: evaluation never fails loudly — an assignment whose value is not a DSL
//! constant is simply not a constant (it is ordinary Python the frontend skips). Integer
//! arithmetic folds with Python semantics (`//`, `%`) and without overflow.

use crate::util::{big_to_i64, dotted, span_of, split_module};
use pld_ir::registry::AbiEnumKind;
use pld_ir::{BinOp, DataType, Expr, ExprKind, FileId, UnOp};
use rustpython_parser::ast;
use std::collections::HashMap;

/// Names bound to constant expressions, plus the symbolic dims declared so far.
#[derive(Clone, Debug, Default)]
pub struct ConstEnv {
    vars: HashMap<String, Expr>,
    /// Names whose value is only known when Python runs, with the reason.
    runtime: HashMap<String, String>,
    /// `pl.dynamic` symbols in declaration order.
    pub dyn_syms: Vec<String>,
    /// Names a `--bind` may set here: parameters of the enclosing program-building
    /// functions and names they assign under Python control flow that does not fold.
    pub bindable: Vec<crate::builders::Bindable>,
}

impl ConstEnv {
    /// Every bound module constant's name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// The value bound to `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Expr> {
        self.vars.get(name)
    }

    /// Binds `name` to a constant (a caller binding or a parameter default).
    pub fn bind(&mut self, name: &str, value: Expr) {
        self.runtime.remove(name);
        self.vars.insert(name.to_string(), value);
    }

    /// Marks `name` as only known at run time; `why` completes "`name` ...".
    pub fn mark_runtime(&mut self, name: &str, why: String) {
        self.vars.remove(name);
        self.runtime.insert(name.to_string(), why);
    }

    /// Why `name`'s value is only known at run time, if it is.
    pub fn runtime_origin(&self, name: &str) -> Option<&String> {
        self.runtime.get(name)
    }

    /// The first run-time name used in `e`, with the reason.
    pub fn runtime_in(&self, e: &ast::Expr) -> Option<(String, String)> {
        let mut found = None;
        visit_names(e, &mut |n| {
            if found.is_none() {
                if let Some(o) = self.runtime.get(n) {
                    found = Some((n.to_string(), o.clone()));
                }
            }
        });
        found
    }

    /// Records `target = value` when `value` is a constant; otherwise forgets `target`
    /// (a later non-constant assignment shadows an earlier constant).
    pub fn assign(&mut self, file: FileId, target: &str, value: &ast::Expr) {
        let v = self.evaluate(file, value);
        self.set(target, v);
    }

    /// What `value` is in this environment, for a later [`ConstEnv::set`] (so that a tuple
    /// assignment evaluates every right-hand side before binding any target).
    pub fn evaluate(&self, file: FileId, value: &ast::Expr) -> Assigned {
        if let Some((name, why)) = self.runtime_in(value) {
            let why =
                if why.starts_with("depends on") { why } else { format!("depends on `{name}`, which {why}") };
            return Assigned::Runtime(why);
        }
        eval_const(file, self, value).map_or(Assigned::Unknown, Assigned::Const)
    }

    /// Binds `target` to an evaluated value.
    pub fn set(&mut self, target: &str, value: Assigned) {
        match value {
            Assigned::Runtime(why) => {
                self.vars.remove(target);
                self.runtime.insert(target.to_string(), why);
            }
            Assigned::Const(e) => {
                self.runtime.remove(target);
                if let ExprKind::Sym(s) = &e.kind {
                    if !self.dyn_syms.contains(s) {
                        self.dyn_syms.push(s.clone());
                    }
                }
                self.vars.insert(target.to_string(), e);
            }
            Assigned::Unknown => {
                self.runtime.remove(target);
                self.vars.remove(target);
            }
        }
    }
}

/// The value of an assignment's right-hand side.
#[derive(Clone, Debug)]
pub enum Assigned {
    /// A DSL constant.
    Const(Expr),
    /// Known only at run time, with the reason (completes "`name` ...").
    Runtime(String),
    /// Ordinary Python the frontend does not evaluate.
    Unknown,
}

/// A dtype (`pl.FP32`) or ABI enum member (`pld.NotifyOp.AtomicAdd`) named by `path`.
pub fn named_constant(path: &str) -> Option<ExprKind> {
    let (module, rest) = split_module(path);
    if module.is_empty() {
        return None;
    }
    if !rest.contains('.') {
        return DataType::from_dsl_name(rest)
            .filter(|_| rest.chars().all(|c| !c.is_lowercase()))
            .map(ExprKind::DType);
    }
    let (enum_name, member) = rest.split_once('.')?;
    let kind = AbiEnumKind::from_name(enum_name)?;
    kind.value_of(member).map(ExprKind::Int)
}

/// The enum kind and member of an ABI enum path, for diagnostics about unknown members.
pub fn enum_path(path: &str) -> Option<(AbiEnumKind, String)> {
    let (module, rest) = split_module(path);
    if module.is_empty() {
        return None;
    }
    let (enum_name, member) = rest.split_once('.')?;
    AbiEnumKind::from_name(enum_name).map(|k| (k, member.to_string()))
}

/// `pl.FP32.get_byte()` → the width in bytes.
pub fn get_byte_call(call: &ast::ExprCall) -> Option<i64> {
    if !call.args.is_empty() || !call.keywords.is_empty() {
        return None;
    }
    let path = dotted(&call.func)?;
    let dt = path.strip_suffix(".get_byte")?;
    match named_constant(dt)? {
        ExprKind::DType(d) => i64::try_from(d.bytes()).ok(),
        _ => None,
    }
}

/// Python arithmetic operator → IR binary operator.
pub fn bin_op(op: &ast::Operator) -> Option<BinOp> {
    Some(match op {
        ast::Operator::Add => BinOp::Add,
        ast::Operator::Sub => BinOp::Sub,
        ast::Operator::Mult => BinOp::Mul,
        ast::Operator::FloorDiv => BinOp::FloorDiv,
        ast::Operator::Div => BinOp::Div,
        ast::Operator::Mod => BinOp::Mod,
        _ => return None,
    })
}

/// Python comparison operator → IR binary operator (`is` / `in` have none).
pub fn cmp_op(op: &ast::CmpOp) -> Option<BinOp> {
    Some(match op {
        ast::CmpOp::Eq => BinOp::Eq,
        ast::CmpOp::NotEq => BinOp::Ne,
        ast::CmpOp::Lt => BinOp::Lt,
        ast::CmpOp::LtE => BinOp::Le,
        ast::CmpOp::Gt => BinOp::Gt,
        ast::CmpOp::GtE => BinOp::Ge,
        _ => return None,
    })
}

/// Negates a literal in place (`-1` is an integer literal, not a negation).
pub fn negate(e: Expr) -> Expr {
    let span = e.span;
    match e.kind {
        ExprKind::Int(v) => match v.checked_neg() {
            Some(n) => Expr::new(ExprKind::Int(n), span),
            None => Expr::new(ExprKind::Unary(UnOp::Neg, Box::new(Expr::new(ExprKind::Int(v), span))), span),
        },
        ExprKind::Float(f) => Expr::new(ExprKind::Float(pld_ir::expr::FloatBits::new(-f.get())), span),
        kind => Expr::new(ExprKind::Unary(UnOp::Neg, Box::new(Expr::new(kind, span))), span),
    }
}

/// Evaluates a module-level constant expression.
pub fn eval_const(file: FileId, env: &ConstEnv, e: &ast::Expr) -> Option<Expr> {
    let span = span_of(file, e);
    match e {
        ast::Expr::Constant(c) => literal(&c.value).map(|k| Expr::new(k, span)),
        ast::Expr::Name(n) => env.get(n.id.as_str()).cloned().map(|x| x.at(span)),
        ast::Expr::Attribute(_) => named_constant(&dotted(e)?).map(|k| Expr::new(k, span)),
        ast::Expr::BinOp(b) => {
            let op = bin_op(&b.op)?;
            let l = eval_const(file, env, &b.left)?;
            let r = eval_const(file, env, &b.right)?;
            scalar_like(&l)?;
            scalar_like(&r)?;
            Some(Expr::binary(op, l, r).at(span))
        }
        ast::Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::Not) => {
            let t = truth(&eval_const(file, env, &u.operand)?)?;
            Some(Expr::new(ExprKind::Bool(!t), span))
        }
        ast::Expr::UnaryOp(u) => {
            let v = eval_const(file, env, &u.operand)?;
            scalar_like(&v)?;
            match u.op {
                ast::UnaryOp::USub => Some(negate(v).at(span)),
                ast::UnaryOp::UAdd => Some(v.at(span)),
                _ => None,
            }
        }
        ast::Expr::Compare(c) => {
            let ([op], [rhs]) = (c.ops.as_slice(), c.comparators.as_slice()) else { return None };
            let op = cmp_op(op)?;
            let l = eval_const(file, env, &c.left)?;
            let r = eval_const(file, env, rhs)?;
            if let Some(eq) = same_value(&l, &r) {
                // Strings, booleans and dtypes compare for (in)equality only.
                return match op {
                    BinOp::Eq => Some(Expr::new(ExprKind::Bool(eq), span)),
                    BinOp::Ne => Some(Expr::new(ExprKind::Bool(!eq), span)),
                    _ => None,
                };
            }
            if let (ExprKind::Float(_), _) | (_, ExprKind::Float(_)) = (&l.kind, &r.kind) {
                let v = op.compare(number(&l)?, number(&r)?)?;
                return Some(Expr::new(ExprKind::Bool(v), span));
            }
            let v = op.fold_int(l.as_int()?, r.as_int()?)?;
            Some(Expr::new(ExprKind::Bool(v != 0), span))
        }
        ast::Expr::BoolOp(b) => {
            // `and` / `or` over folded truth values (Python's short-circuit on constants).
            let mut acc = matches!(b.op, ast::BoolOp::And);
            for v in &b.values {
                let t = truth(&eval_const(file, env, v)?)?;
                match b.op {
                    ast::BoolOp::And if !t => return Some(Expr::new(ExprKind::Bool(false), span)),
                    ast::BoolOp::Or if t => return Some(Expr::new(ExprKind::Bool(true), span)),
                    _ => acc = t,
                }
            }
            Some(Expr::new(ExprKind::Bool(acc), span))
        }
        ast::Expr::IfExp(i) => {
            let taken = truth(&eval_const(file, env, &i.test)?)?;
            eval_const(file, env, if taken { &i.body } else { &i.orelse }).map(|x| x.at(span))
        }
        ast::Expr::List(l) => tuple(file, env, &l.elts, span),
        ast::Expr::Tuple(t) => tuple(file, env, &t.elts, span),
        ast::Expr::Call(call) => {
            if let Some(b) = get_byte_call(call) {
                return Some(Expr::new(ExprKind::Int(b), span));
            }
            let path = dotted(&call.func)?;
            match path.as_str() {
                "pl.dynamic" => {
                    let [ast::Expr::Constant(c)] = call.args.as_slice() else { return None };
                    match &c.value {
                        ast::Constant::Str(s) if is_ident(s) => {
                            Some(Expr::new(ExprKind::Sym(s.clone()), span))
                        }
                        _ => None,
                    }
                }
                "min" | "max" if call.args.len() == 2 && call.keywords.is_empty() => {
                    let a = eval_const(file, env, &call.args[0])?;
                    let b = eval_const(file, env, &call.args[1])?;
                    let op = if path == "min" { BinOp::Min } else { BinOp::Max };
                    Some(Expr::binary(op, a, b).at(span))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A numeric literal as `f64` (integers convert exactly up to 2^53, as in Python).
fn number(e: &Expr) -> Option<f64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v as f64),
        ExprKind::Float(f) => Some(f.get()),
        _ => None,
    }
}

/// Python truth of a folded constant: booleans, integers and strings (empty is false).
pub fn truth(e: &Expr) -> Option<bool> {
    match &e.kind {
        ExprKind::Bool(b) => Some(*b),
        ExprKind::Int(v) => Some(*v != 0),
        ExprKind::Float(f) => Some(f.get() != 0.0),
        ExprKind::Str(s) => Some(!s.is_empty()),
        _ => None,
    }
}

/// Equality of two folded non-numeric constants (strings, booleans, dtypes); `None` when
/// either side is numeric or not a literal, left to integer folding.
fn same_value(l: &Expr, r: &Expr) -> Option<bool> {
    match (&l.kind, &r.kind) {
        (ExprKind::Str(a), ExprKind::Str(b)) => Some(a == b),
        (ExprKind::Bool(a), ExprKind::Bool(b)) => Some(a == b),
        (ExprKind::DType(a), ExprKind::DType(b)) => Some(a == b),
        (ExprKind::Str(_) | ExprKind::DType(_), _) | (_, ExprKind::Str(_) | ExprKind::DType(_)) => {
            Some(false)
        }
        _ => None,
    }
}

fn tuple(file: FileId, env: &ConstEnv, elts: &[ast::Expr], span: pld_ir::Span) -> Option<Expr> {
    let items = elts.iter().map(|x| eval_const(file, env, x)).collect::<Option<Vec<_>>>()?;
    Some(Expr::new(ExprKind::Tuple(items), span))
}

fn scalar_like(e: &Expr) -> Option<()> {
    match e.kind {
        ExprKind::Str(_) | ExprKind::DType(_) | ExprKind::Tuple(_) | ExprKind::Call(_) => None,
        _ => Some(()),
    }
}

/// A Python literal as an expression kind (`None`, bytes and complex are not DSL values).
pub fn literal(c: &ast::Constant) -> Option<ExprKind> {
    Some(match c {
        ast::Constant::Bool(b) => ExprKind::Bool(*b),
        ast::Constant::Int(i) => ExprKind::Int(big_to_i64(i)?),
        ast::Constant::Float(f) => ExprKind::Float(pld_ir::expr::FloatBits::new(*f)),
        ast::Constant::Str(s) => ExprKind::Str(s.clone()),
        _ => return None,
    })
}

/// Whether `s` is a Python identifier (symbol names are printed bare).
pub fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Calls `f` on every name read in `e` (not on attribute names).
pub fn visit_names(e: &ast::Expr, f: &mut dyn FnMut(&str)) {
    match e {
        ast::Expr::Name(n) => f(n.id.as_str()),
        ast::Expr::BinOp(b) => {
            visit_names(&b.left, f);
            visit_names(&b.right, f);
        }
        ast::Expr::UnaryOp(u) => visit_names(&u.operand, f),
        ast::Expr::List(l) => l.elts.iter().for_each(|x| visit_names(x, f)),
        ast::Expr::Tuple(t) => t.elts.iter().for_each(|x| visit_names(x, f)),
        ast::Expr::Call(c) => {
            c.args.iter().for_each(|x| visit_names(x, f));
            c.keywords.iter().for_each(|k| visit_names(&k.value, f));
        }
        ast::Expr::Subscript(s) => {
            visit_names(&s.value, f);
            visit_names(&s.slice, f);
        }
        ast::Expr::Compare(c) => {
            visit_names(&c.left, f);
            c.comparators.iter().for_each(|x| visit_names(x, f));
        }
        ast::Expr::BoolOp(b) => b.values.iter().for_each(|x| visit_names(x, f)),
        ast::Expr::IfExp(i) => {
            visit_names(&i.test, f);
            visit_names(&i.body, f);
            visit_names(&i.orelse, f);
        }
        _ => {}
    }
}

/// The diagnostic for a name whose value is only known when Python runs.
pub fn runtime_error(span: pld_ir::Span, name: &str, why: &str) -> pld_ir::Diagnostic {
    // The name to bind: the parameter a derived name depends on, else the name itself.
    let root = why.strip_prefix("depends on `").and_then(|r| r.split('`').next()).unwrap_or(name);
    pld_ir::Diagnostic::error(span, format!("`{name}` {why}; its value is only known at run time"))
        .with_note(format!("bind it with `--bind {root}=VALUE`"))
}
