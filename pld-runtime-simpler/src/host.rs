//! `orchestration/host_orch.py`: the host orchestrator as Python against Simpler's
//! orchestrator API (`runtime_artifacts.md` §7).
//!
//! Guarantees:
//! - The imports are the reference's four lines (plus `scalar_to_uint64`); `_alloc_intermediates(tensors,
//!   world_size=1)` gives every comm domain `comm_dN` its own list of `max(world_size, 1)`
//!   separately allocated, shared int32 ordering tokens `tensors["__comm_dN_ord"]`.
//! - The entry has the runner's keyword signature, is the only function tagged
//!   `_pypto_distributed_entry = True` (the file's last line), binds every dynamic dim from the
//!   first host parameter declaring it, and opens each comm domain as one
//!   `(_domain_provider or orch.allocate_domain)(…)` block whose buffers are
//!   `CommBufferSpec(name, "opaque", count=<bytes>, nbytes=<bytes rounded up to 32>)` in the
//!   domain's declaration order and whose `window_size` is the sum of the `nbytes`.
//! - A chip dispatch adds the callee's tensors in parameter order (a host slice as
//!   `make_tensor_arg` of a torch view, a window as the per-rank buffer view from offset 0),
//!   tagged by the callee parameter's direction, then one INOUT ordering token per domain the
//!   call touches (first-reference order), then the scalars (user scalars through
//!   `scalar_to_uint64`, each CommContext as that rank's `device_ctx`), keeps the `TaskArgs`
//!   and submits to the `device=` worker; a builtin dispatch follows §6.2; a host callback
//!   adds its tensors (tagged by direction) and scalars and is `orch.submit_sub`-mitted to
//!   `sub_ids["<name>"]`.

use crate::host_templates::{HostBuiltinTaskPy, HostChipTaskPy, HostDomainPy, HostOrchPy, HostSubTaskPy};
use crate::indent::{EmptyLines, Indented};
use crate::results::HostResult;
use crate::variant::Variant;
use crate::{ident, py_expr, simpler_dtype, unsupported, RuntimeOptions};
use pld_ir::{
    Attr, Call, Callee, Diagnostic, Direction, Expr, ExprKind, Function, FunctionKind, Program, ScopeKind,
    Stmt, StmtKind, Type, ValueId,
};
use std::collections::HashMap;
use std::fmt::Write as _;

use pld_ir::vocab::{
    ALLOC_WINDOW_BUFFER as ALLOC_WINDOW, GET_COMM_CTX as GET_CTX, TENSOR_CREATE as CREATE,
    TENSOR_RESHAPE as RESHAPE, TENSOR_SLICE as SLICE, WINDOW,
};

/// What a host value stands for.
#[derive(Clone, Debug)]
enum HostVal {
    /// A window view: its domain, buffer, per-rank shape and dtype.
    Window { domain: String, buffer: String, shape: Vec<Expr>, dtype: pld_ir::DataType },
    /// The CommContext of a domain.
    Ctx { domain: String },
    /// A host tensor expression (Python text).
    Tensor(String),
}

struct Writer<'a> {
    program: &'a Program,
    f: &'a Function,
    variants: &'a [Variant],
    target: pld_ir::Target,
    /// The number of devices the directory records.
    world: usize,
    /// The orchestrator body written so far.
    out: Indented,
    calls: usize,
    vals: HashMap<ValueId, HostVal>,
    /// Window buffer name → its comm domain.
    buffer_domain: HashMap<String, String>,
}

/// Renders `host_orch.py`.
pub fn render(
    program: &Program,
    host: &Function,
    results: &[HostResult],
    variants: &[Variant],
    opts: &RuntimeOptions,
) -> Result<String, Diagnostic> {
    let mut domains = Vec::new();
    collect_domains(&host.body.stmts, &mut domains);
    let creates = hoisted(host)?;
    let mut inter = String::new();
    if domains.is_empty() && creates.is_empty() {
        inter.push_str("pass\n");
    }
    if !creates.is_empty() {
        for l in bind_dims(host) {
            let _ = writeln!(inter, "{l}");
        }
    }
    for (_, name, line) in &creates {
        // A returned tensor is the caller's Out parameter: never replace it.
        if results.iter().any(|r| r.created.is_some() && r.name == *name) {
            let _ = writeln!(inter, "if {name:?} not in tensors:\n    tensors[{name:?}] = {line}");
        } else {
            let _ = writeln!(inter, "tensors[{name:?}] = {line}");
        }
    }
    for d in &domains {
        let _ = writeln!(
            inter,
            "tensors[\"__{d}_ord\"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() for _ in range(max(world_size, 1))]"
        );
    }
    let name = &ident(&host.name);
    let mut w = Writer {
        program,
        f: host,
        variants,
        target: opts.target,
        world: opts.device_ids.len(),
        out: Indented::new(EmptyLines::Indented),
        calls: 0,
        vals: HashMap::new(),
        buffer_domain: HashMap::new(),
    };
    // Parameters: tensors by name; scalars re-bound; dynamic dims from the first declaring tensor.
    for p in &host.params {
        let pname = host.values.name(p.value).to_string();
        match host.values.ty(p.value) {
            Type::Tensor(_) => {
                w.vals.insert(p.value, HostVal::Tensor(format!("tensors[{pname:?}]")));
            }
            Type::Scalar(_) => w.out.line(&format!("{} = tensors[{pname:?}]", ident(&pname))),
            other => {
                return Err(unsupported(
                    host.span,
                    format_args!("a host parameter of type {}", other.kind_name()),
                ))
            }
        }
    }
    for l in bind_dims(host) {
        w.out.line(&l);
    }
    for (v, name, _) in &creates {
        w.vals.insert(*v, HostVal::Tensor(format!("tensors[{name:?}]")));
    }
    w.block(&host.body.stmts)?;
    if w.out.as_str().trim().is_empty() {
        w.out.line("pass");
    }
    Ok(HostOrchPy { intermediates: &inter, entry: name, body: w.out.as_str() }.render())
}

/// The lines binding every dynamic dim: from the first host tensor parameter declaring it,
/// else `world_size` (pld's rank-count convention).
fn bind_dims(host: &Function) -> Vec<String> {
    let mut syms: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    for p in &host.params {
        let pname = host.values.name(p.value);
        if let Type::Tensor(t) = host.values.ty(p.value) {
            for (i, d) in t.shape.iter().enumerate() {
                if let ExprKind::Sym(x) = &d.kind {
                    if !syms.contains(x) {
                        syms.push(x.clone());
                        lines.push(format!("{} = tensors[{pname:?}].shape[{i}]", ident(x)));
                    }
                }
            }
        }
    }
    let mut rest = Vec::new();
    host.body.walk_exprs(&mut |e| {
        if let ExprKind::Sym(x) = &e.kind {
            if !syms.contains(x) && !rest.contains(x) {
                rest.push(x.clone());
            }
        }
    });
    for x in rest {
        lines.push(format!("{} = world_size", ident(&x)));
    }
    lines
}

/// Host-level `tensor.create` results, hoisted: `(value, name, torch allocation)` in body order.
fn hoisted(host: &Function) -> Result<Vec<(ValueId, String, String)>, Diagnostic> {
    let mut out = Vec::new();
    let mut err = None;
    walk_stmts(&host.body.stmts, &mut |s| {
        let StmtKind::Assign { targets, value } = &s.kind else { return };
        if value.as_call().is_none_or(|c| c.callee.name() != CREATE) {
            return;
        }
        let r = (|| {
            let [t] = targets.as_slice() else {
                return Err(unsupported(s.span, "a multi-target tensor.create"));
            };
            let Some(tt) = host.values.ty(*t).as_tensor() else {
                return Err(unsupported(s.span, "a host tensor.create without a tensor type"));
            };
            let dims: Vec<String> = tt
                .shape
                .iter()
                .map(|d| py_expr(d, &|v| ident(host.values.name(v))))
                .collect::<Result<_, _>>()?;
            let dt = crate::torch_dtype(tt.dtype).ok_or_else(|| {
                unsupported(s.span, format_args!("a host tensor of dtype {}", tt.dtype.dsl_name()))
            })?;
            Ok((
                *t,
                host.values.name(*t).to_string(),
                format!("torch.zeros(({},), dtype={dt}).share_memory_()", dims.join(", ")),
            ))
        })();
        match r {
            Ok(x) => out.push(x),
            Err(d) => {
                err.get_or_insert(d);
            }
        }
    });
    match err {
        Some(d) => Err(d),
        None => Ok(out),
    }
}

/// The `TensorArgType` of a callee parameter's direction.
fn tensor_tag(d: Direction) -> &'static str {
    match d {
        Direction::In => "INPUT",
        Direction::Out => "OUTPUT_EXISTING",
        Direction::InOut => "INOUT",
    }
}

fn walk_stmts(stmts: &[Stmt], f: &mut dyn FnMut(&Stmt)) {
    for s in stmts {
        f(s);
        for b in s.blocks() {
            walk_stmts(&b.stmts, f);
        }
    }
}

fn collect_domains(stmts: &[Stmt], out: &mut Vec<String>) {
    for s in stmts {
        if let StmtKind::Scope { kind: ScopeKind::CommDomain { name, .. }, .. } = &s.kind {
            out.push(name.clone());
        }
        for b in s.blocks() {
            collect_domains(&b.stmts, out);
        }
    }
}

/// Every variable assigned `pld.world_size()` in a block (recursively).
fn collect_world_size_vars(stmts: &[Stmt], out: &mut std::collections::HashSet<ValueId>) {
    for s in stmts {
        if let StmtKind::Assign { targets, value } = &s.kind {
            if value.as_call().is_some_and(|c| c.callee.name() == pld_ir::vocab::WORLD_SIZE) {
                out.extend(targets.iter().copied());
            }
        }
        for b in s.blocks() {
            collect_world_size_vars(&b.stmts, out);
        }
    }
}

/// Every `alloc_window_buffer` of a block (recursively): buffer name → size expression.
fn collect_allocs<'e>(f: &Function, stmts: &'e [Stmt], out: &mut HashMap<String, &'e Expr>) {
    for s in stmts {
        if let StmtKind::Assign { targets, value } = &s.kind {
            if let Some(c) = value.as_call().filter(|c| c.callee.name() == ALLOC_WINDOW) {
                let name = match c.attr("name") {
                    Some(Attr::Str(n)) if !n.is_empty() => n.clone(),
                    _ => targets.first().map_or_else(String::new, |t| f.values.name(*t).to_string()),
                };
                if let Some(size) = c.args.first() {
                    out.insert(name, size);
                }
            }
        }
        for b in s.blocks() {
            collect_allocs(f, &b.stmts, out);
        }
    }
}

impl Writer<'_> {
    fn expr(&self, e: &Expr) -> Result<String, Diagnostic> {
        py_expr(e, &|v| ident(self.f.values.name(v)))
    }

    /// A window size for the domain header, which is evaluated before the domain's body: a
    /// host variable holding `pld.world_size()` (the synthesized signals bind one inside the
    /// scope) is the orchestrator's own `world_size`.
    fn size_expr(&self, e: &Expr) -> Result<String, Diagnostic> {
        let mut world = std::collections::HashSet::new();
        collect_world_size_vars(&self.f.body.stmts, &mut world);
        py_expr(e, &|v| {
            if world.contains(&v) {
                "world_size".to_string()
            } else {
                ident(self.f.values.name(v))
            }
        })
    }

    /// `head` (one or more lines), then `stmts` one level deeper (`pass` when they write
    /// nothing).
    fn nested(&mut self, head: &str, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        self.out.lines(head);
        self.out.depth += 1;
        let before = self.out.as_str().len();
        self.block(stmts)?;
        if self.out.as_str().len() == before {
            self.out.line("pass");
        }
        self.out.depth -= 1;
        Ok(())
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        for s in stmts {
            match &s.kind {
                StmtKind::Scope { kind: ScopeKind::CommDomain { name, devices, windows }, body, .. } => {
                    self.domain(name, devices, windows, &body.stmts)?;
                }
                StmtKind::Assign { targets, value } => self.assign(s, targets, value)?,
                StmtKind::Eval(e) => match e.as_call() {
                    Some(c) => self.call(s, c)?,
                    None => return Err(unsupported(s.span, "this statement in a host orchestrator")),
                },
                StmtKind::For { var, start, stop, step, iter_args, body, .. } => {
                    if !iter_args.is_empty() {
                        return Err(unsupported(s.span, "a host loop with iteration values"));
                    }
                    let head = format!(
                        "for {} in range({}, {}, {}):",
                        ident(self.f.values.name(*var)),
                        self.expr(start)?,
                        self.expr(stop)?,
                        self.expr(step)?
                    );
                    self.nested(&head, &body.stmts)?;
                }
                StmtKind::If { cond, then_body, else_body, results } if results.is_empty() => {
                    let head = format!("if {}:", self.expr(cond)?);
                    self.nested(&head, &then_body.stmts)?;
                    if !else_body.stmts.is_empty() {
                        self.nested("else:", &else_body.stmts)?;
                    }
                }
                StmtKind::Return(_) => {}
                StmtKind::Yield(v) if v.is_empty() => {}
                _ => return Err(unsupported(s.span, "this statement in a host orchestrator")),
            }
        }
        Ok(())
    }

    fn domain(
        &mut self,
        name: &str,
        devices: &[i64],
        windows: &[String],
        body: &[Stmt],
    ) -> Result<(), Diagnostic> {
        let mut allocs = HashMap::new();
        collect_allocs(self.f, body, &mut allocs);
        // §10 R15: every worker of a domain is one of the recorded devices.
        if let Some(d) = devices.iter().find(|d| **d < 0 || **d as u64 >= self.world as u64) {
            return Err(Diagnostic::error(
                self.f.span,
                format!(
                    "comm domain '{name}' includes worker {d}, but the directory records {} device(s); raise --ranks or --device-ids",
                    self.world
                ),
            ));
        }
        let workers = if devices.is_empty() {
            "[*range(world_size)]".to_string()
        } else {
            format!("[{}]", devices.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "))
        };
        let mut specs = Vec::new();
        let mut nbytes_terms = Vec::new();
        for wname in windows {
            let Some(size) = allocs.get(wname) else {
                return Err(unsupported(
                    self.f.span,
                    format_args!("window '{wname}' of domain '{name}' without its allocation"),
                ));
            };
            let count = self.size_expr(size)?;
            let nbytes = format!("((({count} + 31) // 32) * 32)");
            specs.push(format!(
                "CommBufferSpec(name={wname:?}, dtype=\"opaque\", count={count}, nbytes={nbytes}),"
            ));
            nbytes_terms.push(format!("({nbytes})"));
            self.buffer_domain.insert(wname.clone(), name.to_string());
        }
        let window_size = if nbytes_terms.is_empty() { "32".to_string() } else { nbytes_terms.join(" + ") };
        let head = HostDomainPy {
            name: &format!("{name:?}"),
            workers: &workers,
            window_size: &window_size,
            buffers: &specs.join("\n"),
            domain: name,
        }
        .render();
        self.nested(&head, body)
    }

    fn assign(&mut self, s: &Stmt, targets: &[ValueId], value: &Expr) -> Result<(), Diagnostic> {
        let [t] = targets else { return Err(unsupported(s.span, "a multi-target host assignment")) };
        if let Some(c) = value.as_call() {
            match c.callee.name() {
                ALLOC_WINDOW | CREATE => return Ok(()),
                WINDOW => {
                    let Type::DistTensor(d) = self.f.values.ty(*t) else {
                        return Err(unsupported(s.span, "a window view without a DistributedTensor type"));
                    };
                    let buffer = d.window.clone().unwrap_or_else(|| {
                        c.args
                            .first()
                            .and_then(Expr::as_var)
                            .map_or_else(String::new, |v| self.f.values.name(v).to_string())
                    });
                    let domain = self.buffer_domain.get(&buffer).cloned().ok_or_else(|| {
                        unsupported(s.span, format_args!("window buffer '{buffer}' outside a comm domain"))
                    })?;
                    self.vals.insert(
                        *t,
                        HostVal::Window {
                            domain,
                            buffer,
                            shape: d.tensor.shape.clone(),
                            dtype: d.tensor.dtype,
                        },
                    );
                    return Ok(());
                }
                GET_CTX => {
                    let src = c.args.first().and_then(Expr::as_var).and_then(|v| self.vals.get(&v).cloned());
                    let Some(HostVal::Window { domain, .. }) = src else {
                        return Err(unsupported(
                            s.span,
                            "get_comm_ctx of something other than a window view",
                        ));
                    };
                    self.vals.insert(*t, HostVal::Ctx { domain });
                    return Ok(());
                }
                _ if matches!(c.callee, Callee::Func(_)) || c.callee.name().starts_with("builtin.") => {
                    self.call(s, c)?;
                    return self.bind_results(s, targets, c);
                }
                _ => {}
            }
        }
        if let Some(src) = value.as_var() {
            if let Some(v) = self.vals.get(&src).cloned() {
                self.vals.insert(*t, v);
                return Ok(());
            }
        }
        match self.f.values.ty(*t) {
            Type::Scalar(_) => {
                let l = format!("{} = {}", ident(self.f.values.name(*t)), self.expr(value)?);
                self.out.line(&l);
                Ok(())
            }
            Type::Tensor(_) => {
                let e = self.tensor_expr(value)?;
                self.vals.insert(*t, HostVal::Tensor(e));
                Ok(())
            }
            other => Err(unsupported(s.span, format_args!("a host {} value", other.kind_name()))),
        }
    }

    /// The tensor results of a call are the arguments they alias (`pld_ir::results`: a
    /// dispatch's, the chip's Out/InOut arguments; a collective's, the window it wrote).
    fn bind_results(&mut self, s: &Stmt, targets: &[ValueId], c: &Call) -> Result<(), Diagnostic> {
        for (k, t) in targets.iter().enumerate() {
            if self.f.values.ty(*t).as_tensor_like().is_none() {
                continue;
            }
            let Some(a) = self.program.call_result_arg(c, &self.f.values, k).and_then(|i| c.args.get(i))
            else {
                return Err(unsupported(
                    s.span,
                    format_args!(
                        "using a result of '{}' that is not one of its Out/InOut arguments",
                        c.callee.name()
                    ),
                ));
            };
            let v = match a.as_var().and_then(|v| self.vals.get(&v).cloned()) {
                Some(v) => v,
                None => HostVal::Tensor(self.tensor_expr(a)?),
            };
            self.vals.insert(*t, v);
        }
        Ok(())
    }

    /// Python text of a host tensor expression (parameters, slices, reshapes). A reshape is
    /// `.view(…)`, which raises instead of copying, so an output is never written into a copy.
    fn tensor_expr(&self, e: &Expr) -> Result<String, Diagnostic> {
        if let Some(v) = e.as_var() {
            return match self.vals.get(&v) {
                Some(HostVal::Tensor(t)) => Ok(t.clone()),
                _ => Err(unsupported(e.span, "this host tensor")),
            };
        }
        let Some(c) = e.as_call() else { return Err(unsupported(e.span, "this host tensor expression")) };
        match c.callee.name() {
            SLICE => {
                let base = self.tensor_expr(&c.args[0])?;
                let (Some(ExprKind::Tuple(shape)), Some(ExprKind::Tuple(offs))) =
                    (c.args.get(1).map(|a| &a.kind), c.args.get(2).map(|a| &a.kind))
                else {
                    return Err(unsupported(e.span, "a host slice without static shape/offset lists"));
                };
                let mut idx = Vec::new();
                for (sz, off) in shape.iter().zip(offs) {
                    let o = self.expr(off)?;
                    let n = self.expr(sz)?;
                    idx.push(if off.as_int() == Some(0) {
                        format!("0:{n}")
                    } else {
                        format!("{o}:{o} + {n}")
                    });
                }
                Ok(format!("{base}[{}]", idx.join(", ")))
            }
            RESHAPE => {
                let base = self.tensor_expr(&c.args[0])?;
                let Some(ExprKind::Tuple(shape)) = c.args.get(1).map(|a| &a.kind) else {
                    return Err(unsupported(e.span, "a host reshape without a shape list"));
                };
                let dims: Vec<String> = shape.iter().map(|d| self.expr(d)).collect::<Result<_, _>>()?;
                Ok(format!("{base}.view(({},))", dims.join(", ")))
            }
            other => Err(unsupported(e.span, format_args!("`{other}` on a host tensor"))),
        }
    }

    fn window_arg(
        &self,
        domain: &str,
        buffer: &str,
        shape: &[Expr],
        dtype: pld_ir::DataType,
        r: &str,
        at: &Expr,
    ) -> Result<String, Diagnostic> {
        let dims: Vec<String> = shape.iter().map(|d| self.expr(d)).collect::<Result<_, _>>()?;
        let dt = simpler_dtype(dtype)
            .ok_or_else(|| unsupported(at.span, format_args!("a window of dtype {}", dtype.dsl_name())))?;
        Ok(format!(
            "__{domain}[{r}].buffers[{buffer:?}].tensor(shapes=({},), dtype=DataType.{dt})",
            dims.join(", ")
        ))
    }

    /// One call of a host orchestrator; its diagnostics name the call as the user wrote it.
    fn call(&mut self, s: &Stmt, c: &Call) -> Result<(), Diagnostic> {
        self.dispatch_call(s, c).map_err(|d| d.about_call(c))
    }

    fn dispatch_call(&mut self, s: &Stmt, c: &Call) -> Result<(), Diagnostic> {
        match &c.callee {
            Callee::Func(name) => match self.program.function(name).map(|g| g.kind) {
                Some(FunctionKind::ChipOrch) => self.chip_dispatch(s, name, c),
                _ if self.program.function(name).is_some_and(crate::subworker::is_callback) => {
                    self.sub_dispatch(name, c)
                }
                _ => Err(unsupported(
                    s.span,
                    format_args!(
                        "calling '{name}' from a host orchestrator (only chip orchestrators are dispatched)"
                    ),
                )),
            },
            Callee::Op(def) if def.name.starts_with("builtin.") => self.builtin_dispatch(s, c),
            Callee::Op(def) => {
                Err(unsupported(s.span, format_args!("`{}` in a host orchestrator", def.name)))
            }
        }
    }

    /// The `device=` worker index; a constant one must be a recorded device (§10 R16).
    fn device(&self, c: &Call) -> Result<Option<String>, Diagnostic> {
        if let Some(d) = c.device.as_ref() {
            if let Some(v) = d.as_int().filter(|v| *v < 0 || *v as u64 >= self.world as u64) {
                return Err(Diagnostic::error(
                    d.span,
                    format!(
                        "dispatch to device {v}, but the directory records {} device(s); raise --ranks or --device-ids",
                        self.world
                    ),
                ));
            }
        }
        c.device.as_ref().map(|d| self.expr(d)).transpose()
    }

    /// A host callback: its tensors (tagged by direction) then its scalars, submitted to a
    /// sub worker; no ordering token (a callback touches no window).
    fn sub_dispatch(&mut self, name: &str, c: &Call) -> Result<(), Diagnostic> {
        let callee = self.program.function(name).expect("checked by the caller");
        let ta = format!("_ta_{}", self.calls);
        self.calls += 1;
        let mut tensors = Vec::new();
        let mut scalars = Vec::new();
        for (p, a) in callee.params.iter().zip(&c.args) {
            match callee.values.ty(p.value) {
                Type::Tensor(_) => {
                    let t = self.tensor_expr(a)?;
                    let tag = tensor_tag(p.dir);
                    tensors.push(format!(
                        "{ta}.add_tensor(make_tensor_arg(orch._worker, {t}), TensorArgType.{tag})"
                    ));
                }
                Type::Scalar(_) => scalars.push(format!("scalar_to_uint64({})", self.expr(a)?)),
                other => {
                    return Err(unsupported(
                        a.span,
                        format_args!("passing a {} to the host callback '{name}'", other.kind_name()),
                    ))
                }
            }
        }
        let scalars: Vec<String> = scalars.iter().map(|sc| format!("{ta}.add_scalar({sc})")).collect();
        let task = HostSubTaskPy {
            args: &ta,
            tensors: &tensors.join("\n"),
            scalars: &scalars.join("\n"),
            callback: &format!("{name:?}"),
        };
        self.out.lines(&task.render());
        Ok(())
    }

    fn chip_dispatch(&mut self, _s: &Stmt, name: &str, c: &Call) -> Result<(), Diagnostic> {
        let callee = self.program.function(name).expect("checked by the caller");
        let n = self.calls;
        self.calls += 1;
        let ta = format!("_ta_{n}");
        let dev = self.device(c)?;
        let r = dev.clone().unwrap_or_else(|| "0".into());
        let mut tensors = Vec::new();
        let mut domains: Vec<String> = Vec::new();
        let mut scalars = Vec::new();
        for (p, a) in callee.params.iter().zip(&c.args) {
            let tag = tensor_tag(p.dir);
            match callee.values.ty(p.value) {
                Type::Tensor(_) | Type::DistTensor(_) => {
                    let v = a.as_var().and_then(|v| self.vals.get(&v).cloned());
                    let arg = match v {
                        Some(HostVal::Window { domain, buffer, shape, dtype }) => {
                            if !domains.contains(&domain) {
                                domains.push(domain.clone());
                            }
                            self.window_arg(&domain, &buffer, &shape, dtype, &r, a)?
                        }
                        _ => format!("make_tensor_arg(orch._worker, {})", self.tensor_expr(a)?),
                    };
                    tensors.push(format!("{ta}.add_tensor({arg}, TensorArgType.{tag})"));
                }
                Type::CommCtx => {
                    let Some(HostVal::Ctx { domain }) = a.as_var().and_then(|v| self.vals.get(&v).cloned())
                    else {
                        return Err(unsupported(a.span, "a CommContext argument not from get_comm_ctx"));
                    };
                    if !domains.contains(&domain) {
                        domains.push(domain.clone());
                    }
                    scalars.push(format!("__{domain}[{r}].device_ctx"));
                }
                Type::Scalar(_) => scalars.push(format!("scalar_to_uint64({})", self.expr(a)?)),
                other => {
                    return Err(unsupported(
                        a.span,
                        format_args!("passing a {} to a chip", other.kind_name()),
                    ))
                }
            }
        }
        let tokens: Vec<String> = domains
            .iter()
            .map(|d| format!("{ta}.add_tensor(make_tensor_arg(orch._worker, tensors[\"__{d}_ord\"][{r}]), TensorArgType.INOUT)"))
            .collect();
        let scalars: Vec<String> = scalars.iter().map(|sc| format!("{ta}.add_scalar({sc})")).collect();
        let worker = if domains.is_empty() { dev.unwrap_or_else(|| "None".into()) } else { r };
        let task = HostChipTaskPy {
            args: &ta,
            tensors: &tensors.join("\n"),
            tokens: &tokens.join("\n"),
            scalars: &scalars.join("\n"),
            chip: &format!("{name:?}"),
            worker: &worker,
        };
        self.out.lines(&task.render());
        Ok(())
    }

    fn builtin_dispatch(&mut self, s: &Stmt, c: &Call) -> Result<(), Diagnostic> {
        let opts = pld_codegen_pto::CodegenOptions { target: self.program_target() };
        let variant = pld_codegen_pto::builtin::variant_name(self.program, &opts, self.f, c);
        let Some(v) = self.variants.iter().find(|v| v.variant == variant) else {
            return Err(unsupported(
                s.span,
                format_args!("builtin variant '{variant}' without a rendered kernel"),
            ));
        };
        let dirs = v.windows()?;
        let Some(r) = self.device(c)? else {
            return Err(unsupported(s.span, "a host builtin collective without `device=`"));
        };
        let n = self.calls;
        self.calls += 1;
        let ta = format!("_ta_{n}");
        let mut windows = Vec::new();
        let mut domain: Option<String> = None;
        let mut seen: Vec<String> = Vec::new();
        for (i, a) in c.args.iter().enumerate() {
            let Some(HostVal::Window { domain: d, buffer, shape, dtype }) =
                a.as_var().and_then(|v| self.vals.get(&v).cloned())
            else {
                return Err(unsupported(a.span, "a builtin collective argument that is not a window view"));
            };
            if domain.as_ref().is_some_and(|x| *x != d) {
                return Err(Diagnostic::error(
                    a.span,
                    format!(
                        "builtin {variant}: window arguments of two comm domains ('{}' and '{d}')",
                        domain.unwrap_or_default()
                    ),
                ));
            }
            domain = Some(d.clone());
            // §10 R18: the window arguments of one builtin are pairwise distinct buffers.
            if seen.contains(&buffer) {
                return Err(Diagnostic::error(
                    a.span,
                    format!("builtin {variant}: window buffer '{buffer}' is passed twice; each argument needs its own buffer"),
                ));
            }
            seen.push(buffer.clone());
            let tag = if dirs.get(i) == Some(&Direction::In) { "INPUT" } else { "INOUT" };
            let arg = self.window_arg(&d, &buffer, &shape, dtype, &r, a)?;
            windows.push(format!("{ta}.add_tensor({arg}, TensorArgType.{tag})"));
        }
        let Some(d) = domain else {
            return Err(unsupported(s.span, "a builtin collective without window arguments"));
        };
        let core_num =
            if v.takes_core_num() { format!("{ta}.add_scalar({})", v.core_num) } else { String::new() };
        let task = HostBuiltinTaskPy {
            args: &ta,
            windows: &windows.join("\n"),
            domain: &d,
            rank: &r,
            core_num: &core_num,
            variant: &format!("{variant:?}"),
        };
        self.out.lines(&task.render());
        Ok(())
    }

    fn program_target(&self) -> pld_ir::Target {
        self.target
    }
}
