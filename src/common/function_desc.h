// What a function is, as far as launch checks go: its parameters, fixed block and shared
// memory. A C++ driver fills one per entry point (backend.h); the core keeps its own copy, read
// from the driver's hal_driver_function_info, and checks every launch against it.
#pragma once

#include <hal/hal.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hal {

struct ParamInfo {
  hal_param_kind kind = HAL_PARAM_VALUE;
  uint32_t size = 0;
  uint32_t alignment = 0;
  // A pointer the kernel receives as a raw address (PTX; SPIR-V push-constant addresses): an
  // argument of 0 reaches it as a null pointer. A descriptor-bound buffer cannot be null.
  bool nullable = false;
  hal_param_type type = HAL_PARAM_TYPE_UNKNOWN;  // values only: integer or float, if known
  // Pointers only: the bytes the kernel reads from the argument on, which must lie inside its
  // allocation (a uniform block's size); 0 when not known.
  uint64_t min_bytes = 0;
};

// What the runtime knows about a function; the backend fills it when the module loads.
struct FunctionDesc {
  std::string name;
  bool params_known = true;
  std::vector<ParamInfo> params;
  // The fixed block size per dimension: block[d] != 0 fixes dimension d, 0 leaves it to the
  // launch. Users see it only when all three are fixed (hal_function_info.block).
  uint32_t block[3] = {0, 0, 0};
  uint32_t static_shared_bytes = 0;
  uint32_t max_threads_per_block = 0;  // 0: the device's limit applies
  // Whether hal_launch_config.shared_bytes > 0 can be honoured (CUDA: always; Vulkan: only
  // through a module's shared-bytes specialization constant).
  bool dynamic_shared = true;
  // Whether the kernel's shared array is sized by hal_launch_config.shared_bytes alone (Vulkan's
  // shared-bytes constant): 0 would make an empty array, which SPIR-V forbids and drivers crash
  // on, so the runtime refuses it.
  bool shared_bytes_required = false;
  // Empty when the entry point runs on the device; otherwise why it cannot (a PTX kernel the
  // translation refused while the module's other kernels load). Such an entry is never handed
  // out: hal_module_get_function reports this as HAL_ERROR_NOT_SUPPORTED.
  std::string unavailable;
};

}  // namespace hal
