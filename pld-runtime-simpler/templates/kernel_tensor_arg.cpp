__gm__ ChipTensor* ${name}_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[${index}]);
__gm__ ${ctype}* ${name} = reinterpret_cast<__gm__ ${ctype}*>(${name}_tensor->buffer.addr) + ${name}_tensor->start_offset;
