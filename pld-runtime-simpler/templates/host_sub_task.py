${args} = TaskArgs()
${tensors}
${scalars}
orch.submit_sub(sub_ids[${callback}], ${args})
