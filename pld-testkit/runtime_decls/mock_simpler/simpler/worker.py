"""TEST STAND-IN (pld-testkit): Simpler's L3 `Worker` and `Orchestrator` (93adc3865e65,
`python/simpler/worker.py`, `orchestrator.py`) in every detail pld's run.py touches; it
compiles and runs no kernel.

- `register(target)`: a `ChipCallable` is registered as is; any other target must be callable
  and is serialised at once with `cloudpickle.dumps` (Simpler derives its hashid from that
  payload), so a function of a module cloudpickle can neither import nor pickle by value fails
  here with the `PicklingError` Simpler raises. The sub worker runs `cloudpickle.loads(payload)`.
- `make_tensor_arg(tensor, shapes, dtype)`: a view of a host allocation; a `share_memory_()`
  tensor is read-write across the fork, any other one copy-on-write and read-only (INPUT only).
- `submit_next_level`: no kernel runs. The chip's host tensors are staged by its
  ORCHESTRATION signature (`runtime_maker.cpp::stage_device_args`): an `OUT` tensor is not
  copied to the device, so after the run it holds what the device buffer held — here every
  byte `0xA5` (Simpler leaves it undefined); IN and INOUT tensors come back as they went.
- `submit_sub`: runs the registered function in a forked child process (as Simpler's sub
  worker processes are forked), with `MappedArgs` over the fork-inherited allocations; only
  writes into shared allocations reach the parent. A failure in the child fails the run.
"""
import os
import traceback

import numpy as np

from simpler import log
from simpler.buffer import MappedArgs, MappedArg, Tensor
from simpler.task_interface import ChipCallable, TensorArgType, get_element_size

try:
    import cloudpickle
except ImportError:  # pragma: no cover - the test harness provides the stand-in then
    cloudpickle = None

UNDEFINED_BYTE = 0xA5


class CallableHandle:
    def __init__(self, kind, target, name, payload=None):
        self.kind, self.target, self.name, self.payload = kind, target, name, payload


def _storage(t):
    while isinstance(t.base, np.ndarray):
        t = t.base
    return t


class _Window:
    def __init__(self, domain, name, nbytes):
        self.domain, self.name, self.nbytes = domain, name, nbytes

    def tensor(self, shapes, dtype, strides=None, byte_offset=0):
        t = Tensor("window", None, byte_offset, shapes, strides, dtype, False, where=(self.domain, self.name))
        if t.byte_offset + t.nbytes() > self.nbytes:
            raise ValueError(f"window view of {self.name} needs {t.byte_offset + t.nbytes()} bytes, has {self.nbytes}")
        return t


class _Rank:
    def __init__(self, name, rank, size, buffers):
        self.domain_rank, self.domain_size, self.device_ctx = rank, size, 0x1000 + rank
        self.buffers = {b.name: _Window(name, b.name, int(b.nbytes)) for b in buffers}


class Orchestrator:
    def __init__(self, worker):
        self._worker = worker
        self._live = set()

    def allocate_domain(self, name, workers, window_size, buffers):
        n = len(self._worker.device_ids)
        workers = list(workers)
        if not workers or len(set(workers)) != len(workers) or any(
                not isinstance(w, int) or not 0 <= w < n for w in workers):
            raise ValueError(f"allocate_domain({name!r}): workers {workers} must be unique indices in [0, {n})")
        if window_size <= 0 or sum(int(b.nbytes) for b in buffers) > window_size:
            raise ValueError(f"allocate_domain({name!r}): buffers exceed window_size {window_size}")
        if len({b.name for b in buffers}) != len(buffers) or name in self._live:
            raise ValueError(f"allocate_domain({name!r}): repeated buffer name or live domain")
        log("allocate_domain", name=name, workers=workers, window_size=int(window_size),
            buffers=[[b.name, int(b.count), int(b.nbytes)] for b in buffers])
        self._live.add(name)
        ranks = {w: _Rank(name, i, len(workers), buffers) for i, w in enumerate(workers)}
        live = self._live

        class Ctx:
            def __enter__(self):
                return ranks

            def __exit__(self, *a):
                live.discard(name)
                return False

        return Ctx()

    def submit_next_level(self, handle, ta, cfg, worker):
        if not isinstance(handle, CallableHandle) or handle.kind != "chip":
            raise TypeError(f"submit_next_level: {handle!r} is not a registered ChipCallable handle")
        if not isinstance(worker, int) or isinstance(worker, bool) or worker < 0:
            raise ValueError(f"submit_next_level: worker must be a non-negative int, got {worker!r}")
        if worker >= len(self._worker.device_ids):
            raise ValueError(f"submit_next_level: worker {worker} has no device")
        sig = handle.target.signature
        for i, (t, _tag) in enumerate(ta.tensors):
            if t.kind == "host" and i < len(sig) and sig[i] == 2:
                # OUT: never copied to the device; the copy back brings the device's bytes.
                t.storage[t.byte_offset:t.byte_offset + t.nbytes()] = UNDEFINED_BYTE
        log("submit", callable=handle.name, worker=worker,
            tensors=[[t.kind, tag.name] for t, tag in ta.tensors], scalars=len(ta.scalars))

    def submit_sub(self, handle, ta):
        if not isinstance(handle, CallableHandle) or handle.kind != "sub":
            raise TypeError(f"submit_sub: {handle!r} is not a registered Python callable handle")
        if self._worker.num_sub_workers < 1:
            raise RuntimeError("submit_sub: the Worker has no sub workers (num_sub_workers=0)")
        for t, _ in ta.tensors:
            if t.kind != "host":
                raise ValueError("sub-worker argument is a DEVICE-space tensor; it cannot be mapped into a host process")
        log("submit_sub", name=handle.name, tensors=[tag.name for _, tag in ta.tensors], scalars=len(ta.scalars))
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            code = 0
            try:
                fn = cloudpickle.loads(handle.payload)
                fn(MappedArgs([MappedArg(t) for t, _ in ta.tensors], ta.scalars))
            except BaseException:
                os.write(wr, traceback.format_exc().encode())
                code = 1
            os.close(wr)
            os._exit(code)
        os.close(wr)
        msg = b""
        while True:
            chunk = os.read(rd, 65536)
            if not chunk:
                break
            msg += chunk
        os.close(rd)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            raise RuntimeError(f"sub worker {handle.name!r} failed:\n{msg.decode(errors='replace')}")


class Worker:
    def __init__(self, level, platform, runtime, device_ids, num_sub_workers=0, enable_sdma=False, **kw):
        log("worker", level=level, platform=platform, runtime=runtime, device_ids=list(device_ids))
        self.level, self.device_ids, self.num_sub_workers = level, list(device_ids), int(num_sub_workers)
        self.names, self.inited = [], False

    def register(self, target, *, workers=None):
        if isinstance(target, ChipCallable):
            self.names.append(target)
            log("register", kind="chip", signature=target.signature, func_name=target.func_name,
                children=[[i, c.signature] for i, c in target.children])
            return CallableHandle("chip", target, "handle%d" % (len(self.names) - 1))
        if not callable(target):
            raise TypeError("Worker.register: non-ChipCallable target must be callable")
        payload = cloudpickle.dumps(target)
        self.names.append(target)
        log("register", kind="sub", name=target.__name__)
        return CallableHandle("sub", None, target.__name__, payload)

    def make_tensor_arg(self, tensor, shapes, dtype, *, strides=None):
        if not isinstance(dtype, int) or isinstance(dtype, bool):
            raise TypeError(f"make_tensor_arg: dtype is the DataType int value, got {dtype!r}")
        st = _storage(tensor)
        flat = st.reshape(-1).view(np.uint8) if st.flags["C_CONTIGUOUS"] else None
        if flat is None:
            raise ValueError("make_tensor_arg: the tensor's storage is not one contiguous allocation")
        off = tensor.__array_interface__["data"][0] - st.__array_interface__["data"][0]
        shared = bool(getattr(tensor, "is_shared", lambda: False)())
        t = Tensor("host", flat, off, shapes, strides, dtype, read_only=not shared)
        if off < 0 or off + t.nbytes() > flat.nbytes or t.nbytes() != tensor.nbytes:
            raise ValueError("make_tensor_arg: shapes/dtype do not describe the tensor")
        if get_element_size(dtype) != tensor.itemsize:
            raise ValueError("make_tensor_arg: dtype does not match the tensor's element size")
        return t

    def init(self, prewarm_config=None):
        self.inited = True
        log("init")

    def run(self, orch_fn, args=None, config=None):
        assert self.inited, "run before init"
        orch_fn(Orchestrator(self), args, config)
        log("run")

    def close(self):
        log("close")
