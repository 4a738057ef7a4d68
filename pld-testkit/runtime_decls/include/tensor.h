// TEST DECLARATIONS ONLY (pld-testkit): the ChipTensor layout of runtime_artifacts.md §5.3.
// Not the runtime's header; used to syntax-check emitted sources.
#pragma once
#include <cstdint>
#ifndef __gm__
#define __gm__
#endif

struct ChipTensorBuffer {
    uint64_t addr;  // @0
    uint64_t size;  // @8
};

struct ChipTensor {
    ChipTensorBuffer buffer;  // @0
    uint64_t reserved0;       // @16
    uint64_t start_offset;    // @24, in elements
    uint32_t reserved1;       // @32
    uint32_t ndims;           // @36
    uint32_t dtype;           // @40
    uint32_t shapes[5];       // @44
    uint32_t reserved2;       // @64
    uint32_t reserved3;       // @68
    uint32_t strides[5];      // @72, in elements
    uint8_t reserved4[36];    // pad to 128
};
static_assert(sizeof(ChipTensor) == 128, "ChipTensor is 128 bytes");
