import torch
from simpler.task_interface import CallConfig, CommBufferSpec, DataType, TaskArgs, TensorArgType, scalar_to_uint64
from pypto.runtime.tensor_arg import make_tensor_arg
from pypto.runtime.distributed_runner import _submit_chip


def _alloc_intermediates(tensors, world_size=1):
    ${intermediates}


def ${entry}(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):
    ${body}


${entry}._pypto_distributed_entry = True
