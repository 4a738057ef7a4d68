//! Builtin collective kernels: every `builtin.tensor.*` variant a host orchestrator dispatches
//! is rendered as its own PTO module, `<entry>_kernel.pto`.
//!
//! The reference ships these as prebuilt C++ templates; pld builds them in one place, the
//! builtins' registered `BuiltinKernel` lowering (`pld-ops` `lowering::builtin_kernel`: the
//! collective's `Composite` lowering plus `InsertCommFence`'s markers), which the simulator
//! also runs (`MaterializeBuiltinKernels`); this module picks the variants and sends each
//! kernel through the ordinary function emitter.
//!
//! Guarantees: one kernel per distinct variant (spec and static argument shapes,
//! [`variant_name`]), in variant order; dynamic extents become
//! `index` parameters; a mesh allreduce with `core_num = C > 1` renders one SPMD kernel
//! (its block index and count are trailing parameters, codegen.md §1.2); anything the lowering or the emitter cannot
//! express is a diagnostic naming the builtin variant.

use crate::CodegenOptions;
use pld_ir::registry::LoweringKind;
use pld_ir::{Call, Callee, Diagnostic, Expr, Function, FunctionKind, Program, Span};
use std::collections::BTreeMap;

/// The entry symbol of a variant: non-alphanumerics become `_`.
pub fn entry_symbol(variant: &str) -> String {
    variant.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// What a builtin kernel's text depends on besides its spec (op, reduce op, root, dtype):
/// the static extents and dtypes of its arguments. A dynamic extent (`NR`, a synthesized
/// signal's world size) is an `index` parameter the wrapper reads from the tensor's shape at
/// run time, so two calls differing only there share one kernel.
type ShapeKey = Vec<Option<(Vec<Option<i64>>, pld_ir::DataType)>>;

fn shape_key(f: &Function, c: &Call) -> ShapeKey {
    c.args
        .iter()
        .map(|a| {
            a.ty(&f.values).as_tensor_like().map(|t| (t.shape.iter().map(Expr::as_int).collect(), t.dtype))
        })
        .collect()
}

/// Every builtin call of the program's host and chip orchestrators, in program order, with
/// its spec name and shape key.
fn builtin_sites<'p>(
    program: &'p Program,
    opts: &CodegenOptions,
) -> Vec<(&'p Function, Call, String, ShapeKey)> {
    let mut out = Vec::new();
    for f in &program.functions {
        if !matches!(f.kind, FunctionKind::Host | FunctionKind::ChipOrch) {
            continue;
        }
        f.body.walk_exprs(&mut |e| {
            let Some(c) = e.as_call() else { return };
            let Callee::Op(def) = &c.callee else { return };
            if def.builtin_variant.is_some() {
                let (spec, _) = crate::orch::builtin_spec(c, opts);
                out.push((f, c.clone(), spec, shape_key(f, c)));
            }
        });
    }
    out
}

/// The variant a builtin call dispatches: its spec's name (`builtin.tensor.allreduce__sum__fp32`)
/// for the first set of static shapes the program uses with that spec, `<spec>__s2`, `__s3`, …
/// for the second, third … — one rendered kernel per set of shapes, each its own variant, so a
/// collective may run at any shape any number of times (D-cg-26).
pub fn variant_name(program: &Program, opts: &CodegenOptions, f: &Function, c: &Call) -> String {
    let (spec, _) = crate::orch::builtin_spec(c, opts);
    let key = shape_key(f, c);
    let mut keys: Vec<ShapeKey> = Vec::new();
    for (_, _, s, k) in builtin_sites(program, opts) {
        if s == spec && !keys.contains(&k) {
            keys.push(k);
        }
    }
    match keys.iter().position(|k| *k == key) {
        Some(0) | None => spec,
        Some(i) => format!("{spec}__s{}", i + 1),
    }
}

/// Every builtin variant of the program ([`variant_name`]) with the call it is rendered from:
/// the first call, or a later one with a larger `core_num` (a multi-block kernel also serves
/// one-block launches, not the other way round).
pub fn builtin_calls<'p>(
    program: &'p Program,
    opts: &CodegenOptions,
) -> (BTreeMap<String, (&'p Function, Call)>, Vec<Diagnostic>) {
    let mut out: BTreeMap<String, (&'p Function, Call)> = BTreeMap::new();
    for (f, c, _, _) in builtin_sites(program, opts) {
        let variant = variant_name(program, opts, f, &c);
        let cores = |k: &Call| k.attr_int("core_num").unwrap_or(1);
        match out.get(&variant) {
            Some((_, prev)) if cores(&c) <= cores(prev) => {}
            _ => {
                out.insert(variant, (f, c));
            }
        }
    }
    (out, Vec::new())
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
    b.context.kernel_request = Some(pld_ir::KernelRequest { name: name.clone() });
    (lowering.run)(&mut b, call, &[], Span::DUMMY)
        .map_err(|d| Diagnostic { message: format!("builtin kernel {variant}: {}", d.message), ..d })?;
    let (_, mut functions) = b.finish();
    match (functions.pop(), functions.is_empty()) {
        (Some(f), true) if f.name == name => Ok(f),
        _ => Err(err("the builtin-kernel lowering did not build exactly one kernel".into())),
    }
}
