"""TEST STAND-IN (pld-testkit): a Worker that records, compiles and runs nothing."""
from simpler import log


class _Window:
    def __init__(self, domain, name):
        self.domain, self.name = domain, name

    def tensor(self, shapes, dtype, strides=None, byte_offset=0):
        return ("window", self.domain, self.name, [int(s) for s in shapes], dtype)


class _Rank:
    def __init__(self, name, rank, size, buffers):
        self.domain_rank, self.domain_size, self.device_ctx = rank, size, 0x1000 + rank
        self.buffers = {b.name: _Window(name, b.name) for b in buffers}


class _Orch:
    def __init__(self, worker):
        self._worker = worker

    def allocate_domain(self, name, workers, window_size, buffers):
        log("allocate_domain", name=name, workers=list(workers), window_size=int(window_size),
            buffers=[[b.name, int(b.count), int(b.nbytes)] for b in buffers])
        ranks = {w: _Rank(name, i, len(workers), buffers) for i, w in enumerate(workers)}

        class Ctx:
            def __enter__(self):
                return ranks

            def __exit__(self, *a):
                return False

        return Ctx()

    def submit_next_level(self, handle, ta, cfg, worker):
        tensors = []
        for t, tag in ta.tensors:
            tensors.append([t[0], tag] if isinstance(t, tuple) else ["host", tag])
        log("submit", callable=handle, worker=worker, tensors=tensors, scalars=len(ta.scalars))

    def submit_sub(self, handle, ta):
        """Runs the registered Python function at once (the mock has no scheduler)."""
        log("submit_sub", name=handle.__name__, tensors=[tag for _, tag in ta.tensors], scalars=len(ta.scalars))
        handle(_MappedArgs(ta))


class _MappedArg:
    """A host tensor as a sub worker sees it: `.buffer`, `.shapes`, `.strides` (elements), `.dtype`."""

    def __init__(self, t):
        import numpy as np

        a = np.asarray(t)
        self.buffer = a.reshape(-1).data if a.flags["C_CONTIGUOUS"] else None
        self.shapes = list(a.shape)
        self.strides = [s // a.itemsize for s in a.strides]
        self.dtype = "DataType." + {"float32": "FLOAT32", "float16": "FLOAT16", "int8": "INT8", "int16": "INT16",
                                    "int32": "INT32", "int64": "INT64", "uint8": "UINT8", "bool": "BOOL"}[a.dtype.name]


class _MappedArgs:
    def __init__(self, ta):
        self._t, self._s = [t for t, _ in ta.tensors], list(ta.scalars)

    def tensor(self, i):
        return _MappedArg(self._t[i][1])

    def scalar(self, j):
        return self._s[j]


class Worker:
    def __init__(self, level, platform, runtime, device_ids, num_sub_workers=0, **kw):
        log("worker", level=level, platform=platform, runtime=runtime, device_ids=list(device_ids))
        self.names, self.inited = [], False

    def register(self, callable_):
        self.names.append(callable_)
        if callable(callable_):
            log("register", kind="sub", name=callable_.__name__)
            return callable_
        log("register", kind=callable_[0], signature=callable_[1], func_name=callable_[2], children=callable_[3])
        return "handle%d" % (len(self.names) - 1)

    def init(self, prewarm_config=None):
        self.inited = True
        log("init")

    def run(self, orch_fn, args=None, config=None):
        assert self.inited, "run before init"
        orch_fn(_Orch(self), args, config)
        log("run")

    def close(self):
        log("close")
