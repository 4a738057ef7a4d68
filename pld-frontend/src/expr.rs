//! Expressions and calls inside DSL functions.
//!
//! Guarantees: op calls resolve through the registry (canonical names, aliases, `pl.`-prefixed
//! spellings such as `pl.tile.load`, and overloads like `pld.remote_store` dispatched on the
//! first argument's type); keyword arguments bind to the op's parameters (IR order) or its
//! keyword-only attributes; ABI enum members become their pinned integers; every call is
//! built through [`Expr::op_call`] with the enclosing function's kind, so deducer errors
//! carry the call's span. Failures report once and return `Err(())`. Op-call argument
//! binding lives in `op_call`, subscripts in `subscript`.

use crate::body::FnCx;
use crate::consts::{self, enum_path, get_byte_call, literal, named_constant, negate};
use crate::util::{dotted, span_of, split_module};
use pld_ir::registry::DeduceEnv;
use pld_ir::{
    registry, Attr, BinOp, Call, Callee, DataType, Diagnostic, Expr, ExprKind, FunctionKind, Span, Type, UnOp,
};
use rustpython_parser::ast;

mod op_call;
mod subscript;

use op_call::{resolve, Resolved};

/// Deepest expression nesting the frontend lowers.
const MAX_DEPTH: usize = 200;

/// The member of a string-valued DSL enum (`pl.MemorySpace.Vec` → `Vec`), kept as a string.
pub fn enum_like_member(path: &str) -> Option<&str> {
    const ENUMS: &[&str] = &[
        "pl.MemorySpace.",
        "pl.Mem.",
        "pl.Level.",
        "pl.Role.",
        "pl.Layout.",
        "pl.SplitMode.",
        "pl.Split.",
        "pl.PadValue.",
    ];
    ENUMS.iter().find_map(|p| path.strip_prefix(p)).filter(|m| !m.is_empty() && !m.contains('.'))
}

/// A constant expression as an attribute value.
pub fn const_attr(e: &Expr) -> Option<Attr> {
    Some(match &e.kind {
        ExprKind::Int(v) => Attr::Int(*v),
        ExprKind::Bool(b) => Attr::Bool(*b),
        ExprKind::Str(s) => Attr::Str(s.clone()),
        ExprKind::DType(d) => Attr::DType(*d),
        ExprKind::Float(f) => Attr::Float(*f),
        ExprKind::Tuple(items) => Attr::Ints(items.iter().map(Expr::as_int).collect::<Option<Vec<_>>>()?),
        _ => return None,
    })
}

fn is_scalar_operand(e: &Expr, ty: &Type) -> bool {
    matches!(ty, Type::Scalar(_)) && !matches!(e.kind, ExprKind::Tuple(_))
}

impl FnCx<'_, '_> {
    /// Lowers an expression.
    pub fn expr(&mut self, e: &ast::Expr) -> Result<Expr, ()> {
        if self.depth >= MAX_DEPTH {
            // Reported once per statement: the siblings of a too-deep node are as deep.
            if !self.too_deep {
                self.too_deep = true;
                let span = span_of(self.file(), e);
                self.error(Diagnostic::error(
                    span,
                    format!("expression nested more than {MAX_DEPTH} levels deep"),
                ));
            }
            return Err(());
        }
        if self.depth == 0 {
            self.too_deep = false;
        }
        self.depth += 1;
        let r = self.expr_inner(e);
        self.depth -= 1;
        r
    }

    /// Lowers every expression of `items`, going on after an error (each one is recorded):
    /// the lowered ones, and whether all of them lowered.
    pub(crate) fn exprs_all<'e>(
        &mut self,
        items: impl IntoIterator<Item = &'e ast::Expr>,
    ) -> (Vec<Expr>, bool) {
        let mut out = Vec::new();
        let mut ok = true;
        for e in items {
            match self.expr(e) {
                Ok(x) => out.push(x),
                Err(()) => ok = false,
            }
        }
        (out, ok)
    }

    fn expr_inner(&mut self, e: &ast::Expr) -> Result<Expr, ()> {
        let file = self.file();
        let span = span_of(file, e);
        match e {
            ast::Expr::Constant(c) => match literal(&c.value) {
                Some(k) => Ok(Expr::new(k, span)),
                None => {
                    let msg = if matches!(c.value, ast::Constant::Int(_)) {
                        "this integer literal does not fit in 64 signed bits"
                    } else {
                        "this literal is not a DSL value (None, bytes and complex are not supported)"
                    };
                    self.error(Diagnostic::error(span, msg));
                    Err(())
                }
            },
            ast::Expr::Name(n) => self.name_expr(n.id.as_str(), span),
            ast::Expr::Attribute(_) => {
                let path = dotted(e);
                if let Some(k) = path.as_deref().and_then(named_constant) {
                    return Ok(Expr::new(k, span));
                }
                if let Some((kind, member)) = path.as_deref().and_then(enum_path) {
                    let mut d =
                        Diagnostic::error(span, format!("`{member}` is not a member of pld.{}", kind.name()))
                            .with_code(pld_ir::codes::UNKNOWN_ENUM_MEMBER)
                            .with_note(format!("members: {}", kind.describe_members()));
                    let names = kind.members().iter().map(|(n, _)| *n);
                    d = d.with_help_opt(pld_ir::registry::listing::did_you_mean(&member, names));
                    self.error(d);
                    return Err(());
                }
                self.error(Diagnostic::error(
                    span,
                    format!(
                        "unsupported attribute `{}` in an expression",
                        path.unwrap_or_else(|| "?".into())
                    ),
                ));
                Err(())
            }
            ast::Expr::BinOp(b) => {
                let Some(op) = consts::bin_op(&b.op) else {
                    self.error(Diagnostic::error(span, "unsupported operator (supported: + - * / // %)"));
                    return Err(());
                };
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                let (l, r) = (l?, r?);
                self.scalar_binary(op, l, r, span)
            }
            ast::Expr::UnaryOp(u) => {
                let v = self.expr(&u.operand)?;
                match u.op {
                    ast::UnaryOp::USub => {
                        self.require_scalar(&v, "-")?;
                        Ok(negate(v).at(span))
                    }
                    ast::UnaryOp::UAdd => Ok(v.at(span)),
                    ast::UnaryOp::Not => Ok(Expr::new(ExprKind::Unary(UnOp::Not, Box::new(v)), span)),
                    ast::UnaryOp::Invert => {
                        self.error(Diagnostic::error(span, "operator `~` is not supported"));
                        Err(())
                    }
                }
            }
            ast::Expr::Compare(c) => {
                let ([op], [rhs]) = (c.ops.as_slice(), c.comparators.as_slice()) else {
                    self.error(Diagnostic::error(span, "chained comparisons are not supported; use `and`"));
                    return Err(());
                };
                let Some(op) = consts::cmp_op(op) else {
                    self.error(Diagnostic::error(span, "unsupported comparison (`is` / `in`)"));
                    return Err(());
                };
                let l = self.expr(&c.left);
                let r = self.expr(rhs);
                let (l, r) = (l?, r?);
                self.scalar_binary(op, l, r, span)
            }
            ast::Expr::BoolOp(b) => {
                let op = match b.op {
                    ast::BoolOp::And => BinOp::And,
                    ast::BoolOp::Or => BinOp::Or,
                };
                let mut vals = Vec::new();
                for v in &b.values {
                    vals.push(self.expr(v));
                }
                let mut it = vals.into_iter();
                let mut acc = it.next().ok_or(())??;
                for v in it {
                    acc = self.scalar_binary(op, acc, v?, span)?;
                }
                Ok(acc.at(span))
            }
            ast::Expr::List(l) => self.tuple(&l.elts, span),
            ast::Expr::Tuple(t) => self.tuple(&t.elts, span),
            ast::Expr::Subscript(s) => self.subscript(s, span),
            ast::Expr::Call(c) => self.call(c, span),
            _ => {
                self.error(Diagnostic::error(span, "unsupported expression in a DSL function"));
                Err(())
            }
        }
    }

    fn tuple(&mut self, elts: &[ast::Expr], span: Span) -> Result<Expr, ()> {
        let items: Vec<Result<Expr, ()>> = elts.iter().map(|x| self.expr(x)).collect();
        Ok(Expr::new(ExprKind::Tuple(items.into_iter().collect::<Result<Vec<_>, ()>>()?), span))
    }

    /// Every name a use could mean here: locals of every open frame and module constants.
    fn names_in_scope(&self) -> Vec<&str> {
        let locals = self.frames.iter().flat_map(|f| f.names.keys().map(String::as_str));
        locals.chain(self.unit.consts.names()).collect()
    }

    /// A name: a local value, else a module constant.
    pub fn name_expr(&mut self, name: &str, span: Span) -> Result<Expr, ()> {
        if let Some(v) = self.lookup(name, span)? {
            return Ok(Expr::new(ExprKind::Var(v), span));
        }
        if let Some(c) = self.unit.consts.get(name) {
            return Ok(c.clone().at(span));
        }
        if let Some(why) = self.unit.consts.runtime_origin(name).cloned() {
            self.error(crate::consts::runtime_error(span, name, &why));
            return Err(());
        }
        match name {
            "True" => return Ok(Expr::new(ExprKind::Bool(true), span)),
            "False" => return Ok(Expr::new(ExprKind::Bool(false), span)),
            _ => {}
        }
        let mut d = Diagnostic::error(span, format!("undefined name `{name}`"))
            .with_code(pld_ir::codes::UNKNOWN_NAME);
        if self.unit.func_index(name).is_some() {
            d = d.with_note(format!("`{name}` is a function; call it: `{name}(...)`"));
        } else if let Some(help) =
            pld_ir::registry::listing::did_you_mean(name, self.names_in_scope().into_iter())
        {
            d = d.with_help(help);
        }
        self.error(d);
        Err(())
    }

    fn require_scalar(&mut self, e: &Expr, op: &str) -> Result<(), ()> {
        let ty = e.ty(&self.values);
        if is_scalar_operand(e, &ty) {
            return Ok(());
        }
        self.error(
            Diagnostic::error(
                e.span,
                format!("operator `{op}` applies to scalars, but this operand is a {}", ty.kind_name()),
            )
            .with_note("use the op form for tensors and tiles, e.g. pl.add(a, b)"),
        );
        Err(())
    }

    /// Scalar arithmetic or comparison (folded when both sides are integer literals).
    pub fn scalar_binary(&mut self, op: BinOp, l: Expr, r: Expr, span: Span) -> Result<Expr, ()> {
        let sym = op.symbol();
        let a = self.require_scalar(&l, sym);
        let b = self.require_scalar(&r, sym);
        a?;
        b?;
        Ok(Expr::binary(op, l, r).at(span))
    }

    fn env(&self) -> DeduceEnv<'_> {
        DeduceEnv { values: &self.values, target: self.unit.opts.target, func_kind: Some(self.func_kind()) }
    }

    pub(crate) fn build_op(
        &mut self,
        name: &str,
        args: Vec<Expr>,
        attrs: Vec<(String, Attr)>,
        span: Span,
    ) -> Result<Expr, ()> {
        let r = Expr::op_call(name, args, attrs, span, &self.env());
        let e = r.map_err(|d| self.error(d))?;
        self.check_writes_to_inputs(&e);
        Ok(e)
    }

    /// An op that writes an operand aliasing a read-only (`In`) tensor parameter (`pl.store`
    /// into a plain `pl.Tensor` input) is an error at the operand, with a label at the
    /// parameter: the write would be lost and the real output never written.
    fn check_writes_to_inputs(&mut self, e: &Expr) {
        let ExprKind::Call(c) = &e.kind else { return };
        let Some(def) = c.op() else { return };
        let effects = def.arg_effects(c);
        for (i, arg) in c.args.iter().enumerate() {
            if !effects.get(i).is_some_and(|x| x.writes()) {
                continue;
            }
            let Some(v) = crate::callcheck::read_only_root(arg, &self.read_only) else { continue };
            // A window (`pld.DistributedTensor`) is symmetric memory: a write lands whatever
            // its direction. A plain tensor input is not copied back: the write is lost.
            if !matches!(self.values.ty(v), Type::Tensor(_)) {
                continue;
            }
            let name = self.values.name(v).to_string();
            let decl = self.values.get(v).map(|d| d.span);
            let mut d = Diagnostic::error(
                arg.span,
                format!(
                    "{} writes `{name}`, which is read-only here: it comes from an input parameter \
                     (a plain pl.Tensor), not pl.Out / pl.InOut, so the write is lost",
                    def.name
                ),
            );
            if let Some(at) = decl {
                d = d.with_label(
                    at,
                    format!(
                        "`{name}` is declared as an input here; declare it pl.Out or pl.InOut to write it"
                    ),
                );
            }
            self.error(d);
        }
    }

    fn call(&mut self, c: &ast::ExprCall, span: Span) -> Result<Expr, ()> {
        if let Some(b) = get_byte_call(c) {
            return Ok(Expr::new(ExprKind::Int(b), span));
        }
        let Some(path) = dotted(&c.func) else {
            self.error(Diagnostic::error(
                span,
                "unsupported call: the callee must be a name like pl.load or self.kernel",
            ));
            return Err(());
        };
        match path.as_str() {
            "min" | "max" | "pl.min" | "pl.max"
                if path.starts_with("min") || path.starts_with("max") || resolve(&path).is_none() =>
            {
                if c.args.len() != 2 || !c.keywords.is_empty() {
                    self.error(Diagnostic::error(span, format!("{path}() takes exactly 2 arguments here")));
                    return Err(());
                }
                let a = self.expr(&c.args[0]);
                let b = self.expr(&c.args[1]);
                let op = if path.ends_with("min") { BinOp::Min } else { BinOp::Max };
                return self.scalar_binary(op, a?, b?, span);
            }
            "float" => {
                if let [ast::Expr::Constant(k)] = c.args.as_slice() {
                    if let ast::Constant::Str(s) = &k.value {
                        let v = match s.as_str() {
                            "inf" => Some(f64::INFINITY),
                            "-inf" => Some(f64::NEG_INFINITY),
                            "nan" => Some(f64::NAN),
                            _ => s.parse::<f64>().ok(),
                        };
                        if let Some(v) = v {
                            return Ok(Expr::new(ExprKind::Float(pld_ir::expr::FloatBits::new(v)), span));
                        }
                    }
                }
                self.error(Diagnostic::error(span, "float(...) takes one string literal here"));
                return Err(());
            }
            "pl.const" if resolve(&path).is_none() => return self.typed_const(c, span).map(|(e, _)| e),
            "pl.yield_" => {
                self.error(Diagnostic::error(span, "pl.yield_ must be a statement: `x = pl.yield_(value)`"));
                return Err(());
            }
            "pl.dynamic" => {
                self.error(Diagnostic::error(
                    span,
                    "pl.dynamic must be declared at module level: `NR = pl.dynamic(\"NR\")`",
                ));
                return Err(());
            }
            _ => {}
        }
        let fname = path.strip_prefix("self.").unwrap_or(&path);
        if !fname.contains('.') {
            if let Some(i) = self.unit.func_index(fname) {
                return self.func_call(i, c, span);
            }
        }
        match resolve(&path) {
            Some(Resolved::Op(def)) if def.internal && !self.unit.opts.allow_internal => {
                self.error(
                    Diagnostic::error(
                        span_of(self.file(), c.func.as_ref()),
                        format!(
                            "operator '{}' is internal-only and cannot be created from user-facing op creation paths",
                            def.name
                        ),
                    )
                    .with_note("compiler passes create it; parse IR dumps with ParseOptions::allow_internal"),
                );
                Err(())
            }
            Some(Resolved::Op(def)) => self.op_call(def, c, None, span),
            Some(Resolved::Overload(o)) => {
                let first = match c.args.first() {
                    Some(a) => self.expr(a)?,
                    None => {
                        self.error(Diagnostic::error(
                            span,
                            format!("{} needs at least one positional argument", o.name),
                        ));
                        return Err(());
                    }
                };
                let ty = first.ty(&self.values);
                let pick = (o.pick)(&ty);
                match registry().lookup(pick) {
                    Some(def) => self.op_call(def, c, Some(first), span),
                    None => {
                        self.error(Diagnostic::error(
                            span,
                            format!("{} resolved to unknown op `{pick}`", o.name),
                        ));
                        Err(())
                    }
                }
            }
            None => {
                let (module, _) = split_module(&path);
                let msg = if module.is_empty() && !path.starts_with("self.") {
                    format!("call of unknown function `{path}`")
                } else if let Some(name) = path.strip_prefix("self.") {
                    format!("call of unknown function `{name}`")
                } else {
                    format!("unknown op `{path}`")
                };
                let mut d = Diagnostic::error(span_of(self.file(), c.func.as_ref()), msg)
                    .with_code(pld_ir::codes::UNKNOWN_OP);
                if let Some(best) = registry()
                    .suggest(&path)
                    .or_else(|| path.strip_prefix("pl.").and_then(|p| registry().suggest(p)))
                {
                    d = d.with_help(format!("did you mean `{}`?", pld_ir::printer::op_dsl_name(best)));
                }
                self.error(d);
                Err(())
            }
        }
    }

    /// `pl.const(value, dtype)`: a literal whose scalar type is `dtype` (the assignment that
    /// receives it takes that type, as with an annotated literal).
    pub fn typed_const(&mut self, c: &ast::ExprCall, span: Span) -> Result<(Expr, DataType), ()> {
        let usage = "pl.const takes a literal and a dtype: pl.const(0, pl.INT32)";
        let value = c.args.first();
        let dtype = c
            .args
            .get(1)
            .or_else(|| c.keywords.iter().find(|k| k.arg.as_deref() == Some("dtype")).map(|k| &k.value));
        let (Some(value), Some(dtype)) = (value, dtype) else {
            self.error(Diagnostic::error(span, usage));
            return Err(());
        };
        let v = self.expr(value)?;
        let d = self.expr(dtype)?;
        match (&v.kind, &d.kind) {
            (ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_), ExprKind::DType(dt)) => {
                Ok((v.at(span), *dt))
            }
            _ => {
                self.error(Diagnostic::error(span, usage));
                Err(())
            }
        }
    }

    /// The dtype a `pl.const(...)` right-hand side gives its assignment target.
    pub fn const_target_type(&self, value: &ast::Expr) -> Option<Type> {
        let call = crate::body::as_call_to(value, "pl.const")?;
        if resolve("pl.const").is_some() {
            return None;
        }
        let dtype = call
            .args
            .get(1)
            .or_else(|| call.keywords.iter().find(|k| k.arg.as_deref() == Some("dtype")).map(|k| &k.value))?;
        match named_constant(&dotted(dtype)?)? {
            ExprKind::DType(d) => Some(Type::Scalar(d)),
            _ => None,
        }
    }

    /// A call of another function of the program (`self.k(args, device=r)` / `k(args)`).
    fn func_call(&mut self, i: usize, c: &ast::ExprCall, span: Span) -> Result<Expr, ()> {
        let file = self.file();
        let sig_name = self.unit.sigs[i].name.clone();
        let param_names: Vec<String> = self.unit.sigs[i].params.iter().map(|p| p.0.clone()).collect();
        let mut slots: Vec<Option<Expr>> = vec![None; param_names.len()];
        let mut extra = 0usize;
        let mut device = None;
        let mut deps = None;
        let mut ok = true;
        for (j, a) in c.args.iter().enumerate() {
            match self.expr(a) {
                Ok(e) if j < slots.len() => slots[j] = Some(e),
                Ok(_) => extra += 1,
                Err(()) => ok = false,
            }
        }
        for kw in &c.keywords {
            let kspan = span_of(file, kw);
            match kw.arg.as_deref() {
                Some("device") => match self.expr(&kw.value) {
                    Ok(e) => device = Some(e),
                    Err(()) => ok = false,
                },
                Some("deps") if !param_names.iter().any(|p| p == "deps") => match self.task_deps(&kw.value) {
                    Ok(d) => deps = Some(d),
                    Err(()) => ok = false,
                },
                Some(k) => match param_names.iter().position(|p| p == k) {
                    Some(j) if slots[j].is_none() => match self.expr(&kw.value) {
                        Ok(e) => slots[j] = Some(e),
                        Err(()) => ok = false,
                    },
                    Some(_) => {
                        self.error(Diagnostic::error(
                            kspan,
                            format!("argument `{k}` of `{sig_name}` is given twice"),
                        ));
                        ok = false;
                    }
                    None => {
                        self.error(
                            Diagnostic::error(
                                kspan,
                                format!("unknown keyword argument `{k}` for `{sig_name}`"),
                            )
                            .with_code(pld_ir::codes::UNKNOWN_KWARG)
                            .with_note(format!("parameters: {}", param_names.join(", ")))
                            .with_help_opt(
                                pld_ir::registry::listing::did_you_mean(
                                    k,
                                    param_names.iter().map(String::as_str),
                                ),
                            ),
                        );
                        ok = false;
                    }
                },
                None => {
                    self.error(Diagnostic::error(kspan, "`**kwargs` is not supported in calls"));
                    ok = false;
                }
            }
        }
        if !ok {
            return Err(());
        }
        let given = slots.iter().filter(|s| s.is_some()).count() + extra;
        let missing: Vec<usize> = (0..slots.len()).filter(|&j| slots[j].is_none()).collect();
        if extra == 0 && !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|&j| format!("`{}`", param_names[j])).collect();
            let mut d = Diagnostic::error(
                span,
                format!(
                    "missing argument{} {} of `{sig_name}`",
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ),
            )
            .with_code(pld_ir::codes::MISSING_ARGUMENT)
            .with_note(format!("signature: {sig_name}({})", param_names.join(", ")));
            if let Some(&a) = missing.first().and_then(|&j| self.unit.sigs[i].annots.get(j)) {
                d = d.with_label(a, format!("parameter `{}` declared here", param_names[missing[0]]));
            }
            self.error(d);
            return Err(());
        }
        if extra > 0 || !missing.is_empty() {
            self.error(Diagnostic::error(
                span,
                format!("`{sig_name}` takes {} argument(s), but {given} were given", param_names.len()),
            ));
            return Err(());
        }
        let args: Vec<Expr> = slots.into_iter().flatten().collect();
        crate::callcheck::check_call(self, i, &args);
        if self.unit.sigs[i].external && self.kind != FunctionKind::Host && self.kind != FunctionKind::Opaque
        {
            // The runtime runs host callbacks between device dispatches of the host program.
            let decl = self.unit.sigs[i].span;
            self.error(
                Diagnostic::error(
                    span,
                    format!(
                        "host callback `{sig_name}` is called from a {} function: a host callback runs on the host, between the host orchestrator's device dispatches",
                        if self.kind == FunctionKind::ChipOrch { "chip orchestration" } else { "device kernel" }
                    ),
                )
                .with_label(decl, format!("`{sig_name}` is a host callback (level=pl.Level.HOST, role=pl.Role.SubWorker)"))
                .with_note("call it from the host orchestrator (level=pl.Level.HOST, role=pl.Role.Orchestrator)"),
            );
        }
        let ret = match self.unit.ensure_ret(i) {
            Some(r) => r,
            None => {
                self.error(
                    Diagnostic::error(
                        span,
                        format!("cannot infer the return type of `{sig_name}` (recursive call)"),
                    )
                    .with_note(format!("annotate it: `def {sig_name}(...) -> ...:`")),
                );
                return Err(());
            }
        };
        let mut ret = ret;
        if deps.is_some() {
            ret.push(Type::Scalar(DataType::TASK_ID));
        }
        let ty = match ret.len() {
            0 => Type::Unknown,
            1 => ret[0].clone(),
            _ => Type::Tuple(ret),
        };
        let call = Call { device, deps, ..Call::new(Callee::Func(sig_name), args, Vec::new(), ty) };
        Ok(Expr::new(ExprKind::Call(Box::new(call)), span))
    }

    /// `deps=[t0, t1]` of a task submit: a list of task ids.
    pub(crate) fn task_deps(&mut self, v: &ast::Expr) -> Result<Vec<Expr>, ()> {
        let file = self.file();
        let items = match v {
            ast::Expr::List(l) => &l.elts,
            ast::Expr::Tuple(t) => &t.elts,
            other => {
                self.error(Diagnostic::error(
                    span_of(file, other),
                    "deps= takes a list of task ids, e.g. `deps=[wait_tid]`",
                ));
                return Err(());
            }
        };
        let mut deps = Vec::new();
        for item in items {
            let e = self.expr(item)?;
            let ty = e.ty(&self.values);
            if ty != Type::Scalar(DataType::TASK_ID) {
                self.error(
                    Diagnostic::error(
                        span_of(file, item),
                        format!("a task dependency must be a task id, got {ty}"),
                    )
                    .with_note("bind one with `with pl.at(...) as tid:`"),
                );
                return Err(());
            }
            deps.push(e);
        }
        Ok(deps)
    }
}
