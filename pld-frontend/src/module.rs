//! The module walk: finds program units (each `@pl.program` class, and the module-level
//! DSL functions), evaluates module constants, reads decorators and signatures, then lowers
//! every function body.
//!
//! Guarantees: non-DSL Python (imports, helper functions, `main()`, `if __name__ ...`) is
//! skipped; `@pl.program` classes nested in ordinary functions are found; function bodies are
//! lowered in declaration order, except that a callee whose return type must be inferred is
//! lowered first (a recursive cycle is a diagnostic, not a hang); diagnostics from all
//! functions of all units are collected.

use crate::annot;
use crate::body::FnCx;
use crate::builders::WalkCx;
use crate::consts::{eval_const, ConstEnv};
use crate::util::{dotted, span_of};
use crate::{ParseOptions, UnitInfo};
use pld_ir::{Diagnostic, Diagnostics, Direction, Expr, FileId, Function, FunctionKind, Program, Span, Type};
use rustpython_parser::ast;

/// One function's signature, known before any body is lowered.
#[derive(Clone, Debug)]
pub struct Sig {
    /// Function name.
    pub name: String,
    /// Kind from the decorator.
    pub kind: FunctionKind,
    /// `(name, type, direction, span)` per parameter.
    pub params: Vec<(String, Type, Direction, Span)>,
    /// The span of each parameter's annotation (parallel to `params`), where call
    /// diagnostics point their note.
    pub annots: Vec<Span>,
    /// Return types: annotated, or inferred once the body is lowered.
    pub ret: Option<Vec<Type>>,
    /// Whether the decorator asked for strict SSA.
    pub strict_ssa: bool,
    /// Decorator keywords kept as function attributes (`role=pl.Role.SubWorker`, ...).
    pub attrs: Vec<(String, pld_ir::Attr)>,
    /// A host callback (`role=pl.Role.SubWorker`): its body is Python, not DSL.
    pub external: bool,
    /// Declaration span.
    pub span: Span,
}

/// State shared by all functions of one program unit.
pub struct UnitCx<'a> {
    /// The file.
    pub file: FileId,
    /// Options.
    pub opts: &'a ParseOptions,
    /// Constants visible to the unit.
    pub consts: ConstEnv,
    /// Signatures, in declaration order.
    pub sigs: Vec<Sig>,
    /// The syntax of each function.
    pub defs: Vec<&'a ast::StmtFunctionDef>,
    /// Lowered functions.
    pub done: Vec<Option<Function>>,
    /// Functions being lowered (for cycle detection).
    pub in_progress: Vec<bool>,
    /// Collected diagnostics.
    pub diags: Diagnostics,
}

impl<'a> UnitCx<'a> {
    /// Index of the function named `name`.
    pub fn func_index(&self, name: &str) -> Option<usize> {
        self.sigs.iter().position(|s| s.name == name)
    }

    /// Makes sure the return type of function `i` is known, lowering it if needed.
    pub fn ensure_ret(&mut self, i: usize) -> Option<Vec<Type>> {
        if self.sigs[i].ret.is_none() && self.done[i].is_none() && !self.in_progress[i] {
            self.lower(i);
        }
        self.sigs[i].ret.clone()
    }

    /// Lowers function `i` (once).
    pub fn lower(&mut self, i: usize) {
        if self.done[i].is_some() || self.in_progress[i] {
            return;
        }
        self.in_progress[i] = true;
        let def = self.defs[i];
        let f = FnCx::lower_function(self, i, def);
        self.in_progress[i] = false;
        if self.sigs[i].ret.is_none() {
            self.sigs[i].ret = Some(f.ret.clone());
        }
        self.done[i] = Some(f);
    }
}

/// One program unit's source, found by the module walk.
pub(crate) struct UnitSrc<'a> {
    /// The unit's name (class name, or the host's / first function's).
    pub name: String,
    /// Its DSL functions, each with whether it is a method (takes `self`).
    pub funcs: Vec<(&'a ast::StmtFunctionDef, bool)>,
    /// The constants it sees.
    pub consts: ConstEnv,
    /// Where it starts in the file.
    pub start: u32,
}

/// A module file's syntax, parsed once: what its program units are and their lowering are
/// both read from it.
pub struct Module {
    file: FileId,
    syntax: ast::ModModule,
}

impl Module {
    /// Parses the text of `file` (syntax errors and source limits are the only failures).
    pub fn parse(file: FileId, file_name: &str, text: &str) -> Result<Module, Diagnostics> {
        Ok(Module { file, syntax: parse_syntax(file, file_name, text)? })
    }

    /// Lowers the module's program units (only the one `opts.program` selects, if set).
    pub fn programs(&self, opts: &ParseOptions) -> Result<Vec<Program>, Diagnostics> {
        self.programs_and_warnings(opts).map(|(programs, _)| programs)
    }

    /// [`Module::programs`], with the warnings about the programs it accepts (the frontend's
    /// warning channel: [`crate::lint`]). On failure the diagnostics hold the errors and any
    /// warnings found before them, in the order found.
    pub fn programs_and_warnings(
        &self,
        opts: &ParseOptions,
    ) -> Result<(Vec<Program>, Diagnostics), Diagnostics> {
        let file = self.file;
        let (units, mut diags) = discover(file, opts, &self.syntax.body);
        let mut programs = Vec::new();
        // A selected unit is the only one lowered: the others' builders need no bindings.
        for u in units.into_iter().filter(|u| opts.program.as_ref().is_none_or(|want| *want == u.name)) {
            let (p, d) = lower_unit(file, opts, u);
            // Whatever the lowering let through, the structural verifier catches (misplaced
            // yields, arity mismatches), with the source spans the nodes carry.
            let lowered = !d.has_errors();
            if lowered {
                if let Err(v) = pld_ir::verify_program_for(&p, opts.target) {
                    diags.extend(v);
                }
            }
            diags.extend(d);
            if lowered {
                diags.0.extend(crate::lint::unwritten_outputs(&p));
            }
            programs.push(p);
        }
        let diags = one_error_per_unbound_name(diags);
        if diags.has_errors() {
            return Err(diags);
        }
        Ok((programs, diags))
    }

    /// What the module's program units are, without lowering any: each unit's name, host
    /// functions, functions and bindable names.
    pub fn units(&self, opts: &ParseOptions) -> Vec<UnitInfo> {
        let file = self.file;
        let (units, _) = discover(file, opts, &self.syntax.body);
        units
            .iter()
            .map(|u| {
                let kind = |f: &ast::StmtFunctionDef| decorator_kind(file, &u.consts, f).ok().map(|k| k.0);
                UnitInfo {
                    name: u.name.clone(),
                    hosts: u
                        .funcs
                        .iter()
                        .filter(|(f, _)| kind(f) == Some(FunctionKind::Host))
                        .map(|(f, _)| f.name.to_string())
                        .collect(),
                    functions: u.funcs.iter().map(|(f, _)| f.name.to_string()).collect(),
                    bindable: u.consts.bindable.clone(),
                    dyn_syms: u.consts.dyn_syms.clone(),
                }
            })
            .collect()
    }
}

/// The module's program units in source order, with the walk's diagnostics.
fn discover<'a>(file: FileId, opts: &ParseOptions, body: &'a [ast::Stmt]) -> (Vec<UnitSrc<'a>>, Diagnostics) {
    let mut env = ConstEnv::default();
    let mut cx = WalkCx { file, opts, units: Vec::new(), diags: Diagnostics::new() };
    let mut jit: Vec<&ast::StmtFunctionDef> = Vec::new();
    for stmt in body {
        match stmt {
            ast::Stmt::FunctionDef(f) if is_dsl_function(f) => jit.push(f),
            _ => {
                cx.walk(stmt, &mut env, None);
            }
        }
    }
    let mut units = cx.units;
    units.extend(jit_units(file, &jit, &env));
    units.sort_by_key(|u| u.start);
    (units, cx.diags)
}

/// A run-time name reported at every use is reported once, at its first use, with the
/// others as labels: the binding that fixes it is the same (the note names it).
fn one_error_per_unbound_name(diags: Diagnostics) -> Diagnostics {
    let mut out = Diagnostics::new();
    let mut first: Vec<(String, usize)> = Vec::new();
    for d in diags.0 {
        if let Some(k) = d.notes.iter().find(|n| n.starts_with("bind it with `--bind ")).cloned() {
            if let Some(&(_, i)) = first.iter().find(|(n, _)| *n == k) {
                if out.0[i].labels.len() < 3 {
                    out.0[i].labels.push((d.span, "also used here".to_string()));
                }
                continue;
            }
            first.push((k, out.0.len()));
        }
        out.push(d);
    }
    out
}

/// Parses the module's syntax, after the nesting bound (rustpython recurses as deep as the
/// source nests).
fn parse_syntax(file: FileId, file_name: &str, text: &str) -> Result<ast::ModModule, Diagnostics> {
    crate::limits::check(file, text)?;
    match rustpython_parser::parse(text, rustpython_parser::Mode::Module, file_name) {
        Ok(ast::Mod::Module(m)) => Ok(m),
        Ok(_) => Err(Diagnostic::error(Span::new(file, 0, 0), "expected a Python module").into()),
        Err(e) => {
            let at = e.offset.to_u32();
            let end = next_char_end(text, at);
            Err(Diagnostic::error(
                Span::new(file, at, end),
                format!("syntax error: {}", crate::syntax::message(text, &e)),
            )
            .into())
        }
    }
}

fn next_char_end(text: &str, at: u32) -> u32 {
    let at = (at as usize).min(text.len());
    let len = text.get(at..).and_then(|s| s.chars().next()).map_or(0, char::len_utf8);
    (at + len) as u32
}

/// The module-level DSL functions as program units: one per host entry (the host and every
/// function it reaches through calls, in source order), or a single unit when the module has
/// at most one host.
fn jit_units<'a>(file: FileId, jit: &[&'a ast::StmtFunctionDef], env: &ConstEnv) -> Vec<UnitSrc<'a>> {
    if jit.is_empty() {
        return Vec::new();
    }
    let is_host =
        |f: &ast::StmtFunctionDef| matches!(decorator_kind(file, env, f), Ok((FunctionKind::Host, _, _)));
    let hosts: Vec<usize> = (0..jit.len()).filter(|&i| is_host(jit[i])).collect();
    let unit = |name: String, members: Vec<usize>| UnitSrc {
        name,
        start: members.first().map_or(0, |&i| span_of(file, jit[i]).lo),
        funcs: members.into_iter().map(|i| (jit[i], false)).collect(),
        consts: env.clone(),
    };
    if hosts.len() <= 1 {
        let name = hosts.first().map_or_else(|| jit[0].name.to_string(), |&h| jit[h].name.to_string());
        return vec![unit(name, (0..jit.len()).collect())];
    }
    let index = |name: &str| jit.iter().position(|f| f.name.as_str() == name);
    hosts
        .iter()
        .map(|&h| {
            let mut reached = vec![false; jit.len()];
            let mut stack = vec![h];
            reached[h] = true;
            while let Some(i) = stack.pop() {
                let mut called = Vec::new();
                jit[i].body.iter().for_each(|s| calls_in_stmt(s, &mut called));
                for c in called {
                    if let Some(j) = index(&c) {
                        if !reached[j] {
                            reached[j] = true;
                            stack.push(j);
                        }
                    }
                }
            }
            let members = (0..jit.len()).filter(|&i| reached[i]).collect();
            unit(jit[h].name.to_string(), members)
        })
        .collect()
}

/// Names of functions called (`f(...)` / `self.f(...)`) anywhere in a statement.
fn calls_in_stmt(s: &ast::Stmt, out: &mut Vec<String>) {
    let body = |b: &[ast::Stmt], out: &mut Vec<String>| b.iter().for_each(|x| calls_in_stmt(x, out));
    match s {
        ast::Stmt::Expr(e) => calls_in_expr(&e.value, out),
        ast::Stmt::Assign(a) => calls_in_expr(&a.value, out),
        ast::Stmt::AnnAssign(a) => a.value.iter().for_each(|v| calls_in_expr(v, out)),
        ast::Stmt::AugAssign(a) => calls_in_expr(&a.value, out),
        ast::Stmt::Return(r) => r.value.iter().for_each(|v| calls_in_expr(v, out)),
        ast::Stmt::For(f) => {
            calls_in_expr(&f.iter, out);
            body(&f.body, out);
        }
        ast::Stmt::While(w) => {
            calls_in_expr(&w.test, out);
            body(&w.body, out);
        }
        ast::Stmt::If(i) => {
            calls_in_expr(&i.test, out);
            body(&i.body, out);
            body(&i.orelse, out);
        }
        ast::Stmt::With(w) => body(&w.body, out),
        _ => {}
    }
}

fn calls_in_expr(e: &ast::Expr, out: &mut Vec<String>) {
    match e {
        ast::Expr::Call(c) => {
            match c.func.as_ref() {
                ast::Expr::Name(n) => out.push(n.id.to_string()),
                ast::Expr::Attribute(a) if matches!(a.value.as_ref(), ast::Expr::Name(n) if n.id.as_str() == "self") => {
                    out.push(a.attr.to_string())
                }
                _ => {}
            }
            c.args.iter().for_each(|a| calls_in_expr(a, out));
            c.keywords.iter().for_each(|k| calls_in_expr(&k.value, out));
        }
        ast::Expr::BinOp(b) => {
            calls_in_expr(&b.left, out);
            calls_in_expr(&b.right, out);
        }
        ast::Expr::UnaryOp(u) => calls_in_expr(&u.operand, out),
        ast::Expr::BoolOp(b) => b.values.iter().for_each(|v| calls_in_expr(v, out)),
        ast::Expr::Compare(c) => {
            calls_in_expr(&c.left, out);
            c.comparators.iter().for_each(|v| calls_in_expr(v, out));
        }
        ast::Expr::List(l) => l.elts.iter().for_each(|v| calls_in_expr(v, out)),
        ast::Expr::Tuple(t) => t.elts.iter().for_each(|v| calls_in_expr(v, out)),
        ast::Expr::Subscript(s) => {
            calls_in_expr(&s.value, out);
            calls_in_expr(&s.slice, out);
        }
        _ => {}
    }
}

fn decorator_path(d: &ast::Expr) -> Option<String> {
    match d {
        ast::Expr::Call(c) => dotted(&c.func),
        other => dotted(other),
    }
}

/// The DSL's decorators.
const DSL_DECORATORS: [&str; 5] = ["pl.program", "pl.function", "pl.jit", "pl.jit.incore", "pl.jit.host"];

/// A decorator that looks like a misspelled DSL decorator (`@pl.jit.hots`, `@pl.functon`): an
/// error at it naming the nearest one. Such a function or class would otherwise be plain
/// Python, silently left out of the program.
pub(crate) fn misspelled_decorator(file: FileId, decorators: &[ast::Expr]) -> Option<Diagnostic> {
    decorators.iter().find_map(|d| {
        let path = decorator_path(d)?;
        if DSL_DECORATORS.contains(&path.as_str()) || !path.starts_with("pl.") {
            return None;
        }
        let (best, dist) = DSL_DECORATORS
            .iter()
            .map(|k| (*k, pld_ir::registry::listing::edit_distance(&path, k)))
            .min_by_key(|&(_, n)| n)?;
        (dist <= 2 || path.starts_with("pl.jit.")).then(|| {
            Diagnostic::error(span_of(file, d), format!("unknown decorator `@{path}`"))
                .with_note(format!("did you mean `@{best}`?"))
        })
    })
}

pub(crate) fn is_program_decorator(d: &ast::Expr) -> bool {
    decorator_path(d).as_deref() == Some("pl.program")
}

pub(crate) fn is_dsl_function(f: &ast::StmtFunctionDef) -> bool {
    f.decorator_list.iter().any(|d| {
        matches!(
            decorator_path(d).as_deref(),
            Some("pl.function" | "pl.jit" | "pl.jit.incore" | "pl.jit.host")
        )
    })
}

/// What a DSL decorator says: kind, strict SSA, kept attributes.
type DecoratorInfo = (FunctionKind, bool, Vec<(String, pld_ir::Attr)>);

/// The kind a DSL decorator denotes, whether it asks for strict SSA, and the keywords kept
/// as attributes.
fn decorator_kind(
    file: FileId,
    consts: &ConstEnv,
    f: &ast::StmtFunctionDef,
) -> Result<DecoratorInfo, Diagnostic> {
    for d in &f.decorator_list {
        let Some(path) = decorator_path(d) else { continue };
        let kind = match path.as_str() {
            "pl.jit" => FunctionKind::ChipOrch,
            "pl.jit.incore" => FunctionKind::InCore,
            "pl.jit.host" => FunctionKind::Host,
            "pl.function" => {
                let ast::Expr::Call(c) = d else { return Ok((FunctionKind::Opaque, false, Vec::new())) };
                return function_kwargs(file, consts, c);
            }
            _ => continue,
        };
        return Ok((kind, false, Vec::new()));
    }
    Ok((FunctionKind::Opaque, false, Vec::new()))
}

fn last_segment(e: &ast::Expr) -> Option<String> {
    dotted(e).map(|p| p.rsplit('.').next().unwrap_or_default().to_string())
}

fn function_kwargs(file: FileId, consts: &ConstEnv, c: &ast::ExprCall) -> Result<DecoratorInfo, Diagnostic> {
    let mut ty: Option<FunctionKind> = None;
    let mut level: Option<String> = None;
    let mut role: Option<String> = None;
    let mut strict = false;
    let mut extra = Vec::new();
    if let Some(a) = c.args.first() {
        return Err(Diagnostic::error(
            span_of(file, a),
            "@pl.function takes keyword arguments only (type=..., level=..., role=...)",
        ));
    }
    for kw in &c.keywords {
        match kw.arg.as_deref() {
            Some("type") => {
                let member = last_segment(&kw.value).unwrap_or_default();
                ty = Some(match member.as_str() {
                    "InCore" => FunctionKind::InCore,
                    "Orchestration" => FunctionKind::ChipOrch,
                    "AIC" => FunctionKind::Aic,
                    "AIV" => FunctionKind::Aiv,
                    "Opaque" => FunctionKind::Opaque,
                    _ => {
                        return Err(Diagnostic::error(
                            span_of(file, &kw.value),
                            format!("unsupported function type `{member}`"),
                        )
                        .with_note("supported: pl.FunctionType.InCore, Orchestration, AIC, AIV, Opaque"))
                    }
                });
            }
            Some("level") => level = last_segment(&kw.value),
            Some("role") => role = last_segment(&kw.value),
            Some("strict_ssa") => {
                strict = matches!(&kw.value, ast::Expr::Constant(k) if matches!(k.value, ast::Constant::Bool(true)))
            }
            Some(k) => {
                let v = dotted(&kw.value)
                    .as_deref()
                    .and_then(crate::expr::enum_like_member)
                    .map(|m| pld_ir::Attr::Str(m.to_string()))
                    .or_else(|| {
                        eval_const(file, consts, &kw.value).and_then(|e| crate::expr::const_attr(&e))
                    });
                match v {
                    Some(v) => extra.push((k.to_string(), v)),
                    None => {
                        return Err(Diagnostic::error(
                            span_of(file, &kw.value),
                            format!("@pl.function keyword `{k}` must be a compile-time constant"),
                        ))
                    }
                }
            }
            None => {
                return Err(Diagnostic::error(span_of(file, kw), "`**kwargs` is not supported in decorators"))
            }
        }
    }
    let orchestrator = role.as_deref() == Some("Orchestrator") || ty == Some(FunctionKind::ChipOrch);
    let kind = match level.as_deref() {
        Some("HOST") if orchestrator => FunctionKind::Host,
        Some("CHIP") if orchestrator && ty.is_none_or(|t| t == FunctionKind::ChipOrch) => {
            FunctionKind::ChipOrch
        }
        _ => ty.unwrap_or(FunctionKind::Opaque),
    };
    // Level and role that the kind does not already say are kept as attributes.
    let mut attrs = Vec::new();
    if !matches!(kind, FunctionKind::Host | FunctionKind::ChipOrch) {
        if let Some(l) = level {
            attrs.push(("level".to_string(), pld_ir::Attr::Str(l)));
        }
        if let Some(r) = role {
            attrs.push(("role".to_string(), pld_ir::Attr::Str(r)));
        }
    }
    attrs.extend(extra);
    Ok((kind, strict, attrs))
}

fn signature(
    file: FileId,
    consts: &ConstEnv,
    f: &ast::StmtFunctionDef,
    method: bool,
) -> Result<Sig, Diagnostics> {
    let mut diags = Diagnostics::new();
    let span = span_of(file, f);
    let (kind, strict_ssa, attrs) = decorator_kind(file, consts, f).map_err(Diagnostics::from)?;
    // A HOST-level SubWorker is a Python callback; a kernel the reference prints with
    // `role=pl.Role.SubWorker` (InCore, AIV, ...) is DSL like any other.
    let external = kind == FunctionKind::Opaque
        && attrs.iter().any(|(k, v)| k == "role" && v.as_str() == Some("SubWorker"));
    let mut dim = |e: &ast::Expr| -> Result<Expr, Diagnostic> {
        if let Some((name, why)) = consts.runtime_in(e) {
            return Err(crate::consts::runtime_error(span_of(file, e), &name, &why));
        }
        eval_const(file, consts, e).ok_or_else(|| {
            Diagnostic::error(
                span_of(file, e),
                "expected a constant here (a literal, a module constant or a pl.dynamic symbol)",
            )
        })
    };
    let mut params = Vec::new();
    let mut annots = Vec::new();
    let args = &f.args;
    if args.vararg.is_some() || args.kwarg.is_some() {
        diags.push(Diagnostic::error(
            span,
            format!("`{}`: *args / **kwargs parameters are not supported", f.name),
        ));
    }
    let all: Vec<&ast::ArgWithDefault> =
        args.posonlyargs.iter().chain(&args.args).chain(&args.kwonlyargs).collect();
    for (i, a) in all.iter().enumerate() {
        let name = a.def.arg.to_string();
        if method && i == 0 && name == "self" {
            continue;
        }
        let pspan = span_of(file, &a.def);
        match &a.def.annotation {
            None => diags.push(
                Diagnostic::error(
                    pspan,
                    format!("parameter `{name}` of `{}` has no type annotation", f.name),
                )
                .with_note("annotate it, e.g. `x: pl.Tensor[[16, 64], pl.FP32]`"),
            ),
            Some(t) => match annot::param_type(file, t, &mut dim) {
                Ok((ty, dir)) => {
                    params.push((name, ty, dir, pspan));
                    annots.push(span_of(file, t.as_ref()));
                }
                Err(d) => diags.push(d),
            },
        }
    }
    let ret = match &f.returns {
        None => None,
        Some(r) => match annot::return_types(file, r, &mut dim) {
            Ok(t) => Some(t),
            Err(d) => {
                diags.push(d);
                None
            }
        },
    };
    diags.into_result(Sig {
        name: f.name.to_string(),
        kind,
        params,
        annots,
        ret,
        strict_ssa,
        attrs,
        external,
        span,
    })
}

fn lower_unit(file: FileId, opts: &ParseOptions, u: UnitSrc<'_>) -> (Program, Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut sigs = Vec::new();
    let mut defs = Vec::new();
    let mut failed = Vec::new();
    for (f, method) in &u.funcs {
        if let Some(prev) = sigs.iter().position(|s: &Sig| s.name == f.name.as_str()) {
            diags.push(
                Diagnostic::error(span_of(file, *f), format!("function `{}` is defined twice", f.name))
                    .with_label(sigs[prev].span, "first defined here"),
            );
            continue;
        }
        match signature(file, &u.consts, f, *method) {
            Ok(s) => {
                sigs.push(s);
                defs.push(*f);
                failed.push(false);
            }
            Err(d) => {
                diags.extend(d);
                // Keep a placeholder signature so calls resolve and do not cascade.
                sigs.push(Sig {
                    name: f.name.to_string(),
                    kind: FunctionKind::Opaque,
                    params: Vec::new(),
                    annots: Vec::new(),
                    ret: Some(Vec::new()),
                    strict_ssa: false,
                    attrs: Vec::new(),
                    external: false,
                    span: span_of(file, *f),
                });
                defs.push(*f);
                failed.push(true);
            }
        }
    }
    let n = sigs.len();
    let dyn_syms = u.consts.dyn_syms.clone();
    let mut cx = UnitCx {
        file,
        opts,
        consts: u.consts,
        sigs,
        defs,
        done: vec![None; n],
        in_progress: vec![false; n],
        diags: Diagnostics::new(),
    };
    // A function whose signature failed already reported; its body is skipped so that
    // missing parameters do not cascade into undefined-name errors.
    for (i, bad) in failed.iter().enumerate() {
        if !bad {
            cx.lower(i);
        }
    }
    diags.extend(cx.diags);
    let mut p = Program::new(u.name);
    p.dyn_syms = dyn_syms;
    p.functions = cx.done.into_iter().flatten().collect();
    declare_inline_syms(&mut p);
    (p, diags)
}

/// Adds symbols written inline (`pl.Tensor[[pl.dynamic("NR"), 8], …]`) to the program's
/// declared `pl.dynamic` symbols, in order of first appearance, so the printed program
/// declares every symbol it uses and re-parses to the same program.
fn declare_inline_syms(p: &mut Program) {
    let mut found: Vec<String> = Vec::new();
    let mut note = |e: &pld_ir::Expr| {
        e.walk(&mut |x| {
            if let pld_ir::ExprKind::Sym(s) = &x.kind {
                if !found.contains(s) {
                    found.push(s.clone());
                }
            }
        })
    };
    for f in &p.functions {
        for (_, v) in f.values.iter() {
            for_each_type_expr(&v.ty, &mut note);
        }
        for t in &f.ret {
            for_each_type_expr(t, &mut note);
        }
        f.body.walk_exprs(&mut |e| note(e));
    }
    for s in found {
        if !p.dyn_syms.contains(&s) {
            p.dyn_syms.push(s);
        }
    }
}

fn for_each_type_expr(t: &pld_ir::Type, f: &mut dyn FnMut(&pld_ir::Expr)) {
    use pld_ir::Type;
    match t {
        Type::Tensor(tt) | Type::DistTensor(pld_ir::DistTensorType { tensor: tt, .. }) => {
            tt.shape.iter().for_each(&mut *f);
            if let Some(v) = &tt.view {
                v.stride.iter().chain(&v.valid_shape).for_each(&mut *f);
            }
        }
        Type::Tile(tile) => tile.shape.iter().chain(&tile.valid_shape).for_each(f),
        Type::Tuple(items) => items.iter().for_each(|i| for_each_type_expr(i, f)),
        _ => {}
    }
}
