union { uint64_t u64; ${ctype} val; } ${name}_conv;
${name}_conv.u64 = args[${index}];
${ctype} ${name} = ${name}_conv.val;
