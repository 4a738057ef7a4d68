"""SubWorker `${name}` (${file}:${line}), emitted by pld: callable as ${name}(args).

The program's source below runs the way `pld run` runs host callbacks: its module-level
imports, constants and plain helper functions, then `${name}` itself without decorators or
annotations, compiled on the first call.
"""
import ast as _ast
import struct as _struct

import torch

from pypto.runtime.distributed_runner import _tensor_from_continuous

_NAME = ${name_literal}
_FILE = ${file_literal}
_LINE = ${line}
_PARAMS = [${params}]
_BINDS = {${binds}}
_SOURCE = (
    ${source}
)
_CACHE = {}


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
    return values

def ${name}(args):
    fn = _CACHE.get("fn") or _CACHE.setdefault("fn", _load())
    fn(*_unpack(args))
