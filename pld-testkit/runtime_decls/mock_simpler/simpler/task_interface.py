"""TEST STAND-IN (pld-testkit): `simpler.task_interface` as Simpler 93adc3865e65 exposes it
(`python/simpler/task_interface.py`, the nanobind enums of `python/bindings/task_interface.cpp`).

- `DataType` is a non-arithmetic enum with the bound members and C++ values (`BOOL` exists in
  C++ but is not bound, so `DataType.BOOL` fails as it does on Simpler); sub workers see a
  tensor's dtype as this enum's int value, mapped back with `DataType(int(v)).name`.
- `TensorArgType` is an enum; `TaskArgs` takes wire tensors before scalars (`logic_error`),
  a read-only (copy-on-write) host tensor only as INPUT (`check_access_subset`), and scalars as
  uint64 (a negative or oversized int is a `TypeError`, as nanobind's `uint64_t`).
- `ChipCallable.build` keeps its orchestration signature: the stand-in worker stages host
  tensors by it (`runtime_maker.cpp::stage_device_args`).
"""
import enum
import struct


class ArgDirection(enum.IntEnum):
    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3


class DataType(enum.Enum):
    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    INT16 = 3
    INT8 = 4
    UINT8 = 5
    BFLOAT16 = 6
    INT64 = 7
    UINT64 = 8
    UINT16 = 9
    UINT32 = 10
    FP8E4M3FN = 12
    FP8E8M0 = 13
    FP4E2M1 = 14


_SIZES = {0: 4, 1: 2, 2: 4, 3: 2, 4: 1, 5: 1, 6: 2, 7: 8, 8: 8, 9: 2, 10: 4, 11: 1, 12: 1, 13: 1, 14: 1}


def dtype_value(dtype):
    """The int wire value of a dtype given as a `DataType` or its int value."""
    if isinstance(dtype, DataType):
        return dtype.value
    if isinstance(dtype, int) and not isinstance(dtype, bool) and dtype in _SIZES:
        return dtype
    raise TypeError(f"dtype must be a DataType or its int value, got {dtype!r}")


def get_element_size(dtype):
    return _SIZES[dtype_value(dtype)]


class TensorArgType(enum.Enum):
    INPUT = 0
    OUTPUT = 1
    INOUT = 2
    OUTPUT_EXISTING = 3
    NO_DEP = 4


class CallConfig:
    def __init__(self):
        self.aicpu_thread_num = 0


class CommBufferSpec:
    def __init__(self, name, dtype, count, nbytes, load_from_host=False, store_to_host=False):
        self.name, self.dtype, self.count, self.nbytes = name, dtype, count, nbytes


class TaskArgs:
    def __init__(self):
        self.tensors, self.scalars = [], []

    def add_tensor(self, t, tag):
        from simpler.buffer import Tensor

        if not isinstance(t, Tensor):
            raise TypeError(f"TaskArgs.add_tensor: expected a simpler Tensor, got {type(t).__name__}")
        if not isinstance(tag, TensorArgType):
            raise TypeError(f"TaskArgs.add_tensor: tag must be a TensorArgType, got {tag!r}")
        if self.scalars:
            raise RuntimeError("TaskArgs: every tensor must be added before any scalar")
        if t.read_only and tag != TensorArgType.INPUT:
            raise ValueError(f"TaskArgs.add_tensor: a copy-on-write (non-shared) host tensor may only be INPUT, not {tag.name}")
        self.tensors.append((t, tag))

    def add_scalar(self, v):
        if not isinstance(v, int) or not 0 <= v < 2 ** 64:
            raise TypeError(f"add_scalar(): incompatible function arguments: {v!r} is not a uint64")
        self.scalars.append(int(v))

    def tensor_count(self):
        return len(self.tensors)

    def scalar_count(self):
        return len(self.scalars)


def scalar_to_uint64(value):
    if isinstance(value, float):
        return struct.unpack("<I", struct.pack("<f", value))[0]
    return int(value) & 0xFFFFFFFFFFFFFFFF


class CoreCallable:
    def __init__(self, signature, binary):
        self.signature, self.binary = [int(s) for s in signature], binary

    @staticmethod
    def build(signature, binary, **kw):
        if len(signature) > 32:
            raise ValueError("CoreCallable: a kernel signature holds at most 32 entries")
        return CoreCallable(signature, binary)


class ChipCallable:
    def __init__(self, signature, func_name, binary, children):
        self.signature, self.func_name, self.binary, self.children = signature, func_name, binary, children

    @staticmethod
    def build(signature, func_name, binary, children, config_name=""):
        if len(signature) > 256 or len(children) > 1024:
            raise ValueError("ChipCallable: at most 256 signature entries and 1024 children")
        for fid, c in children:
            if not 0 <= int(fid) < 1024 or not isinstance(c, CoreCallable):
                raise ValueError(f"ChipCallable: child {fid!r} is not a CoreCallable with a func id in [0, 1024)")
        return ChipCallable([int(s) for s in signature], func_name[:63], binary, [(int(i), c) for i, c in children])
