// TEST DECLARATIONS ONLY (pld-testkit): the orchestration API surface of
// runtime_artifacts.md §4.1-§4.3, declared (not implemented) to syntax-check emitted sources.
#pragma once
#include <cstdint>
#include "tensor.h"

struct PTO2TaskId {
    uint64_t raw;
};

struct TaskOutputTensors {
    PTO2TaskId task_id() const;
};

struct TensorCreateInfo {
    uint32_t shapes[5];
    uint32_t ndims;
    uint32_t dtype;
};

struct PTO2LaunchSpec {
    void set_block_num(int16_t n);  // a2a3
    void set_core_num(int16_t n);   // a5
    void set_require_sync_start(bool v);
};

struct CoreTaskArgs {
    void add_input(const ChipTensor& t);
    void add_output(const ChipTensor& t);
    void add_output(const TensorCreateInfo& t);
    void add_inout(const ChipTensor& t);
    void add_no_dep(const ChipTensor& t);
    template <typename T>
    void add_scalar(T v);
    void set_dependencies(const PTO2TaskId* ids, int32_t n);
    void set_allow_early_resolve(bool v);
    PTO2LaunchSpec launch_spec;
};

struct ChipTensorRef {
    const ChipTensor& ref() const;
};

struct ChipTaskArgs {
    ChipTensorRef tensor(int32_t i) const;
    uint64_t scalar(int32_t i) const;
};

struct PTO2OrchestrationConfig {
    int32_t expected_arg_count;
};

constexpr int32_t INVALID_KERNEL_ID = -1;

struct MixedKernels {
    int32_t aic_kernel_id = INVALID_KERNEL_ID;
    int32_t aiv0_kernel_id = INVALID_KERNEL_ID;
    int32_t aiv1_kernel_id = INVALID_KERNEL_ID;
};

TaskOutputTensors rt_submit_aiv_task(int32_t func_id, const CoreTaskArgs& args);
TaskOutputTensors rt_submit_aic_task(int32_t func_id, const CoreTaskArgs& args);
TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args);
TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args);
int32_t rt_available_cluster_count();
int32_t rt_available_aiv_count();

template <typename T>
T from_u64(uint64_t v);
template <typename T>
uint64_t to_u64(T v);

enum class PTO2ScopeMode { AUTO, MANUAL };
struct PTO2ScopeGuard {
    explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO);
    ~PTO2ScopeGuard();
    explicit operator bool() const { return true; }
};
#define PTO2_SCOPE(...) if (PTO2ScopeGuard pto2_scope_guard_{__VA_ARGS__})
