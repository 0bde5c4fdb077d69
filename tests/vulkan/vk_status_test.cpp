// The VkResult table: names and statuses, and the message vk_fail() records.
#include "vulkan/vk_status.h"

#include "common/error.h"

#include <gtest/gtest.h>

#include <string>

namespace hal::vulkan {
namespace {

TEST(VkStatus, NamesAndStatuses) {
  EXPECT_STREQ(vk_result_name(VK_ERROR_DEVICE_LOST), "VK_ERROR_DEVICE_LOST");
  EXPECT_EQ(vk_result_status(VK_ERROR_DEVICE_LOST), HAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(vk_result_status(VK_ERROR_OUT_OF_DEVICE_MEMORY), HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(vk_result_status(VK_ERROR_OUT_OF_HOST_MEMORY), HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(vk_result_status(VK_ERROR_INCOMPATIBLE_DRIVER), HAL_ERROR_UNAVAILABLE);
  EXPECT_EQ(vk_result_status(VK_ERROR_FEATURE_NOT_PRESENT), HAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(vk_result_status(VK_TIMEOUT), HAL_ERROR_TIMEOUT);
  EXPECT_EQ(vk_result_status(VK_SUCCESS), HAL_SUCCESS);
  EXPECT_STREQ(vk_result_name(static_cast<VkResult>(-123456)), "VK_RESULT_UNKNOWN");
  EXPECT_EQ(vk_result_status(static_cast<VkResult>(-123456)), HAL_ERROR_INTERNAL);
}

TEST(VkStatus, FailMessageNamesTheCallTheResultAndAHint) {
  clear_pending_error();
  EXPECT_EQ(vk_fail(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory", "Free something"),
            HAL_ERROR_OUT_OF_MEMORY);
  const std::string text = pending_error();
  EXPECT_NE(text.find("vkAllocateMemory"), std::string::npos) << text;
  EXPECT_NE(text.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos) << text;
  EXPECT_NE(text.find("Free something"), std::string::npos) << text;
  EXPECT_EQ(vk_fail(VK_ERROR_DEVICE_LOST, "vkQueueSubmit"), HAL_ERROR_DEVICE_LOST);
  EXPECT_NE(pending_error().find("Restart"), std::string::npos) << pending_error();
  // A non-error code used as a failure is still a failure.
  EXPECT_EQ(vk_fail(VK_INCOMPLETE, "x"), HAL_ERROR_INTERNAL);
  clear_pending_error();
}

}  // namespace
}  // namespace hal::vulkan
