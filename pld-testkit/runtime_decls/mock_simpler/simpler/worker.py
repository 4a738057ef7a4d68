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


class Worker:
    def __init__(self, level, platform, runtime, device_ids, num_sub_workers=0, **kw):
        log("worker", level=level, platform=platform, runtime=runtime, device_ids=list(device_ids))
        self.names, self.inited = [], False

    def register(self, callable_):
        self.names.append(callable_)
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
