//! Builtin collective kernels: every `builtin.tensor.*` variant a host orchestrator dispatches
//! is rendered as its own PTO module, `<entry>_kernel.pto`.
//!
//! The reference ships these as prebuilt C++ templates; pld builds them in one place, the
//! builtins' registered `BuiltinKernel` lowering (`pld-ops` `lowering::builtin_kernel`: the
//! collective's `Composite` lowering plus `InsertCommFence`'s markers), which the simulator
//! also runs (`MaterializeBuiltinKernels`); this module picks the variants and sends each
//! kernel through the ordinary function emitter.
//!
//! Guarantees: one kernel per distinct variant, in variant order; dynamic extents become
//! `index` parameters; a mesh allreduce with `core_num = C > 1` renders one SPMD kernel
//! (its block index and count are trailing parameters, codegen.md §1.2); anything the lowering or the emitter cannot
//! express is a diagnostic naming the builtin variant.

use crate::CodegenOptions;
use pld_ir::registry::LoweringKind;
use pld_ir::{Attr, Call, Callee, Diagnostic, Expr, Function, FunctionKind, Program, Span};
use std::collections::BTreeMap;

/// The entry symbol of a variant: non-alphanumerics become `_`.
pub fn entry_symbol(variant: &str) -> String {
    variant.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Every builtin call of the host/chip orchestrators, one per variant: the first occurrence,
/// or a later one with a larger `core_num` (a multi-block kernel also serves one-block
/// launches, not the other way round).
///
/// A variant is rendered once with its arguments' static shapes, so calls of one variant
/// whose argument types differ are reported as a diagnostic (one per variant) rather than
/// silently served by a kernel typed for other shapes.
pub fn builtin_calls<'p>(
    program: &'p Program,
    opts: &CodegenOptions,
) -> (BTreeMap<String, (&'p Function, Call)>, Vec<Diagnostic>) {
    let mut out: BTreeMap<String, (&'p Function, Call)> = BTreeMap::new();
    let mut diags = Vec::new();
    let mut reported = std::collections::BTreeSet::new();
    for f in &program.functions {
        if !matches!(f.kind, FunctionKind::Host | FunctionKind::ChipOrch) {
            continue;
        }
        f.body.walk_exprs(&mut |e| {
            let Some(c) = e.as_call() else { return };
            let Callee::Op(def) = &c.callee else { return };
            if !def.name.starts_with("builtin.tensor.") {
                return;
            }
            let (variant, _) = crate::orch::builtin_spec(c, opts);
            let Some((host, prev)) = out.get(&variant) else {
                out.insert(variant, (f, c.clone()));
                return;
            };
            // Shapes and dtypes only: the windows an argument is bound to differ by call.
            let types = |h: &Function, k: &Call| -> Vec<Option<(Vec<Expr>, pld_ir::DataType)>> {
                k.args
                    .iter()
                    .map(|a| a.ty(&h.values).as_tensor_like().map(|t| (t.shape.clone(), t.dtype)))
                    .collect()
            };
            if types(host, prev) != types(f, c) {
                if reported.insert(variant.clone()) {
                    diags.push(
                        Diagnostic::error(
                            e.span,
                            format!(
                                "builtin kernel {variant}: this call's arguments have other shapes than an earlier call of the same variant; a variant is rendered once, for one set of shapes"
                            ),
                        )
                        .with_note("use one shape per collective and dtype, or call the collective inside a kernel"),
                    );
                }
                return;
            }
            let cores = |k: &Call| k.attr_int("core_num").unwrap_or(1);
            if cores(c) > cores(prev) {
                out.insert(variant, (f, c.clone()));
            }
        });
    }
    (out, diags)
}

/// Renders the kernel of one builtin variant: the builtin's registered `BuiltinKernel`
/// lowering (`pld-ops`), asked for the PTO form of the kernel named `<entry>_kernel` — the
/// same construction `MaterializeBuiltinKernels` uses for the simulator's dispatches.
pub fn render(
    variant: &str,
    host: &Function,
    call: &Call,
    opts: &CodegenOptions,
) -> Result<Function, Diagnostic> {
    let err = |m: String| Diagnostic::error(Span::DUMMY, format!("builtin kernel {variant}: {m}"));
    let Some(def) = call.op() else { return Err(err("not an op call".into())) };
    let Some(lowering) = def.lowering(LoweringKind::BuiltinKernel) else {
        return Err(err(format!("{} has no builtin-kernel lowering to render it from", def.name)));
    };
    let name = format!("{}_kernel", entry_symbol(variant));
    let mut values = host.values.clone();
    let mut b = pld_ir::Builder::new(&mut values, host.kind);
    b.target = opts.target;
    b.context.push((pld_ir::BUILTIN_KERNEL_NAME_FACT.to_string(), Attr::Str(name.clone())));
    b.context.push((pld_ir::BUILTIN_KERNEL_FOR_PTO_FACT.to_string(), Attr::Bool(true)));
    (lowering.run)(&mut b, call, &[], Span::DUMMY)
        .map_err(|d| Diagnostic { message: format!("builtin kernel {variant}: {}", d.message), ..d })?;
    let (_, mut functions) = b.finish();
    match (functions.pop(), functions.is_empty()) {
        (Some(f), true) if f.name == name => Ok(f),
        _ => Err(err("the builtin-kernel lowering did not build exactly one kernel".into())),
    }
}
