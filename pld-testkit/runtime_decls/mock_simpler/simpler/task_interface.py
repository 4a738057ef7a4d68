"""TEST STAND-IN (pld-testkit): the task_interface names run.py and host_orch.py use."""
import enum

import numpy as np


class ArgDirection(enum.IntEnum):
    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3


class TensorArgType:
    INPUT, OUTPUT_EXISTING, INOUT, OUTPUT, NO_DEP = "INPUT", "OUTPUT_EXISTING", "INOUT", "OUTPUT", "NO_DEP"


class DataType:
    FLOAT16, FLOAT32, BFLOAT16, INT8, INT16, INT32, INT64 = "FLOAT16", "FLOAT32", "BFLOAT16", "INT8", "INT16", "INT32", "INT64"
    UINT8, UINT16, UINT32, UINT64, BOOL = "UINT8", "UINT16", "UINT32", "UINT64", "BOOL"


class CallConfig:
    def __init__(self):
        self.aicpu_thread_num = 0


class CommBufferSpec:
    def __init__(self, name, dtype, count, nbytes):
        self.name, self.dtype, self.count, self.nbytes = name, dtype, count, nbytes


class TaskArgs:
    def __init__(self):
        self.tensors, self.scalars = [], []

    def add_tensor(self, t, tag):
        self.tensors.append((t, tag))

    def add_scalar(self, v):
        self.scalars.append(int(v))


def scalar_to_uint64(v):
    if isinstance(v, float):
        return int(np.float32(v).view(np.uint32))
    return int(v) & (2 ** 64 - 1)


class CoreCallable:
    @staticmethod
    def build(signature, binary, **kw):
        return ("core", [int(s) for s in signature], binary)


class ChipCallable:
    @staticmethod
    def build(signature, func_name, binary, children, config_name=""):
        return ("chip", [int(s) for s in signature], func_name, [(i, c[1]) for i, c in children])
