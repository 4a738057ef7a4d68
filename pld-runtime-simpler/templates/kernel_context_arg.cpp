__gm__ int64_t* ${name} = reinterpret_cast<__gm__ int64_t*>(args[${index}]);
