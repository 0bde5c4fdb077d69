// hal_ptx_cpu_get_stats (ptx_cpu.h).
#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/ptx_cpu.h"

#include <cstddef>

using hal::ptx_cpu::Context;
using hal::ptx_cpu::Driver;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;

extern "C" __attribute__((visibility("default"))) int hal_ptx_cpu_get_stats(
    void* context, hal_ptx_cpu_stats* stats) {
  return static_cast<int>(entry(__func__, [&] {
    if (stats == nullptr || stats->struct_size < sizeof(hal_ptx_cpu_stats)) {
      return fail(CUDA_ERROR_INVALID_VALUE, "stats is NULL or its struct_size is too small");
    }
    Context* target = nullptr;
    if (context == nullptr) {
      if (CUresult result = hal::ptx_cpu::current_context(&target, /*ignore_sticky=*/true);
          result != CUDA_SUCCESS) {
        return result;
      }
    } else {
      if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
      target = Driver::get()->find_context(static_cast<CUcontext>(context));
      if (target == nullptr || !target->active()) {
        return fail(CUDA_ERROR_INVALID_CONTEXT, "not a retained context of this driver");
      }
    }
    stats->lane_instructions = target->lane_instructions();
    stats->warp_instructions = target->warp_instructions();
    stats->kernels = target->kernels();
    return CUDA_SUCCESS;
  }));
}
