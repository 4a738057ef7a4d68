//! Chip programs (`next_levels/<chip>/`) and their orchestration C++
//! (`orchestration/<chip>.cpp`, `runtime_artifacts.md` §4).
//!
//! Guarantees:
//! - One [`ChipProgram`] per chip orchestrator, with its kernels' func ids dense from 0 in the
//!   order the body first calls them (an `_aic`/`_aiv` pair takes the AIC id, then the AIV id).
//! - The C++ includes only `pto_orchestration_api.h` (and C headers); both entry points sit in
//!   `extern "C"` with default visibility; `expected_arg_count` = tensor + scalar parameters
//!   (CommContexts included).
//! - Tensor `i` is the i-th tensor parameter, scalar `j` the j-th scalar/CommContext
//!   parameter; every task adds the kernel's tensors in kernel-parameter order with the
//!   kernel parameter's direction, then its scalars in order (a CommContext as the raw 64-bit
//!   value); AIV, AIC, dual-AIV and mixed kernels use their submit form; `core_num > 1` sets the
//!   block count and `sync_start` the synchronous start; `deps=[…]` become
//!   `set_dependencies`; a `pl.manual_scope()` is a MANUAL scope.

use crate::indent::{EmptyLines, Indented};
use crate::{
    c_expr, c_type, fn_attr_bool, fn_attr_int, ident, param_kinds, read_dynamic_dim, unsupported, ParamKind,
    RuntimeOptions,
};
use pld_ir::{
    Call, Callee, Diagnostic, Direction, Expr, ExprKind, Function, FunctionKind, Program, ScopeKind, Stmt,
    StmtKind, Type, ValueId,
};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The core a kernel runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Core {
    /// A vector kernel (`aiv`).
    Aiv,
    /// A cube kernel (`aic`).
    Aic,
}

impl Core {
    /// `aiv` / `aic`.
    pub fn dir(self) -> &'static str {
        match self {
            Core::Aiv => "aiv",
            Core::Aic => "aic",
        }
    }
}

/// One kernel of a chip program.
#[derive(Clone, Debug)]
pub struct KernelEntry<'p> {
    /// Its `func_id`.
    pub func_id: i64,
    /// The kernel function.
    pub func: &'p Function,
    /// The ptoas unit (module) it belongs to.
    pub unit: String,
    /// Its core.
    pub core: Core,
}

/// One chip orchestrator and its kernels.
#[derive(Clone, Debug)]
pub struct ChipProgram<'p> {
    /// The chip orchestration function.
    pub func: &'p Function,
    /// Its kernels, by func id.
    pub kernels: Vec<KernelEntry<'p>>,
}

impl ChipProgram<'_> {
    /// The distinct ptoas units, in func-id order.
    pub fn units(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for k in &self.kernels {
            if !out.contains(&k.unit) {
                out.push(k.unit.clone());
            }
        }
        out
    }

    fn kernel(&self, name: &str) -> Option<&KernelEntry<'_>> {
        self.kernels.iter().find(|k| k.func.name == name)
    }
}

/// The module (ptoas unit) name of a kernel, as [`pld_codegen_pto::emit_program`] groups them.
pub fn unit_of(program: &Program, name: &str) -> String {
    for (suffix, sibling) in [("_aic", "_aiv"), ("_aiv", "_aic")] {
        if let Some(base) = name.strip_suffix(suffix) {
            if program
                .function(&format!("{base}{sibling}"))
                .is_some_and(|f| pld_codegen_pto::is_kernel(f.kind))
            {
                return base.to_string();
            }
        }
    }
    name.to_string()
}

/// Every chip orchestrator of `program`, in program order.
pub fn chip_programs(program: &Program) -> Vec<ChipProgram<'_>> {
    let mut out = Vec::new();
    for f in program.functions.iter().filter(|f| f.kind == FunctionKind::ChipOrch) {
        let mut kernels: Vec<KernelEntry<'_>> = Vec::new();
        f.body.walk_exprs(&mut |e| {
            let Some(c) = e.as_call() else { return };
            let Callee::Func(name) = &c.callee else { return };
            let Some(k) = program.function(name).filter(|k| pld_codegen_pto::is_kernel(k.kind)) else {
                return;
            };
            if kernels.iter().any(|e| e.func.name == *name) {
                return;
            }
            let core = if k.kind == FunctionKind::Aic { Core::Aic } else { Core::Aiv };
            kernels.push(KernelEntry {
                func_id: kernels.len() as i64,
                func: k,
                unit: unit_of(program, name),
                core,
            });
        });
        out.push(ChipProgram { func: f, kernels });
    }
    out
}

/// The files of a chip program's orchestration: `orchestration/<chip>.cpp`.
pub fn render(
    program: &Program,
    chip: &ChipProgram<'_>,
    opts: &RuntimeOptions,
) -> Result<Vec<(String, String)>, Diagnostic> {
    let f = chip.func;
    let params = param_kinds(f)?;
    let mut w = Writer {
        program,
        chip,
        opts,
        f,
        out: Indented::new(EmptyLines::Bare),
        tasks: 0,
        names: HashMap::new(),
    };
    let mut tensors = String::new();
    let mut scalars = String::new();
    let mut si = 0usize;
    let tensor_params = f
        .params
        .iter()
        .zip(&params)
        .filter_map(|(p, (name, kind))| matches!(kind, ParamKind::Tensor { .. }).then_some((p, name)));
    for (ti, (p, name)) in tensor_params.enumerate() {
        let _ = writeln!(tensors, "const ChipTensor& ext_{name} = orch_args.tensor({ti}).ref();");
        w.names.insert(p.value, format!("ext_{name}"));
    }
    for (name, kind) in &params {
        match kind {
            ParamKind::Tensor { .. } => {}
            ParamKind::Scalar(d) => {
                let ct = c_type(*d).ok_or_else(|| {
                    unsupported(f.span, format_args!("scalar parameter '{name}' of dtype {}", d.dsl_name()))
                })?;
                let _ = writeln!(scalars, "{ct} {name} = from_u64<{ct}>(orch_args.scalar({si}));");
                si += 1;
            }
            ParamKind::Ctx => {
                let _ = writeln!(scalars, "uint64_t {name} = orch_args.scalar({si});");
                si += 1;
            }
        }
    }
    if !scalars.is_empty() {
        scalars.insert_str(0, "\n// Scalar params\n");
    }
    // Dynamic dims used as values: read from the declaring tensor's descriptor.
    let mut used_syms = Vec::new();
    f.body.walk_exprs(&mut |e| {
        if let ExprKind::Sym(s) = &e.kind {
            if !used_syms.contains(s) {
                used_syms.push(s.clone());
            }
        }
    });
    let mut dims = String::new();
    for s in &used_syms {
        let decl = read_dynamic_dim(
            f,
            f.params.iter().zip(&params).map(|(p, (name, _))| (p.value, name.as_str())),
            |d, name, i| {
                matches!(&d.kind, ExprKind::Sym(x) if x == s).then(|| format!("ext_{name}.shapes[{i}]"))
            },
            format_args!("dynamic dim '{s}' used in '{}' without a tensor parameter declaring it", f.name),
        )?;
        let _ = writeln!(dims, "int64_t {} = static_cast<int64_t>({decl});", ident(s));
    }
    w.block(&f.body.stmts)?;
    let text = ChipOrchestrationCpp {
        chip: &f.name,
        prelude: &OrchestrationPrelude { expected_arg_count: &params.len().to_string() }.render(),
        tensors: &tensors,
        scalars: &scalars,
        dynamic_dims: &dims,
        body: w.out.as_str(),
    }
    .render();
    Ok(vec![(format!("orchestration/{}.cpp", f.name), text)])
}

crate::template::template! {
    /// `templates/chip_orchestration.cpp`: a chip program's orchestration source.
    pub struct ChipOrchestrationCpp = "chip_orchestration.cpp" {
        /// The chip orchestrator's name.
        chip,
        /// The includes and the config function ([`OrchestrationPrelude`]).
        prelude,
        /// The tensor parameters' references.
        tensors,
        /// The scalar parameters, under their comment (empty when none).
        scalars,
        /// The dynamic dims read from tensor descriptors.
        dynamic_dims,
        /// The body's tasks and control flow.
        body,
    }
}

crate::template::template! {
    /// `templates/orchestration_prelude.cpp`: what every orchestration source (a chip's and a
    /// builtin variant's) opens with: the includes and the config function.
    pub struct OrchestrationPrelude = "orchestration_prelude.cpp" {
        /// Tensor + scalar parameters (CommContexts included; a variant's token too).
        expected_arg_count,
    }
}

crate::template::template! {
    /// `templates/chip_task.cpp`: one task of a chip orchestrator (§4: tensors in
    /// kernel-parameter order, then scalars; launch spec; dependencies; submit).
    pub struct ChipTaskCpp = "chip_task.cpp" {
        /// The task's number in the chip.
        n,
        /// The kernel (or mixed group) it runs.
        kernel,
        /// The task arguments' variable.
        args,
        /// The `add_input`/`add_output`/`add_inout` lines.
        tensors,
        /// The `add_scalar` lines.
        scalars,
        /// The launch-spec lines (block count, synchronous start).
        launch,
        /// The dependency lines.
        dependencies,
        /// The `MixedKernels` line of a mixed or dual-AIV task.
        mixed,
        /// The submit statement.
        submit,
    }
}

/// This module's templates, for the hole checks of [`crate::template`].
#[cfg(test)]
pub(crate) fn all_templates() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    vec![
        (ChipOrchestrationCpp::FILE, ChipOrchestrationCpp::TEXT, ChipOrchestrationCpp::HOLES),
        (ChipTaskCpp::FILE, ChipTaskCpp::TEXT, ChipTaskCpp::HOLES),
        (OrchestrationPrelude::FILE, OrchestrationPrelude::TEXT, OrchestrationPrelude::HOLES),
    ]
}

struct Writer<'a, 'p> {
    program: &'a Program,
    chip: &'a ChipProgram<'p>,
    opts: &'a RuntimeOptions,
    f: &'a Function,
    /// The orchestrator body written so far.
    out: Indented,
    tasks: usize,
    /// IR value → C++ name (tensor parameters and aliases).
    names: HashMap<ValueId, String>,
}

impl Writer<'_, '_> {
    fn name(&self, v: ValueId) -> String {
        self.names.get(&v).cloned().unwrap_or_else(|| ident(self.f.values.name(v)))
    }

    fn expr(&self, e: &Expr) -> Result<String, Diagnostic> {
        c_expr(self.f, e, &|_, v| self.name(v))
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        let mut i = 0;
        while i < stmts.len() {
            let s = &stmts[i];
            match &s.kind {
                StmtKind::Assign { value, .. } | StmtKind::Eval(value) if is_func_call(value) => {
                    let targets: &[ValueId] = match &s.kind {
                        StmtKind::Assign { targets, .. } => targets,
                        _ => &[],
                    };
                    let c = value.as_call().expect("checked by is_func_call");
                    // An `_aic` call followed by its `_aiv` sibling is one mixed task.
                    let sibling = stmts.get(i + 1).and_then(|n| match &n.kind {
                        StmtKind::Eval(e) | StmtKind::Assign { value: e, .. } => e.as_call(),
                        _ => None,
                    });
                    let pair = match (&c.callee, sibling.map(|s| &s.callee)) {
                        (Callee::Func(a), Some(Callee::Func(b))) => {
                            a.strip_suffix("_aic").is_some_and(|base| b.strip_suffix("_aiv") == Some(base))
                        }
                        _ => false,
                    };
                    if pair {
                        let next_targets: &[ValueId] = match &stmts[i + 1].kind {
                            StmtKind::Assign { targets, .. } => targets,
                            _ => &[],
                        };
                        self.task(s, c, sibling, if targets.is_empty() { next_targets } else { targets })?;
                        i += 2;
                        continue;
                    }
                    self.task(s, c, None, targets)?;
                }
                StmtKind::Assign { targets, value } => self.assign(s, targets, value)?,
                StmtKind::Eval(_) => {
                    return Err(unsupported(s.span, "this statement in a chip orchestrator"))
                }
                StmtKind::For { var, start, stop, step, iter_args, body, .. } => {
                    if !iter_args.is_empty() {
                        return Err(unsupported(
                            s.span,
                            "a loop with iteration values in a chip orchestrator",
                        ));
                    }
                    let v = self.name(*var);
                    let l = format!(
                        "for (int64_t {v} = {}; {v} < {}; {v} += {}) {{",
                        self.expr(start)?,
                        self.expr(stop)?,
                        self.expr(step)?
                    );
                    self.nested(&l, &body.stmts)?;
                }
                StmtKind::If { cond, then_body, else_body, results } => {
                    if !results.is_empty() {
                        return Err(unsupported(s.span, "an `if` with results in a chip orchestrator"));
                    }
                    let l = format!("if ({}) {{", self.expr(cond)?);
                    self.nested(&l, &then_body.stmts)?;
                    if !else_body.stmts.is_empty() {
                        self.nested("else {", &else_body.stmts)?;
                    }
                }
                StmtKind::Scope { kind: ScopeKind::Manual, body, .. } => {
                    self.nested("PTO2_SCOPE(PTO2ScopeMode::MANUAL) {", &body.stmts)?;
                }
                StmtKind::Return(vals) => {
                    // A chip returns only what it received as Out/InOut parameters (a returned
                    // kernel call is launched here; its result is the argument it writes).
                    for v in vals {
                        if let Some(c) = v.as_call().filter(|_| is_func_call(v)) {
                            self.task(s, c, None, &[])?;
                        }
                        let ok = self
                            .program
                            .expr_param(self.f, v)
                            .is_some_and(|i| self.f.params.get(i).is_some_and(|p| p.dir != Direction::In));
                        if !ok {
                            return Err(unsupported(
                                s.span,
                                "a chip orchestrator returning a tensor that is not one of its Out/InOut parameters",
                            ));
                        }
                    }
                }
                StmtKind::Yield(v) if v.is_empty() => {}
                _ => return Err(unsupported(s.span, "this statement in a chip orchestrator")),
            }
            i += 1;
        }
        Ok(())
    }

    fn nested(&mut self, head: &str, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        self.out.line(head);
        self.out.depth += 1;
        self.block(stmts)?;
        self.out.depth -= 1;
        self.out.line("}");
        Ok(())
    }

    fn assign(&mut self, s: &Stmt, targets: &[ValueId], value: &Expr) -> Result<(), Diagnostic> {
        let [t] = targets else {
            return Err(unsupported(s.span, "a multi-target assignment in a chip orchestrator"));
        };
        match self.f.values.ty(*t) {
            Type::Tensor(_) | Type::DistTensor(_) | Type::CommCtx => match value.as_var() {
                Some(src) => {
                    let n = self.name(src);
                    self.names.insert(*t, n);
                    Ok(())
                }
                None => Err(unsupported(s.span, "creating or slicing a tensor in a chip orchestrator")),
            },
            Type::Scalar(d) => {
                let ct = c_type(*d)
                    .ok_or_else(|| unsupported(s.span, format_args!("a scalar of dtype {}", d.dsl_name())))?;
                let l = format!("{ct} {} = static_cast<{ct}>({});", self.name(*t), self.expr(value)?);
                self.out.line(&l);
                Ok(())
            }
            other => {
                Err(unsupported(s.span, format_args!("a {} value in a chip orchestrator", other.kind_name())))
            }
        }
    }

    /// Tensor results of a task are the kernel's Out/InOut arguments they alias
    /// (`pld_ir::results`): the runtime returns nothing else from a task.
    fn bind_results(
        &mut self,
        s: &Stmt,
        name: &str,
        kinds: &[(String, ParamKind)],
        call: &Call,
        targets: &[ValueId],
    ) -> Result<(), Diagnostic> {
        let results = if call.is_submit() { &targets[..targets.len().saturating_sub(1)] } else { targets };
        for (k, t) in results.iter().enumerate() {
            if self.f.values.ty(*t).as_tensor_like().is_none() {
                continue;
            }
            let written = |i: &usize| {
                kinds.get(*i).is_some_and(|(_, k)| {
                    matches!(k, ParamKind::Tensor { dir: Direction::Out | Direction::InOut, .. })
                })
            };
            let Some(a) =
                self.program.call_result_arg(call, &self.f.values, k).filter(written).map(|i| &call.args[i])
            else {
                return Err(unsupported(
                    s.span,
                    format_args!(
                        "using a result of kernel '{name}' that is not one of its Out/InOut arguments"
                    ),
                ));
            };
            if let Some(v) = a.as_var() {
                let n = self.name(v);
                self.names.insert(*t, n);
            }
        }
        Ok(())
    }

    /// §10 R12: a launch has at least one block, fits the launch spec's `int16_t`, and a
    /// synchronous start asks for no more cores than the target has (a2a3: 48 AIV cores, 24
    /// cube/mixed clusters).
    fn check_launch(&self, s: &Stmt, kf: &Function, core_num: i64, cube: bool) -> Result<(), Diagnostic> {
        if !(1..=i64::from(i16::MAX)).contains(&core_num) {
            return Err(Diagnostic::error(
                s.span,
                format!(
                    "kernel '{}' has core_num={core_num}; a launch needs 1 to {} blocks",
                    kf.name,
                    i16::MAX
                ),
            ));
        }
        let cores = if cube { 24 } else { 48 };
        if fn_attr_bool(kf, "sync_start") && self.opts.target == pld_ir::Target::A2A3 && core_num > cores {
            return Err(Diagnostic::error(
                s.span,
                format!(
                    "kernel '{}' asks for a synchronous start of {core_num} blocks; a2a3 has {cores} {} (the runtime rejects it)",
                    kf.name,
                    if cube { "cube/mixed clusters" } else { "vector cores" }
                ),
            ));
        }
        Ok(())
    }

    /// One task: `call` (and its `_aiv` sibling for a mixed group).
    fn task(
        &mut self,
        s: &Stmt,
        call: &Call,
        sibling: Option<&Call>,
        targets: &[ValueId],
    ) -> Result<(), Diagnostic> {
        let Callee::Func(name) = &call.callee else { unreachable!("tasks are function calls") };
        let Some(k) = self.chip.kernel(name) else {
            return Err(unsupported(
                s.span,
                format_args!("calling '{name}' (not a kernel) from a chip orchestrator"),
            ));
        };
        let kf = k.func;
        let kinds = param_kinds(kf)?;
        if kinds.len() != call.args.len() {
            return Err(Diagnostic::error(
                s.span,
                format!(
                    "call of kernel '{name}' passes {} arguments for {} parameters",
                    call.args.len(),
                    kinds.len()
                ),
            ));
        }
        if let Some(sib) = sibling {
            // §10 M10: both lanes of one mixed task read one payload.
            if sib.args != call.args {
                return Err(Diagnostic::error(
                    s.span,
                    format!("the cube and vector halves of mixed kernel '{}' are called with different arguments; one task gives both the same payload", unit_of(self.program, name)),
                ));
            }
        }
        let n = self.tasks;
        self.tasks += 1;
        let p = format!("params_t{n}");
        let kernel = sibling.map_or(name.clone(), |_| unit_of(self.program, name));
        let (mut tensors, mut scalars) = (Vec::new(), Vec::new());
        for ((_, kind), a) in kinds.iter().zip(&call.args) {
            match kind {
                ParamKind::Tensor { dir, .. } => {
                    let v = a.as_var().ok_or_else(|| {
                        unsupported(a.span, "a tensor expression (not a variable) passed to a kernel")
                    })?;
                    let add = match dir {
                        Direction::In => "add_input",
                        Direction::Out => "add_output",
                        Direction::InOut => "add_inout",
                    };
                    tensors.push(format!("{p}.{add}({});", self.name(v)));
                }
                ParamKind::Scalar(d) => {
                    let ct = c_type(*d).ok_or_else(|| {
                        unsupported(a.span, format_args!("a scalar of dtype {}", d.dsl_name()))
                    })?;
                    scalars.push(format!("{p}.add_scalar(static_cast<{ct}>({}));", self.expr(a)?));
                }
                ParamKind::Ctx => {
                    let v = a.as_var().ok_or_else(|| unsupported(a.span, "a CommContext expression"))?;
                    scalars.push(format!("{p}.add_scalar({});", self.name(v)));
                }
            }
        }
        let core_num = fn_attr_int(kf, "core_num").unwrap_or(1);
        self.check_launch(s, kf, core_num, sibling.is_some() || k.core == Core::Aic)?;
        let mut launch = Vec::new();
        if core_num > 1 {
            launch.push(format!("{p}.launch_spec.{}({core_num});", self.opts.core_count_method()));
        }
        if fn_attr_bool(kf, "sync_start") {
            launch.push(format!("{p}.launch_spec.set_require_sync_start(true);"));
        }
        let mut dependencies = Vec::new();
        if let Some(deps) = call.deps.as_ref().filter(|d| !d.is_empty()) {
            let ids: Vec<String> = deps.iter().map(|d| self.expr(d)).collect::<Result<_, _>>()?;
            dependencies.push(format!("const decltype({}) deps_t{n}[] = {{{}}};", ids[0], ids.join(", ")));
            dependencies.push(format!("{p}.set_dependencies(deps_t{n}, {});", ids.len()));
        }
        let (mixed, submit) = match (sibling, k.core) {
            (Some(sib), _) => {
                let Callee::Func(sname) = &sib.callee else { unreachable!() };
                let aiv = self.chip.kernel(sname).map_or(-1, |e| e.func_id);
                let third =
                    if self.program.function(sname).is_some_and(|g| fn_attr_bool(g, "dual_aiv_dispatch")) {
                        aiv.to_string()
                    } else {
                        "INVALID_KERNEL_ID".into()
                    };
                (
                    format!("MixedKernels mixed_{n} = {{{}, {aiv}, {third}}};", k.func_id),
                    format!("rt_submit_task(mixed_{n}, {p})"),
                )
            }
            (None, Core::Aiv) if fn_attr_bool(kf, "dual_aiv_dispatch") => (
                format!("MixedKernels mixed_{n} = {{INVALID_KERNEL_ID, {id}, {id}}};", id = k.func_id),
                format!("rt_submit_task(mixed_{n}, {p})"),
            ),
            (None, Core::Aiv) => (String::new(), format!("rt_submit_aiv_task({}, {p})", k.func_id)),
            (None, Core::Aic) => (String::new(), format!("rt_submit_aic_task({}, {p})", k.func_id)),
        };
        self.bind_results(s, name, &kinds, call, targets)?;
        let submit = match (call.is_submit(), targets.last()) {
            (true, Some(tid)) => format!("auto {} = {submit}.task_id();", self.name(*tid)),
            _ => format!("{submit};"),
        };
        let task = ChipTaskCpp {
            n: &n.to_string(),
            kernel: &kernel,
            args: &p,
            tensors: &tensors.join("\n"),
            scalars: &scalars.join("\n"),
            launch: &launch.join("\n"),
            dependencies: &dependencies.join("\n"),
            mixed: &mixed,
            submit: &submit,
        };
        self.out.lines(&task.render());
        Ok(())
    }
}

fn is_func_call(e: &Expr) -> bool {
    e.as_call().is_some_and(|c| matches!(c.callee, Callee::Func(_)))
}
