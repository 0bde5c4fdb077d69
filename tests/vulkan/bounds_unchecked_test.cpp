// Without HAL_VULKAN_VALIDATION=gpu nothing checks how far a kernel indexes into its buffers:
// on lavapipe a write past the end of the allocation is dropped and a read there gives 0, and
// every call succeeds (the validation layer of HAL_VULKAN_VALIDATION=1 does not see it either).
// bounds_check_test.cpp runs the same kernel with the checks.
#include "vk_test_util.h"

#include <numeric>
#include <vector>

namespace hal_vk_test {
namespace {

using BoundsUnchecked = VulkanTest;

TEST_F(BoundsUnchecked, AccessesPastTheEndGoUnreported) {
  if (hal::vulkan::bounds_checks_enabled()) GTEST_SKIP() << "HAL_VULKAN_VALIDATION=gpu is set";
  hal_module module = load("shift_copy");
  ASSERT_NE(module, nullptr);
  hal_function shift_copy = function(module, "shift_copy");
  constexpr uint32_t kCount = 256;
  std::vector<float> x(kCount);
  std::iota(x.begin(), x.end(), 1.0f);
  hal_deviceptr x_ptr = upload(x);
  hal_deviceptr y_ptr = upload(std::vector<float>(kCount, -1.0f));
  uint32_t n = kCount;
  hal_launch_config config{{kCount / 64, 1, 1}, {0, 0, 0}, 0};
  for (uint32_t shift : {16u, 0u}) {
    // First 16 writes past y, then 16 reads past x.
    uint32_t write_shift = shift;
    uint32_t read_shift = 16 - shift;
    void* args[] = {&y_ptr, &x_ptr, &write_shift, &read_shift, &n};
    ASSERT_OK(hal_launch(stream_, shift_copy, &config, args));
    EXPECT_OK(hal_stream_synchronize(stream_));
  }
  std::vector<float> y = download<float>(y_ptr, kCount);
  if (info_.is_cpu) {
    // lavapipe bounds every access to the descriptor's range: the reads past x gave 0.
    for (uint32_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(y[i], i + 16 < kCount ? static_cast<float>(i + 17) : 0.0f) << i;
    }
  }
}

}  // namespace
}  // namespace hal_vk_test
