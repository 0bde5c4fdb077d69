#include "vulkan/vk_status.h"

#include "common/error.h"

#include <fmt/format.h>

#include <string>

namespace hal::vulkan {
namespace {

struct ResultEntry {
  VkResult result;
  const char* name;
  hal_status status;
};

// The single VkResult table of the backend.
constexpr ResultEntry kResults[] = {
    {VK_SUCCESS, "VK_SUCCESS", HAL_SUCCESS},
    {VK_NOT_READY, "VK_NOT_READY", HAL_ERROR_NOT_READY},
    {VK_TIMEOUT, "VK_TIMEOUT", HAL_ERROR_TIMEOUT},
    {VK_EVENT_SET, "VK_EVENT_SET", HAL_SUCCESS},
    {VK_EVENT_RESET, "VK_EVENT_RESET", HAL_SUCCESS},
    {VK_INCOMPLETE, "VK_INCOMPLETE", HAL_ERROR_INTERNAL},
    {VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY", HAL_ERROR_OUT_OF_MEMORY},
    {VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY", HAL_ERROR_OUT_OF_MEMORY},
    {VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED", HAL_ERROR_UNAVAILABLE},
    {VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST", HAL_ERROR_DEVICE_LOST},
    {VK_ERROR_MEMORY_MAP_FAILED, "VK_ERROR_MEMORY_MAP_FAILED", HAL_ERROR_OUT_OF_MEMORY},
    {VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT", HAL_ERROR_UNAVAILABLE},
    {VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT", HAL_ERROR_NOT_SUPPORTED},
    {VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT", HAL_ERROR_NOT_SUPPORTED},
    {VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER", HAL_ERROR_UNAVAILABLE},
    {VK_ERROR_TOO_MANY_OBJECTS, "VK_ERROR_TOO_MANY_OBJECTS", HAL_ERROR_OUT_OF_MEMORY},
    {VK_ERROR_FORMAT_NOT_SUPPORTED, "VK_ERROR_FORMAT_NOT_SUPPORTED", HAL_ERROR_NOT_SUPPORTED},
    {VK_ERROR_FRAGMENTED_POOL, "VK_ERROR_FRAGMENTED_POOL", HAL_ERROR_OUT_OF_MEMORY},
    {VK_ERROR_UNKNOWN, "VK_ERROR_UNKNOWN", HAL_ERROR_INTERNAL},
    {VK_ERROR_OUT_OF_POOL_MEMORY, "VK_ERROR_OUT_OF_POOL_MEMORY", HAL_ERROR_OUT_OF_MEMORY},
    {VK_ERROR_INVALID_EXTERNAL_HANDLE, "VK_ERROR_INVALID_EXTERNAL_HANDLE",
     HAL_ERROR_INVALID_ARGUMENT},
    {VK_ERROR_FRAGMENTATION, "VK_ERROR_FRAGMENTATION", HAL_ERROR_OUT_OF_MEMORY},
    {VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS, "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS",
     HAL_ERROR_INTERNAL},
    {VK_PIPELINE_COMPILE_REQUIRED, "VK_PIPELINE_COMPILE_REQUIRED", HAL_ERROR_COMPILE_FAILED},
    {VK_ERROR_SURFACE_LOST_KHR, "VK_ERROR_SURFACE_LOST_KHR", HAL_ERROR_INTERNAL},
    {VK_ERROR_NATIVE_WINDOW_IN_USE_KHR, "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR", HAL_ERROR_INTERNAL},
    {VK_SUBOPTIMAL_KHR, "VK_SUBOPTIMAL_KHR", HAL_ERROR_INTERNAL},
    {VK_ERROR_OUT_OF_DATE_KHR, "VK_ERROR_OUT_OF_DATE_KHR", HAL_ERROR_INTERNAL},
    {VK_ERROR_INCOMPATIBLE_DISPLAY_KHR, "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR", HAL_ERROR_INTERNAL},
    {VK_ERROR_VALIDATION_FAILED_EXT, "VK_ERROR_VALIDATION_FAILED_EXT", HAL_ERROR_INTERNAL},
    {VK_ERROR_INVALID_SHADER_NV, "VK_ERROR_INVALID_SHADER_NV", HAL_ERROR_COMPILE_FAILED},
    {VK_ERROR_INVALID_DRM_FORMAT_MODIFIER_PLANE_LAYOUT_EXT,
     "VK_ERROR_INVALID_DRM_FORMAT_MODIFIER_PLANE_LAYOUT_EXT", HAL_ERROR_INTERNAL},
    {VK_ERROR_NOT_PERMITTED_KHR, "VK_ERROR_NOT_PERMITTED_KHR", HAL_ERROR_NOT_SUPPORTED},
    {VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT, "VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT",
     HAL_ERROR_INTERNAL},
    {VK_THREAD_IDLE_KHR, "VK_THREAD_IDLE_KHR", HAL_SUCCESS},
    {VK_THREAD_DONE_KHR, "VK_THREAD_DONE_KHR", HAL_SUCCESS},
    {VK_OPERATION_DEFERRED_KHR, "VK_OPERATION_DEFERRED_KHR", HAL_ERROR_NOT_READY},
    {VK_OPERATION_NOT_DEFERRED_KHR, "VK_OPERATION_NOT_DEFERRED_KHR", HAL_SUCCESS},
    {VK_ERROR_COMPRESSION_EXHAUSTED_EXT, "VK_ERROR_COMPRESSION_EXHAUSTED_EXT",
     HAL_ERROR_OUT_OF_MEMORY},
};

const ResultEntry* find(VkResult result) {
  for (const ResultEntry& entry : kResults) {
    if (entry.result == result) return &entry;
  }
  return nullptr;
}

const char* default_hint(hal_status status) {
  switch (status) {
    case HAL_ERROR_OUT_OF_MEMORY:
      return "Free device memory or use smaller allocations.";
    case HAL_ERROR_DEVICE_LOST:
      return "The device is unusable now; every later call on it fails. Restart the process.";
    case HAL_ERROR_UNAVAILABLE:
      return "Check the Vulkan driver installation (vulkaninfo --summary lists what the loader "
             "finds).";
    case HAL_ERROR_NOT_SUPPORTED:
      return "The device or driver lacks this capability.";
    default:
      return "Run with HAL_VULKAN_VALIDATION=1 and HAL_LOG_LEVEL=debug for details.";
  }
}

}  // namespace

const char* vk_result_name(VkResult result) {
  const ResultEntry* entry = find(result);
  return entry != nullptr ? entry->name : "VK_RESULT_UNKNOWN";
}

hal_status vk_result_status(VkResult result) {
  const ResultEntry* entry = find(result);
  if (entry != nullptr) return entry->status;
  return result < 0 ? HAL_ERROR_INTERNAL : HAL_SUCCESS;
}

hal_status vk_fail(VkResult result, std::string_view what, std::string_view hint) {
  hal_status status = vk_result_status(result);
  if (status == HAL_SUCCESS) status = HAL_ERROR_INTERNAL;  // a non-error code used as a failure
  if (hint.empty()) hint = default_hint(status);
  std::string text =
      fmt::format("{} failed ({} = {})", what, vk_result_name(result), static_cast<int>(result));
  if (!hint.empty()) {
    text += ". ";
    text += hint;
  }
  return hal::fail(status, std::move(text));
}

}  // namespace hal::vulkan
