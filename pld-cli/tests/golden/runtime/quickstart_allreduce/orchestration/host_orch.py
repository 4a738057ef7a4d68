import torch
from simpler.task_interface import CallConfig, CommBufferSpec, DataType, TaskArgs, TensorArgType, scalar_to_uint64
from pypto.runtime.tensor_arg import make_tensor_arg
from pypto.runtime.distributed_runner import _submit_chip


def _alloc_intermediates(tensors, world_size=1):
    tensors["__comm_d0_ord"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() for _ in range(max(world_size, 1))]


def host_orch(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):
    NR = tensors["inputs"].shape[0]
    with (_domain_provider or orch.allocate_domain)(
        name="comm_d0",
        workers=[*range(world_size)],
        window_size=((((1024 + 31) // 32) * 32)) + (((((world_size * 4) + 31) // 32) * 32)),
        buffers=[
            CommBufferSpec(name="data_buf", dtype="opaque", count=1024, nbytes=(((1024 + 31) // 32) * 32)),
            CommBufferSpec(name="signal_buf", dtype="opaque", count=(world_size * 4), nbytes=((((world_size * 4) + 31) // 32) * 32)),
        ],
    ) as __comm_d0:
        for r in range(0, world_size, 1):
            _ta_0 = TaskArgs()
            _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["inputs"][r:r + 1, 0:1, 0:256].view((1, 256,))), TensorArgType.INPUT)
            _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["outputs"][r:r + 1, 0:1, 0:256].view((1, 256,))), TensorArgType.OUTPUT_EXISTING)
            _ta_0.add_tensor(__comm_d0[r].buffers["data_buf"].tensor(shapes=(1, 256,), dtype=DataType.FLOAT32), TensorArgType.INOUT)
            _ta_0.add_tensor(__comm_d0[r].buffers["signal_buf"].tensor(shapes=(NR, 1,), dtype=DataType.INT32), TensorArgType.INOUT)
            _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["__comm_d0_ord"][r]), TensorArgType.INOUT)
            _ta_0.add_scalar(__comm_d0[r].device_ctx)
            _ta_0.add_scalar(__comm_d0[r].device_ctx)
            _keep.append(_ta_0)
            _submit_chip(orch, callables["chip_orch"], _ta_0, config, r)


host_orch._pypto_distributed_entry = True
