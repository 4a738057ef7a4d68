${args} = TaskArgs()
${windows}
${args}.add_tensor(make_tensor_arg(orch._worker, tensors["__${domain}_ord"][${rank}]), TensorArgType.INOUT)
${args}.add_scalar(__${domain}[${rank}].domain_size)
${args}.add_scalar(__${domain}[${rank}].device_ctx)
${core_num}
${args}_config = CallConfig()
${args}_config.aicpu_thread_num = config.aicpu_thread_num
_keep.append(${args})
orch.submit_next_level(callables[${variant}], ${args}, ${args}_config, worker=${rank})
