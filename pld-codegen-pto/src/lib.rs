//! # pld-codegen-pto — PTO MLIR text for the `ptoas` assembler
//!
//! Guarantees:
//! - [`emit_program`] writes one `.pto` module per kernel group (an `_aic`/`_aiv` pair of a
//!   mixed kernel shares one module) with `pto.target_arch`, `func.func` signatures in the
//!   runtime calling order (tensors, scalars and CommContext pointers, one `index` per dynamic
//!   shape symbol, hidden runtime parameters) and `pto.kernel_kind` on every function; no
//!   helper function is ever emitted (all CommContext arithmetic is inline).
//! - Op calls are emitted by per-op emitters registered by op name with [`register_emitter!`]
//!   in family modules ([`emit`]) and looked up by the op's dense [`pld_ir::OpId`]; the driver
//!   never names an op. An op without an emitter is a diagnostic naming the op, never a
//!   panic; an emitter for an op the registry does not know is a registry error.
//! - Every builtin collective variant a host/chip orchestrator dispatches is rendered as its
//!   own module `<entry>_kernel.pto` ([`builtin`]).
//! - Emission is deterministic: the same program gives byte-identical text.
//! - The orchestration description (per-rank dispatches, window buffers, comm domains,
//!   builtin collective variants) is machine-readable JSON ([`orch`]).
//! - Every kernel, user-written or builtin, passes the PTO verifier ([`verify`]) before its
//!   module is returned; a violation is a diagnostic at the op's source span and no module.

#![deny(missing_docs)]

pub mod builtin;
pub mod emit;
pub mod func;
pub mod json;
pub mod mlir;
pub mod orch;
pub mod pto;
pub mod verify;

#[doc(hidden)]
pub use inventory;
#[doc(hidden)]
pub use pld_ir;
use rayon::prelude::*;

pub use func::{FnCx, TensorRef, Val};
pub use mlir::MTy;

use pld_ir::table::OpTable;
use pld_ir::{Call, Diagnostic, Diagnostics, FunctionKind, Program, Span, Target, ValueId};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Options of one codegen run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodegenOptions {
    /// The target architecture (`a2a3` default, `a5`).
    pub target: Target,
}

/// What codegen produces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodegenOutput {
    /// `(file name, .pto text)` per kernel group, sorted by file name.
    pub modules: Vec<(String, String)>,
    /// The orchestration description (JSON).
    pub orchestration: String,
}

/// An emitter: writes the PTO text of one op call into the function being emitted.
///
/// `targets` are the IR values the call's result is assigned to (empty for an evaluated call
/// or a call nested inside an expression). The returned [`Val`] is bound to the first target
/// by the driver (and is the value of a nested call).
pub type EmitFn = fn(&mut FnCx<'_>, &Call, &[ValueId]) -> Result<Val, Diagnostic>;

/// An emitter, as registered by [`register_emitter!`] (a [`pld_ir::table::Registration`]
/// entry: the op and site are the registration's).
#[derive(Debug)]
pub struct Emitter {
    /// The emitter.
    pub emit: EmitFn,
}

/// Registers `$emit` as the PTO emitter of the op named `$op`.
#[macro_export]
macro_rules! register_emitter {
    ($op:expr, $emit:path) => {
        $crate::pld_ir::register_entry!(&[$op], $crate::Emitter { emit: $emit });
    };
}

/// The materialised emitter table: indexed by [`pld_ir::OpId`] (a vector lookup per call);
/// duplicates and emitters for ops the registry does not know are registry errors
/// ([`pld_ir::registry::Registry::check`] reports them, and [`emit_program`] refuses to run).
pub type Emitters = OpTable<&'static Emitter>;

static EMITTERS: LazyLock<Emitters> = LazyLock::new(|| {
    OpTable::collect("pto emitter", pld_ir::table::entries::<Emitter>().map(|e| (e.op, e.site, e.value)))
});

pld_ir::register_op_table!("emitter", |id| emitters().has(id), || emitters().errors().to_vec());

/// The global emitter table.
pub fn emitters() -> &'static Emitters {
    &EMITTERS
}

/// Whether functions of this kind become `.pto` kernels.
pub fn is_kernel(kind: FunctionKind) -> bool {
    kind.is_incore()
}

/// The module (group) name of a kernel: `<base>` for `<base>_aic` / `<base>_aiv` when the
/// program holds both halves, else the function's own name.
fn group_name(program: &Program, name: &str) -> String {
    for (suffix, sibling) in [("_aic", "_aiv"), ("_aiv", "_aic")] {
        if let Some(base) = name.strip_suffix(suffix) {
            let other = format!("{base}{sibling}");
            if program.function(&other).is_some_and(|f| is_kernel(f.kind)) {
                return base.to_string();
            }
        }
    }
    name.to_string()
}

/// The span of the expression in `host` that is the call `call` (dummy when not found).
fn call_site(host: &pld_ir::Function, call: &Call) -> Span {
    let mut site = Span::DUMMY;
    host.body.walk_exprs(&mut |e| {
        if site == Span::DUMMY && e.as_call() == Some(call) {
            site = e.span;
        }
    });
    site
}

/// One module's `(file name, text)` (none when a kernel failed) and its kernels' errors.
type EmittedModule = (Option<(String, String)>, Vec<Diagnostic>);

/// Emits every kernel of `program` as PTO modules plus the orchestration description.
///
/// Errors from all kernels are collected; nothing panics on user input.
pub fn emit_program(program: &Program, opts: &CodegenOptions) -> Result<CodegenOutput, Diagnostics> {
    let mut diags = Diagnostics::new();
    if let Some(e) = emitters().errors().first() {
        diags.push(Diagnostic::error(Span::DUMMY, e.to_string()));
        return Err(diags);
    }
    // Group kernels: module name -> function names (sorted for determinism).
    let mut groups: BTreeMap<String, Vec<&pld_ir::Function>> = BTreeMap::new();
    for f in &program.functions {
        if is_kernel(f.kind) {
            groups.entry(group_name(program, &f.name)).or_default().push(f);
        }
    }
    // Modules are emitted independently (on rayon's pool: a large program has thousands of
    // kernels) and collected in module-name order, so the output never depends on threads.
    let groups: Vec<(String, Vec<&pld_ir::Function>)> = groups.into_iter().collect();
    let emitted: Vec<EmittedModule> = groups
        .into_par_iter()
        .map(|(group, mut funcs)| {
            funcs.sort_by(|a, b| a.name.cmp(&b.name));
            let mut texts = Vec::new();
            let mut deferred = false;
            let mut errs = Vec::new();
            for f in funcs {
                match func::emit_function(program, f, opts) {
                    Ok(out) => {
                        errs.extend(verify::verify_kernel(&out.kernel));
                        texts.push(out.text);
                        deferred |= out.uses_deferred;
                    }
                    Err(d) => errs.push(d),
                }
            }
            let text = pto::print::module(opts.target.name(), texts.iter().map(String::as_str), deferred);
            (errs.is_empty().then(|| (format!("{group}.pto"), text)), errs)
        })
        .collect();
    let mut modules = Vec::new();
    for (module, errs) in emitted {
        modules.extend(module);
        for d in errs {
            diags.push(d);
        }
    }
    let mut builtins = Vec::new();
    let (calls, call_diags) = builtin::builtin_calls(program, opts);
    for d in call_diags {
        diags.push(d);
    }
    for (variant, (host, call)) in calls {
        let rendered = builtin::render(&variant, host, &call, opts)
            .and_then(|f| func::emit_function(program, &f, opts).map(|o| (f, o)));
        match rendered {
            Ok((f, out)) => {
                let violations = verify::verify_kernel(&out.kernel);
                if !violations.is_empty() {
                    // A builtin kernel has no source of its own: report at the host call.
                    let site = call_site(host, &call);
                    for d in violations {
                        diags.push(d.or_span(site));
                    }
                    continue;
                }
                let name = f.name.clone();
                builtins.push(f);
                let text = pto::print::module(opts.target.name(), [out.text.as_str()], false);
                modules.push((format!("{name}.pto"), text));
            }
            // Likewise for a kernel the lowering or the emitter cannot build.
            Err(d) => diags.push(d.or_span(call_site(host, &call))),
        }
    }
    modules.sort_by(|a, b| a.0.cmp(&b.0));
    let orchestration = match orch::describe_with(program, opts, &builtins) {
        Ok(s) => s,
        Err(d) => {
            diags.push(d);
            String::new()
        }
    };
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(CodegenOutput { modules, orchestration })
}
