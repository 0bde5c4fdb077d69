// The Vulkan instance: opening the loader, creating the instance, the validation messenger.
//
// The loader is opened at run time through volk (libhal never links libvulkan), so a machine
// without Vulkan still loads libhal; Instance::create then fails with HAL_ERROR_UNAVAILABLE and a
// reason saying where the loader was looked for and what to install.
//
// Ownership: one Instance per backend, shared (std::shared_ptr) by every device created from it,
// so it is destroyed only after the last device. Instance-level entry points are volk's globals
// (one instance per process); device-level ones live in each device's own table.
#pragma once

#include <hal/hal.h>

#include "vulkan/vk.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hal::vulkan {

class Instance {
 public:
  // Opens the loader and creates the instance (Vulkan 1.3 when the loader has it, else 1.2).
  // Reads HAL_VULKAN_VALIDATION. Fails with HAL_ERROR_UNAVAILABLE when the loader or a usable
  // instance is missing.
  static hal_status create(std::shared_ptr<Instance>* out);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  uint32_t api_version() const { return api_version_; }

  // The physical devices the loader lists, or a failure.
  hal_status physical_devices(std::vector<VkPhysicalDevice>* out) const;

 private:
  Instance() = default;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = 0;
};

}  // namespace hal::vulkan
