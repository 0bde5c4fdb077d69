// Functions: names, parameters, attributes (cuFuncGetName, cuFuncGetParamInfo,
// cuFuncGetAttribute, cuFuncSetAttribute, cuFuncGetModule).
#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/handles.h"
#include "ptx_cpu/module.h"

#include <fmt/format.h>

#include <string>

namespace hal::ptx_cpu {
namespace {

CUresult find_function(CUfunction handle, std::shared_ptr<Function>* out) {
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  *out = function_handles().find(handle);
  if (*out == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "not a function of a loaded module");
  return CUDA_SUCCESS;
}

int max_dynamic_shared_limit(const Function& function) {
  return kSharedPerBlockOptin - static_cast<int>(function.info().static_shared_bytes);
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;
using hal::ptx_cpu::Function;

PTXCPU_ENTRY CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction hfunc) {
  return entry(__func__, [&] {
    if (name == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "name is NULL");
    std::shared_ptr<Function> function;
    if (CUresult result = hal::ptx_cpu::find_function(hfunc, &function); result != CUDA_SUCCESS) {
      return result;
    }
    *name = function->info().name.c_str();  // lives as long as the module
    return CUDA_SUCCESS;
  });
}

// Offset and size in the parameter buffer; an index past the last parameter is
// CUDA_ERROR_INVALID_VALUE (not logged: it is how callers find the count). |paramSize| may be
// NULL.
PTXCPU_ENTRY CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
                                                 size_t* paramOffset, size_t* paramSize) {
  return entry(__func__, [&] {
    if (paramOffset == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "paramOffset is NULL");
    std::shared_ptr<Function> function;
    if (CUresult result = hal::ptx_cpu::find_function(func, &function); result != CUDA_SUCCESS) {
      return result;
    }
    const auto& params = function->info().params;
    if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
    *paramOffset = params[paramIndex].offset;
    if (paramSize != nullptr) *paramSize = params[paramIndex].size;
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  return entry(__func__, [&] {
    if (hmod == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "hmod is NULL");
    std::shared_ptr<Function> function;
    if (CUresult result = hal::ptx_cpu::find_function(hfunc, &function); result != CUDA_SUCCESS) {
      return result;
    }
    std::shared_ptr<hal::ptx_cpu::Module> module = function->module_shared();
    if (module == nullptr) return fail(CUDA_ERROR_INVALID_HANDLE, "the module is unloaded");
    *hmod = reinterpret_cast<CUmodule>(module.get());
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib,
                                                 CUfunction hfunc) {
  return entry(__func__, [&] {
    if (pi == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pi is NULL");
    std::shared_ptr<Function> function;
    if (CUresult result = hal::ptx_cpu::find_function(hfunc, &function); result != CUDA_SUCCESS) {
      return result;
    }
    const hal::ptx_vm::KernelInfo& info = function->info();
    switch (hal::ptx_cpu::as_int(attrib)) {
      case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *pi = static_cast<int>(function->max_threads_per_block());
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
        *pi = static_cast<int>(info.static_shared_bytes);
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
        *pi = 0;  // module-scope .const variables are module data, not per kernel
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
        *pi = static_cast<int>(info.local_bytes);
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_NUM_REGS:
        *pi = static_cast<int>(info.registers);
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_PTX_VERSION:
        *pi = static_cast<int>(function->ptx_version());
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
        *pi = static_cast<int>(hal::ptx_cpu::kSm);
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
        *pi = 0;
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *pi = function->max_dynamic_shared.load();
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        *pi = function->carveout.load();
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        *pi = 0;  // no clusters on compute capability 8.0
        return CUDA_SUCCESS;
      default:
        return fail(CUDA_ERROR_INVALID_VALUE,
                    "no function attribute " + std::to_string(hal::ptx_cpu::as_int(attrib)));
    }
  });
}

// MAX_DYNAMIC_SHARED_SIZE_BYTES up to 163 KiB minus the kernel's static shared memory, and
// PREFERRED_SHARED_MEMORY_CARVEOUT (-1 to 100, a hint) can be set; the others are read-only
// here (CUDA_ERROR_INVALID_VALUE).
PTXCPU_ENTRY CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                                 int value) {
  return entry(__func__, [&] {
    std::shared_ptr<Function> function;
    if (CUresult result = hal::ptx_cpu::find_function(hfunc, &function); result != CUDA_SUCCESS) {
      return result;
    }
    switch (hal::ptx_cpu::as_int(attrib)) {
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: {
        const int limit = hal::ptx_cpu::max_dynamic_shared_limit(*function);
        if (value < 0 || value > limit) {
          return fail(
              CUDA_ERROR_INVALID_VALUE,
              fmt::format("{} bytes of dynamic shared memory for '{}': it may have 0 to "
                          "{} ({} bytes per block minus {} static)",
                          value, function->info().name, limit, hal::ptx_cpu::kSharedPerBlockOptin,
                          function->info().static_shared_bytes));
        }
        function->max_dynamic_shared.store(value);
        return CUDA_SUCCESS;
      }
      case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100) {
          return fail(CUDA_ERROR_INVALID_VALUE, "the carveout is a percentage, or -1");
        }
        function->carveout.store(value);
        return CUDA_SUCCESS;
      default:
        return fail(CUDA_ERROR_INVALID_VALUE, "function attribute " +
                                                  std::to_string(hal::ptx_cpu::as_int(attrib)) +
                                                  " cannot be set on this device");
    }
  });
}
