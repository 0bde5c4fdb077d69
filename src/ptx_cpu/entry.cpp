// The common path of every entry point (entry.h).
#include "ptx_cpu/entry.h"

#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/errors.h"
#include "ptx_cpu/logs.h"

#include <string>

namespace hal::ptx_cpu {
namespace {
thread_local const char* t_entry = "";
}  // namespace

EntryScope::EntryScope(const char* name) : previous_(t_entry) {
  t_entry = name;
}

EntryScope::~EntryScope() {
  t_entry = previous_;
}

const char* current_entry() {
  return t_entry;
}

CUresult fail(CUresult result, std::string_view why) {
  std::string line;
  if (*t_entry != '\0') {
    line += t_entry;
    line += ": ";
  }
  line += error_name_or_number(result);
  line += ": ";
  line += why;
  log_message(CU_LOG_LEVEL_ERROR, line);
  return result;
}

CUresult require_init() {
  if (Driver::get() != nullptr) return CUDA_SUCCESS;
  return fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called, or it failed");
}

CUresult check_device(CUdevice device) {
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  const int count = Driver::get()->device_count();
  if (device < 0 || device >= count) {
    return fail(CUDA_ERROR_INVALID_DEVICE,
                "device " + std::to_string(device) + " does not exist (there are " +
                    std::to_string(count) + "; HAL_PTX_CPU_DEVICES sets how many)");
  }
  return CUDA_SUCCESS;
}

CUresult current_context(Context** out, bool ignore_sticky) {
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  Context* context = current_thread_context();
  if (context == nullptr) {
    return fail(CUDA_ERROR_INVALID_CONTEXT,
                "no context is current on this thread (cuDevicePrimaryCtxRetain, then "
                "cuCtxSetCurrent)");
  }
  if (!context->active()) {
    return fail(CUDA_ERROR_INVALID_CONTEXT,
                "the current context is the primary context of device " +
                    std::to_string(context->device()) +
                    ", which has been released since (cuDevicePrimaryCtxRetain it again)");
  }
  if (!ignore_sticky) {
    // Not logged again: the fault was, once, and repeating it would push it out of the log.
    if (CUresult sticky = context->sticky_error(); sticky != CUDA_SUCCESS) return sticky;
  }
  *out = context;
  return CUDA_SUCCESS;
}

}  // namespace hal::ptx_cpu
