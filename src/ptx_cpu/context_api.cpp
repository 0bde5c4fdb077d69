// Contexts: the primary context of each device (cuDevicePrimaryCtx*) and the calling thread's
// current context (cuCtx*). See context.h.
#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"

#include <string>

namespace hal::ptx_cpu {
namespace {

// A context handle a program passes in: one of the primary contexts, and retained.
CUresult check_context(CUcontext handle, Context** out) {
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  Context* context = Driver::get()->find_context(handle);
  if (context == nullptr) return fail(CUDA_ERROR_INVALID_CONTEXT, "not a context handle");
  if (!context->active()) {
    return fail(CUDA_ERROR_INVALID_CONTEXT, "the primary context of device " +
                                                std::to_string(context->device()) +
                                                " is not retained (cuDevicePrimaryCtxRetain)");
  }
  *out = context;
  return CUDA_SUCCESS;
}

// The scheduling flags and CU_CTX_LMEM_RESIZE_TO_MAX: accepted and kept; none changes how this
// device runs.
constexpr unsigned kContextFlags = CU_CTX_SCHED_MASK | CU_CTX_LMEM_RESIZE_TO_MAX;

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::Context;
using hal::ptx_cpu::Driver;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;

PTXCPU_ENTRY CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return entry(__func__, [&] {
    if (pctx == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pctx is NULL");
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    Context& context = Driver::get()->context(dev);
    context.retain();
    *pctx = context.handle();
    return CUDA_SUCCESS;
  });
}

// The last release waits for the context's work and destroys everything made in it.
PTXCPU_ENTRY CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  return entry(__func__, [&] {
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    if (Driver::get()->context(dev).release() != CUDA_SUCCESS) {
      return fail(CUDA_ERROR_INVALID_CONTEXT,
                  "the primary context of device " + std::to_string(dev) + " is not retained");
    }
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags,
                                                         int* active) {
  return entry(__func__, [&] {
    if (flags == nullptr || active == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, "flags or active is NULL");
    }
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    const Context& context = Driver::get()->context(dev);
    *flags = context.flags();
    *active = context.active() ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  return entry(__func__, [&] {
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    const unsigned schedule = flags & CU_CTX_SCHED_MASK;
    if ((flags & ~hal::ptx_cpu::kContextFlags) != 0 ||
        (schedule != CU_CTX_SCHED_AUTO && schedule != CU_CTX_SCHED_SPIN &&
         schedule != CU_CTX_SCHED_YIELD && schedule != CU_CTX_SCHED_BLOCKING_SYNC)) {
      return fail(CUDA_ERROR_INVALID_VALUE,
                  "unsupported context flags " + std::to_string(flags) +
                      " (a CU_CTX_SCHED_* value and CU_CTX_LMEM_RESIZE_TO_MAX are accepted)");
    }
    Driver::get()->context(dev).set_flags(flags);
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  return entry(__func__, [&] {
    if (pctx == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pctx is NULL");
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    Context* context = hal::ptx_cpu::current_thread_context();
    *pctx = context != nullptr ? context->handle() : nullptr;
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  return entry(__func__, [&] {
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    Context* context = nullptr;
    if (ctx != nullptr) {
      if (CUresult result = hal::ptx_cpu::check_context(ctx, &context); result != CUDA_SUCCESS) {
        return result;
      }
    }
    hal::ptx_cpu::set_current_thread_context(context);
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  return entry(__func__, [&] {
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::check_context(ctx, &context); result != CUDA_SUCCESS) {
      return result;
    }
    hal::ptx_cpu::push_thread_context(context);
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) {
  return entry(__func__, [&] {
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    Context* context = hal::ptx_cpu::pop_thread_context();
    if (context == nullptr) {
      return fail(CUDA_ERROR_INVALID_CONTEXT, "no context is current on this thread");
    }
    if (pctx != nullptr) *pctx = context->handle();
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  return entry(__func__, [&] {
    if (device == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "device is NULL");
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context, /*ignore_sticky=*/true);
        result != CUDA_SUCCESS) {
      return result;
    }
    *device = context->device();
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuCtxGetFlags(unsigned int* flags) {
  return entry(__func__, [&] {
    if (flags == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "flags is NULL");
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context, /*ignore_sticky=*/true);
        result != CUDA_SUCCESS) {
      return result;
    }
    *flags = context->flags();
    return CUDA_SUCCESS;
  });
}

// Stream priorities are not supported: the range is [0, 0], as CUDA reports then.
PTXCPU_ENTRY CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* leastPriority,
                                                          int* greatestPriority) {
  return entry(__func__, [&] {
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context, /*ignore_sticky=*/true);
        result != CUDA_SUCCESS) {
      return result;
    }
    if (leastPriority != nullptr) *leastPriority = 0;
    if (greatestPriority != nullptr) *greatestPriority = 0;
    return CUDA_SUCCESS;
  });
}

// CUDA 13.0's variant: the device of |ctx|, or of the current context when |ctx| is NULL.
PTXCPU_ENTRY CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  return entry(__func__, [&] {
    if (device == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "device is NULL");
    Context* context = nullptr;
    const CUresult result = ctx == nullptr
                                ? hal::ptx_cpu::current_context(&context, /*ignore_sticky=*/true)
                                : hal::ptx_cpu::check_context(ctx, &context);
    if (result != CUDA_SUCCESS) return result;
    *device = context->device();
    return CUDA_SUCCESS;
  });
}

// CUDA 13.0's variant: waits for the streams of |ctx|, or of the current context when NULL;
// returns its sticky error if a kernel faulted.
PTXCPU_ENTRY CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  return entry(__func__, [&] {
    Context* context = nullptr;
    const CUresult result = ctx == nullptr
                                ? hal::ptx_cpu::current_context(&context, /*ignore_sticky=*/true)
                                : hal::ptx_cpu::check_context(ctx, &context);
    if (result != CUDA_SUCCESS) return result;
    context->wait_idle();
    return context->sticky_error();
  });
}

// Waits for all streams of the current context; returns its sticky error if a kernel faulted.
PTXCPU_ENTRY CUresult CUDAAPI cuCtxSynchronize(void) {
  return entry(__func__, [&] {
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context, /*ignore_sticky=*/true);
        result != CUDA_SUCCESS) {
      return result;
    }
    context->wait_idle();
    return context->sticky_error();
  });
}
