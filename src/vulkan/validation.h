// Validation-layer bookkeeping.
//
// With HAL_VULKAN_VALIDATION=1 the instance enables VK_LAYER_KHRONOS_validation (when it is
// installed) and routes its messages to hal::log(). Every message of error severity also bumps a
// process-wide counter, so tests can assert that a run was clean. Thread-safe.
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

}  // namespace hal::vulkan
