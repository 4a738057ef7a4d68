// TEST DECLARATIONS ONLY (pld-testkit): the kernel-side intrinsics of runtime_artifacts.md
// §5.3 (block identity, lane id), declared to syntax-check emitted wrappers.
#pragma once
#include <cstdint>
#ifndef __gm__
#define __gm__
#endif
int32_t get_block_idx(__gm__ int64_t* args);
int32_t get_block_num(__gm__ int64_t* args);
int32_t get_sub_block_id(__gm__ int64_t* args);
