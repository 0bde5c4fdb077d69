// Validation-layer bookkeeping.
//
// With HAL_VULKAN_VALIDATION=1 the instance enables VK_LAYER_KHRONOS_validation (when it is
// installed) and routes its messages to hal::log(). Every message of error severity also bumps a
// process-wide counter, so tests can assert that a run was clean. Thread-safe.
//
// HAL_VULKAN_VALIDATION=gpu does the same and also checks, inside every kernel, the index of
// each access to a storage buffer's runtime array against the bound range
// (spirv_bounds_check.h); the first synchronisation after a launch that accessed out of bounds
// fails with HAL_ERROR_LAUNCH_FAILED naming the kernel, the parameter and the index.
#pragma once

#include <cstdint>

namespace hal::vulkan {

// The number of validation errors reported since the process started (0 when validation is off).
uint64_t validation_error_count();

// Whether the validation layer is active in the current instance.
bool validation_enabled();

// Called by the messenger callback; exposed for the instance code only.
void note_validation_error();
void set_validation_enabled(bool enabled);

// Whether kernels loaded from now on get bounds checks (HAL_VULKAN_VALIDATION=gpu).
bool bounds_checks_enabled();
void set_bounds_checks_enabled(bool enabled);

}  // namespace hal::vulkan
