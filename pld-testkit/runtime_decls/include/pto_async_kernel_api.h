// TEST DECLARATIONS ONLY (pld-testkit): the deferred-completion kernel API of
// runtime_artifacts.md §5.4, declared to syntax-check emitted wrappers.
#pragma once
#include <cstdint>
#ifndef __gm__
#define __gm__
#endif
#define MAX_COMPLETIONS_PER_TASK 64
struct AsyncCtx {
    uint64_t opaque[4];
};
AsyncCtx get_async_ctx(__gm__ int64_t* args);
void save_expected_notification_counter(AsyncCtx& ctx, volatile __gm__ void* counter_addr, uint32_t expected_value);
