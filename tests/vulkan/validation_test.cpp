// The validation-layer counter that every other Vulkan test checks: an invalid Vulkan call must
// raise it, or those checks could never fail. Its own executable, because the count is
// process-wide.
#include "vk_test_util.h"

namespace hal_vk_test {
namespace {

TEST(Validation, ErrorsAreCounted) {
  hal_device device = nullptr;
  ASSERT_OK(hal_device_find("vulkan:0", &device));
  ASSERT_TRUE(hal::vulkan::validation_enabled())
      << "HAL_VULKAN_VALIDATION=1 needs VK_LAYER_KHRONOS_validation (vulkan-validationlayers)";
  hal::vulkan::VulkanDevice* vk_device = backend_device(device);
  ASSERT_NE(vk_device, nullptr);
  const uint64_t before = hal::vulkan::validation_error_count();
  // A buffer of size 0 is invalid usage (VUID-VkBufferCreateInfo-size-00912).
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 0;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkResult result = vk_device->vk().vkCreateBuffer(vk_device->handle(), &info, nullptr, &buffer);
  if (result == VK_SUCCESS && buffer != VK_NULL_HANDLE) {
    vk_device->vk().vkDestroyBuffer(vk_device->handle(), buffer, nullptr);
  }
  EXPECT_GT(hal::vulkan::validation_error_count(), before);
}

}  // namespace
}  // namespace hal_vk_test
