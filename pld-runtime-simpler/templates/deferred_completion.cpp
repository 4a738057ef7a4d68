// Deferred completion: the implementation of the .pto module's private declaration.
static __aicore__ void pypto_register_counter_completion(__gm__ int64_t* raw_args, __gm__ int32_t* counter_base,
                                                          int64_t element_offset, int64_t expected)
{
    static_assert(MAX_COMPLETIONS_PER_TASK == 64, "deferred completion expects 64 completion slots per task");
    if (raw_args == nullptr || counter_base == nullptr || element_offset < 0 || expected < 0 ||
        expected > static_cast<int64_t>(UINT32_MAX)) {
        __builtin_trap();
    }
    AsyncCtx ctx = get_async_ctx(raw_args);
    save_expected_notification_counter(ctx, counter_base + element_offset, static_cast<uint32_t>(expected));
}
