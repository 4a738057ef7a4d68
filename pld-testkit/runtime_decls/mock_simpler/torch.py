"""TEST STAND-IN (pld-testkit): a numpy-backed sliver of torch for run.py / host_orch.py."""
import numpy as np

float32, float16, bfloat16 = np.float32, np.float16, np.float16
int8, int16, int32, int64, uint8, bool = np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_


class Tensor(np.ndarray):
    def share_memory_(self):
        self.shared = True
        return self

    def is_shared(self):
        return getattr(self, "shared", False) or (self.base is not None and getattr(self.base, "shared", False))

    def numpy(self):
        return np.asarray(self)

    def view(self, *args, **kw):
        """torch's `view(shape)`: a reshape that never copies (numpy's dtype views otherwise)."""
        if len(args) == 1 and isinstance(args[0], tuple):
            r = np.ndarray.reshape(self, args[0])
            if not np.shares_memory(r, self):
                raise RuntimeError("view size is not compatible with input tensor's size and stride")
            return r
        return np.ndarray.view(self, *args, **kw)


def zeros(shape, dtype=np.float32):
    return np.zeros(shape, dtype=dtype).view(Tensor)


def from_numpy(a):
    return np.asarray(a).view(Tensor)


def frombuffer(buffer, dtype, count=-1):
    return np.frombuffer(buffer, dtype=dtype, count=count).view(Tensor)


def as_strided(t, size, stride):
    a = np.asarray(t)
    return np.lib.stride_tricks.as_strided(a, shape=size, strides=[s * a.itemsize for s in stride]).view(Tensor)


def add(a, b):
    return np.add(a, b)
