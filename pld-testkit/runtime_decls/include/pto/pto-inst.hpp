// TEST DECLARATIONS ONLY (pld-testkit): the few pto-isa names an emitted wrapper uses.
#pragma once
#include <cstdint>
namespace pto {
struct half {
    uint16_t bits;
};
struct bfloat16_t {
    uint16_t bits;
};
}  // namespace pto
void set_atomic_none();
