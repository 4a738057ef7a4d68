${args} = TaskArgs()
${tensors}
${tokens}
${scalars}
_keep.append(${args})
_submit_chip(orch, callables[${chip}], ${args}, config, ${worker})
