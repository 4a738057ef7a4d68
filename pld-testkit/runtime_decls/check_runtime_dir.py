#!/usr/bin/env python3
"""TEST CHECKER (pld-testkit): `check_runtime_dir.py DIR` checks a runtime directory written by
`pld compile --emit runtime` against runtime_artifacts.md §2, §3, §4, §7 and the §10 checklist,
without the runtime: JSON rules, loader variables, limits, and a run of host_orch.py against a
mock orchestrator whose dispatches are compared with the chip orchestrations and kernels.
Prints `ok` and exits 0, or prints every violation and exits 1.
"""
import ast
import importlib.util
import json
import re
import sys
import types
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ERRORS = []
DTYPES = ("bool int4 int8 int16 int32 int64 uint4 uint8 uint16 uint32 uint64 fp4 fp8e4m3fn fp8e5m2 "
          "fp8e8m0 fp16 fp32 bfloat16 hf4 hf8 index task_id").split()
NP = {"fp32": np.float32, "fp16": np.float16, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "uint8": np.uint8, "bool": np.bool_, "bfloat16": np.float16}


def err(msg):
    ERRORS.append(msg)


def compile_error(path):
    """Why the Python file at `path` does not compile (None when it does); writes no bytecode."""
    try:
        compile(path.read_text(), str(path), "exec")
    except (SyntaxError, ValueError) as e:
        return str(e)
    return None


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_meta(root):
    meta = json.loads((root / "distributed_meta.json").read_text())
    if meta.get("schema") != 2 or not is_int(meta.get("schema")):
        err("R1: schema must be 2")
    params = meta.get("params")
    if not isinstance(params, list):
        err("R1: params is not a list")
        params = []
    for p in params:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            err(f"R1: bad param {p!r}")
            continue
        if p.get("direction") not in ("In", "Out", "InOut"):
            err(f"R1: param {p['name']} direction {p.get('direction')!r}")
        s = p.get("shape")
        if s is not None and not (isinstance(s, list) and all(is_int(d) and (d >= 0 or d == -1) for d in s)):
            err(f"R1: param {p['name']} shape {s!r}")
        if p.get("dtype") not in DTYPES:
            err(f"R1: param {p['name']} dtype {p.get('dtype')!r}")
    n = meta.get("num_return_types", 0)
    if not is_int(n) or n < 0:
        err("R1: num_return_types")
    if "platform" in meta and not isinstance(meta["platform"], (str, type(None))):
        err("R1: platform")
    if meta.get("platform") not in ("a2a3sim", "a2a3", "a5sim", "a5"):
        err(f"R1: platform {meta.get('platform')!r} is not a runtime platform")
    if meta.get("backend_type", "Ascend910B") not in ("Ascend910B", "Ascend950"):
        err("R1: backend_type")
    dc = meta.get("distributed_config", {})
    if not isinstance(dc, dict):
        err("R1: distributed_config is not an object")
        dc = {}
    for k in dc:
        if k not in ("device_ids", "num_sub_workers", "runtime", "aicpu_thread_num"):
            err(f"R1: unknown distributed_config key {k}")
    ids = dc.get("device_ids", [0])
    if not (isinstance(ids, list) and ids and all(is_int(i) and i >= 0 for i in ids) and len(set(ids)) == len(ids)):
        err(f"R1: device_ids {ids!r}")
    if not is_int(dc.get("num_sub_workers", 0)) or dc.get("num_sub_workers", 0) < 0:
        err("R1: num_sub_workers")
    if not isinstance(dc.get("runtime", ""), str):
        err("R1: runtime")
    t = dc.get("aicpu_thread_num", 0)
    if not is_int(t) or t < 0 or t == 1:
        err("R1: aicpu_thread_num")
    return meta


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m


def check_layout(root):
    for p in (root / "next_levels").glob("builtin.*/**/*"):
        if p.is_file() and re.search(r"\{\{\s*\w+\s*\}\}", p.read_text(errors="replace")):
            err(f"R18: {p.relative_to(root)} keeps an unsubstituted {{{{key}}}}")
    for bad in ("kernel_config.py", "compiled_meta.json"):
        if (root / bad).exists():
            err(f"M14: top-level {bad} marks an L2 build")
    for p in root.rglob("*"):
        if p.suffix in (".so", ".o") or p.name == "cache":
            err(f"M13: runtime-written file {p.relative_to(root)} left behind")


def parse_wrapper(path):
    """(tensor slots, scalar slots) kernel_entry unpacks."""
    text = path.read_text()
    entry = text.split("// --- Kernel entry point ---", 1)
    if len(entry) != 2 or "// --- ptoas-generated code ---" not in entry[0]:
        err(f"{path}: sentinels missing")
        return 0, 0
    body = entry[1]
    tensors = re.findall(r"reinterpret_cast<__gm__ ChipTensor\*>\(args\[(\d+)\]\)", body)
    scalars = re.findall(r"_conv\.u64 = args\[(\d+)\]", body) + re.findall(
        r"reinterpret_cast<__gm__ int64_t\*>\(args\[(\d+)\]\)", body)
    idx = [int(i) for i in tensors] + sorted(int(i) for i in scalars)
    if idx != list(range(len(idx))):
        err(f"M1: {path.name} unpacks args out of order: {idx}")
    # M9: a tensor's data starts at buffer.addr plus start_offset counted in elements (the
    # offset is added to the typed pointer, never to the raw address).
    for p in re.findall(r"__gm__ ChipTensor\* (\w+)_tensor = reinterpret_cast", body):
        if not re.search(r"__gm__ [\w: ]+\* %s = reinterpret_cast<__gm__ [\w: ]+\*>\(%s_tensor->buffer\.addr\) \+ "
                         r"%s_tensor->start_offset;" % (p, p, p), body):
            err(f"M9: {path.name} does not address {p} as buffer.addr + start_offset elements")
    if "kernel_entry(__gm__ int64_t* args)" not in body:
        err(f"R7: {path.name} has no kernel_entry")
    return len(tensors), len(scalars)


def check_ctx_reads(pto):
    """M8: a kernel reads its CommContext only at slot 2 (rankId | rankNum << 32) and at
    windowsIn[k] (slot 4 + k), never windowsOut, which is left zero onboard."""
    text = pto.read_text()
    for m in re.finditer(r"func\.func @(\w+)\(([^)]*)\)[^{]*\{(.*?)\n  return\n  \}", text, re.S):
        name, params, body = m.group(1), m.group(2), m.group(3)
        ctxs = {p.split(":")[0].strip() for p in params.split(",") if p.strip().endswith("!pto.ptr<i64>")}
        windows_in = set(re.findall(r"(%\w+) = arith\.addi %c4_index, %\w+ : index", body))
        for arg, idx in re.findall(r"pto\.load_scalar (%\w+)\[(%\w+)\]", body):
            if arg in ctxs and idx != "%c2_index" and idx not in windows_in:
                err(f"M8: {pto.name} @{name} reads CommContext {arg} at {idx}, not rankId or windowsIn")


SPMD = ("%__pypto_spmd_block_idx: i32", "%__pypto_spmd_block_num: i32")


def check_block_ids(pto, d):
    """M11: Simpler does not program the AICore block-id registers under its dispatch
    (`intrinsic.h`: the CCE `get_block_idx()` / `get_block_num()` read stale values), so a
    kernel takes its block identity as the trailing `__pypto_spmd_block_idx/_num` i32
    parameters, which its wrapper fills from `get_block_idx(args)` / `get_block_num(args)`."""
    text = pto.read_text()
    for m in re.finditer(r"func\.func @(\w+)\(([^)]*)\)[^{]*\{(.*?)\n  return\n  \}", text, re.S):
        name, params, body = m.group(1), [p.strip() for p in m.group(2).split(",") if p.strip()], m.group(3)
        for builtin in ("pto.get_block_idx", "pto.get_block_num"):
            if builtin in body:
                err(f"M11: {pto.name} @{name} reads {builtin}, the hardware block id Simpler leaves stale; "
                    "take it as the trailing __pypto_spmd_block_idx/_num parameters")
        uses = any(p.split(":")[0] in body for p in SPMD)
        if uses and tuple(params[-2:]) != SPMD:
            err(f"M11: {pto.name} @{name} reads its block id but its signature does not end with {SPMD}")
        if tuple(params[-2:]) == SPMD:
            for w in (d / "kernels").glob(f"*/{name}.cpp"):
                t = w.read_text().split("// --- Kernel entry point ---", 1)[-1]
                if ("int32_t __pypto_spmd_block_idx = get_block_idx(args);" not in t
                        or "int32_t __pypto_spmd_block_num = get_block_num(args);" not in t
                        or not re.search(r"\b%s\([^;]*__pypto_spmd_block_idx, __pypto_spmd_block_num\);" % name, t)):
                    err(f"M11: {w.name} does not pass get_block_idx(args) / get_block_num(args) to {name}")


def check_chip(d):
    cfg = load(d / "kernel_config.py", "_kc_" + re.sub(r"\W", "_", d.name))
    for v in ("KERNELS", "ORCHESTRATION"):
        if not hasattr(cfg, v):
            err(f"{d.name}: kernel_config.py lacks {v}")
            return None
    orch = cfg.ORCHESTRATION
    if orch.get("function_name") != "aicpu_orchestration_entry" or len(orch["function_name"]) > 63:
        err(f"R9: {d.name} function_name")
    if not Path(orch["source"]).is_file() or Path(orch["source"]).parent != d / "orchestration":
        err(f"{d.name}: orchestration source {orch['source']} missing")
    osig = [int(x) for x in orch.get("signature", [])]
    if len(osig) > 256 or len(cfg.KERNELS) > 1024:
        err(f"R11: {d.name} signature/children limits")
    ids = [k["func_id"] for k in cfg.KERNELS]
    if ids != list(range(len(ids))) or any(not (0 <= i < 1024) for i in ids):
        err(f"R11: {d.name} func ids {ids} not dense from 0")
    kernels = {}
    for k in cfg.KERNELS:
        src = Path(k["source"])
        if k["core_type"] not in ("aiv", "aic") or src.parent != d / "kernels" / k["core_type"] or not src.is_file():
            err(f"M12: {d.name} kernel {k['name']} core_type/source {k['core_type']} {src}")
            continue
        if len(k.get("signature", [])) > 32:
            err(f"R11: {k['name']} kernel signature > 32")
        nt, ns = parse_wrapper(src)
        if nt != len(k.get("signature", [])):
            err(f"M4: {k['name']} signature lists {len(k.get('signature', []))} tensors, wrapper unpacks {nt}")
        kernels[k["func_id"]] = (k, nt, ns)
    for pto in sorted((d / "ptoas").glob("*.pto")):
        check_ctx_reads(pto)
        check_block_ids(pto, d)
    text = Path(orch["source"]).read_text()
    m = re.search(r"\.expected_arg_count = (\d+)", text)
    expected = int(m.group(1)) if m else None
    if expected is None or 'extern "C" {' not in text or "aicpu_orchestration_entry(const ChipTaskArgs& orch_args)" not in text:
        err(f"R9: {d.name} orchestration entry points")
    read_t = {int(i) for i in re.findall(r"orch_args\.tensor\((\d+)\)", text)}
    if read_t and read_t != set(range(len(read_t))):
        err(f"M5: {d.name} reads tensors {sorted(read_t)}")
    if len(read_t) != len(osig):
        err(f"M3: {d.name} ORCHESTRATION signature has {len(osig)} entries, orchestration reads {len(read_t)} tensors")
    # Tasks: each CoreTaskArgs block up to its submit.
    for block in re.split(r"CoreTaskArgs params\w*;", text)[1:]:
        sub = re.search(r"rt_submit_(aiv|aic)_task\((\d+),|MixedKernels mixed_\d+ = \{(-?\w+), (-?\w+),", block)
        if not sub:
            err(f"{d.name}: a task without a submit")
            continue
        adds = re.findall(r"\.(add_input|add_output|add_inout|add_no_dep|add_scalar)\(", block.split("rt_submit")[0])
        first_scalar = adds.index("add_scalar") if "add_scalar" in adds else len(adds)
        if any(a != "add_scalar" for a in adds[first_scalar:]):
            err(f"R12: {d.name} adds a tensor after a scalar")
        nt, ns = first_scalar, len(adds) - first_scalar
        if nt > 32 or ns > 16:
            err(f"R12: {d.name} task has {nt} tensors / {ns} scalars")
        fids = [int(sub.group(2))] if sub.group(2) else [int(x) for x in (sub.group(3), sub.group(4)) if x.lstrip("-").isdigit() and int(x) >= 0]
        for fid in fids:
            if fid not in kernels:
                err(f"M5: {d.name} submits unregistered func id {fid}")
                continue
            k, knt, kns = kernels[fid]
            want = [{1: "add_input", 2: "add_output", 3: "add_inout"}[int(s)] for s in k.get("signature", [])]
            if adds[:nt] != want:
                err(f"M1: {d.name} task of {k['name']} adds {adds[:nt]}, kernel signature {want}")
            if ns != kns:
                err(f"M1: {d.name} task of {k['name']} adds {ns} scalars, wrapper unpacks {kns}")
    read_s = {int(i) for i in re.findall(r"orch_args\.scalar\((\d+)\)", text)}
    if read_s and read_s != set(range(len(read_s))):
        err(f"M2: {d.name} reads scalars {sorted(read_s)}")
    return {"expected": expected, "signature": osig, "scalars": len(read_s),
            "runtime": getattr(cfg, "RUNTIME_CONFIG", {}).get("runtime")}


# ---- mock run of host_orch.py -------------------------------------------------------------
MOCKS = HERE / "mock_simpler"


def install_stubs(state):
    """`torch` and `simpler.task_interface` are the test stand-ins of mock_simpler/ (the ones
    run.py's tests use); the checker's TaskArgs adds the R13 checks. `pypto.runtime` is the
    checker's own: it checks R14 and routes dispatches to the mock orchestrator."""
    load(MOCKS / "torch.py", "torch")
    ti = load(MOCKS / "simpler" / "task_interface.py", "simpler.task_interface")

    class TaskArgs(ti.TaskArgs):
        def add_tensor(self, t, tag):
            if self.scalars:
                err("R13: host TaskArgs adds a tensor after a scalar")
            if not isinstance(tag, ti.TensorArgType):
                err(f"R13: tensor tag {tag!r} is not a TensorArgType")
            self.tensors.append((t, getattr(tag, "name", tag)))

        def add_scalar(self, v):
            if not is_int(v) or v < 0 or v >= 2 ** 64:
                err(f"R13: scalar {v!r} is not a uint64")
            self.scalars.append(v)

    ti.TaskArgs = TaskArgs
    ta = types.ModuleType("pypto.runtime.tensor_arg")

    def make_tensor_arg(worker, t):
        if not isinstance(t, np.ndarray) or not t.flags["C_CONTIGUOUS"]:
            err("R14: host slice not contiguous")
        return ("host", t)

    ta.make_tensor_arg = make_tensor_arg
    dr = types.ModuleType("pypto.runtime.distributed_runner")
    rr = {"next": 0}

    def submit_chip(orch, h, t, cfg, r):
        # A comm-less dispatch (worker None) goes round robin over the chips, as run.py places it.
        if r is None:
            r = rr["next"] % orch.world
            rr["next"] += 1
        orch.submit_next_level(h, t, cfg, worker=r, chip=True)

    dr._submit_chip = submit_chip
    dr._tensor_from_continuous = lambda ct: ct
    for name, mod in (("pypto", types.ModuleType("pypto")), ("pypto.runtime", types.ModuleType("pypto.runtime")),
                      ("pypto.runtime.tensor_arg", ta), ("pypto.runtime.distributed_runner", dr)):
        sys.modules[name] = mod


class Buffer:
    def __init__(self, spec):
        self.spec = spec

    def tensor(self, shapes, dtype, strides=None, byte_offset=0):
        size = sys.modules["simpler.task_interface"].get_element_size(dtype)
        n = int(np.prod([int(s) for s in shapes])) * size
        if n > self.spec.count:
            err(f"window view {shapes} of {self.spec.name} needs {n} bytes, the buffer has {self.spec.count}")
        return ("window", self.spec.name)


class Rank:
    def __init__(self, rank, size, buffers, domain):
        self.domain_rank, self.domain_size, self.device_ctx = rank, size, 0x1000 + rank
        self.buffers = {b.name: Buffer(b) for b in buffers}
        self.domain = domain


class Orch:
    def __init__(self, world):
        self.world, self.dispatches, self._worker, self.live = world, [], object(), set()
        self.subs = []

    def allocate_domain(self, name, workers, window_size, buffers):
        if not workers or len(set(workers)) != len(workers) or any(not is_int(w) or not 0 <= w < self.world for w in workers):
            err(f"R15: domain {name} workers {workers}")
        if window_size <= 0 or sum(b.nbytes for b in buffers) > window_size or name in self.live:
            err(f"R15: domain {name} window_size {window_size}")
        if len({b.name for b in buffers}) != len(buffers):
            err(f"R15: domain {name} buffer names repeat")
        for b in buffers:
            if b.nbytes % 32 or b.nbytes < b.count:
                err(f"M7: buffer {b.name} nbytes {b.nbytes} for {b.count} bytes")
        self.live.add(name)
        ranks = {w: Rank(i, len(workers), buffers, name) for i, w in enumerate(workers)}
        orch = self

        class Ctx:
            def __enter__(self):
                return ranks

            def __exit__(self, *a):
                orch.live.discard(name)
                return False

        return Ctx()

    def submit_next_level(self, handle, ta, cfg, worker, chip=False):
        if not is_int(worker) or worker < 0 or worker >= self.world:
            err(f"R16: worker {worker!r}")
        self.dispatches.append((handle, worker, ta))


    def submit_sub(self, handle, ta):
        self.subs.append((handle, ta))


class SubIds(dict):
    def __missing__(self, key):
        err(f"R17: host submits sub_ids[{key!r}], which is no sub_workers/ module")
        return key


def check_sub_workers(root):
    """R17: every sub_workers/<n>.py defines <n>(args); returns {n: _PARAMS}."""
    subs = {}
    for f in sorted((root / "sub_workers").glob("*.py")) if (root / "sub_workers").is_dir() else []:
        problem = compile_error(f)
        if problem:
            err(f"R17: {f.name} does not compile: {problem}")
            continue
        tree = ast.parse(f.read_text())
        fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == f.stem]
        if len(fns) != 1 or len(fns[0].args.args) != 1 or fns[0].args.kwonlyargs or fns[0].args.vararg:
            err(f"R17: {f.name} does not define {f.stem}(args)")
            continue
        m = load(f, "_pld_check_sw." + f.stem)
        subs[f.stem] = list(getattr(m, "_PARAMS", []))
    return subs


class Callables(dict):
    def __missing__(self, key):
        err(f"R4: host dispatches callables[{key!r}], which is no next_levels/ chip")
        return key


def mock_run(root, meta, chips, world):
    state = {}
    install_stubs(state)
    host = load(root / "orchestration" / "host_orch.py", "_pld_check.host_orch")
    entries = [f for f in vars(host).values() if callable(f) and getattr(f, "_pypto_distributed_entry", False)
               and getattr(f, "__module__", None) == host.__name__]
    if len(entries) != 1:
        err(f"R3: {len(entries)} tagged entries")
        return
    tensors = {}
    for p in meta["params"]:
        if p["shape"] is None:
            tensors[p["name"]] = 1
        else:
            dims = meta.get("pld_symbolic_shapes", {}).get(p["name"], p["shape"])
            shape = [d if isinstance(d, int) and d >= 0 else int(eval(str(d), {"__builtins__": {}, "min": min, "max": max},
                                                                         defaultdict(lambda: world))) for d in dims]
            tensors[p["name"]] = sys.modules["torch"].zeros(shape, dtype=NP[p["dtype"]]).share_memory_()
    given = dict(tensors)
    host._alloc_intermediates(tensors, world_size=world)
    for k, v in given.items():
        if tensors.get(k) is not v:
            err(f"R2: _alloc_intermediates replaces the caller's parameter {k}")
    outs = [p for p in meta["params"] if p["direction"] == "Out"]
    if meta.get("num_return_types", 0) > len(outs):
        err(f"R2: {meta['num_return_types']} return values but {len(outs)} Out parameters to carry them")
    params = {k: v for k, v in tensors.items() if isinstance(v, np.ndarray)}
    for k, v in params.items():
        if not v.is_shared():
            err(f"R13: host tensor {k} is not shared memory")
    subs = check_sub_workers(root)
    orch = Orch(world)
    entries[0](orch, None, sys.modules["simpler.task_interface"].CallConfig(), tensors=tensors,
               callables=Callables({k: k for k in chips}), sub_ids=SubIds({k: k for k in subs}), _keep=[],
               world_size=world)
    if not orch.dispatches:
        err("host_orch.py dispatched nothing")
    tag_of = {"in": "INPUT", "out": "OUTPUT_EXISTING", "inout": "INOUT"}
    for handle, ta in orch.subs:
        want = subs.get(handle)
        if want is None:
            continue
        tensors_w = [p for p in want if p[1] == "tensor"]
        if len(ta.tensors) != len(tensors_w) or len(ta.scalars) != len(want) - len(tensors_w):
            err(f"R17: sub {handle} gets {len(ta.tensors)} tensors + {len(ta.scalars)} scalars, "
                f"the module unpacks {len(tensors_w)} + {len(want) - len(tensors_w)}")
            continue
        for ((kind, obj), tag), (pname, _, d) in zip(ta.tensors, tensors_w):
            if kind != "host" or tag != tag_of[d]:
                err(f"M3: sub {handle} tensor {pname} is {kind} {tag}, the parameter is {d}")
            elif tag != "INPUT" and not any(np.shares_memory(obj, t) for t in params.values()):
                err(f"M3: sub {handle} output {pname} is not a view of a host tensor")
    tags = {1: "INPUT", 2: "OUTPUT_EXISTING", 3: "INOUT"}
    for handle, worker, ta in orch.dispatches:
        c = chips.get(handle)
        if c is None:
            continue
        n = len(ta.tensors) + len(ta.scalars)
        if c["expected"] is not None and n < c["expected"]:
            err(f"R10: dispatch of {handle} passes {n} args < expected {c['expected']}")
        if len(ta.scalars) < c["scalars"]:
            err(f"M2: dispatch of {handle} passes {len(ta.scalars)} scalars, the orchestration reads {c['scalars']}")
        real = ta.tensors[:len(c["signature"])]
        for i, ((kind, obj), tag) in enumerate(real):
            if kind == "host":
                if tag != tags[c["signature"][i]]:
                    err(f"M3: {handle} tensor {i} tagged {tag}, signature {c['signature'][i]}")
                if not any(np.shares_memory(obj, t) for t in params.values() if isinstance(t, np.ndarray)) and tag != "INPUT":
                    err(f"M3: {handle} output tensor {i} is not a view of a host tensor")
                if tag != "INPUT" and not obj.is_shared():
                    err("R13: non-shared tensor as output")
            if kind == "window" and tag == "INPUT" and c["signature"][i] != 1:
                err(f"M2: {handle} window tensor {i} tagged INPUT")
        extra = ta.tensors[len(c["signature"]):]
        toks = [obj for (kind, obj), tag in extra if kind == "host"]
        if any(tag != "INOUT" for _, tag in extra) or len(toks) != len(extra):
            err(f"M6: {handle} surplus tensors are not INOUT tokens")
        ord_lists = [v for k, v in tensors.items() if k.endswith("_ord")]
        for t in toks:
            owners = [(i, r) for i, lst in enumerate(ord_lists) for r, x in enumerate(lst) if x is t]
            if not owners:
                err(f"M6: {handle} token is not an ordering token")
            elif owners[0][1] != worker:
                err(f"M6: {handle} on worker {worker} passes rank {owners[0][1]}'s token")
    for lst in (v for k, v in tensors.items() if k.endswith("_ord")):
        if len(lst) != max(world, 1) or len({id(x) for x in lst}) != len(lst):
            err("M6: ordering tokens are not separate per rank")


def main():
    root = Path(sys.argv[1]).resolve()
    world = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    sys.path.insert(0, str(HERE / "python"))
    meta = check_meta(root)
    check_layout(root)
    host = root / "orchestration" / "host_orch.py"
    problem = compile_error(host)
    if problem:
        print(f"host_orch.py does not compile: {problem}")
        return 1
    tree = ast.parse(host.read_text())
    last = tree.body[-1]
    if not (isinstance(last, ast.Assign) and isinstance(last.targets[0], ast.Attribute)
            and last.targets[0].attr == "_pypto_distributed_entry"):
        err("R3: the last line does not tag the entry")
    if not any(isinstance(n, ast.FunctionDef) and n.name == "_alloc_intermediates" for n in tree.body):
        err("host_orch.py defines no _alloc_intermediates")
    chips, runtimes = {}, set()
    for d in sorted((root / "next_levels").iterdir()):
        if (d / "kernel_config.py").exists():
            problem = compile_error(d / "kernel_config.py")
            if problem:
                err(f"{d.name}/kernel_config.py does not compile: {problem}")
                continue
            c = check_chip(d)
            if c:
                chips[d.name] = c
                runtimes.add(c["runtime"])
    if not chips:
        err("R4: no next_levels/*/kernel_config.py")
    if len(runtimes) > 1:
        err(f"R5: runtimes {runtimes}")
    if not any(e.startswith("R1") for e in ERRORS):
        try:
            mock_run(root, meta, chips, world)
        except Exception as e:  # a broken host_orch.py is a finding, not a checker crash
            err(f"mock run of host_orch.py failed: {type(e).__name__}: {e}")
    if ERRORS:
        print("\n".join(ERRORS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
