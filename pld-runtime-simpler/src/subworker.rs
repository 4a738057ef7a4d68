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
use std::fmt::Write as _;

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
    let name = &f.name;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\"\"\"SubWorker `{name}` ({file}:{line}), emitted by pld: callable as {name}(args).\n\nThe program's source below runs the way `pld run` runs host callbacks: its module-level\nimports, constants and plain helper functions, then `{name}` itself without decorators or\nannotations, compiled on the first call.\n\"\"\""
    );
    s.push_str("import ast as _ast\nimport struct as _struct\n\nimport torch\n\nfrom pypto.runtime.distributed_runner import _tensor_from_continuous\n\n");
    let _ = writeln!(s, "_NAME = {}", py_str(name));
    let _ = writeln!(s, "_FILE = {}", py_str(file));
    let _ = writeln!(s, "_LINE = {line}");
    let _ = writeln!(s, "_PARAMS = [{}]", params.join(", "));
    let _ = writeln!(s, "_BINDS = {{{}}}", binds.join(", "));
    // The file's text, one literal per line (adjacent literals concatenate).
    s.push_str("_SOURCE = (\n");
    for l in text.split_inclusive('\n') {
        let _ = writeln!(s, "    {}", py_str(l));
    }
    if text.is_empty() {
        s.push_str("    \"\"\n");
    }
    s.push_str(")\n");
    s.push_str(LOADER);
    let _ = write!(
        s,
        "\n\ndef {name}(args):\n    fn = _CACHE.get(\"fn\") or _CACHE.setdefault(\"fn\", _load())\n    fn(*_unpack(args))\n"
    );
    Ok(s)
}

/// The loader every module shares (pure Python, no pld needed at run time).
const LOADER: &str = r#"_CACHE = {}


class _Stand:
    """Stands for a pypto name the runtime's Python cannot import (attributes, calls,
    subscripts and decorators all work)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        return _Stand(self._name + "." + k)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return _Stand(self._name + "(...)")

    def __getitem__(self, k):
        return _Stand(self._name + "[...]")


def _run(stmt, ns):
    try:
        exec(compile(_ast.fix_missing_locations(_ast.Module(body=[stmt], type_ignores=[])), _FILE, "exec"), ns)
    except ImportError:
        if isinstance(stmt, (_ast.Import, _ast.ImportFrom)):
            for a in stmt.names:
                mod = a.name if isinstance(stmt, _ast.Import) else (stmt.module or "")
                if mod == "pypto" or mod.startswith("pypto."):
                    ns[a.asname or a.name.split(".")[0]] = _Stand(mod)
    except Exception:
        pass


def _load():
    tree = _ast.parse(_SOURCE, _FILE)
    ns = {"__name__": "_pld_sub_worker_" + _NAME, "__file__": _FILE}
    keep = (_ast.Import, _ast.ImportFrom, _ast.Assign, _ast.AnnAssign, _ast.AugAssign, _ast.Try, _ast.If)
    for stmt in tree.body:
        main_guard = isinstance(stmt, _ast.If) and "__name__" in _ast.dump(stmt.test)
        plain_def = isinstance(stmt, _ast.FunctionDef) and not stmt.decorator_list
        if (isinstance(stmt, keep) or plain_def) and not main_guard:
            _run(stmt, ns)
    ns.update(_BINDS)
    defs = [n for n in _ast.walk(tree) if isinstance(n, _ast.FunctionDef) and n.name == _NAME]
    if not defs:
        raise RuntimeError("SubWorker %r: no `def %s` in its program source" % (_NAME, _NAME))
    d = min(defs, key=lambda n: min(abs(x.lineno - _LINE) for x in [n] + n.decorator_list))
    parents = {c: p for p in _ast.walk(tree) for c in _ast.iter_child_nodes(p)}
    chain, n = [], parents.get(d)
    while n is not None:
        if isinstance(n, _ast.FunctionDef):
            chain.insert(0, n)
        n = parents.get(n)
    for b in chain:
        args = b.args.posonlyargs + b.args.args
        defaults = [None] * (len(args) - len(b.args.defaults)) + list(b.args.defaults)
        for a, dflt in zip(args, defaults):
            if a.arg in _BINDS:
                ns[a.arg] = _BINDS[a.arg]
            elif dflt is not None:
                bind = _ast.Assign(targets=[_ast.Name(a.arg, _ast.Store())], value=dflt)
                _run(_ast.copy_location(bind, dflt), ns)
        for stmt in b.body:
            if isinstance(stmt, (_ast.Assign, _ast.AnnAssign, _ast.AugAssign, _ast.If, _ast.Import, _ast.ImportFrom)):
                _run(stmt, ns)
    body = [s for s in d.body if not (isinstance(s, _ast.Expr) and isinstance(s.value, _ast.Constant)
                                      and isinstance(s.value.value, str))]
    if len(body) == 1 and isinstance(body[0], _ast.Expr) and getattr(body[0].value, "value", None) is Ellipsis:
        raise RuntimeError("SubWorker %r is abstract (its body is `...`): bind an implementation" % _NAME)
    d.decorator_list, d.returns = [], None
    for a in d.args.posonlyargs + d.args.args + d.args.kwonlyargs:
        a.annotation = None
    if d.args.args and d.args.args[0].arg == "self":
        d.args.args = d.args.args[1:]
    mod = _ast.fix_missing_locations(_ast.Module(body=[d], type_ignores=[]))
    exec(compile(mod, _FILE, "exec"), ns)
    return ns[_NAME]


def _scalar(raw, kind):
    raw = int(raw) & (2 ** 64 - 1)
    if kind == "float":
        return _struct.unpack("<f", _struct.pack("<I", raw & 0xFFFFFFFF))[0]
    if kind == "bool":
        return bool(raw)
    if kind == "int" and raw >= 2 ** 63:
        return raw - 2 ** 64
    return raw


def _unpack(args):
    values, ti, si = [], 0, 0
    for _, kind, _ in _PARAMS:
        if kind == "tensor":
            values.append(_tensor_from_continuous(args[ti]))
            ti += 1
        else:
            values.append(_scalar(args.scalar(si), kind))
            si += 1
    return values"#;
