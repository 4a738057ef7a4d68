"""TEST STAND-IN (pld-testkit): the wire `Tensor` and the sub-worker `MappedArg(s)` of Simpler
93adc3865e65 (`python/simpler/buffer.py`).

A `Tensor` names a view of a host allocation (storage, byte offset, shapes, strides in
elements, dtype as the `DataType` int value) or of a comm window. A sub worker gets
`MappedArgs`: a sequence of `MappedArg` (`args[i]`, `len(args)`; there is no `.tensor(i)`)
plus `scalar(i)` / `scalar_count()`; each `MappedArg` has `buffer` (a memoryview from the
view's origin to the end of its allocation, read-only for a copy-on-write tensor), `shapes`,
`strides` and `dtype` (an int).
"""
from collections.abc import Sequence


class Tensor:
    def __init__(self, kind, storage, byte_offset, shapes, strides, dtype, read_only, where=None):
        from simpler.task_interface import dtype_value

        self.kind, self.storage, self.byte_offset = kind, storage, int(byte_offset)
        self.shapes = tuple(int(s) for s in shapes)
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.shapes):
                strides.insert(0, acc)
                acc *= s
        self.strides = tuple(int(s) for s in strides)
        self.dtype, self.read_only, self.where = dtype_value(dtype), bool(read_only), where

    def nbytes(self):
        from simpler.task_interface import get_element_size

        n = 1
        for s in self.shapes:
            n *= s
        return n * get_element_size(self.dtype)


class MappedArg:
    def __init__(self, t):
        self._t = t
        self.byte_offset, self.shapes, self.strides, self.dtype = t.byte_offset, t.shapes, t.strides, t.dtype

    @property
    def buffer(self):
        view = memoryview(self._t.storage)[self.byte_offset:]
        return view.toreadonly() if self._t.read_only else view


class MappedArgs(Sequence):
    __slots__ = ("_scalars", "_tensors")

    def __init__(self, tensors, scalars):
        self._tensors = list(tensors)
        self._scalars = tuple(int(s) for s in scalars)

    def __getitem__(self, i):
        return self._tensors[i]

    def __len__(self):
        return len(self._tensors)

    def tensor_count(self):
        return len(self._tensors)

    def scalar_count(self):
        return len(self._scalars)

    def scalar(self, i):
        return self._scalars[i]
