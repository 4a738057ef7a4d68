//! The orchestration description written beside the kernels: a machine-readable JSON
//! document (hand-written serializer, deterministic key order) describing
//! - every kernel: its module, kernel kind and runtime argument list in calling order;
//! - every window buffer (name, logical byte size, 32-byte aligned size) and comm domain
//!   (devices, buffers with their offsets inside the window, window size);
//! - every dispatch of a host or chip orchestrator (caller, callee, device expression, the
//!   enclosing loops, the concrete ranks when they are computable, and each argument: plain
//!   tensor, window buffer view, CommContext of a domain, or scalar);
//! - every builtin collective variant used (variant, entry symbol, kernel name, template vars).
//!
//! Guarantees: the same program gives byte-identical JSON; strings are escaped per RFC 8259;
//! symbolic sizes are written as expression strings, static ones as integers.

use crate::CodegenOptions;
use pld_ir::vocab;
use pld_ir::{
    Attr, BinOp, Call, Callee, DataType, Diagnostic, Expr, ExprKind, Function, FunctionKind, Program,
    ScopeKind, SignalRole, Stmt, StmtKind, Type, UnOp, ValueId,
};
use std::collections::{BTreeMap, HashMap};

/// The builtin family's variant naming lives with the family ([`crate::emit::builtin_variant`]).
pub(crate) use crate::emit::builtin_variant::builtin_spec;
pub use crate::json::Json;
use crate::json::{self, obj};

/// A sum of buffer sizes: the static ones folded, the symbolic ones (fully parenthesized
/// expression texts, as [`aligned`] writes them) counted, in first-seen order.
#[derive(Default)]
struct SizeSum {
    fixed: i64,
    terms: Vec<(String, usize)>,
    index: HashMap<String, usize>,
}

impl SizeSum {
    fn add(&mut self, size: Json) {
        match size {
            Json::Number(n) => self.fixed = self.fixed.saturating_add(n.as_i64().unwrap_or(0)),
            Json::String(t) => match self.index.get(&t) {
                Some(&i) => self.terms[i].1 += 1,
                None => {
                    self.index.insert(t.clone(), self.terms.len());
                    self.terms.push((t, 1));
                }
            },
            _ => {}
        }
    }

    /// An integer when every size so far was static, else the expression text.
    fn json(&self) -> Json {
        if self.terms.is_empty() {
            return json::int(self.fixed);
        }
        let mut parts: Vec<String> = Vec::with_capacity(self.terms.len() + 1);
        if self.fixed != 0 {
            parts.push(self.fixed.to_string());
        }
        for (t, n) in &self.terms {
            parts.push(if *n == 1 { t.clone() } else { format!("{n} * {t}") });
        }
        json::s(parts.join(" + "))
    }
}

/// Source-like text of an expression, with value names.
fn text(f: &Function, e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(b) => format!("{}", b.get()),
        ExprKind::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::DType(d) => d.dsl_name().to_string(),
        ExprKind::Var(v) => f.values.name(*v).to_string(),
        ExprKind::Sym(s) => s.clone(),
        ExprKind::Binary(op, a, b) => match op {
            BinOp::Min | BinOp::Max => format!("{}({}, {})", op.symbol(), text(f, a), text(f, b)),
            _ => format!("({} {} {})", text(f, a), op.symbol(), text(f, b)),
        },
        ExprKind::Unary(UnOp::Neg, a) => format!("-{}", text(f, a)),
        ExprKind::Unary(UnOp::Not, a) => format!("not {}", text(f, a)),
        ExprKind::Tuple(items) => {
            format!("[{}]", items.iter().map(|i| text(f, i)).collect::<Vec<_>>().join(", "))
        }
        ExprKind::Call(c) => {
            format!(
                "{}({})",
                c.callee.name(),
                c.args.iter().map(|a| text(f, a)).collect::<Vec<_>>().join(", ")
            )
        }
    }
}

/// An integer when static, else the expression text.
fn dim(f: &Function, e: &Expr) -> Json {
    e.as_int().map_or_else(|| json::s(text(f, e)), json::int)
}

/// Evaluates an integer expression under loop-variable bindings.
fn eval(e: &Expr, env: &HashMap<ValueId, i64>) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Var(v) => env.get(v).copied(),
        ExprKind::Binary(op, a, b) => op.fold_int(eval(a, env)?, eval(b, env)?),
        ExprKind::Unary(UnOp::Neg, a) => eval(a, env)?.checked_neg(),
        _ => None,
    }
}

fn dtype_name(d: DataType) -> Json {
    json::s(d.dsl_name())
}

#[derive(Clone, Debug)]
struct Loop {
    var: ValueId,
    start: Expr,
    stop: Expr,
    step: Expr,
}

#[derive(Clone, Debug)]
struct Buffer {
    name: String,
    size: Expr,
    func: usize,
}

struct Walker<'a> {
    program: &'a Program,
    opts: &'a CodegenOptions,
    buffers: Vec<Buffer>,
    /// Buffer name → index of its first entry in `buffers`.
    buffer_of: HashMap<String, usize>,
    domains: Vec<Json>,
    buffer_domain: BTreeMap<String, String>,
    dispatches: Vec<Json>,
    builtins: BTreeMap<String, Json>,
    /// Per function: value → window buffer name (DistTensor views and their ctxs).
    ctx_buffer: HashMap<(usize, ValueId), String>,
    /// (chip function, parameter index) → the window buffer its host dispatches pass.
    param_buffer: BTreeMap<(String, usize), String>,
    /// Values holding `pld.system.world_size()`.
    world_vars: std::collections::HashSet<(usize, ValueId)>,
    /// Depth of the `pl.manual_scope()` regions being walked.
    manual: usize,
}

/// Describes the program's orchestration as JSON.
pub fn describe(program: &Program, opts: &CodegenOptions) -> Result<String, Diagnostic> {
    describe_with(program, opts, &[])
}

/// [`describe`], also listing `extra` kernels (the rendered builtin collective kernels).
pub fn describe_with(
    program: &Program,
    opts: &CodegenOptions,
    extra: &[Function],
) -> Result<String, Diagnostic> {
    let mut w = Walker {
        program,
        opts,
        buffers: Vec::new(),
        buffer_of: HashMap::new(),
        domains: Vec::new(),
        buffer_domain: BTreeMap::new(),
        dispatches: Vec::new(),
        builtins: BTreeMap::new(),
        ctx_buffer: HashMap::new(),
        world_vars: std::collections::HashSet::new(),
        param_buffer: BTreeMap::new(),
        manual: 0,
    };
    // Pass 1: window buffers and domains (domains need buffer sizes).
    for (fi, f) in program.functions.iter().enumerate() {
        if matches!(f.kind, FunctionKind::Host | FunctionKind::ChipOrch) {
            w.collect_buffers(fi, f, &f.body.stmts);
        }
    }
    for (fi, f) in program.functions.iter().enumerate() {
        if matches!(f.kind, FunctionKind::Host | FunctionKind::ChipOrch) {
            w.collect_domains(fi, f, &f.body.stmts);
        }
    }
    // Pass 2: dispatches, host first so chip parameters learn the windows they receive.
    for kind in [FunctionKind::Host, FunctionKind::ChipOrch] {
        for (fi, f) in program.functions.iter().enumerate() {
            if f.kind == kind {
                for (i, p) in f.params.iter().enumerate() {
                    if let Some(b) = w.param_buffer.get(&(f.name.clone(), i)).cloned() {
                        w.ctx_buffer.insert((fi, p.value), b);
                    }
                }
                let mut loops = Vec::new();
                w.walk(fi, f, &f.body.stmts, &mut loops);
            }
        }
    }
    let kernels: Vec<Json> = program
        .functions
        .iter()
        .filter(|f| crate::is_kernel(f.kind))
        .chain(extra)
        .map(|f| kernel(program, f))
        .collect();
    let buffers: Vec<Json> = w
        .buffers
        .iter()
        .map(|b| {
            let f = &program.functions[b.func];
            obj(vec![
                ("name", json::s(&b.name)),
                ("domain", w.buffer_domain.get(&b.name).map_or(Json::Null, json::s)),
                ("size", dim(f, &b.size)),
                ("nbytes", aligned(f, &b.size)),
            ])
        })
        .collect();
    let doc = obj(vec![
        ("format", json::s("pld-orchestration/1")),
        ("program", json::s(&program.name)),
        ("target", json::s(opts.target.name())),
        ("kernels", Json::Array(kernels)),
        ("window_buffers", Json::Array(buffers)),
        ("comm_domains", Json::Array(w.domains)),
        ("dispatches", Json::Array(w.dispatches)),
        ("builtins", Json::Array(w.builtins.into_values().collect())),
    ]);
    Ok(json::render(&doc))
}

/// The 32-byte aligned size of a buffer (`kCommBufferAlignmentBytes`).
fn aligned(f: &Function, size: &Expr) -> Json {
    match size.as_int() {
        Some(v) => v.checked_add(31).map_or(Json::Null, |x| json::int(x / 32 * 32)),
        None => json::s(format!("((({} + 31) // 32) * 32)", text(f, size))),
    }
}

fn kernel(program: &Program, f: &Function) -> Json {
    let mut tensors = Vec::new();
    let mut scalars = Vec::new();
    let mut dists = Vec::new();
    let mut ctxs = Vec::new();
    for p in &f.params {
        let name = f.values.name(p.value).to_string();
        let dir = match p.dir {
            pld_ir::Direction::In => "in",
            pld_ir::Direction::Out => "out",
            pld_ir::Direction::InOut => "inout",
        };
        match f.values.ty(p.value) {
            Type::Tensor(t) | Type::DistTensor(pld_ir::DistTensorType { tensor: t, .. }) => {
                let dist = matches!(f.values.ty(p.value), Type::DistTensor(_));
                if dist {
                    dists.push(name.clone());
                }
                tensors.push(obj(vec![
                    ("name", json::s(name)),
                    ("kind", json::s(if dist { "window" } else { "tensor" })),
                    ("dtype", dtype_name(t.dtype)),
                    ("shape", Json::Array(t.shape.iter().map(|d| dim(f, d)).collect())),
                    ("direction", json::s(dir)),
                ]));
            }
            Type::CommCtx => {
                ctxs.push(scalars.len());
                scalars.push(obj(vec![("name", json::s(name)), ("kind", json::s("comm_ctx"))]));
            }
            Type::Scalar(d) => scalars.push(obj(vec![
                ("name", json::s(name)),
                ("kind", json::s("scalar")),
                ("dtype", dtype_name(*d)),
            ])),
            other => scalars.push(obj(vec![("name", json::s(name)), ("kind", json::s(other.kind_name()))])),
        }
    }
    // Pair the i-th window with the i-th ctx.
    for (i, idx) in ctxs.iter().enumerate() {
        if let (Some(Json::Object(fields)), Some(d)) = (scalars.get_mut(*idx), dists.get(i)) {
            fields.insert("pairs".into(), json::s(d));
        }
    }
    let mut args = tensors;
    args.extend(scalars);
    let mut syms = Vec::new();
    for p in &f.params {
        if let Some(t) = f.values.ty(p.value).as_tensor_like() {
            Expr::collect_syms(&t.shape, &mut syms);
        }
    }
    for s in syms {
        args.push(obj(vec![("name", json::s(s)), ("kind", json::s("dyn_dim"))]));
    }
    let mut deferred = false;
    f.body.walk_exprs(&mut |e| {
        if let Some(c) = e.as_call() {
            deferred |= c.signal_role() == SignalRole::DeferredWait;
        }
    });
    if deferred {
        args.push(obj(vec![("name", json::s("__pypto_deferred_raw_args")), ("kind", json::s("hidden"))]));
    }
    if crate::func::uses_block_ids(f) {
        for p in crate::func::BLOCK_ID_PARAMS {
            args.push(obj(vec![("name", json::s(p.trim_start_matches('%'))), ("kind", json::s("hidden"))]));
        }
    }
    let module = {
        let mut m = f.name.clone();
        for (suffix, sib) in [("_aic", "_aiv"), ("_aiv", "_aic")] {
            if let Some(base) = f.name.strip_suffix(suffix) {
                if program.function(&format!("{base}{sib}")).is_some_and(|g| crate::is_kernel(g.kind)) {
                    m = base.to_string();
                }
            }
        }
        m
    };
    obj(vec![
        ("name", json::s(&f.name)),
        ("module", json::s(format!("{module}.pto"))),
        ("kind", json::s(if f.kind == FunctionKind::Aic { "cube" } else { "vector" })),
        ("args", Json::Array(args)),
    ])
}

impl Walker<'_> {
    fn collect_buffers(&mut self, fi: usize, f: &Function, stmts: &[Stmt]) {
        for s in stmts {
            if let StmtKind::Assign { targets, value } = &s.kind {
                if let Some(c) = value.as_call() {
                    if c.callee.name() == vocab::ALLOC_WINDOW_BUFFER {
                        let name = match c.attr("name") {
                            Some(Attr::Str(n)) if !n.is_empty() => n.clone(),
                            _ => targets.first().map_or_else(String::new, |t| f.values.name(*t).to_string()),
                        };
                        if let Some(size) = c.args.first() {
                            self.buffer_of.entry(name.clone()).or_insert(self.buffers.len());
                            self.buffers.push(Buffer { name, size: size.clone(), func: fi });
                        }
                    }
                }
            }
            for b in s.blocks() {
                self.collect_buffers(fi, f, &b.stmts);
            }
        }
    }

    fn collect_domains(&mut self, fi: usize, f: &Function, stmts: &[Stmt]) {
        for s in stmts {
            if let StmtKind::Scope { kind: ScopeKind::CommDomain { name, devices, windows }, .. } = &s.kind {
                // The running offset: the sum of the previous buffers' aligned sizes, static
                // ones folded into one integer and each distinct symbolic size written once
                // with its multiplicity (`2 * (((… + 31) // 32) * 32)`), so an offset's text
                // grows with the distinct sizes before it, not with the buffer count.
                let mut offset = SizeSum::default();
                let mut bufs = Vec::new();
                for wname in windows {
                    self.buffer_domain.insert(wname.clone(), name.clone());
                    let size =
                        self.buffer_of.get(wname).map(|&i| (&self.buffers[i].size, self.buffers[i].func));
                    let (size_j, nbytes) = match size {
                        Some((e, bf)) => {
                            let g = &self.program.functions[bf];
                            (dim(g, e), aligned(g, e))
                        }
                        None => (Json::Null, Json::Null),
                    };
                    bufs.push(obj(vec![
                        ("name", json::s(wname)),
                        ("offset", offset.json()),
                        ("size", size_j),
                        ("nbytes", nbytes.clone()),
                    ]));
                    offset.add(nbytes);
                }
                let window_size = offset.json();
                self.domains.push(obj(vec![
                    ("name", json::s(name)),
                    ("function", json::s(&f.name)),
                    (
                        "devices",
                        if devices.is_empty() {
                            json::s("all")
                        } else {
                            Json::Array(devices.iter().map(|d| json::int(*d)).collect())
                        },
                    ),
                    ("window_size", window_size),
                    ("buffers", Json::Array(bufs)),
                ]));
            }
            for b in s.blocks() {
                self.collect_domains(fi, f, &b.stmts);
            }
        }
        let _ = fi;
    }

    fn walk(&mut self, fi: usize, f: &Function, stmts: &[Stmt], loops: &mut Vec<Loop>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Assign { targets, value } => {
                    self.track(fi, f, targets, value);
                    if let Some(c) = value.as_call() {
                        let task = c.is_submit().then(|| targets.last().copied()).flatten();
                        self.call(fi, f, c, task, loops);
                    }
                }
                StmtKind::Eval(e) => {
                    if let Some(c) = e.as_call() {
                        self.call(fi, f, c, None, loops);
                    }
                }
                StmtKind::Scope { kind: ScopeKind::Manual, body, .. } => {
                    self.manual += 1;
                    self.walk(fi, f, &body.stmts, loops);
                    self.manual -= 1;
                }
                StmtKind::For { var, start, stop, step, body, .. } => {
                    loops.push(Loop {
                        var: *var,
                        start: start.clone(),
                        stop: stop.clone(),
                        step: step.clone(),
                    });
                    self.walk(fi, f, &body.stmts, loops);
                    loops.pop();
                }
                _ => {
                    for b in s.blocks() {
                        self.walk(fi, f, &b.stmts, loops);
                    }
                }
            }
        }
    }

    /// Remembers which window buffer a value views (through `pld.tensor.window`, aliases,
    /// writing ops returning the window they wrote, and `get_comm_ctx`).
    fn track(&mut self, fi: usize, f: &Function, targets: &[ValueId], value: &Expr) {
        let Some(&t) = targets.first() else { return };
        if value.as_call().is_some_and(|c| c.callee.name() == vocab::WORLD_SIZE) {
            self.world_vars.insert((fi, t));
        }
        if let Type::DistTensor(d) = f.values.ty(t) {
            if let Some(w) = &d.window {
                self.ctx_buffer.insert((fi, t), w.clone());
                return;
            }
        }
        let src = match &value.kind {
            ExprKind::Var(v) => Some(*v),
            ExprKind::Call(c) if c.callee.name() == vocab::GET_COMM_CTX => {
                c.args.first().and_then(Expr::as_var)
            }
            ExprKind::Call(c) if c.callee.name() == vocab::WINDOW => {
                if let Some(buf) = c.args.first().and_then(Expr::as_var) {
                    if let Some(b) = self.alloc_name(f, buf) {
                        self.ctx_buffer.insert((fi, t), b);
                    }
                }
                None
            }
            // A writing op's result is the window it wrote (per the registry's effects).
            ExprKind::Call(c) => {
                c.written_result_operand(&f.values).and_then(|i| c.args.get(i)).and_then(Expr::as_var)
            }
            _ => None,
        };
        if let Some(v) = src {
            if let Some(b) = self.ctx_buffer.get(&(fi, v)).cloned() {
                self.ctx_buffer.insert((fi, t), b);
            }
        }
    }

    /// The buffer name of an allocation token value.
    fn alloc_name(&self, f: &Function, v: ValueId) -> Option<String> {
        let name = f.values.name(v);
        self.buffers
            .iter()
            .find(|b| b.name == name)
            .map(|b| b.name.clone())
            .or_else(|| Some(name.to_string()))
    }

    fn arg(&self, fi: usize, f: &Function, e: &Expr) -> Json {
        let ty = e.ty(&f.values);
        let buf = e.as_var().and_then(|v| self.ctx_buffer.get(&(fi, v)).cloned()).or_else(|| match &ty {
            Type::DistTensor(d) => d.window.clone(),
            _ => None,
        });
        let domain = buf.as_ref().and_then(|b| self.buffer_domain.get(b)).map_or(Json::Null, json::s);
        match &ty {
            Type::DistTensor(d) => obj(vec![
                ("kind", json::s("window")),
                ("expr", json::s(text(f, e))),
                ("buffer", buf.map_or(Json::Null, json::s)),
                ("domain", domain),
                ("dtype", dtype_name(d.tensor.dtype)),
                ("shape", Json::Array(d.tensor.shape.iter().map(|x| dim(f, x)).collect())),
            ]),
            Type::Tensor(t) => obj(vec![
                ("kind", json::s("tensor")),
                ("expr", json::s(text(f, e))),
                ("dtype", dtype_name(t.dtype)),
                ("shape", Json::Array(t.shape.iter().map(|x| dim(f, x)).collect())),
            ]),
            Type::CommCtx => obj(vec![
                ("kind", json::s("comm_ctx")),
                ("expr", json::s(text(f, e))),
                ("buffer", buf.map_or(Json::Null, json::s)),
                ("domain", domain),
            ]),
            Type::Scalar(d) => obj(vec![
                ("kind", json::s("scalar")),
                ("expr", json::s(text(f, e))),
                ("dtype", dtype_name(*d)),
            ]),
            other => obj(vec![("kind", json::s(other.kind_name())), ("expr", json::s(text(f, e)))]),
        }
    }

    /// The concrete ranks a dispatch runs on, when the device and loop bounds are static.
    fn ranks(&self, fi: usize, device: &Expr, loops: &[Loop]) -> Json {
        let mut out = Vec::new();
        let mut env = HashMap::new();
        if !enumerate(device, loops, 0, &mut env, &mut out) || out.len() > 4096 {
            // `for r in range(world_size())` dispatching on `device=r`: every rank.
            let all = loops.iter().any(|l| {
                device.as_var() == Some(l.var)
                    && l.start.as_int() == Some(0)
                    && l.step.as_int() == Some(1)
                    && (l.stop.as_call().is_some_and(|c| c.callee.name() == vocab::WORLD_SIZE)
                        || l.stop.as_var().is_some_and(|v| self.world_vars.contains(&(fi, v))))
            });
            return if all { json::s("all") } else { Json::Null };
        }
        Json::Array(out.into_iter().map(json::int).collect())
    }

    /// Records one dispatch. A task submit also records its task id (`task`, the value the
    /// id is bound to, or null), its `deps` (dependency expressions) and whether it sits in a
    /// manual scope (`manual`: only the listed edges order it).
    fn call(&mut self, fi: usize, f: &Function, c: &Call, task: Option<ValueId>, loops: &[Loop]) {
        let loops_j = Json::Array(
            loops
                .iter()
                .map(|l| {
                    obj(vec![
                        ("var", json::s(f.values.name(l.var))),
                        ("start", dim(f, &l.start)),
                        ("stop", dim(f, &l.stop)),
                        ("step", dim(f, &l.step)),
                    ])
                })
                .collect(),
        );
        match &c.callee {
            Callee::Func(name) => {
                let level = match self.program.function(name).map(|g| g.kind) {
                    Some(FunctionKind::ChipOrch) => "chip",
                    Some(k) if crate::is_kernel(k) => "core",
                    Some(FunctionKind::Host) => "host",
                    _ => "function",
                };
                let device = c.device.as_ref();
                for (i, a) in c.args.iter().enumerate() {
                    if let Some(b) = a.as_var().and_then(|v| self.ctx_buffer.get(&(fi, v)).cloned()) {
                        self.param_buffer.entry((name.clone(), i)).or_insert(b);
                    }
                }
                let mut fields = vec![
                    ("caller", json::s(&f.name)),
                    ("callee", json::s(name)),
                    ("level", json::s(level)),
                    ("device", device.map_or(Json::Null, |d| json::s(text(f, d)))),
                    ("loops", loops_j),
                    ("ranks", device.map_or(Json::Null, |d| self.ranks(fi, d, loops))),
                    ("args", Json::Array(c.args.iter().map(|a| self.arg(fi, f, a)).collect())),
                ];
                if let Some(deps) = &c.deps {
                    fields.push(("task", task.map_or(Json::Null, |t| json::s(f.values.name(t)))));
                    fields.push(("deps", Json::Array(deps.iter().map(|d| json::s(text(f, d))).collect())));
                }
                if self.manual > 0 {
                    fields.push(("manual", Json::Bool(true)));
                }
                self.dispatches.push(obj(fields));
            }
            Callee::Op(def) if def.builtin_variant.is_some() => {
                let spec = builtin_spec(c, self.opts);
                let variant = crate::builtin::variant_name(self.program, self.opts, f, c);
                let device = c.device.as_ref();
                let mut args: Vec<Json> = c.args.iter().map(|a| self.arg(fi, f, a)).collect();
                // The rendered kernel takes one CommContext per window argument (same domain).
                let ctxs: Vec<Json> = args
                    .iter()
                    .filter_map(|a| match a {
                        Json::Object(fs) if fs.get("kind") == Some(&json::s("window")) => {
                            let domain = fs.get("domain").cloned().unwrap_or(Json::Null);
                            let buffer = fs.get("buffer").cloned().unwrap_or(Json::Null);
                            Some(obj(vec![
                                ("kind", json::s("comm_ctx")),
                                ("buffer", buffer),
                                ("domain", domain),
                            ]))
                        }
                        _ => None,
                    })
                    .collect();
                args.extend(ctxs);
                self.dispatches.push(obj(vec![
                    ("caller", json::s(&f.name)),
                    ("callee", json::s(&variant)),
                    ("level", json::s("builtin")),
                    ("device", device.map_or(Json::Null, |d| json::s(text(f, d)))),
                    ("loops", loops_j),
                    ("ranks", device.map_or(Json::Null, |d| self.ranks(fi, d, loops))),
                    ("args", Json::Array(args)),
                ]));
                let vars = spec.1;
                let entry: String =
                    variant.chars().map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' }).collect();
                // `builtin.tensor.allreduce_ring` → the `allreduce` template package.
                let template = def.name.rsplit('.').next().unwrap_or(def.name);
                let template = template.trim_end_matches("_ring");
                self.builtins.entry(variant.clone()).or_insert_with(|| {
                    obj(vec![
                        ("op", json::s(def.name)),
                        ("variant", json::s(&variant)),
                        ("entry", json::s(&entry)),
                        ("kernel_name", json::s(format!("{entry}_kernel"))),
                        ("module", json::s(format!("{entry}_kernel.pto"))),
                        ("core_num", json::int(c.attr_int("core_num").unwrap_or(1))),
                        (
                            "template_package",
                            json::s(format!(":pypto.runtime.builtins.collectives.{template}")),
                        ),
                        ("template_vars", Json::Object(vars.into_iter().collect())),
                    ])
                });
            }
            Callee::Op(_) => {}
        }
    }
}

fn enumerate(
    device: &Expr,
    loops: &[Loop],
    k: usize,
    env: &mut HashMap<ValueId, i64>,
    out: &mut Vec<i64>,
) -> bool {
    if k == loops.len() {
        return match eval(device, env) {
            Some(v) => {
                out.push(v);
                true
            }
            None => false,
        };
    }
    let l = &loops[k];
    let (Some(a), Some(b), Some(s)) = (eval(&l.start, env), eval(&l.stop, env), eval(&l.step, env)) else {
        // A loop the device does not depend on may have dynamic bounds only if unused.
        return !device.uses().contains(&l.var) && enumerate(device, loops, k + 1, env, out);
    };
    if s <= 0 {
        return false;
    }
    let mut i = a;
    while i < b {
        env.insert(l.var, i);
        if !enumerate(device, loops, k + 1, env, out) || out.len() > 4096 {
            return false;
        }
        let Some(next) = i.checked_add(s) else { break };
        i = next;
    }
    env.remove(&l.var);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_sums_fold_static_sizes_and_count_repeated_symbolic_ones() {
        let mut sum = SizeSum::default();
        assert_eq!(sum.json(), json::int(0));
        sum.add(json::int(256));
        sum.add(json::int(32));
        assert_eq!(sum.json(), json::int(288));
        for t in ["(a)", "(b)", "(a)", "(a)"] {
            sum.add(json::s(t));
        }
        sum.add(json::int(64));
        assert_eq!(sum.json(), json::s("352 + 3 * (a) + (b)"));
    }
}
