
// Task ${n}: ${kernel}
CoreTaskArgs ${args};
${tensors}
${scalars}
${launch}
${dependencies}
${mixed}
${submit}
