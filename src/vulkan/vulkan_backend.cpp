#include "vulkan/vulkan_backend.h"

#include "common/error.h"
#include "common/log.h"
#include "vulkan/device.h"
#include "vulkan/instance.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <set>

namespace hal {
namespace vulkan {
namespace {

// The devices to quiesce at process exit. Devices live until the process ends (the registry
// never destroys them), so the raw pointers stay valid.
std::vector<VulkanDevice*>& exit_list() {
  static auto* list = new std::vector<VulkanDevice*>();
  return *list;
}

void wait_idle_at_exit() {
  for (VulkanDevice* device : exit_list()) device->wait_idle();
}

class VulkanBackend : public Backend {
 public:
  hal_status init(std::vector<std::unique_ptr<Device>>* devices) override {
    std::shared_ptr<Instance> instance;
    hal_status status = Instance::create(&instance);
    if (status != HAL_SUCCESS) return status;
    std::vector<VkPhysicalDevice> physical;
    status = instance->physical_devices(&physical);
    if (status != HAL_SUCCESS) return status;

    struct Candidate {
      VkPhysicalDevice device;
      bool gpu;
    };
    std::vector<Candidate> candidates;
    std::set<std::array<uint8_t, 16>> seen;
    for (VkPhysicalDevice p : physical) {
      VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
      VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
      props.pNext = &id;
      vkGetPhysicalDeviceProperties2(p, &props);
      std::array<uint8_t, 16> uuid{};
      std::memcpy(uuid.data(), id.deviceUUID, 16);
      if (!seen.insert(uuid).second) {
        hal::log()->info("vulkan: '{}' is listed twice (same device UUID); using the first",
                         props.properties.deviceName);
        continue;
      }
      const VkPhysicalDeviceType type = props.properties.deviceType;
      const bool gpu = type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                       type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                       type == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
      candidates.push_back({p, gpu});
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.gpu && !b.gpu; });
    for (const Candidate& candidate : candidates) {
      std::unique_ptr<VulkanDevice> device;
      status = VulkanDevice::create(instance, candidate.device, &device);
      if (status != HAL_SUCCESS) {
        hal::log()->warn("vulkan: skipping a device: {}", hal::pending_error());
        hal::clear_pending_error();
        continue;
      }
      exit_list().push_back(device.get());
      devices->push_back(std::move(device));
    }
    // Registered after the driver was loaded, so it runs before the driver's own exit handlers.
    static const bool registered = std::atexit(&wait_idle_at_exit) == 0;
    (void)registered;
    return HAL_SUCCESS;
  }
};

}  // namespace
}  // namespace vulkan

std::unique_ptr<Backend> create_vulkan_backend() {
  return std::make_unique<vulkan::VulkanBackend>();
}

}  // namespace hal
