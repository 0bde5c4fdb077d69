// Kernels end to end: the parameter ABI, entry points, specialization, workgroup sizes from the
// launch, buffer device addresses and shared memory sized at launch.
#include "vk_test_util.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace hal_vk_test {
namespace {

hal_launch_config config_1d(uint32_t grid, uint32_t block = 0, uint32_t shared = 0) {
  hal_launch_config config{};
  config.grid[0] = grid;
  config.grid[1] = 1;
  config.grid[2] = 1;
  config.block[0] = block;
  config.block[1] = block == 0 ? 0 : 1;
  config.block[2] = block == 0 ? 0 : 1;
  config.shared_bytes = shared;
  return config;
}

std::vector<hal_param_kind> param_kinds(hal_function fn) {
  hal_function_info info{};
  info.struct_size = sizeof(info);
  EXPECT_OK(hal_function_get_info(fn, &info));
  std::vector<hal_param_kind> kinds;
  for (uint32_t i = 0; i < info.param_count; ++i) {
    hal_param_info param{};
    param.struct_size = sizeof(param);
    EXPECT_OK(hal_function_get_param(fn, i, &param));
    kinds.push_back(param.kind);
  }
  return kinds;
}

using Kernels = VulkanTest;

TEST_F(Kernels, DeviceInfoDescribesAVulkanDevice) {
  EXPECT_EQ(info_.backend, HAL_BACKEND_VULKAN);
  // PTX too on a device that runs translated PTX (ptx_module_test.cpp checks when).
  EXPECT_EQ(info_.ir_mask & ~uint32_t{HAL_IR_PTX}, static_cast<uint32_t>(HAL_IR_SPIRV));
  EXPECT_GT(info_.total_memory, 0u);
  EXPECT_GT(info_.max_allocation_size, 0u);
  EXPECT_LE(info_.max_allocation_size, info_.total_memory);
  EXPECT_GT(info_.max_threads_per_block, 0u);
  EXPECT_GT(info_.max_grid_dim[0], 0u);
  EXPECT_GT(info_.max_shared_memory_per_block, 0u);
  EXPECT_GT(info_.subgroup_size, 0u);
  EXPECT_GT(info_.pointer_alignment, 0u);
  EXPECT_EQ(info_.pointer_alignment & (info_.pointer_alignment - 1), 0u);
  EXPECT_NE(info_.features & HAL_FEATURE_TIMELINE_SEMAPHORE, 0u);
  EXPECT_NE(info_.name[0], '\0');
  EXPECT_NE(info_.driver_name[0], '\0');
  EXPECT_TRUE(hal::vulkan::validation_enabled())
      << "the tests run with HAL_VULKAN_VALIDATION=1 and need VK_LAYER_KHRONOS_validation";
  if (info_.is_cpu) {
    EXPECT_EQ(info_.unified_memory, 1u);
  }
}

TEST_F(Kernels, VectorAdd) {
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  hal_deviceptr da = upload(a), db = upload(b), dc = alloc(n * sizeof(float));
  hal_module module = load("vadd");
  ASSERT_NE(module, nullptr);
  hal_function fn = function(module, "main");
  EXPECT_EQ(param_kinds(fn), (std::vector<hal_param_kind>{HAL_PARAM_POINTER, HAL_PARAM_POINTER,
                                                          HAL_PARAM_POINTER, HAL_PARAM_VALUE}));
  hal_function_info fi{};
  fi.struct_size = sizeof(fi);
  ASSERT_OK(hal_function_get_info(fn, &fi));
  EXPECT_EQ(fi.block[0], 64u);
  EXPECT_EQ(fi.block[1], 1u);
  EXPECT_EQ(fi.static_shared_bytes, 0u);
  void* args[] = {&da, &db, &dc, const_cast<uint32_t*>(&n)};
  hal_launch_config config = config_1d((n + 63) / 64);
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  std::vector<float> c = download<float>(dc, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], static_cast<float>(3 * i + 1)) << i;
}

TEST_F(Kernels, SaxpyTakesValueParameters) {
  const uint32_t n = 500;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(1000 - i);
  }
  hal_deviceptr dx = upload(x), dy = upload(y);
  hal_function fn = function(load("saxpy"), "main");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(param_kinds(fn), (std::vector<hal_param_kind>{HAL_PARAM_POINTER, HAL_PARAM_POINTER,
                                                          HAL_PARAM_VALUE, HAL_PARAM_VALUE}));
  float a = 2.5f;
  uint32_t count = n;
  void* args[] = {&dx, &dy, &a, &count};
  hal_launch_config config = config_1d((n + 31) / 32, 32);
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  std::vector<float> out = download<float>(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.5f * i + 1000.0f - i) << i;
}

TEST_F(Kernels, ModuleWithSeveralEntryPoints) {
  hal_module module = load("multi");
  ASSERT_NE(module, nullptr);
  hal_function add = function(module, "add_value");
  hal_function mul = function(module, "mul_value");
  ASSERT_NE(add, nullptr);
  ASSERT_NE(mul, nullptr);
  hal_function_info fi{};
  fi.struct_size = sizeof(fi);
  ASSERT_OK(hal_function_get_info(mul, &fi));
  EXPECT_EQ(fi.block[0], 8u);
  EXPECT_EQ(fi.block[1], 2u);
  EXPECT_EQ(fi.block[2], 1u);
  EXPECT_EQ(fi.max_threads_per_block, 16u);
  hal_function missing = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_module_get_function(module, "main", &missing));
  EXPECT_TRUE(LastErrorHas({"add_value", "mul_value"}));

  const uint32_t n = 100;
  std::vector<uint32_t> y(n);
  std::iota(y.begin(), y.end(), 0u);
  hal_deviceptr dy = upload(y);
  uint32_t five = 5, three = 3, count = n;
  void* add_args[] = {&dy, &five, &count};
  void* mul_args[] = {&dy, &three, &count};
  hal_launch_config add_config = config_1d((n + 15) / 16);
  hal_launch_config mul_config = config_1d((n + 15) / 16);
  ASSERT_OK(hal_launch(stream_, add, &add_config, add_args));
  ASSERT_OK(hal_launch(stream_, mul, &mul_config, mul_args));
  std::vector<uint32_t> out = download<uint32_t>(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], (i + 5) * 3) << i;
}

TEST_F(Kernels, SpecializationConstants) {
  const uint32_t n = 64;
  std::vector<int32_t> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<int32_t>(i) - 10;
  hal_deviceptr dx = upload(x), dy = alloc(n * 4);
  uint32_t count = n;
  void* args[] = {&dx, &dy, &count};
  hal_launch_config config = config_1d(2);

  // Defaults: SCALE 1, OFFSET 0.
  hal_function plain = function(load("spec"), "main");
  ASSERT_NE(plain, nullptr);
  ASSERT_OK(hal_launch(stream_, plain, &config, args));
  std::vector<int32_t> out = download<int32_t>(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i]) << i;

  const uint32_t scale = 3;
  const int32_t offset = -7;
  hal_specialization specs[] = {{3, 4, &scale}, {4, 4, &offset}};
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.specialization_count = 2;
  options.specializations = specs;
  auto expect_scaled = [&](const hal_module_options& with) {
    hal_function special = function(load("spec", &with), "main");
    ASSERT_NE(special, nullptr);
    ASSERT_OK(hal_launch(stream_, special, &config, args));
    const std::vector<int32_t> scaled = download<int32_t>(dy, n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(scaled[i], x[i] * 3 - 7) << i;
  };
  expect_scaled(options);

  std::vector<uint8_t> blob = read_shader("spec");
  hal_module bad = nullptr;
  const uint16_t narrow = 1;
  hal_specialization wrong_size[] = {{3, 2, &narrow}};
  options.specialization_count = 1;
  options.specializations = wrong_size;
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT,
             hal_module_load(device_, blob.data(), blob.size(), &options, &bad));
  EXPECT_TRUE(LastErrorHas({"specialization constant 3", "4 bytes"}));
  // As in Vulkan, an id the module does not declare is ignored: engines give every variant of a
  // shader the same constants.
  const uint64_t wide = 5;
  hal_specialization superset[] = {{99, 4, &scale}, {3, 4, &scale}, {4, 4, &offset}, {7, 8, &wide}};
  options.specialization_count = 4;
  options.specializations = superset;
  expect_scaled(options);
}

// local_size_id.comp compiled twice: LocalSizeId (SPIR-V 1.6) and the WorkgroupSize built-in
// made of spec constants (SPIR-V 1.5). Both take the block from the launch.
class WorkgroupSizeFromLaunch : public VulkanTest,
                                public ::testing::WithParamInterface<const char*> {};

TEST_P(WorkgroupSizeFromLaunch, BlockSetsTheSpecConstants) {
  hal_function fn = function(load(GetParam()), "main");
  ASSERT_NE(fn, nullptr);
  hal_function_info fi{};
  fi.struct_size = sizeof(fi);
  ASSERT_OK(hal_function_get_info(fn, &fi));
  EXPECT_EQ(fi.block[0], 0u);
  EXPECT_EQ(fi.block[1], 0u);
  EXPECT_EQ(fi.block[2], 0u);
  const uint32_t n = 200;
  hal_deviceptr dy = alloc(n * 4);
  uint32_t count = n;
  void* args[] = {&dy, &count};
  for (uint32_t block : {16u, 40u}) {
    hal_launch_config config = config_1d((n + block - 1) / block, block);
    ASSERT_OK(hal_launch(stream_, fn, &config, args));
    std::vector<uint32_t> out = download<uint32_t>(dy, n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 3 * i + block) << "block " << block;
  }
  hal_launch_config no_block = config_1d(1);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream_, fn, &no_block, args));
}

INSTANTIATE_TEST_SUITE_P(Kernels, WorkgroupSizeFromLaunch,
                         ::testing::Values("local_size_id", "workgroup_size_spec"));

TEST_F(Kernels, BufferDeviceAddressKernel) {
  if ((info_.features & HAL_FEATURE_BUFFER_DEVICE_ADDRESS) == 0) {
    GTEST_SKIP() << "the device has no buffer device addresses";
  }
  hal_function fn = function(load("bda"), "main");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(param_kinds(fn), (std::vector<hal_param_kind>{HAL_PARAM_POINTER, HAL_PARAM_POINTER,
                                                          HAL_PARAM_POINTER, HAL_PARAM_VALUE}));
  const uint32_t n = 96;
  std::vector<int32_t> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<int32_t>(i);
    b[i] = 1000 - static_cast<int32_t>(i) * 7;
  }
  hal_deviceptr da = upload(a), db = upload(b), dc = alloc(n * 4);
  uint32_t count = n;
  void* args[] = {&da, &db, &dc, &count};
  hal_launch_config config = config_1d(n / 32);
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  std::vector<int32_t> c = download<int32_t>(dc, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] * 2 + b[i]) << i;
}

TEST_F(Kernels, SharedMemorySizedAtLaunch) {
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.flags = HAL_MODULE_SHARED_BYTES_CONSTANT;
  options.shared_bytes_constant_id = 7;
  hal_function fn = function(load("shared_sum", &options), "main");
  ASSERT_NE(fn, nullptr);
  const uint32_t groups = 4;
  std::vector<uint32_t> x(groups * 32);
  for (uint32_t i = 0; i < x.size(); ++i) x[i] = i * i;
  hal_deviceptr dx = upload(x), ds = alloc(groups * 4);
  void* args[] = {&dx, &ds};
  hal_launch_config config = config_1d(groups, 0, 32 * 4);
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  std::vector<uint32_t> sums = download<uint32_t>(ds, groups);
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t expected = 0;
    for (uint32_t k = 0; k < 32; ++k) expected += x[g * 32 + k];
    ASSERT_EQ(sums[g], expected) << g;
  }
  // The shared array is sized by shared_bytes alone: 0 would be an empty array, refused before
  // the driver sees it.
  hal_launch_config empty = config_1d(groups, 0, 0);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream_, fn, &empty, args));
  EXPECT_NE(std::string(hal_last_error()).find("shared_bytes is 0"), std::string::npos)
      << hal_last_error();
  // Without the option the module cannot size shared memory at launch.
  hal_function fixed = function(load("shared_sum"), "main");
  ASSERT_NE(fixed, nullptr);
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, hal_launch(stream_, fixed, &config, args));
}

TEST_F(Kernels, StaticSharedMemoryAndSeveralDescriptorSets) {
  hal_function fn = function(load("static_shared"), "main");
  ASSERT_NE(fn, nullptr);
  hal_function_info fi{};
  fi.struct_size = sizeof(fi);
  ASSERT_OK(hal_function_get_info(fn, &fi));
  EXPECT_EQ(fi.static_shared_bytes, 128u * 4 + 4u * 16);
  EXPECT_EQ(fi.block[0], 4u);
  EXPECT_EQ(fi.block[1], 2u);
  // (set 0, binding 5) comes before (set 1, binding 3); then scale, n and pair.
  EXPECT_EQ(param_kinds(fn),
            (std::vector<hal_param_kind>{HAL_PARAM_POINTER, HAL_PARAM_POINTER, HAL_PARAM_VALUE,
                                         HAL_PARAM_VALUE, HAL_PARAM_VALUE}));
  hal_param_info pair{};
  pair.struct_size = sizeof(pair);
  ASSERT_OK(hal_function_get_param(fn, 4, &pair));
  EXPECT_EQ(pair.size, 8u);
  hal_deviceptr dz = alloc(8 * 4), dy = alloc(8 * 4);
  float scale = 2.0f;
  uint32_t n = 8;
  float pair_value[2] = {0.5f, 0.0f};
  void* args[] = {&dz, &dy, &scale, &n, pair_value};
  hal_launch_config config = config_1d(1);
  ASSERT_OK(hal_launch(stream_, fn, &config, args));
  std::vector<float> y = download<float>(dy, 8);
  std::vector<uint32_t> z = download<uint32_t>(dz, 8);
  for (uint32_t l = 0; l < 8; ++l) {
    EXPECT_EQ(y[l], 2.0f * l + 0.5f) << l;
    EXPECT_EQ(z[l], l % 4) << l;
  }
}

TEST_F(Kernels, ManyLaunchesSpanSeveralBatches) {
  hal_function add = function(load("multi"), "add_value");
  ASSERT_NE(add, nullptr);
  const uint32_t n = 16;
  hal_deviceptr dy = upload(std::vector<uint32_t>(n, 0));
  uint32_t one = 1, count = n;
  void* args[] = {&dy, &one, &count};
  hal_launch_config config = config_1d(1);
  const int launches = 600;  // more than two batches of StreamCore::kMaxCommandsPerBatch
  for (int i = 0; i < launches; ++i) ASSERT_OK(hal_launch(stream_, add, &config, args));
  std::vector<uint32_t> out = download<uint32_t>(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<uint32_t>(launches)) << i;
}

// Back-to-back launches in one batch reuse descriptor sets and bindings only while function and
// buffers stay the same: every change of function, buffer or offset must still take effect, also
// with copies and fills recorded in between.
TEST_F(Kernels, BackToBackLaunchesRebindWhatChanged) {
  hal_module module = load("multi");
  hal_function add = function(module, "add_value");
  hal_function mul = function(module, "mul_value");
  ASSERT_NE(add, nullptr);
  ASSERT_NE(mul, nullptr);
  const uint32_t n = 64;
  hal_deviceptr x = upload(std::vector<uint32_t>(n, 0));
  hal_deviceptr y = upload(std::vector<uint32_t>(n, 0));
  hal_deviceptr z = alloc(n * 4);
  const uint32_t skip = std::max<uint32_t>(info_.pointer_alignment, 4) / 4;  // elements
  ASSERT_LT(skip, n);
  auto launch = [&](hal_function fn, hal_deviceptr ptr, uint32_t value, uint32_t count) {
    void* args[] = {&ptr, &value, &count};
    hal_launch_config config = config_1d((count + 15) / 16);
    ASSERT_OK(hal_launch(stream_, fn, &config, args));
  };
  for (int i = 0; i < 3; ++i) launch(add, x, 1, n);  // x = 3
  launch(add, y, 2, n);                              // y = 2
  ASSERT_OK(hal_memset_d32(stream_, z, 7, n));       // a fill in between
  launch(add, x, 1, n);                              // x = 4
  launch(mul, x, 3, n);                              // x = 12 (another function)
  ASSERT_OK(hal_memcpy_dtod(stream_, z, y, n * 4));  // z = 2
  launch(add, x + skip * 4, 5, n - skip);            // x[skip..] = 17 (an interior pointer)
  launch(add, x, 100, skip);                         // x[..skip] = 112
  launch(add, z, 1, n);                              // z = 3
  std::vector<uint32_t> out_x = download<uint32_t>(x, n);
  std::vector<uint32_t> out_y = download<uint32_t>(y, n);
  std::vector<uint32_t> out_z = download<uint32_t>(z, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out_x[i], i < skip ? 112u : 17u) << i;
    ASSERT_EQ(out_y[i], 2u) << i;
    ASSERT_EQ(out_z[i], 3u) << i;
  }
}

TEST_F(Kernels, UnloadWhileLaunchesAreInFlight) {
  std::vector<uint8_t> blob = read_shader("multi");
  hal_module module = nullptr;
  ASSERT_OK(hal_module_load(device_, blob.data(), blob.size(), nullptr, &module));
  hal_function add = nullptr;
  ASSERT_OK(hal_module_get_function(module, "add_value", &add));
  const uint32_t n = 64;
  hal_deviceptr dy = upload(std::vector<uint32_t>(n, 1));
  uint32_t two = 2, count = n;
  void* args[] = {&dy, &two, &count};
  hal_launch_config config = config_1d(4);
  for (int i = 0; i < 10; ++i) ASSERT_OK(hal_launch(stream_, add, &config, args));
  // Submit the first launches, record more, and unload with both kinds pending.
  const hal_status query = hal_stream_query(stream_);
  EXPECT_TRUE(query == HAL_SUCCESS || query == HAL_ERROR_NOT_READY) << hal_status_string(query);
  for (int i = 0; i < 10; ++i) ASSERT_OK(hal_launch(stream_, add, &config, args));
  ASSERT_OK(hal_module_unload(module));
  std::vector<uint32_t> out = download<uint32_t>(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 41u) << i;
}

}  // namespace
}  // namespace hal_vk_test
