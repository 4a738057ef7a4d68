"""TEST STAND-IN (pld-testkit): a numpy-backed sliver of torch for run.py / host_orch.py.

Every tensor it allocates lives in an anonymous MAP_SHARED mapping, so Simpler's
fork-inherited contract can be reproduced: a forked sub worker sees the same bytes, and
`is_shared()` (set by `share_memory_()`) decides, as in Simpler, whether the child may write
them (`simpler.worker.Worker.make_tensor_arg`: shared → READWRITE, else copy-on-write READ).
"""
import mmap

import numpy as np

float32, float16, bfloat16 = np.float32, np.float16, np.float16
int8, int16, int32, int64, uint8, bool = np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_
uint16, uint32 = np.uint16, np.uint32


class Tensor(np.ndarray):
    def share_memory_(self):
        _storage(self).shared = True
        return self

    def is_shared(self):
        return bool(getattr(_storage(self), "shared", False))

    def numpy(self):
        return np.asarray(self)

    def is_contiguous(self):
        return bool(self.flags["C_CONTIGUOUS"])

    def __getattr__(self, name):
        """A torch tensor method NumPy has as a function (`t.abs()`, `t.clamp`…)."""
        f = getattr(np, {"clamp": "clip"}.get(name, name), None)
        if name.startswith("__") or not callable(f):
            raise AttributeError(f"the torch stand-in's Tensor has no {name!r}")
        return lambda *a, **k: f(self, *a, **k)

    def view(self, *args, **kw):
        """torch's `view(shape)`: a reshape that never copies (numpy's dtype views otherwise)."""
        if len(args) == 1 and isinstance(args[0], tuple):
            r = np.ndarray.reshape(self, args[0])
            if not np.shares_memory(r, self):
                raise RuntimeError("view size is not compatible with input tensor's size and stride")
            return r
        return np.ndarray.view(self, *args, **kw)


def _storage(t):
    """The allocation a tensor views (numpy's base chain, up to the owning array)."""
    while isinstance(t.base, Tensor):
        t = t.base
    return t


def _shared_empty(shape, dtype):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    buf = mmap.mmap(-1, max(n * dtype.itemsize, 1))
    owner = np.frombuffer(buf, dtype=np.uint8).view(Tensor)
    return owner[: n * dtype.itemsize].view(dtype).reshape(shape)


def zeros(shape, dtype=np.float32):
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    return _shared_empty(shape, dtype)


def from_numpy(a):
    """A tensor over a copy of `a` in a MAP_SHARED mapping (torch would alias `a`; no pld
    script writes the numpy array afterwards)."""
    a = np.asarray(a)
    t = _shared_empty(a.shape, a.dtype)
    t[...] = a
    return t


def frombuffer(buffer, dtype, count=-1):
    return np.frombuffer(buffer, dtype=dtype, count=count).view(Tensor)


def as_strided(t, size, stride):
    a = np.asarray(t)
    return np.lib.stride_tricks.as_strided(a, shape=size, strides=[s * a.itemsize for s in stride]).view(Tensor)


def add(a, b):
    return np.add(a, b)


def __getattr__(name):
    """Any other torch function a callback calls is NumPy's function of that name (a
    numpy-backed torch: `torch.arange`, `torch.where`, …); a name NumPy lacks is an error."""
    try:
        return getattr(np, name)
    except AttributeError:
        raise AttributeError(f"the torch stand-in has no {name!r}") from None
