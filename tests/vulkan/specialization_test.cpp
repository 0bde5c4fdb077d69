// Shaders written as production engines write them run as Vulkan runs them: specialization
// constants given as a superset, workgroup sizes and shared arrays sized by specialization,
// buffer-device-address pointers at any offset their accesses allow, and descriptor numbers
// checked before the driver sees them.
#include "vk_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace hal_vk_test {
namespace {

hal_function_info function_info(hal_function fn) {
  hal_function_info info{};
  info.struct_size = sizeof(info);
  EXPECT_OK(hal_function_get_info(fn, &info));
  return info;
}

// spec_matmul.comp's constants, in id order, and the unused ids an engine passes along.
struct Tiles {
  uint32_t block, bm, bn;
  int32_t bk;
  uint32_t wm, accumulate;
};

std::vector<hal_specialization> constants_for(const Tiles& t, const uint32_t* unused) {
  return {{0, 4, &t.block}, {1, 4, &t.bm},         {2, 4, &t.bn},     {3, 4, &t.bk},
          {4, 4, &t.wm},    {5, 4, &t.accumulate}, {6, 4, unused},    {7, 4, unused},
          {9, 4, unused},   {10, 4, unused},       {12345, 4, unused}};
}

class Specialization : public VulkanTest {
 protected:
  // Loads spec_matmul.comp with |t| given as a superset of its constants.
  hal_function load_matmul(const Tiles& t) {
    const uint32_t unused = 0xDEADBEEF;
    const std::vector<hal_specialization> constants = constants_for(t, &unused);
    hal_module_options options{};
    options.struct_size = sizeof(options);
    options.specialization_count = static_cast<uint32_t>(constants.size());
    options.specializations = constants.data();
    return function(load("spec_matmul", &options), "main");
  }
};

uint32_t shared_bytes_of(const Tiles& t) {
  const uint32_t bk = static_cast<uint32_t>(t.bk);
  return t.bm * (bk / 2 + 1) * 8 + t.bn * (bk + 1) * 4;
}

struct MatmulParams {
  uint32_t m, n, k;
  uint32_t stride_a, stride_b, stride_d;
  uint32_t batch_stride_a, batch_stride_b, batch_stride_d;
  uint32_t k_split, ne02, ne12, broadcast2, broadcast3;
  float alpha;
};

// The engine-style matmul, its constants given as a superset (ids it does not have among them),
// with the workgroup size taken from specialization (block {0,0,0}), against a CPU reference.
TEST_F(Specialization, ProductionStyleMatmul) {
  const uint32_t M = 37, N = 45, K = 29, batches = 2;
  MatmulParams p{M, N, K, K + 3, N + 1, N + 2, 0, 0, 0, 1, 1, 1, 1, 1, 0.5f};
  p.batch_stride_a = M * p.stride_a;
  p.batch_stride_b = K * p.stride_b;
  p.batch_stride_d = M * p.stride_d;
  std::vector<float> a(size_t{batches} * p.batch_stride_a), b(size_t{batches} * p.batch_stride_b),
      d0(size_t{batches} * p.batch_stride_d);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 13) * 0.25f - 1.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5) % 11) * 0.125f - 0.5f;
  for (size_t i = 0; i < d0.size(); ++i) d0[i] = static_cast<float>(i % 7);
  hal_deviceptr da = upload(a), db = upload(b);
  void* args[] = {&da,
                  &db,
                  nullptr,
                  &p.m,
                  &p.n,
                  &p.k,
                  &p.stride_a,
                  &p.stride_b,
                  &p.stride_d,
                  &p.batch_stride_a,
                  &p.batch_stride_b,
                  &p.batch_stride_d,
                  &p.k_split,
                  &p.ne02,
                  &p.ne12,
                  &p.broadcast2,
                  &p.broadcast3,
                  &p.alpha};

  const Tiles variants[] = {{64, 32, 32, 8, 16, 0}, {128, 64, 16, 16, 8, 1}};
  for (const Tiles& t : variants) {
    SCOPED_TRACE("block " + std::to_string(t.block) + " BM " + std::to_string(t.bm));
    hal_function fn = load_matmul(t);
    ASSERT_NE(fn, nullptr);
    const hal_function_info fi = function_info(fn);
    EXPECT_EQ(fi.param_count, 18u) << "3 buffers (binding 0 viewed twice is one) + 15 values";
    EXPECT_EQ(fi.block[0], t.block);
    EXPECT_EQ(fi.block[1], 1u);
    EXPECT_EQ(fi.block[2], 1u);
    EXPECT_EQ(fi.static_shared_bytes, shared_bytes_of(t));

    hal_deviceptr dd = upload(d0);
    args[2] = &dd;
    hal_launch_config config{};
    config.grid[0] = (N + t.bn - 1) / t.bn;
    config.grid[1] = (M + t.bm - 1) / t.bm;
    config.grid[2] = batches;
    ASSERT_OK(hal_launch(stream_, fn, &config, args));  // block {0,0,0}: the specialized size
    const std::vector<float> got = download<float>(dd, d0.size());
    size_t wrong = 0;
    for (uint32_t batch = 0; batch < batches; ++batch) {
      for (uint32_t m = 0; m < M; ++m) {
        for (uint32_t n = 0; n < N; ++n) {
          double sum = 0;
          for (uint32_t k = 0; k < K; ++k) {
            sum += double{a[batch * p.batch_stride_a + m * p.stride_a + k]} *
                   b[batch * p.batch_stride_b + k * p.stride_b + n];
          }
          const size_t at = batch * p.batch_stride_d + m * p.stride_d + n;
          const double want = p.alpha * sum + (t.accumulate != 0 ? d0[at] : 0.0);
          if (std::fabs(got[at] - want) > 1e-4 * (1 + std::fabs(want))) ++wrong;
        }
      }
    }
    EXPECT_EQ(wrong, 0u) << "elements of D differ from the reference";

    // The specialized size is the only block this function takes.
    config.block[0] = t.block / 2;
    config.block[1] = 1;
    config.block[2] = 1;
    EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn, &config, args));
    EXPECT_TRUE(LastErrorHas({std::to_string(t.block)}));
  }
}

// Tile constants whose shared arrays do not fit load, and are refused at launch with the numbers,
// before the driver sees the launch.
TEST_F(Specialization, SharedMemoryFromConstantsIsChecked) {
  const Tiles too_big{256, 256, 64, 64, 64, 0};
  const uint32_t bytes = shared_bytes_of(too_big);
  ASSERT_GT(bytes, info_.max_shared_memory_per_block);
  hal_function fn = load_matmul(too_big);
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(function_info(fn).static_shared_bytes, bytes);
  hal_deviceptr buffer = alloc(4096);
  MatmulParams p{};
  void* args[] = {&buffer,     &buffer,     &buffer,     &p.m,          &p.n,          &p.k,
                  &p.stride_a, &p.stride_b, &p.stride_d, &p.m,          &p.m,          &p.m,
                  &p.k_split,  &p.ne02,     &p.ne12,     &p.broadcast2, &p.broadcast3, &p.alpha};
  hal_launch_config config{};
  config.grid[0] = config.grid[1] = config.grid[2] = 1;
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn, &config, args));
  EXPECT_TRUE(LastErrorHas(
      {std::to_string(bytes), "static", std::to_string(info_.max_shared_memory_per_block)}));
}

// Shared memory sized by a workgroup size the launch chooses (buf[gl_WorkGroupSize.x * 16]):
// each block's size is checked when its pipeline would be built, with the numbers.
TEST_F(Specialization, SharedMemorySizedByALaunchBlockIsChecked) {
  hal_function fn = function(load("block_shared"), "main");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(function_info(fn).block[0], 0u);
  const uint32_t n = 300;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f;
  hal_deviceptr dx = upload(x), dy = alloc(n * 4);
  uint32_t count = n;
  void* args[] = {&dx, &dy, &count};
  hal_launch_config config{};
  config.grid[1] = config.grid[2] = 1;
  config.block[1] = config.block[2] = 1;
  config.block[0] = 64;  // 64 * 16 floats: 4 KiB
  config.grid[0] = (n + 63) / 64;
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  const std::vector<float> y = download<float>(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] + 1.0f) << i;
  // The largest block whose arrays do not fit.
  uint32_t block = info_.max_block_dim[0];
  if (std::min(block, info_.max_threads_per_block) * 64u <= info_.max_shared_memory_per_block) {
    GTEST_SKIP() << "every block of this device fits its shared memory";
  }
  block = std::min(block, info_.max_threads_per_block);
  config.block[0] = block;
  config.grid[0] = 1;
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn, &config, args));
  EXPECT_TRUE(LastErrorHas({std::to_string(block * 64u), "shared memory",
                            std::to_string(info_.max_shared_memory_per_block)}));
}

// local_size_id.comp with its three constants given at load: the block is fixed and known.
TEST_F(Specialization, WorkgroupSizeGivenAtLoad) {
  const uint32_t x = 8, y = 2, z = 1;
  const hal_specialization constants[] = {{0, 4, &x}, {1, 4, &y}, {2, 4, &z}};
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.specialization_count = 3;
  options.specializations = constants;
  for (const char* name : {"local_size_id", "workgroup_size_spec"}) {
    SCOPED_TRACE(name);
    hal_function fn = function(load(name, &options), "main");
    ASSERT_NE(fn, nullptr);
    const hal_function_info fi = function_info(fn);
    EXPECT_EQ(fi.block[0], x);
    EXPECT_EQ(fi.block[1], y);
    EXPECT_EQ(fi.block[2], z);
    EXPECT_EQ(fi.max_threads_per_block, x * y * z);
    const uint32_t n = 100;
    hal_deviceptr dy = alloc(n * 4);
    uint32_t count = n;
    void* args[] = {&dy, &count};
    hal_launch_config config{};
    config.grid[0] = (n + x - 1) / x;
    config.grid[1] = config.grid[2] = 1;
    ASSERT_OK(hal_launch(stream_, fn, &config, args));
    const std::vector<uint32_t> out = download<uint32_t>(dy, n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 3 * i + x) << i;
    config.block[0] = 16;
    config.block[1] = config.block[2] = 1;
    EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn, &config, args));
  }
  // A size beyond the device's limit loads (no pipeline is built for it) and is refused at
  // launch, naming the limit.
  const uint32_t too_many = info_.max_block_dim[0] * 2;
  const hal_specialization big[] = {{0, 4, &too_many}, {1, 4, &y}, {2, 4, &z}};
  options.specializations = big;
  hal_function fn = function(load("local_size_id", &options), "main");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(function_info(fn).block[0], too_many);
  hal_deviceptr dy = alloc(64);
  uint32_t count = 1;
  void* args[] = {&dy, &count};
  hal_launch_config config{};
  config.grid[0] = config.grid[1] = config.grid[2] = 1;
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, hal_launch(stream_, fn, &config, args));
  EXPECT_TRUE(LastErrorHas({std::to_string(too_many), std::to_string(info_.max_block_dim[0])}));
}

// A buffer-device-address kernel takes pointers at any offset its accesses allow: C = A * 2 + B
// on int arrays starting 4 bytes into their allocations, as `x + 1` on an int* in CUDA.
TEST_F(Specialization, AddressesAtFourByteOffsets) {
  if ((info_.features & HAL_FEATURE_BUFFER_DEVICE_ADDRESS) == 0) {
    GTEST_SKIP() << "the device has no buffer device addresses";
  }
  ASSERT_GT(info_.pointer_alignment, 4u) << "the descriptor rule would not be tested";
  hal_function fn = function(load("bda"), "main");
  ASSERT_NE(fn, nullptr);
  const uint32_t n = 64;
  std::vector<int32_t> a(n + 1), b(n + 1);
  for (uint32_t i = 0; i <= n; ++i) {
    a[i] = static_cast<int32_t>(i) * 3;
    b[i] = 500 - static_cast<int32_t>(i);
  }
  hal_deviceptr da = upload(a), db = upload(b), dc = upload(std::vector<int32_t>(n + 1, -1));
  hal_deviceptr a1 = da + 4, b1 = db + 4, c1 = dc + 4;
  uint32_t count = n;
  void* args[] = {&a1, &b1, &c1, &count};
  hal_launch_config config{};
  config.grid[0] = n / 32;
  config.grid[1] = config.grid[2] = 1;
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  const std::vector<int32_t> c = download<int32_t>(dc, n + 1);
  EXPECT_EQ(c[0], -1) << "the element before the pointer was written";
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i + 1], a[i + 1] * 2 + b[i + 1]) << i;
  // Not every offset: an int needs 4 bytes.
  hal_deviceptr odd = da + 2;
  void* odd_args[] = {&odd, &b1, &c1, &count};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream_, fn, &config, odd_args));
  EXPECT_TRUE(LastErrorHas({"parameter 0", "multiple of 4"}));
}

// Each address parameter states what it needs: the widest access through it.
TEST_F(Specialization, AddressAlignmentPerParameter) {
  if ((info_.features & HAL_FEATURE_BUFFER_DEVICE_ADDRESS) == 0) {
    GTEST_SKIP() << "the device has no buffer device addresses";
  }
  hal_function fn = function(load("bda_align"), "main");
  ASSERT_NE(fn, nullptr);
  const uint32_t expected[] = {4, 16, 4, 1};
  for (uint32_t i = 0; i < 4; ++i) {
    hal_param_info param{};
    param.struct_size = sizeof(param);
    ASSERT_OK(hal_function_get_param(fn, i, &param));
    EXPECT_EQ(param.kind, HAL_PARAM_POINTER) << i;
    EXPECT_EQ(param.alignment, expected[i]) << i;
  }
  const uint32_t n = 32;
  std::vector<float> f(n + 1);
  for (uint32_t i = 0; i <= n; ++i) f[i] = static_cast<float>(i) + 0.5f;
  hal_deviceptr df = upload(f), dv = alloc((n + 1) * 16), dcount = upload(std::vector<uint32_t>(4));
  hal_deviceptr f1 = df + 4, v4 = dv + 4, v16 = dv + 16, count1 = dcount + 4, any = dcount + 3;
  uint32_t count = n;
  hal_launch_config config{};
  config.grid[0] = config.grid[1] = config.grid[2] = 1;
  void* misaligned[] = {&f1, &v4, &count1, &any, &count};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream_, fn, &config, misaligned));
  EXPECT_TRUE(LastErrorHas({"parameter 1", "multiple of 16"}));
  void* args[] = {&f1, &v16, &count1, &any, &count};
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  const std::vector<float> doubled = download<float>(df, n + 1);
  const std::vector<float> v = download<float>(dv, (n + 1) * 4);
  const std::vector<uint32_t> counter = download<uint32_t>(dcount, 4);
  EXPECT_EQ(doubled[0], f[0]);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(doubled[i + 1], f[i + 1] * 2) << i;
    ASSERT_EQ(v[4 + i * 4 + 3], f[i + 1]) << i;
  }
  EXPECT_EQ(counter[2], n) << "the atomic lands at the address + 4 the kernel computes";
}

// A module whose descriptor numbers are beyond the device's limits is refused at load, naming
// the number and the limit, before the driver sizes a layout by them.
TEST_F(Specialization, DescriptorNumbersCheckedAtLoad) {
  constexpr uint32_t kOpDecorate = 71, kBinding = 33, kDescriptorSet = 34;
  struct Patch {
    uint32_t decoration;
    uint32_t value;
    const char* number;
    const char* limit;
  };
  const Patch patches[] = {
      {kBinding, 536870913u, "binding 536870913", "below"},
      {kDescriptorSet, 9, "descriptor set 9", "maxBoundDescriptorSets"},
  };
  for (const Patch& patch : patches) {
    std::vector<uint32_t> words = read_words("vadd");
    bool patched = false;
    for (size_t at = 5; at < words.size() && !patched; at += words[at] >> 16) {
      if ((words[at] & 0xFFFF) == kOpDecorate && (words[at] >> 16) == 4 &&
          words[at + 2] == patch.decoration) {
        words[at + 3] = patch.value;
        patched = true;
      }
      if ((words[at] >> 16) == 0) break;
    }
    ASSERT_TRUE(patched);
    hal_module module = nullptr;
    EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED,
               hal_module_load(device_, words.data(), words.size() * 4, nullptr, &module));
    EXPECT_TRUE(LastErrorHas({patch.number, patch.limit}));
  }
}

}  // namespace
}  // namespace hal_vk_test
