// Kernels that need an optional device feature run where the device has it: hal enables the
// feature when it creates the device (the validation layer, on in these tests, reports any
// module that uses a feature not enabled), and refuses the module by name where it is missing.
#include "vk_test_util.h"

#include <cstdint>
#include <vector>

namespace hal_vk_test {
namespace {

class DeviceFeatures : public VulkanTest {
 protected:
  const hal::vulkan::DeviceCaps& caps() { return backend_device(device_)->caps(); }

  // Loads |name| expecting a refusal that names |capability| when |available| is false.
  hal_function load_if(bool available, const char* name, const char* capability) {
    if (available) return function(load(name), "main");
    const std::vector<uint8_t> blob = read_shader(name);
    hal_module module = nullptr;
    EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED,
               hal_module_load(device_, blob.data(), blob.size(), nullptr, &module));
    EXPECT_TRUE(LastErrorHas({capability}));
    return nullptr;
  }
};

TEST_F(DeviceFeatures, FloatAtomicAdd) {
  hal_function fn = load_if(caps().atomic_float32_add, "atomic_float_add", "AtomicFloat32AddEXT");
  if (fn == nullptr) GTEST_SKIP() << "the device has no float32 atomic add";
  const uint32_t n = 1000;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 5);  // sums exactly in fp32
  hal_deviceptr dx = upload(x), sum = upload(std::vector<float>{0.5f});
  uint32_t count = n;
  void* args[] = {&dx, &sum, &count};
  hal_launch_config config{};
  config.grid[0] = (n + 63) / 64;
  config.grid[1] = config.grid[2] = 1;
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  EXPECT_EQ(download<float>(sum, 1)[0], 0.5f + 200.0f * (0 + 1 + 2 + 3 + 4));
}

TEST_F(DeviceFeatures, PackedIntegerDotProduct) {
  if (!caps().integer_dot_product && caps().api_version < VK_API_VERSION_1_3) {
    GTEST_SKIP() << "the test's module is SPIR-V 1.6, which a Vulkan 1.2 device cannot load";
  }
  hal_function fn = load_if(caps().integer_dot_product, "dot4x8", "DotProduct");
  if (fn == nullptr) GTEST_SKIP() << "the device has no shaderIntegerDotProduct";
  const uint32_t n = 300;
  std::vector<uint32_t> a(n), b(n);
  std::vector<int> want(n);
  for (uint32_t i = 0; i < n; ++i) {
    int dot = 0;
    for (uint32_t lane = 0; lane < 4; ++lane) {
      const int x = static_cast<int>((i * 37 + lane * 11) % 256) - 128;
      const int y = static_cast<int>((i * 53 + lane * 29) % 256) - 128;
      a[i] |= (static_cast<uint32_t>(x) & 0xFFu) << (8 * lane);
      b[i] |= (static_cast<uint32_t>(y) & 0xFFu) << (8 * lane);
      dot += x * y;
    }
    want[i] = dot;
  }
  hal_deviceptr da = upload(a), db = upload(b), dc = alloc(n * 4);
  uint32_t count = n;
  void* args[] = {&da, &db, &dc, &count};
  hal_launch_config config{};
  config.grid[0] = (n + 63) / 64;
  config.grid[1] = config.grid[2] = 1;
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  EXPECT_EQ(download<int>(dc, n), want);
}

}  // namespace
}  // namespace hal_vk_test
