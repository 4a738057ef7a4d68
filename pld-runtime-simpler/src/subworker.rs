//! `sub_workers/<name>.py`: one Python module per host callback
//! (`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)`), the callable the runtime
//! registers for `orch.submit_sub(sub_ids["<name>"], …)` (`runtime_artifacts.md` §1, §7).
//!
//! Guarantees:
//! - The module defines a module-level function `<name>(args)` taking one positional
//!   argument (the runtime's mapped task arguments, §10 R17): it turns the `i`-th tensor
//!   argument into a torch view with `_tensor_from_continuous(args[i])` (Simpler's `MappedArgs`
//!   is a sequence of the tensor arguments plus `scalar(j)`; the reference's
//!   helper, imported from `pypto.runtime.distributed_runner`), the `j`-th scalar into the
//!   parameter's Python value from `args.scalar(j)` (the 64-bit payload reinterpreted as the
//!   declared dtype), and calls the callback in parameter order. Writes into `Out`/`InOut`
//!   views land in the shared host tensors.
//! - The callback runs under the rule `pld run` applies to it (pld-py's bridge): the module
//!   carries the program file's text and, on the first call, executes that file's
//!   module-level imports, constants and undecorated helper functions (an import of `pypto`
//!   that fails binds a permissive stand-in; any other failing statement is skipped), binds the
//!   program's `--bind` values, runs the plain statements of the builder functions the callback
//!   is nested in, and compiles the callback's `def` nearest to its declaration line without
//!   decorators, annotations or `self`. Nothing runs at import time beyond the module's own
//!   imports, so registering the function before `Worker.init()` is cheap.
//! - `_PARAMS` lists `(name, kind, direction)` per parameter in order (kind `tensor` or the
//!   scalar's Python kind) — what the host adds to the task, tensors first.
//! - A callback whose body is `...` raises `RuntimeError` naming it when called.
//! - A parameter pld cannot pass (a window, a CommContext) is a diagnostic with the
//!   callback's position; so is a callback whose source file is unknown.

use crate::{unsupported, RuntimeOptions};
use pld_ir::{DataType, Diagnostic, Direction, Function, FunctionKind, Program, Type};

/// Whether `f` is a host callback: a HOST-level SubWorker, whose body is Python.
pub fn is_callback(f: &Function) -> bool {
    f.kind == FunctionKind::Opaque && f.attr("role").and_then(|a| a.as_str()) == Some("SubWorker")
}

/// The host callbacks of a program, in declaration order.
pub fn callbacks(program: &Program) -> Vec<&Function> {
    program.functions.iter().filter(|f| is_callback(f)).collect()
}

/// The Python kind of a scalar parameter (how its 64-bit payload is read back).
fn scalar_kind(d: DataType) -> &'static str {
    if d == DataType::BOOL {
        "bool"
    } else if d.is_float() {
        "float"
    } else if matches!(d, DataType::UINT8 | DataType::UINT16 | DataType::UINT32 | DataType::UINT64) {
        "uint"
    } else {
        "int"
    }
}

fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::In => "in",
        Direction::Out => "out",
        Direction::InOut => "inout",
    }
}

/// A Python string literal of `s` (double-quoted; control characters escaped).
pub(crate) fn py_str(s: &str) -> String {
    pld_ir::quote::python_string(s)
}

/// A `--bind` value as the Python literal `pld run` gives the callback: an integer, a
/// float, `True`/`False`, else the string as written.
fn bind_literal(v: &str) -> String {
    if v.parse::<i64>().is_ok() {
        return v.to_string();
    }
    if let Ok(x) = v.parse::<f64>() {
        if x.is_finite() {
            return format!("{x:?}");
        }
    }
    match v {
        "True" | "true" => "True".into(),
        "False" | "false" => "False".into(),
        _ => py_str(v),
    }
}

/// Renders `sub_workers/<name>.py` for callback `f`.
pub fn render(f: &Function, opts: &RuntimeOptions) -> Result<String, Diagnostic> {
    let Some((file, text)) = opts.sources.get(f.span.file.0 as usize) else {
        return Err(unsupported(
            f.span,
            format_args!(
                "the host callback '{}' without its source file (give RuntimeOptions::sources)",
                f.name
            ),
        ));
    };
    let line = 1 + text[..(f.span.lo as usize).min(text.len())].matches('\n').count();
    let mut params = Vec::new();
    for p in &f.params {
        let pname = f.values.name(p.value);
        let kind = match f.values.ty(p.value) {
            Type::Tensor(_) => "tensor",
            Type::Scalar(d) => scalar_kind(*d),
            other => {
                return Err(unsupported(
                    f.span,
                    format_args!(
                        "parameter '{pname}' of the host callback '{}' of type {}",
                        f.name,
                        other.kind_name()
                    ),
                ))
            }
        };
        params.push(format!("({}, {:?}, {:?})", py_str(pname), kind, dir_name(p.dir)));
    }
    let binds: Vec<String> =
        opts.binds.iter().map(|(k, v)| format!("{}: {}", py_str(k), bind_literal(v))).collect();
    // The file's text, one literal per line (adjacent literals concatenate).
    let source: String = if text.is_empty() {
        "\"\"".into()
    } else {
        text.split_inclusive('\n').map(|l| py_str(l) + "\n").collect()
    };
    let line = line.to_string();
    Ok(SubWorkerPy {
        name: &f.name,
        file,
        line: &line,
        name_literal: &py_str(&f.name),
        file_literal: &py_str(file),
        params: &params.join(", "),
        binds: &binds.join(", "),
        source: &source,
    }
    .render())
}

crate::template::template! {
    /// `templates/sub_worker.py`: the module of one host callback, with the loader every
    /// such module shares (pure Python, no pld needed at run time).
    pub struct SubWorkerPy = "sub_worker.py" {
        /// The callback's name (its `def` in the module).
        name,
        /// The program file, as given.
        file,
        /// The callback's declaration line.
        line,
        /// The name as a Python string literal.
        name_literal,
        /// The file as a Python string literal.
        file_literal,
        /// `(name, kind, direction)` tuples, comma-separated.
        params,
        /// `name: literal` pairs of the `--bind` values, comma-separated.
        binds,
        /// The file's text, one Python string literal per line.
        source,
    }
}

/// This module's templates, for the hole checks of [`crate::template`].
#[cfg(test)]
pub(crate) fn all_templates() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    vec![(SubWorkerPy::FILE, SubWorkerPy::TEXT, SubWorkerPy::HOLES)]
}
