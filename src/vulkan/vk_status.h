// VkResult to hal_status: the one table that maps every Vulkan result code, with its name for
// messages.
//
// Every failing Vulkan call in the backend is reported through vk_fail(), so the text in
// hal_last_error() always carries the VkResult name (for instance VK_ERROR_DEVICE_LOST) next to
// what was attempted and a hint. Thread-safe: the table is constant.
#pragma once

#include <hal/hal.h>

#include "vulkan/vk.h"

#include <string_view>

namespace hal::vulkan {

// The enumerator name of |result|, such as "VK_ERROR_OUT_OF_DEVICE_MEMORY"; never NULL.
const char* vk_result_name(VkResult result);

// The hal_status a failing |result| stands for (VK_SUCCESS maps to HAL_SUCCESS).
hal_status vk_result_status(VkResult result);

// Records the failure "<what> failed (<VkResult name>). <hint>" through hal::fail and returns
// the mapped status. |hint| may be empty, then a generic hint for the status is used.
hal_status vk_fail(VkResult result, std::string_view what, std::string_view hint = {});

}  // namespace hal::vulkan
