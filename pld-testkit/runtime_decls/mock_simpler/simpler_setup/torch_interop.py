"""TEST STAND-IN (pld-testkit): `simpler_setup.torch_interop.make_tensor_arg(worker, tensor)` of
Simpler 93adc3865e65: the torch dtype must be in Simpler's map (no bool, no uint64), the tensor
contiguous; the result is `worker.make_tensor_arg(tensor, shapes=..., dtype=<DataType int>)`."""
import numpy as np


def _dtype_map():
    from simpler.task_interface import DataType

    return {np.dtype(k): v for k, v in ((np.float32, DataType.FLOAT32), (np.float16, DataType.FLOAT16),
                                        (np.int32, DataType.INT32), (np.int16, DataType.INT16),
                                        (np.int8, DataType.INT8), (np.uint8, DataType.UINT8),
                                        (np.int64, DataType.INT64), (np.uint16, DataType.UINT16),
                                        (np.uint32, DataType.UINT32))}


def torch_dtype_to_datatype(dt):
    return _dtype_map()[np.dtype(dt)]


def make_tensor_arg(worker, tensor):
    dt = _dtype_map().get(np.dtype(tensor.dtype))
    if dt is None:
        raise ValueError(f"Unsupported tensor dtype: {tensor.dtype}")
    if not tensor.flags["C_CONTIGUOUS"]:
        raise ValueError("make_tensor_arg requires a contiguous tensor; call tensor.contiguous() first.")
    shapes = tuple(int(s) for s in tensor.shape)
    return worker.make_tensor_arg(tensor, shapes=shapes, dtype=int(dt.value))
