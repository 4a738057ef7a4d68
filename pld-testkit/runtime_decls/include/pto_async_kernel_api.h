// TEST DECLARATIONS ONLY (pld-testkit): the deferred-completion kernel API of
// runtime_artifacts.md §5.4, declared to syntax-check emitted wrappers.
#pragma once
#include <cstdint>
#ifndef __gm__
#define __gm__
#endif
#define MAX_COMPLETIONS_PER_TASK 64
struct AsyncCtx;
AsyncCtx* get_async_ctx(__gm__ int64_t* raw_args);
void save_expected_notification_counter(AsyncCtx* ctx, __gm__ int32_t* addr, int64_t expected);
