// Cooperative matrices (VK_KHR_cooperative_matrix) end to end: a module that uses them loads
// only on a device that has them, in a shape the device supports, and then multiplies right.
// Most devices in CI have none (lavapipe), so there the refusal is what is tested; a GPU with
// matrix units runs the multiply.
#include "vk_test_util.h"

#include <cstdint>
#include <vector>

namespace hal_vk_test {
namespace {

// The fp16 bits of a small integer (|v| <= 1024), exactly.
uint16_t half_of(int v) {
  if (v == 0) return 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  uint32_t magnitude = static_cast<uint32_t>(v < 0 ? -v : v);
  int exponent = 0;
  while ((magnitude >> (exponent + 1)) != 0) ++exponent;
  const uint32_t mantissa = (magnitude << (10 - exponent)) & 0x3FFu;
  return static_cast<uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

bool supports_16x16x16_fp16(const hal::vulkan::DeviceCaps& caps) {
  for (const hal::vulkan::CooperativeMatrixShape& s : caps.cooperative_matrix_shapes) {
    if (s.m == 16 && s.n == 16 && s.k == 16 && s.a == 0 && s.b == 0 && s.c == 1 && s.result == 1 &&
        s.scope == 3) {
      return true;
    }
  }
  return false;
}

class CooperativeMatrix : public VulkanTest {};

// Before hal knew the capability, its SPIR-V validator (older than the extension) refused the
// module as invalid on every device; now the device decides.
TEST_F(CooperativeMatrix, ModuleNeedsTheFeature) {
  if (info_.features & HAL_FEATURE_COOPERATIVE_MATRIX) {
    GTEST_SKIP() << "the device has cooperative matrices (the multiply test covers it)";
  }
  const std::vector<uint8_t> blob = read_shader("coopmat_matmul");
  ASSERT_FALSE(blob.empty());
  hal_module module = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED,
             hal_module_load(device_, blob.data(), blob.size(), nullptr, &module));
  EXPECT_TRUE(LastErrorHas({"CooperativeMatrixKHR", "VK_KHR_cooperative_matrix"}));
  EXPECT_EQ(module, nullptr);
}

TEST_F(CooperativeMatrix, MultiplyMatchesTheHost) {
  if (!(info_.features & HAL_FEATURE_COOPERATIVE_MATRIX)) {
    GTEST_SKIP() << "the device has no cooperative matrices (VK_KHR_cooperative_matrix)";
  }
  const hal::vulkan::VulkanDevice* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  const std::vector<uint8_t> blob = read_shader("coopmat_matmul");
  const uint32_t subgroup = info_.subgroup_size;
  const hal_specialization block{0, 4, &subgroup};
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.specialization_count = 1;
  options.specializations = &block;
  if (!supports_16x16x16_fp16(device->caps())) {
    hal_module module = nullptr;
    EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED,
               hal_module_load(device_, blob.data(), blob.size(), &options, &module));
    EXPECT_TRUE(LastErrorHas({"16x16 float16 cooperative matrix A"}));
    return;
  }
  hal_function fn = function(load("coopmat_matmul", &options), "main");
  ASSERT_NE(fn, nullptr);

  const uint32_t M = 32, N = 48, K = 64;
  std::vector<int> a(M * K), b(K * N);
  for (uint32_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>((i * 7) % 9) - 4;
  for (uint32_t i = 0; i < b.size(); ++i) b[i] = static_cast<int>((i * 5) % 7) - 3;
  std::vector<uint16_t> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i) a16[i] = half_of(a[i]);
  for (size_t i = 0; i < b.size(); ++i) b16[i] = half_of(b[i]);
  hal_deviceptr da = upload(a16), db = upload(b16), dc = alloc(size_t{M} * N * 4);
  uint32_t m = M, n = N, k = K;
  void* args[] = {&da, &db, &dc, &m, &n, &k};
  hal_launch_config config{};
  config.grid[0] = N / 16;
  config.grid[1] = M / 16;
  config.grid[2] = 1;
  ASSERT_OK(hal_launch(stream_, fn, &config, args));  // block {0,0,0}: the specialized size
  const std::vector<float> c = download<float>(dc, size_t{M} * N);
  for (uint32_t i = 0; i < M; ++i) {
    for (uint32_t j = 0; j < N; ++j) {
      int want = 0;
      for (uint32_t p = 0; p < K; ++p) want += a[i * K + p] * b[p * N + j];
      ASSERT_EQ(c[i * N + j], static_cast<float>(want)) << "C[" << i << "][" << j << "]";
    }
  }
}

}  // namespace
}  // namespace hal_vk_test
