"""TEST STAND-IN (pld-testkit) for cloudpickle, used only where the real package is not
installed (the test harness puts this folder on PYTHONPATH then).

It reproduces the rules Simpler's `Worker.register` depends on (cloudpickle 3.x semantics):
a function or class is pickled *by reference* (module + qualified name, the standard
`pickle` path, which imports the module to check it) unless its module is `__main__`, is
registered with `register_pickle_by_value` (or a parent package is), is missing from
`sys.modules`, or the object is not reachable by its qualified name — then *by value*: the
code object, the globals it names (each pickled by the same rules; modules by name), its
defaults, closure and `__dict__`; a class by its name, bases and attributes. Functions of one
module unpickled together share one fresh globals dict, as cloudpickle's do.
"""
import builtins
import importlib
import io
import marshal
import pickle
import sys
import types

__all__ = ["dumps", "loads", "register_pickle_by_value", "unregister_pickle_by_value",
           "list_registry_pickle_by_value", "PicklingError"]

PicklingError = pickle.PicklingError
_BY_VALUE = set()
loads = pickle.loads


def register_pickle_by_value(module):
    if not isinstance(module, types.ModuleType):
        raise ValueError(f"Input should be a module object, got {module!r} instead")
    if module.__name__ not in sys.modules:
        raise ValueError(f"{module} was not imported correctly, have you used an `import` statement to access it?")
    _BY_VALUE.add(module.__name__)


def unregister_pickle_by_value(module):
    _BY_VALUE.discard(module.__name__)


def list_registry_pickle_by_value():
    return _BY_VALUE.copy()


def _registered(name):
    parts = name.split(".")
    return any(".".join(parts[:i]) in _BY_VALUE for i in range(1, len(parts) + 1))


def _by_reference(obj):
    name = getattr(obj, "__module__", None)
    if name is None or name == "__main__" or name not in sys.modules:
        return False
    target = sys.modules[name]
    for part in obj.__qualname__.split("."):
        target = getattr(target, part, None)
        if target is None:
            return False
    return target is obj and not _registered(name)


def _code_globals(code, out):
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_globals(c, out)
    return out


def _make_function(code, globals_, name, ncells):
    cells = tuple(types.CellType() for _ in range(ncells)) if ncells is not None else None
    return types.FunctionType(marshal.loads(code), globals_, name, None, cells)


def _set_function_state(fn, state):
    g, defaults, kwdefaults, attrs, qualname, module, cells = state
    fn.__globals__.update(g)
    fn.__globals__.setdefault("__builtins__", builtins)
    fn.__defaults__, fn.__kwdefaults__, fn.__qualname__, fn.__module__ = defaults, kwdefaults, qualname, module
    fn.__dict__.update(attrs)
    for cell, (full, value) in zip(fn.__closure__ or (), cells or ()):
        if full:
            cell.cell_contents = value


def _make_class(name, bases, qualname, module):
    return types.new_class(name, bases, {}, lambda ns: ns.update(__qualname__=qualname, __module__=module))


def _set_class_state(cls, attrs):
    for k, v in attrs.items():
        setattr(cls, k, v)


def _import(name):
    return importlib.import_module(name)


class _Pickler(pickle.Pickler):
    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._globals = {}

    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return _import, (obj.__name__,)
        if isinstance(obj, types.FunctionType) and not _by_reference(obj):
            base = self._globals.setdefault(obj.__module__, {"__name__": obj.__module__})
            names = _code_globals(obj.__code__, set())
            g = {k: obj.__globals__[k] for k in sorted(names) if k in obj.__globals__}
            cells = None
            if obj.__closure__ is not None:
                cells = []
                for c in obj.__closure__:
                    try:
                        cells.append((True, c.cell_contents))
                    except ValueError:
                        cells.append((False, None))
            ncells = None if obj.__closure__ is None else len(obj.__closure__)
            state = (g, obj.__defaults__, obj.__kwdefaults__, dict(obj.__dict__), obj.__qualname__, obj.__module__,
                     cells)
            return (_make_function, (marshal.dumps(obj.__code__), base, obj.__name__, ncells), state, None, None,
                    _set_function_state)
        if isinstance(obj, type) and obj.__module__ not in ("builtins",) and not _by_reference(obj):
            attrs = {k: v for k, v in vars(obj).items()
                     if k not in ("__dict__", "__weakref__", "__module__", "__qualname__")}
            return (_make_class, (obj.__name__, obj.__bases__, obj.__qualname__, obj.__module__), attrs, None, None,
                    _set_class_state)
        return NotImplemented


def dumps(obj, protocol=None, buffer_callback=None):
    f = io.BytesIO()
    _Pickler(f).dump(obj)
    return f.getvalue()
