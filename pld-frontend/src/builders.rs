//! The module's non-DSL statements: constants, `@pl.program` classes, and program-building
//! Python functions (`def build(n_ranks: int, mode: str = "ring"): ... @pl.program class P`).
//!
//! Guarantees:
//! - a builder parameter takes its binding (checked against its annotation — `int`, `bool`,
//!   `str`, `float` — by [`bind_value`]), else its default, else it is known only at run time;
//! - assignments, augmented assignments (`rows *= 2`) and tuple assignments of constants
//!   define constants;
//! - an `if` / `elif` / `else` whose condition folds with the bindings in place runs its taken
//!   branch only: assignments there (in a tuple assignment every right-hand side is read
//!   before any target is bound) are constants, classes there are found, and a `raise` there
//!   is an error at the `raise`; a condition that does not fold makes the names assigned under
//!   it known only at run time, unless bound;
//! - every name a binding may set (builder parameters, names assigned under control flow that
//!   does not fold) is recorded, with its builder and kind, in the environment each unit sees.

use crate::consts::{bin_op, eval_const, truth, Assigned, ConstEnv};
use crate::module::{is_dsl_function, is_program_decorator, misspelled_decorator, UnitSrc};
use crate::util::{dotted, span_of};
use crate::ParseOptions;
use pld_ir::{Diagnostic, Diagnostics, Expr, ExprKind, FileId, Span};
use rustpython_parser::ast;

/// What a builder parameter's annotation asks a binding to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindKind {
    /// `int`.
    Int,
    /// `bool`.
    Bool,
    /// `str`.
    Str,
    /// `float` (integers are accepted).
    Float,
    /// Unannotated, or annotated with something else: any DSL constant; a bare word is a
    /// string.
    Any,
}

impl BindKind {
    fn of(annotation: Option<&ast::Expr>) -> BindKind {
        match annotation.and_then(dotted).as_deref() {
            Some("int") => BindKind::Int,
            Some("bool") => BindKind::Bool,
            Some("str") => BindKind::Str,
            Some("float") => BindKind::Float,
            _ => BindKind::Any,
        }
    }

    /// The Python type name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            BindKind::Int => "int",
            BindKind::Bool => "bool",
            BindKind::Str => "str",
            BindKind::Float => "float",
            BindKind::Any => "any constant",
        }
    }
}

/// A name a `--bind NAME=VALUE` may set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bindable {
    /// The name.
    pub name: String,
    /// The program-building function it belongs to.
    pub builder: String,
    /// What its value must be.
    pub kind: BindKind,
    /// Whether it is a parameter of the builder (else a local assigned under control flow).
    pub param: bool,
}

/// The names the reference gives a builder parameter that is the rank count
/// (`def build(n_ranks: int)`), compared case-insensitively.
pub const RANK_COUNT_NAMES: &[&str] = &[
    "n_ranks",
    "nranks",
    "nr",
    "world_size",
    "num_ranks",
    "n_rank",
    "nrank",
    "ranks",
    "n_devices",
    "num_devices",
];

impl Bindable {
    /// Whether this is a builder parameter annotated `int` and named as the reference names
    /// the rank count ([`RANK_COUNT_NAMES`]): `--ranks` binds it when no `--bind` does.
    pub fn is_rank_count(&self) -> bool {
        self.param
            && self.kind == BindKind::Int
            && RANK_COUNT_NAMES.iter().any(|n| n.eq_ignore_ascii_case(&self.name))
    }
}

/// The constant a binding's text denotes for a name of `kind`: a DSL constant expression
/// (`2`, `True`, `"ring"`, `pl.FP32`), or for a `str` (or unannotated) name a bare word
/// (`ring`). The error says what is wrong with the value (it completes "`--bind NAME=TEXT`: ").
pub fn bind_value(text: &str, kind: BindKind) -> Result<Expr, String> {
    use rustpython_parser::Parse;
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
        && text.parse::<i64>().is_err()
    {
        return Err(format!("`{text}` is out of range (an integer binding must fit in 64 signed bits)"));
    }
    let value = crate::limits::check(FileId(u32::MAX), text)
        .ok()
        .and_then(|()| ast::Expr::parse(text, "<binding>").ok())
        .and_then(|e| eval_const(FileId(u32::MAX), &ConstEnv::default(), &e))
        .map(|e| e.at(Span::DUMMY));
    let word = crate::consts::is_ident(text).then(|| Expr::new(ExprKind::Str(text.to_string()), Span::DUMMY));
    let int = |e: &Expr| matches!(e.kind, ExprKind::Int(_));
    match (kind, value) {
        (BindKind::Int, Some(e)) if int(&e) => Ok(e),
        (BindKind::Int, _) => Err(format!("`{text}` is not an integer (the parameter is an `int`)")),
        (BindKind::Bool, Some(e)) if matches!(e.kind, ExprKind::Bool(_)) => Ok(e),
        (BindKind::Bool, _) if text == "true" || text == "false" => {
            Ok(Expr::new(ExprKind::Bool(text == "true"), Span::DUMMY))
        }
        (BindKind::Bool, _) => Err(format!("`{text}` is not a boolean (the parameter is a `bool`: True or False)")),
        (BindKind::Float, Some(e)) if int(&e) || matches!(e.kind, ExprKind::Float(_)) => Ok(e),
        (BindKind::Float, _) => Err(format!("`{text}` is not a number (the parameter is a `float`)")),
        (BindKind::Str, Some(e)) if matches!(e.kind, ExprKind::Str(_)) => Ok(e),
        (BindKind::Str, _) => Ok(Expr::new(ExprKind::Str(text.to_string()), Span::DUMMY)),
        (BindKind::Any, Some(e)) => Ok(e),
        (BindKind::Any, None) => word.ok_or_else(|| {
            format!("`{text}` is not a constant (an integer, a float, True/False, a string or a dtype such as pl.FP32)")
        }),
    }
}

/// The walk's shared state.
pub(crate) struct WalkCx<'a, 'o> {
    pub file: FileId,
    pub opts: &'o ParseOptions,
    pub units: Vec<UnitSrc<'a>>,
    pub diags: Diagnostics,
}

impl<'a> WalkCx<'a, '_> {
    /// Walks a block of non-DSL statements; `builder` names the enclosing program-building
    /// function, if any.
    /// Whether the block ends the function there (a `return` or `raise` that runs).
    pub fn walk_block(&mut self, stmts: &'a [ast::Stmt], env: &mut ConstEnv, builder: Option<&str>) -> bool {
        stmts.iter().any(|s| self.walk(s, env, builder))
    }

    fn binding(&self, name: &str, kind: BindKind) -> Option<Result<Expr, String>> {
        self.opts.bindings.iter().find(|(k, _)| k == name).map(|(_, v)| bind_value(v, kind))
    }

    /// Walks one non-DSL statement for constants and `@pl.program` classes; whether it ends
    /// the enclosing builder (a `return` or `raise` that runs there).
    pub fn walk(&mut self, stmt: &'a ast::Stmt, env: &mut ConstEnv, builder: Option<&str>) -> bool {
        let file = self.file;
        match stmt {
            ast::Stmt::Assign(a) => {
                for t in &a.targets {
                    assign_target(file, env, t, &a.value);
                }
            }
            ast::Stmt::AnnAssign(a) => {
                if let (ast::Expr::Name(n), Some(v)) = (a.target.as_ref(), &a.value) {
                    env.assign(file, n.id.as_str(), v);
                }
            }
            ast::Stmt::AugAssign(a) => {
                if let ast::Expr::Name(n) = a.target.as_ref() {
                    let name = n.id.as_str();
                    let v = match (env.get(name).cloned(), env.evaluate(file, &a.value), bin_op(&a.op)) {
                        (_, Assigned::Runtime(why), _) => Assigned::Runtime(why),
                        (Some(old), Assigned::Const(rhs), Some(op)) => {
                            Assigned::Const(Expr::binary(op, old, rhs))
                        }
                        _ => match env.runtime_origin(name) {
                            Some(why) => Assigned::Runtime(why.clone()),
                            None => Assigned::Unknown,
                        },
                    };
                    env.set(name, v);
                }
            }
            ast::Stmt::ClassDef(c) if c.decorator_list.iter().any(is_program_decorator) => {
                let funcs: Vec<(&ast::StmtFunctionDef, bool)> = c
                    .body
                    .iter()
                    .filter_map(|s| match s {
                        ast::Stmt::FunctionDef(f) if is_dsl_function(f) => Some((f, true)),
                        ast::Stmt::FunctionDef(f) => {
                            self.diags.0.extend(misspelled_decorator(file, &f.decorator_list));
                            None
                        }
                        _ => None,
                    })
                    .collect();
                if funcs.is_empty() {
                    self.diags.push(
                        Diagnostic::error(
                            span_of(file, stmt),
                            format!("program `{}` defines no DSL functions", c.name),
                        )
                        .with_note(
                            "decorate methods with @pl.function(type=pl.FunctionType.InCore) or similar",
                        ),
                    );
                }
                self.units.push(UnitSrc {
                    name: c.name.to_string(),
                    funcs,
                    consts: env.clone(),
                    start: span_of(file, stmt).lo,
                });
            }
            ast::Stmt::FunctionDef(f) => {
                self.diags.0.extend(misspelled_decorator(file, &f.decorator_list));
                self.builder(f, env)
            }
            ast::Stmt::ClassDef(c) => {
                self.diags.0.extend(misspelled_decorator(file, &c.decorator_list));
                let mut local = env.clone();
                self.walk_block(&c.body, &mut local, builder);
            }
            ast::Stmt::If(i) => match folded(file, env, &i.test) {
                Some(taken) => return self.walk_block(if taken { &i.body } else { &i.orelse }, env, builder),
                None => {
                    if let Some(b) = builder {
                        // Names assigned under a condition on a run-time name depend on it.
                        let cause = env.runtime_in(&i.test).map(|(name, why)| {
                            if why.starts_with("depends on") {
                                why
                            } else {
                                format!("depends on `{name}`, which {why}")
                            }
                        });
                        self.mark_control_flow(stmt, env, b, cause.as_deref());
                    }
                }
            },
            ast::Stmt::Raise(_) if builder.is_some() => {
                let b = builder.unwrap_or_default();
                self.diags.push(Diagnostic::error(
                    span_of(file, stmt),
                    format!("`{b}` raises here with the bound values, so it builds no program"),
                ));
                return true;
            }
            ast::Stmt::Return(_) if builder.is_some() => return true,
            _ => {
                if let Some(b) = builder {
                    self.mark_control_flow(stmt, env, b, None);
                }
            }
        }
        false
    }

    /// An ordinary Python function: look inside for program classes (tests build them
    /// lazily); its local constants are visible to them. Its parameters are bound by the
    /// caller's bindings, else their defaults, else known only at run time.
    fn builder(&mut self, f: &'a ast::StmtFunctionDef, env: &ConstEnv) {
        let mut local = env.clone();
        let a = &f.args;
        for p in a.posonlyargs.iter().chain(&a.args).chain(&a.kwonlyargs) {
            let name = p.def.arg.as_str();
            let kind = BindKind::of(p.def.annotation.as_deref());
            local.bindable.push(Bindable {
                name: name.to_string(),
                builder: f.name.to_string(),
                kind,
                param: true,
            });
            match self.binding(name, kind) {
                Some(Ok(v)) => local.bind(name, v),
                Some(Err(why)) => local.mark_runtime(name, format!("is bound to a bad value: {why}")),
                None => match p.default.as_deref().and_then(|d| eval_const(self.file, &local, d)) {
                    Some(d) => local.bind(name, d),
                    None => local.mark_runtime(
                        name,
                        format!("is a parameter of the enclosing Python function `{}`", f.name),
                    ),
                },
            }
        }
        self.walk_block(&f.body, &mut local, Some(f.name.as_str()));
    }

    /// Names assigned under Python control flow that does not fold (`if` on a run-time value,
    /// `for`, `while`, `try`, `with`) in a program-building function are only known at run
    /// time, unless the caller binds them.
    /// `cause` says why when the control flow is an `if` on a run-time name.
    fn mark_control_flow(&mut self, s: &ast::Stmt, env: &mut ConstEnv, func: &str, cause: Option<&str>) {
        let bodies: Vec<&[ast::Stmt]> = match s {
            ast::Stmt::If(i) => vec![&i.body, &i.orelse],
            ast::Stmt::For(f) => vec![&f.body, &f.orelse],
            ast::Stmt::While(w) => vec![&w.body, &w.orelse],
            ast::Stmt::Try(t) => vec![&t.body, &t.orelse, &t.finalbody],
            ast::Stmt::With(w) => vec![&w.body],
            _ => return,
        };
        for st in bodies.into_iter().flatten() {
            let targets: Vec<&ast::Expr> = match st {
                ast::Stmt::Assign(a) => a.targets.iter().collect(),
                ast::Stmt::AnnAssign(a) => vec![a.target.as_ref()],
                ast::Stmt::AugAssign(a) => vec![a.target.as_ref()],
                _ => {
                    self.mark_control_flow(st, env, func, cause);
                    continue;
                }
            };
            let mut names = Vec::new();
            targets.iter().for_each(|t| target_names(t, &mut names));
            for name in names {
                if !env.bindable.iter().any(|b| b.name == name && b.builder == func) {
                    env.bindable.push(Bindable {
                        name: name.to_string(),
                        builder: func.to_string(),
                        kind: BindKind::Any,
                        param: false,
                    });
                }
                match self.binding(name, BindKind::Any) {
                    Some(Ok(v)) => env.bind(name, v),
                    Some(Err(why)) => env.mark_runtime(name, format!("is bound to a bad value: {why}")),
                    None => env.mark_runtime(
                        name,
                        cause.map_or_else(
                            || format!("is assigned under Python control flow in `{func}`"),
                            str::to_string,
                        ),
                    ),
                }
            }
        }
    }
}

/// The truth of an `if` condition, when it folds to a constant.
fn folded(file: FileId, env: &ConstEnv, test: &ast::Expr) -> Option<bool> {
    if env.runtime_in(test).is_some() {
        return None;
    }
    truth(&eval_const(file, env, test)?)
}

/// The names bound by an assignment target (`a`, `a, b`, `(a, [b, c])`).
fn target_names<'e>(t: &'e ast::Expr, out: &mut Vec<&'e str>) {
    match t {
        ast::Expr::Name(n) => out.push(n.id.as_str()),
        ast::Expr::Tuple(tu) => tu.elts.iter().for_each(|e| target_names(e, out)),
        ast::Expr::List(l) => l.elts.iter().for_each(|e| target_names(e, out)),
        _ => {}
    }
}

/// `target = value` for a name or a tuple of names: a literal tuple on the right pairs up
/// element by element (all evaluated first), a constant tuple value is unpacked; anything
/// else makes every target name unknown.
fn assign_target(file: FileId, env: &mut ConstEnv, target: &ast::Expr, value: &ast::Expr) {
    let mut pending: Vec<(&str, Assigned)> = Vec::new();
    collect_assign(file, env, target, value, &mut pending);
    for (name, v) in pending {
        env.set(name, v);
    }
}

fn collect_assign<'e>(
    file: FileId,
    env: &ConstEnv,
    target: &'e ast::Expr,
    value: &ast::Expr,
    out: &mut Vec<(&'e str, Assigned)>,
) {
    let elts = match target {
        ast::Expr::Name(n) => return out.push((n.id.as_str(), env.evaluate(file, value))),
        ast::Expr::Tuple(t) => &t.elts,
        ast::Expr::List(l) => &l.elts,
        _ => return,
    };
    let literal = match value {
        ast::Expr::Tuple(t) => Some(&t.elts),
        ast::Expr::List(l) => Some(&l.elts),
        _ => None,
    };
    if let Some(vs) = literal.filter(|vs| vs.len() == elts.len()) {
        for (t, v) in elts.iter().zip(vs) {
            collect_assign(file, env, t, v, out);
        }
        return;
    }
    let unpacked = match env.evaluate(file, value) {
        Assigned::Const(Expr { kind: ExprKind::Tuple(items), .. }) if items.len() == elts.len() => {
            Some(items)
        }
        Assigned::Runtime(why) => {
            let mut names = Vec::new();
            target_names(target, &mut names);
            out.extend(names.into_iter().map(|n| (n, Assigned::Runtime(why.clone()))));
            return;
        }
        _ => None,
    };
    match unpacked {
        Some(items) => {
            for (t, item) in elts.iter().zip(items) {
                match t {
                    ast::Expr::Name(n) => out.push((n.id.as_str(), Assigned::Const(item))),
                    other => {
                        let mut names = Vec::new();
                        target_names(other, &mut names);
                        out.extend(names.into_iter().map(|n| (n, Assigned::Unknown)));
                    }
                }
            }
        }
        None => {
            let mut names = Vec::new();
            target_names(target, &mut names);
            out.extend(names.into_iter().map(|n| (n, Assigned::Unknown)));
        }
    }
}
