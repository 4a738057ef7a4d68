# pld's Python side of the host bridge (embedded in the pld-py crate, written to a temp dir
# per call). Runs one host callback (`role=pl.Role.SubWorker`) or one NumPy golden function
# of a pld program file, without pypto: `pypto` imports resolve to a permissive stub, and only
# the file's module-level imports, constants and plain helper functions are executed (each
# statement on its own; a failing one is skipped, a failing import is remembered so that a
# later NameError can name the missing module). The function itself is compiled from the
# file's syntax tree without its decorators and annotations, keeping its line numbers.
#
# Protocol: argv[1] is manifest.json in the call's directory; tensors cross as .npy files in
# that directory; the outcome is written to result.txt there ({"ok": true, "warnings": [...]}
# or {"ok": false, "kind": ..., "message": ..., "notes": [...]}) as `key value` lines.
import ast
import importlib.abc
import importlib.machinery
import json
import os
import sys
import traceback
import types

MANIFEST = sys.argv[1]
DIR = os.path.dirname(os.path.abspath(MANIFEST))


def finish(result):
    """Writes result.txt: one `key value` line per item (lists repeat the key)."""
    lines = ["status " + ("ok" if result.get("ok") else "fail")]
    for k, v in result.items():
        for item in v if isinstance(v, list) else [v]:
            if k != "ok":
                lines.append("%s %s" % (k, str(item).replace("\n", " ")))
    with open(os.path.join(DIR, "result.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    sys.exit(0)


def fail(kind, message, notes=(), **extra):
    r = {"ok": False, "kind": kind, "message": message, "notes": list(notes)}
    r.update(extra)
    finish(r)


try:
    import numpy as np
except ImportError as e:
    fail(
        "numpy",
        "python3 (%s) cannot import numpy: %s" % (sys.executable, e),
        ["install it: python3 -m pip install numpy"],
        module="numpy",
    )


def stub_attribute(owner, k):
    """The stub for attribute `k` of the pypto name `owner` (dunder lookups fail as usual)."""
    if k.startswith("__"):
        raise AttributeError(k)
    return Stub(owner + "." + k)


class Stub:
    """Stands for any pypto name: attributes, calls, subscripts and decorators all work."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, k):
        return stub_attribute(self._name, k)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], (types.FunctionType, type)):
            return args[0]
        return Stub(self._name + "(...)")

    def __getitem__(self, k):
        return Stub(self._name + "[...]")

    def __repr__(self):
        return "<pypto stub %s>" % self._name


class StubModule(types.ModuleType):
    def __getattr__(self, k):
        return stub_attribute(self.__name__, k)


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "pypto" or name.startswith("pypto."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = StubModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, StubFinder())

with open(MANIFEST) as f:
    M = json.load(f)
FILE = M["file"]
with open(os.path.join(DIR, "source.py"), encoding="utf-8") as f:
    SOURCE = f.read()
try:
    TREE = ast.parse(SOURCE, FILE)
except SyntaxError as e:
    fail("source", "the program file is not valid Python: %s (line %s)" % (e.msg, e.lineno))


def is_main_guard(stmt):
    return (
        isinstance(stmt, ast.If)
        and isinstance(stmt.test, ast.Compare)
        and isinstance(stmt.test.left, ast.Name)
        and stmt.test.left.id == "__name__"
    )


def imported_names(stmt):
    """(bound name, module) pairs of an import statement."""
    out = []
    for a in stmt.names:
        if isinstance(stmt, ast.Import):
            out.append(((a.asname or a.name.split(".")[0]), a.name))
        else:
            out.append((a.asname or a.name, stmt.module or ""))
    return out


def prelude(namespace):
    """Runs the module-level statements a function may rely on; returns {name: (module, error)}
    for the imports that failed."""
    failed = {}
    keep = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Try, ast.If)
    for stmt in TREE.body:
        plain_def = isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list
        if not (isinstance(stmt, keep) or plain_def) or is_main_guard(stmt):
            continue
        code = compile(ast.Module(body=[stmt], type_ignores=[]), FILE, "exec")
        try:
            exec(code, namespace)
        except ImportError as e:
            for name, module in imported_names(stmt) if isinstance(stmt, (ast.Import, ast.ImportFrom)) else []:
                failed[name] = (e.name or module, str(e))
        except Exception:
            pass
    return failed


def find_def(name, line, top_level_only):
    """The FunctionDef called `name` nearest to `line` (anywhere, or at module level)."""
    if top_level_only:
        found = [s for s in TREE.body if isinstance(s, ast.FunctionDef) and s.name == name]
    else:
        found = [n for n in ast.walk(TREE) if isinstance(n, ast.FunctionDef) and n.name == name]
    if not found:
        return None

    def distance(d):
        lines = [d.lineno] + [x.lineno for x in d.decorator_list]
        return min(abs(l - line) for l in lines) if line else 0

    return min(found, key=distance)


def enclosing_builders(d):
    """The plain functions (program builders) that `d` is nested in, outermost first."""
    parents = {}
    for n in ast.walk(TREE):
        for c in ast.iter_child_nodes(n):
            parents[c] = n
    chain = []
    n = parents.get(d)
    while n is not None:
        if isinstance(n, ast.FunctionDef):
            chain.append(n)
        n = parents.get(n)
    return list(reversed(chain))


def builder_locals(d, namespace, binds):
    """Runs the simple statements of the builders `d` is nested in (their parameters bound from
    `binds`, else their defaults), so a callback sees a builder's locals as it would in Python."""
    for b in enclosing_builders(d):
        args = b.args.posonlyargs + b.args.args
        defaults = [None] * (len(args) - len(b.args.defaults)) + list(b.args.defaults)
        for a, dflt in zip(args, defaults):
            if a.arg in binds:
                namespace[a.arg] = binds[a.arg]
            elif dflt is not None:
                try:
                    namespace[a.arg] = eval(compile(ast.Expression(dflt), FILE, "eval"), namespace)
                except Exception:
                    pass
        for stmt in b.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.Import, ast.ImportFrom)):
                try:
                    exec(compile(ast.Module(body=[stmt], type_ignores=[]), FILE, "exec"), namespace)
                except Exception:
                    pass


def compile_def(d, namespace):
    """Compiles `d` without decorators, annotations or a leading `self`; returns the function."""
    d.decorator_list = []
    d.returns = None
    args = d.args
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        a.annotation = None
    if args.args and args.args[0].arg == "self":
        args.args = args.args[1:]
    mod = ast.Module(body=[d], type_ignores=[])
    ast.fix_missing_locations(mod)
    exec(compile(mod, FILE, "exec"), namespace)
    return namespace[d.name]


def tb_tail(e, limit=6):
    """The last lines of the traceback, frames of the bridge itself left out."""
    frames = [fr for fr in traceback.extract_tb(e.__traceback__) if fr.filename != __file__]
    lines = []
    for fr in frames[-3:]:
        lines.append('File "%s", line %d, in %s' % (fr.filename, fr.lineno, fr.name))
        if fr.line:
            lines.append("    " + fr.line.strip())
    lines.append("".join(traceback.format_exception_only(type(e), e)).strip())
    return lines[-limit:]


def explain(e, failed, what):
    """Writes the failure of a user function and exits."""
    missing = None
    if isinstance(e, ImportError):
        missing = e.name or str(e)
    elif isinstance(e, NameError) and getattr(e, "name", None) in failed:
        missing = failed[e.name][0]
    if missing:
        fail(
            "import",
            "%s needs module '%s', which %s cannot import" % (what, missing, sys.executable),
            ["install it for this interpreter (python3 -m pip install %s), or set PLD_PYTHON to one that has it" % missing.split(".")[0]]
            + tb_tail(e),
            module=missing,
        )
    fail("exception", "%s raised %s: %s" % (what, type(e).__name__, e), tb_tail(e))


def load(p):
    a = np.load(os.path.join(DIR, p["file"]))
    return a


def run_callback():
    ns = {"__name__": "pld_host_callback", "__file__": FILE}
    failed = prelude(ns)
    ns.update(M.get("binds", {}))
    name = M["function"]
    d = find_def(name, M.get("line", 0), False)
    if d is None:
        fail("source", "no `def %s` in %s" % (name, FILE))
    builder_locals(d, ns, M.get("binds", {}))
    body = [b for b in d.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str))]
    if len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and body[0].value.value is Ellipsis:
        fail(
            "abstract",
            "host callback '%s' is abstract (its body is `...`): there is nothing to run" % name,
            ["the reference binds abstract SubWorkers at run time; give it a Python body to run it under pld"],
        )
    uses_torch = any(
        isinstance(n, (ast.Import, ast.ImportFrom, ast.Name, ast.Attribute))
        and "torch" in ast.dump(n)
        for n in ast.walk(d)
    )
    torch = ns.get("torch")
    if not isinstance(torch, types.ModuleType) and uses_torch:
        try:
            import torch
        except ImportError:
            torch = None
    if not isinstance(torch, types.ModuleType) or isinstance(torch, StubModule):
        torch = None
    fn = compile_def(d, ns)
    arrays, values = [], []
    for p in M["params"]:
        if p["kind"] == "tensor":
            a = load(p)
            arrays.append(a)
            v = a
            if torch is not None:
                try:
                    v = torch.from_numpy(a)
                except Exception:
                    v = a
            values.append(v)
        else:
            arrays.append(None)
            values.append(p["value"])
    before = [a.copy() if (a is not None and p["dir"] != "inout") else None for a, p in zip(arrays, M["params"])]
    try:
        ret = fn(*values)
    except SystemExit as e:
        # A callback that exits (even with status 0) did not return: its outputs are
        # whatever it wrote before, so the run cannot count it as a success.
        fail(
            "exception",
            "host callback '%s' did not return normally: it called sys.exit(%r)" % (name, e.code),
            ["a host callback must return (after writing its Out/InOut arguments); raise an exception to fail the run"] + tb_tail(e),
        )
    except BaseException as e:
        explain(e, failed, "host callback '%s'" % name)
    warnings = []
    outs = [v for v, p in zip(values, M["params"]) if p["dir"] != "in"]
    rets = ret if isinstance(ret, tuple) else (ret,)
    if ret is not None and not all(any(r is o for o in outs) for r in rets):
        warnings.append(
            "host callback '%s' returned a value that is not one of its Out/InOut arguments; "
            "pld keeps only what a callback writes into them (`out[:] = ...`)" % name
        )
    for i, (a, p) in enumerate(zip(arrays, M["params"])):
        if a is None:
            continue
        if p["dir"] == "in":
            if not np.array_equal(before[i], a, equal_nan=a.dtype.kind == "f"):
                warnings.append(
                    "host callback '%s' wrote into its input `%s`; pld discards writes to inputs "
                    "(declare it pl.InOut to keep them)" % (name, p["name"])
                )
            continue
        if p["dir"] == "out" and np.array_equal(before[i], a, equal_nan=a.dtype.kind == "f"):
            warnings.append(
                "host callback '%s' left its output `%s` as it was (did it rebind it instead of "
                "writing `%s[:] = ...`?)" % (name, p["name"], p["name"])
            )
        np.save(os.path.join(DIR, "out_" + p["file"]), np.ascontiguousarray(a))
    finish({"ok": True, "warnings": warnings, "torch": torch is not None})


def run_golden():
    ns = {"__name__": "pld_golden", "__file__": FILE}
    failed = prelude(ns)
    names = M["candidates"]
    d = None
    for n in names:
        d = find_def(n, 0, True)
        if d is not None:
            break
    if d is None:
        fail("source", "%s defines no golden function (%s)" % (FILE, " or ".join("def %s(tensors, params)" % n for n in names)))
    fn = compile_def(d, ns)
    tensors = {p["name"]: load(p) for p in M["params"]}
    try:
        fn(tensors, dict(M["golden_params"]))
    except BaseException as e:
        explain(e, failed, "golden function '%s'" % d.name)
    warnings = []
    for p in M["params"]:
        if p["dir"] == "in":
            continue
        a = np.asarray(tensors.get(p["name"]))
        want = tuple(p["shape"])
        if a.shape != want:
            fail("golden", "golden function '%s' left `%s` with shape %s, the output is %s" % (d.name, p["name"], a.shape, want))
        np.save(os.path.join(DIR, "out_" + p["file"]), np.ascontiguousarray(a.astype(p["dtype"], copy=False)))
    finish({"ok": True, "warnings": warnings, "golden": d.name})


try:
    if M["mode"] == "callback":
        run_callback()
    else:
        run_golden()
except SystemExit:
    raise
except BaseException as e:
    fail("bridge", "the pld Python bridge failed: %s: %s" % (type(e).__name__, e), tb_tail(e))
