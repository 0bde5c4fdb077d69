// Uniform buffers as kernel parameters: a GLSL `uniform` block is a pointer parameter like a
// storage buffer, bound with a uniform descriptor. The core checks the argument's alignment and
// that the whole block lies in its allocation; the driver refuses a block larger than one
// uniform descriptor reaches.
#include "vk_test_util.h"

#include <hal/hal.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

using hal_vk_test::LastErrorHas;
using hal_vk_test::VulkanTest;

constexpr uint32_t kBlockBytes = 80;  // std140: uint at 0, float[4] with a 16-byte stride at 16
constexpr uint32_t kElements = 100;

// The block's bytes as std140 lays them out.
std::vector<uint8_t> settings(uint32_t scale, const float (&weights)[4]) {
  std::vector<uint8_t> bytes(kBlockBytes, 0);
  std::memcpy(bytes.data(), &scale, 4);
  for (int i = 0; i < 4; ++i) std::memcpy(bytes.data() + 16 + 16 * i, &weights[i], 4);
  return bytes;
}

class UniformBuffer : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    fn_ = function(load("uniform_buffer"), "main");
    y_ = alloc(kElements * sizeof(float));
  }

  hal_status launch(hal_deviceptr block) {
    hal_launch_config config{{2, 1, 1}, {0, 0, 0}, 0};
    uint32_t n = kElements;
    void* args[] = {&block, &y_, &n};
    return hal_launch(stream_, fn_, &config, args);
  }

  hal_function fn_ = nullptr;
  hal_deviceptr y_ = 0;
};

TEST_F(UniformBuffer, IsAPointerParameterWithTheUniformOffsetAlignment) {
  hal_function_info info{};
  info.struct_size = sizeof info;
  ASSERT_OK(hal_function_get_info(fn_, &info));
  ASSERT_EQ(info.param_count, 3u);
  const hal_param_kind kinds[] = {HAL_PARAM_POINTER, HAL_PARAM_POINTER, HAL_PARAM_VALUE};
  for (uint32_t i = 0; i < 3; ++i) {
    hal_param_info param{};
    param.struct_size = sizeof param;
    ASSERT_OK(hal_function_get_param(fn_, i, &param));
    EXPECT_EQ(param.kind, kinds[i]) << "parameter " << i;
  }
  hal_param_info block{};
  block.struct_size = sizeof block;
  ASSERT_OK(hal_function_get_param(fn_, 0, &block));
  auto* device = hal_vk_test::backend_device(device_);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(block.alignment,
            std::max<VkDeviceSize>(device->caps().limits.minUniformBufferOffsetAlignment, 1));
}

TEST_F(UniformBuffer, KernelReadsItsSettings) {
  const hal_deviceptr block = upload(settings(3, {1.0f, 2.0f, 0.5f, -1.0f}));
  ASSERT_OK(launch(block));
  const std::vector<float> y = download<float>(y_, kElements);
  const float weights[4] = {1.0f, 2.0f, 0.5f, -1.0f};
  for (uint32_t i = 0; i < kElements; ++i)
    ASSERT_EQ(y[i], 3.0f * weights[i % 4]) << "y[" << i << "]";
}

TEST_F(UniformBuffer, NewValuesBetweenLaunchesAreSeenInStreamOrder) {
  // Two blocks in one allocation, at aligned offsets, swapped between launches on one stream:
  // each launch reads the block it was given, and a copy into a block between launches is
  // ordered before the next launch's read.
  hal_param_info block{};
  block.struct_size = sizeof block;
  ASSERT_OK(hal_function_get_param(fn_, 0, &block));
  const uint32_t stride = (kBlockBytes + block.alignment - 1) / block.alignment * block.alignment;
  const hal_deviceptr blocks = alloc(2 * stride);
  const std::vector<uint8_t> first = settings(2, {1.0f, 1.0f, 1.0f, 1.0f});
  const std::vector<uint8_t> second = settings(5, {1.0f, 0.0f, 1.0f, 0.0f});
  ASSERT_OK(hal_memcpy_htod(stream_, blocks, first.data(), kBlockBytes));
  ASSERT_OK(hal_memcpy_htod(stream_, blocks + stride, second.data(), kBlockBytes));
  ASSERT_OK(launch(blocks + stride));
  std::vector<float> y = download<float>(y_, kElements);
  EXPECT_EQ(y[0], 5.0f);
  EXPECT_EQ(y[1], 0.0f);
  ASSERT_OK(launch(blocks));
  const std::vector<uint8_t> third = settings(7, {1.0f, 1.0f, 1.0f, 1.0f});
  ASSERT_OK(hal_memcpy_htod(stream_, blocks, third.data(), kBlockBytes));
  hal_deviceptr z = alloc(kElements * sizeof(float));
  std::swap(y_, z);
  ASSERT_OK(launch(blocks));
  const std::vector<float> before = download<float>(z, kElements);
  const std::vector<float> after = download<float>(y_, kElements);
  EXPECT_EQ(before[1], 2.0f);
  EXPECT_EQ(after[1], 7.0f);
}

TEST_F(UniformBuffer, MisalignedArgumentIsRefusedWithTheAlignment) {
  hal_param_info block{};
  block.struct_size = sizeof block;
  ASSERT_OK(hal_function_get_param(fn_, 0, &block));
  if (block.alignment < 2) GTEST_SKIP() << "the device needs no uniform offset alignment";
  const hal_deviceptr blocks = alloc(2 * kBlockBytes + block.alignment);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, launch(blocks + block.alignment / 2));
  EXPECT_TRUE(LastErrorHas({"parameter 0", "not a multiple of", "alignment"}));
}

TEST_F(UniformBuffer, BlockRunningPastItsAllocationIsRefused) {
  // 64 bytes hold the first four words but not the whole 80-byte block: the kernel would read
  // past the allocation, so the core refuses the launch before the driver binds anything.
  const hal_deviceptr small = alloc(64);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(small));
  EXPECT_TRUE(LastErrorHas({"parameter 0", "+80", "16 byte(s) past the end"}));
  // The same block inside a larger allocation, at an aligned offset and ending exactly at the
  // allocation's end, is fine.
  hal_param_info block{};
  block.struct_size = sizeof block;
  ASSERT_OK(hal_function_get_param(fn_, 0, &block));
  const uint32_t alignment = std::max<uint32_t>(block.alignment, 1);
  const uint32_t offset = (kBlockBytes + alignment - 1) / alignment * alignment;
  const hal_deviceptr exact = alloc(offset + kBlockBytes);
  const std::vector<uint8_t> bytes = settings(1, {1.0f, 1.0f, 1.0f, 1.0f});
  ASSERT_OK(hal_memcpy_htod(stream_, exact + offset, bytes.data(), kBlockBytes));
  EXPECT_OK(launch(exact + offset));
  EXPECT_OK(hal_stream_synchronize(stream_));
}

TEST_F(UniformBuffer, BlockLargerThanOneDescriptorReachesIsRefusedAtLoad) {
  auto* device = hal_vk_test::backend_device(device_);
  ASSERT_NE(device, nullptr);
  const std::vector<uint8_t> blob = hal_vk_test::read_shader("uniform_too_large");
  ASSERT_FALSE(blob.empty());
  hal_module module = nullptr;
  const hal_status status = hal_module_load(device_, blob.data(), blob.size(), nullptr, &module);
  if (device->caps().limits.maxUniformBufferRange >= 80000) {
    EXPECT_OK(status);
    if (module != nullptr) {
      EXPECT_OK(hal_module_unload(module));
    }
    GTEST_SKIP() << "the device binds 80000 bytes of a uniform buffer";
  }
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, status);
  EXPECT_TRUE(LastErrorHas({"uniform block of 80000 bytes", "maxUniformBufferRange"}));
}

}  // namespace
