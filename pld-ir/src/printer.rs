//! The printer: IR → PTO Python DSL text.
//!
//! The output is a `@pl.program` class in the `pl.` / `pld.` syntax the frontend reads back,
//! so `parse(print(p))` is structurally equal to `p`. Every assignment carries its type
//! annotation, value names are made unique per function (`t`, `t_1`, …), and attributes
//! holding ABI enum payloads are printed by member name (`pld.NotifyOp.AtomicAdd`).

use crate::expr::{Attr, BinOp, Callee, Expr, ExprKind, UnOp};
use crate::func::{Direction, Function, FunctionKind, Program};
use crate::registry::AttrType;
use crate::stmt::{Block, ForKind, ScopeKind, Stmt, StmtKind};
use crate::types::{Layout, TensorType, Type};
use crate::value::ValueId;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// Prints a whole program.
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    out.push_str("import pypto.language as pl\nimport pypto.language.distributed as pld\n\n");
    for s in &p.dyn_syms {
        let _ = writeln!(out, "{s} = pl.dynamic({s:?})");
    }
    if !p.dyn_syms.is_empty() {
        out.push('\n');
    }
    let name = if p.name.is_empty() { "Program" } else { p.name.as_str() };
    let _ = writeln!(out, "\n@pl.program\nclass {name}:");
    if p.functions.is_empty() {
        out.push_str("    pass\n");
    }
    for (i, f) in p.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        print_function_into(&mut out, f, &p.dyn_syms, 1);
    }
    out
}

/// Prints one function as a method of a `@pl.program` class (indented one level).
pub fn print_function(f: &Function) -> String {
    let mut out = String::new();
    print_function_into(&mut out, f, &[], 0);
    out
}

/// The DSL spelling of a type annotation (values print as `%vN`).
pub fn type_to_string(t: &Type) -> String {
    Printer::detached().ty(t)
}

/// The DSL spelling of an expression (values print as `%vN`).
pub fn expr_to_string_plain(e: &Expr) -> String {
    Printer::detached().expr(e)
}

/// The decorator line of a function kind.
pub fn decorator(kind: FunctionKind) -> &'static str {
    match kind {
        FunctionKind::Host => "@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)",
        FunctionKind::ChipOrch => "@pl.function(type=pl.FunctionType.Orchestration)",
        FunctionKind::InCore => "@pl.function(type=pl.FunctionType.InCore)",
        FunctionKind::Aic => "@pl.function(type=pl.FunctionType.AIC)",
        FunctionKind::Aiv => "@pl.function(type=pl.FunctionType.AIV)",
        FunctionKind::Opaque => "@pl.function",
    }
}

/// The decorator line of a function: its kind plus its attributes as extra keywords
/// (`level` / `role` as `pl.Level.X` / `pl.Role.X`), so the frontend reads them back.
fn decorator_of(f: &Function) -> String {
    if f.attrs.is_empty() {
        return decorator(f.kind).to_string();
    }
    let mut parts: Vec<String> = match f.kind {
        FunctionKind::Host => vec!["level=pl.Level.HOST".into(), "role=pl.Role.Orchestrator".into()],
        FunctionKind::Opaque => Vec::new(),
        k => vec![format!("type=pl.FunctionType.{}", k.dsl_name())],
    };
    for (k, v) in &f.attrs {
        let value = match (k.as_str(), v) {
            ("level", Attr::Str(s)) => format!("pl.Level.{s}"),
            ("role", Attr::Str(s)) => format!("pl.Role.{s}"),
            _ => attr_plain(v),
        };
        parts.push(format!("{k}={value}"));
    }
    format!("@pl.function({})", parts.join(", "))
}

/// The DSL spelling of an op: `pld.*` names as they are, others under `pl.`.
pub fn op_dsl_name(name: &str) -> String {
    if name.starts_with("pld.") || name.starts_with("pl.") {
        name.to_string()
    } else {
        format!("pl.{name}")
    }
}

const RESERVED: &[&str] = &[
    "self", "pl", "pld", "and", "or", "not", "in", "is", "if", "else", "elif", "for", "while", "def",
    "class", "return", "yield", "None", "True", "False", "import", "from", "as", "with", "pass", "break",
    "continue", "lambda", "global", "nonlocal", "assert", "del", "try", "except", "finally", "raise",
    "async", "await", "range", "min", "max",
];

struct Printer<'f> {
    func: Option<&'f Function>,
    names: HashMap<ValueId, String>,
    used: HashSet<String>,
}

fn print_function_into(out: &mut String, f: &Function, syms: &[String], indent: usize) {
    let mut p = Printer { func: Some(f), names: HashMap::new(), used: HashSet::new() };
    for s in syms {
        p.used.insert(s.clone());
    }
    let pad = "    ".repeat(indent);
    let _ = writeln!(out, "{pad}{}", decorator_of(f));
    let mut params = vec!["self".to_string()];
    for prm in &f.params {
        let n = p.name(prm.value);
        let t = p.ty(f.values.ty(prm.value));
        let t = match prm.dir {
            Direction::In => t,
            Direction::Out => format!("pl.Out[{t}]"),
            Direction::InOut => format!("pl.InOut[{t}]"),
        };
        params.push(format!("{n}: {t}"));
    }
    let ret = match f.ret.len() {
        0 => String::new(),
        1 => format!(" -> {}", p.ty(&f.ret[0])),
        _ => format!(" -> tuple[{}]", f.ret.iter().map(|t| p.ty(t)).collect::<Vec<_>>().join(", ")),
    };
    let _ = writeln!(out, "{pad}def {}({}){ret}:", f.name, params.join(", "));
    p.block(out, &f.body, indent + 1, &[]);
}

impl<'f> Printer<'f> {
    fn detached() -> Printer<'static> {
        Printer { func: None, names: HashMap::new(), used: HashSet::new() }
    }

    fn name(&mut self, v: ValueId) -> String {
        if let Some(n) = self.names.get(&v) {
            return n.clone();
        }
        let Some(f) = self.func else {
            return v.to_string();
        };
        let hint = sanitize(f.values.name(v));
        let mut candidate = hint.clone();
        let mut i = 1;
        while self.used.contains(&candidate) || RESERVED.contains(&candidate.as_str()) {
            candidate = format!("{hint}_{i}");
            i += 1;
        }
        self.used.insert(candidate.clone());
        self.names.insert(v, candidate.clone());
        candidate
    }

    fn block(&mut self, out: &mut String, b: &Block, indent: usize, yield_targets: &[ValueId]) {
        if b.stmts.is_empty() {
            let _ = writeln!(out, "{}pass", "    ".repeat(indent));
        }
        for s in &b.stmts {
            self.stmt(out, s, indent, yield_targets);
        }
    }

    fn stmt(&mut self, out: &mut String, s: &Stmt, indent: usize, yield_targets: &[ValueId]) {
        let pad = "    ".repeat(indent);
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                let rhs = self.expr(value);
                if targets.len() == 1 {
                    let n = self.name(targets[0]);
                    let ty = self.func.map(|f| f.values.ty(targets[0]).clone()).unwrap_or(Type::Unknown);
                    if ty == Type::Unknown {
                        let _ = writeln!(out, "{pad}{n} = {rhs}");
                    } else {
                        let t = self.ty(&ty);
                        let _ = writeln!(out, "{pad}{n}: {t} = {rhs}");
                    }
                } else {
                    let names: Vec<String> = targets.iter().map(|t| self.name(*t)).collect();
                    let _ = writeln!(out, "{pad}{} = {rhs}", names.join(", "));
                }
            }
            StmtKind::Eval(e) => {
                let _ = writeln!(out, "{pad}{}", self.expr(e));
            }
            StmtKind::For { var, start, stop, step, iter_args, body, results, kind } => {
                let v = self.name(*var);
                let mut range_args = vec![self.expr(start), self.expr(stop)];
                if step.as_int() != Some(1) {
                    range_args.push(self.expr(step));
                }
                let target = if iter_args.is_empty() {
                    v
                } else {
                    let names: Vec<String> = iter_args.iter().map(|a| self.name(a.value)).collect();
                    let inits: Vec<String> = iter_args.iter().map(|a| self.expr(&a.init)).collect();
                    range_args.push(format!("init_values=({},)", inits.join(", ")));
                    format!("{v}, ({},)", names.join(", "))
                };
                let iter = match kind {
                    ForKind::Sequential => "pl.range",
                    other => other.dsl_name(),
                };
                let _ = writeln!(out, "{pad}for {target} in {iter}({}):", range_args.join(", "));
                self.block(out, body, indent + 1, results);
            }
            StmtKind::While { iter_args, cond, body, results } => {
                if iter_args.is_empty() {
                    let _ = writeln!(out, "{pad}while {}:", self.expr(cond));
                } else {
                    let names: Vec<String> = iter_args.iter().map(|a| self.name(a.value)).collect();
                    let inits: Vec<String> = iter_args.iter().map(|a| self.expr(&a.init)).collect();
                    let _ = writeln!(
                        out,
                        "{pad}for ({},) in pl.while_(init_values=({},)):",
                        names.join(", "),
                        inits.join(", ")
                    );
                    let _ = writeln!(out, "{pad}    pl.cond({})", self.expr(cond));
                }
                self.block(out, body, indent + 1, results);
            }
            StmtKind::If { cond, then_body, else_body, results } => {
                let _ = writeln!(out, "{pad}if {}:", self.expr(cond));
                self.block(out, then_body, indent + 1, results);
                if !else_body.stmts.is_empty() || !results.is_empty() {
                    let _ = writeln!(out, "{pad}else:");
                    self.block(out, else_body, indent + 1, results);
                }
            }
            StmtKind::Scope { kind, attrs, args, body } => {
                let mut parts: Vec<String> = match kind {
                    ScopeKind::At { .. } => Vec::new(),
                    _ => args.iter().map(|a| self.expr(a)).collect(),
                };
                parts.extend(attrs.iter().map(|(k, v)| format!("{k}={}", self.scope_attr(k, v))));
                match kind {
                    ScopeKind::At { task } => {
                        if !args.is_empty() {
                            let deps: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                            parts.push(format!("deps=[{}]", deps.join(", ")));
                        }
                        let bind = task.map(|t| format!(" as {}", self.name(t))).unwrap_or_default();
                        let _ = writeln!(out, "{pad}with pl.at({}){bind}:", parts.join(", "));
                    }
                    ScopeKind::Manual => {
                        let _ = writeln!(out, "{pad}with pl.manual_scope({}):", parts.join(", "));
                    }
                    ScopeKind::Spmd => {
                        let _ = writeln!(out, "{pad}with pl.spmd({}):", parts.join(", "));
                    }
                    ScopeKind::SplitAiv { lane } => {
                        let lane = lane.map_or_else(|| "_".to_string(), |l| self.name(l));
                        let _ = writeln!(out, "{pad}for {lane} in pl.split_aiv({}):", parts.join(", "));
                    }
                    ScopeKind::CommDomain { name, devices, windows } => {
                        let _ = writeln!(
                            out,
                            "{pad}with pld.comm_domain(name={}, devices={devices:?}, windows=[{}]):",
                            crate::quote::python_string(name),
                            windows
                                .iter()
                                .map(|w| crate::quote::python_string(w))
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                    }
                }
                self.block(out, body, indent + 1, &[]);
            }
            StmtKind::Yield(vals) => {
                let rhs: Vec<String> = vals.iter().map(|v| self.expr(v)).collect();
                let call = format!("pl.yield_({})", rhs.join(", "));
                if yield_targets.is_empty() {
                    let _ = writeln!(out, "{pad}{call}");
                } else {
                    let names: Vec<String> = yield_targets.iter().map(|t| self.name(*t)).collect();
                    let _ = writeln!(out, "{pad}{} = {call}", names.join(", "));
                }
            }
            StmtKind::Return(vals) => {
                let vals: Vec<String> = vals.iter().map(|v| self.expr(v)).collect();
                if vals.is_empty() {
                    let _ = writeln!(out, "{pad}return");
                } else {
                    let _ = writeln!(out, "{pad}return {}", vals.join(", "));
                }
            }
        }
    }

    fn scope_attr(&mut self, key: &str, v: &Attr) -> String {
        match (key, v) {
            ("level", Attr::Str(s)) => format!("pl.Level.{s}"),
            ("role", Attr::Str(s)) => format!("pl.Role.{s}"),
            _ => attr_plain(v),
        }
    }

    fn ty(&mut self, t: &Type) -> String {
        match t {
            Type::Unknown => "pl.Unknown".into(),
            Type::Scalar(d) => format!("pl.Scalar[pl.{}]", d.dsl_name()),
            Type::Tensor(tt) => format!("pl.Tensor[{}]", self.tensor_fields(tt, None)),
            Type::DistTensor(d) => {
                format!("pld.DistributedTensor[{}]", self.tensor_fields(&d.tensor, d.window.as_deref()))
            }
            Type::Tile(tile) => {
                let mut s = format!("[{}], pl.{}", self.dims(&tile.shape), tile.dtype.dsl_name());
                if let Some(m) = tile.memory {
                    s.push_str(&format!(", pl.MemorySpace.{}", m.dsl_name()));
                }
                if !tile.valid_shape.is_empty() {
                    s.push_str(&format!(", pl.TileView(valid_shape=[{}])", self.dims(&tile.valid_shape)));
                }
                format!("pl.Tile[{s}]")
            }
            Type::Tuple(items) => {
                format!("pl.Tuple[{}]", items.iter().map(|i| self.ty(i)).collect::<Vec<_>>().join(", "))
            }
            Type::CommCtx => "pld.CommCtx".into(),
            Type::Ptr => "pld.Ptr".into(),
            Type::WindowBuffer => "pld.WindowBuffer".into(),
            Type::Array(a) => format!("pl.Array[{}, pl.{}]", self.expr(&a.extent), a.dtype.dsl_name()),
        }
    }

    fn tensor_fields(&mut self, t: &TensorType, window: Option<&str>) -> String {
        let mut s = format!("[{}], pl.{}", self.dims(&t.shape), t.dtype.dsl_name());
        if let Some(v) = &t.view {
            let mut parts = Vec::new();
            if !v.stride.is_empty() {
                parts.push(format!("stride=[{}]", self.dims(&v.stride)));
            }
            if v.layout != Layout::Nd {
                parts.push(format!("layout=pl.Layout.{}", v.layout.dsl_name()));
            }
            if !v.valid_shape.is_empty() {
                parts.push(format!("valid_shape=[{}]", self.dims(&v.valid_shape)));
            }
            s.push_str(&format!(", pl.TensorView({})", parts.join(", ")));
        }
        if let Some(w) = window {
            s.push_str(&format!(", \"window_buffer={w}\""));
        }
        s
    }

    fn dims(&mut self, dims: &[Expr]) -> String {
        dims.iter().map(|d| self.expr(d)).collect::<Vec<_>>().join(", ")
    }

    fn expr(&mut self, e: &Expr) -> String {
        self.expr_prec(e, 0)
    }

    fn expr_prec(&mut self, e: &Expr, parent: u8) -> String {
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Float(f) => format_float(f.get()),
            ExprKind::Bool(b) => if *b { "True" } else { "False" }.into(),
            ExprKind::Str(s) => crate::quote::python_string(s),
            ExprKind::DType(d) => format!("pl.{}", d.dsl_name()),
            ExprKind::Var(v) => self.name(*v),
            ExprKind::Sym(s) => s.clone(),
            ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), a, b) => {
                format!("{}({}, {})", op.symbol(), self.expr(a), self.expr(b))
            }
            ExprKind::Binary(op, a, b) => {
                let p = precedence(*op);
                let s = format!("{} {} {}", self.expr_prec(a, p), op.symbol(), self.expr_prec(b, p + 1));
                if p < parent {
                    format!("({s})")
                } else {
                    s
                }
            }
            ExprKind::Unary(UnOp::Neg, a) => format!("-{}", self.expr_prec(a, 100)),
            ExprKind::Unary(UnOp::Not, a) => format!("not {}", self.expr_prec(a, 100)),
            ExprKind::Tuple(items) => format!("[{}]", self.dims(items)),
            ExprKind::Call(c) => {
                let mut parts: Vec<String> = c.args.iter().map(|a| self.expr(a)).collect();
                for (k, v) in &c.attrs {
                    let ty = c.op().and_then(|d| d.attr_def(k)).map(|a| a.ty);
                    parts.push(format!("{k}={}", attr_typed(v, ty)));
                }
                if let Some(d) = &c.device {
                    parts.push(format!("device={}", self.expr(d)));
                }
                if let Some(deps) = &c.deps {
                    let deps: Vec<String> = deps.iter().map(|d| self.expr(d)).collect();
                    parts.push(format!("deps=[{}]", deps.join(", ")));
                }
                let callee = match &c.callee {
                    Callee::Op(def) => op_dsl_name(def.name),
                    Callee::Func(name) => format!("self.{name}"),
                };
                format!("{callee}({})", parts.join(", "))
            }
        }
    }
}

fn precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 1,
        BinOp::And => 2,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 3,
        BinOp::Add | BinOp::Sub => 4,
        BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => 5,
        BinOp::Min | BinOp::Max => 6,
    }
}

fn format_float(v: f64) -> String {
    if v.is_finite() {
        let s = format!("{v:?}");
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    } else if v.is_nan() {
        "float(\"nan\")".into()
    } else if v > 0.0 {
        "float(\"inf\")".into()
    } else {
        "float(\"-inf\")".into()
    }
}

fn attr_typed(v: &Attr, ty: Option<AttrType>) -> String {
    match (ty, v) {
        (Some(AttrType::Enum(kind)), Attr::Int(n)) => match kind.member_name(*n) {
            Some(m) => format!("pld.{}.{m}", kind.name()),
            None => n.to_string(),
        },
        _ => attr_plain(v),
    }
}

fn attr_plain(v: &Attr) -> String {
    match v {
        Attr::Int(n) => n.to_string(),
        Attr::Bool(b) => if *b { "True" } else { "False" }.into(),
        Attr::Str(s) => crate::quote::python_string(s),
        Attr::DType(d) => format!("pl.{}", d.dsl_name()),
        Attr::Float(f) => format_float(f.get()),
        Attr::Ints(xs) => format!("[{}]", xs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

fn sanitize(hint: &str) -> String {
    let mut s: String =
        hint.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    s
}
