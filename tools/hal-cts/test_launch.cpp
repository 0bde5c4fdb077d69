// Area Launch: grids at the device's limits run (and one beyond is refused), the block size
// rules, shared memory limits, and the validation of every argument.
#include <algorithm>
#include <string>
#include <vector>

#include "cts.h"
#include "cts_kernels.h"

namespace cts {
namespace {

class Launch : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (HasFatalFailure()) return;
    CTS_LOAD_OR_SKIP(fill_, "fill_f32");
  }
  hal_launch_config config(uint32_t gx, uint32_t gy, uint32_t gz) const {
    hal_launch_config c{};
    c.grid[0] = gx;
    c.grid[1] = gy;
    c.grid[2] = gz;
    for (int i = 0; i < 3; ++i) c.block[i] = fill_.info->block[i];
    return c;
  }
  // The built-in fill_f32 launched with blocks at the device's limits along each axis and in
  // volume along x, each filling one element per thread along x (the kernel strides over x; y
  // and z repeat its work), every element checked.
  void expect_builtin_fill_at_block_limits() {
    hal_function_info fi{};
    fi.struct_size = sizeof fi;
    CTS_ASSERT_OK(hal_function_get_info(fill_.function, &fi));
    if ((fi.block[0] | fi.block[1] | fi.block[2]) != 0) {
      GTEST_SKIP() << "The driver's built-in fill_f32 has a fixed block of " << fi.block[0] << "x"
                   << fi.block[1] << "x" << fi.block[2]
                   << ", so no kernel of the device can launch a block at its limits: give "
                      "fill_f32 a block chosen at launch (docs/NEW_DEVICE.md), as it computes "
                      "the same with any.";
    }
    uint32_t limit = info().max_threads_per_block;
    if (fi.max_threads_per_block != 0) limit = std::min(limit, fi.max_threads_per_block);
    const uint32_t shapes[3][3] = {{std::min(info().max_block_dim[0], limit), 1, 1},
                                   {1, std::min(info().max_block_dim[1], limit), 1},
                                   {1, 1, std::min(info().max_block_dim[2], limit)}};
    const uint32_t grid[3] = {3, 2, 1};
    const uint32_t blocks = grid[0] * grid[1] * grid[2];
    Buffer y(device(), (size_t{shapes[0][0]} * blocks + 1) * 4);
    ASSERT_TRUE(y.ok()) << y.error();
    float value = 7.0f;
    for (const auto& b : shapes) {
      const std::string what = "fill_f32 with block {" + std::to_string(b[0]) + "," +
                               std::to_string(b[1]) + "," + std::to_string(b[2]) +
                               "}, at the limits the device reports";
      SCOPED_TRACE(what);
      value += 1.0f;
      uint32_t n = b[0] * blocks;
      CTS_ASSERT_OK(hal_memset_d32(stream_, y.ptr, 0, n + 1));
      void* args[] = {&y.ptr, &n, &value};
      const hal_launch_config c = {{grid[0], grid[1], grid[2]}, {b[0], b[1], b[2]}, 0};
      std::vector<float> got(n + 1);
      // The first failure of the launch, the copy back or the synchronize, with its message.
      hal_status s = hal_launch(stream_, fill_.function, &c, args);
      if (s == HAL_SUCCESS) s = hal_memcpy_dtoh(stream_, got.data(), y.ptr, got.size() * 4);
      if (s == HAL_SUCCESS) s = hal_stream_synchronize(stream_);
      if (s != HAL_SUCCESS) hal_stream_synchronize(stream_);  // the stream is reused below
      ASSERT_EQ(s, HAL_SUCCESS) << what << " failed: " << describe(s)
                                << ". The device reports limits it cannot launch: report the "
                                   "real ones in hal_device_info (max_threads_per_block, "
                                   "max_block_dim)";
      EXPECT_EQ(std::count(got.begin(), got.end() - 1, value), static_cast<long>(n))
          << what << ": not every element was written";
      EXPECT_EQ(got[n], 0.0f) << what << ": written past the last element";
    }
  }
  Kernel fill_;
};

// fill_f32 is a grid-stride loop over x; y and z repeat the same work. Each grid is checked by
// the values it wrote.
TEST_P(Launch, GridAtDeviceLimits) {
  const uint32_t n = 100000;
  Buffer y(device(), n * 4);
  ASSERT_TRUE(y.ok()) << y.error();
  // The quick run launches at most 4096 blocks per axis (a grid at a limit of 65535 takes tens of
  // seconds on a CPU device); the full run launches every limit itself, except that a CPU device
  // (whose x limit may be CUDA's 2^31 - 1 blocks: hours) is held to 65535.
  const uint32_t cap = options().quick ? 4096 : (info().is_cpu ? 65535 : UINT32_MAX);
  float value = 1.0f;
  for (int axis = 0; axis < 3; ++axis) {
    const uint32_t limit = info().max_grid_dim[axis];
    SCOPED_TRACE("axis " + std::to_string(axis) + " at its limit " + std::to_string(limit));
    uint32_t g[3] = {1, 1, 1};
    g[axis] = std::min(limit, cap);
    {
      value += 1.0f;
      uint32_t count = n;
      CTS_ASSERT_OK(hal_memset_d32(stream_, y.ptr, 0, n));
      void* args[] = {&y.ptr, &count, &value};
      const hal_launch_config c = config(g[0], g[1], g[2]);
      CTS_ASSERT_OK(hal_launch(stream_, fill_.function, &c, args));
      std::vector<float> got(n);
      CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), y.ptr, size_t{n} * 4));
      CTS_ASSERT_OK(hal_stream_synchronize(stream_));
      EXPECT_EQ(std::count(got.begin(), got.end(), value), static_cast<long>(n));
    }
    // One beyond the limit is refused before any driver sees it.
    if (limit != UINT32_MAX) {
      g[axis] = limit + 1;
      uint32_t count = n;
      void* args[] = {&y.ptr, &count, &value};
      const hal_launch_config c = config(g[0], g[1], g[2]);
      CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                        hal_launch(stream_, fill_.function, &c, args));
    }
    g[axis] = 0;
    uint32_t count = n;
    void* args[] = {&y.ptr, &count, &value};
    const hal_launch_config zero = config(g[0], g[1], g[2]);
    CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                      hal_launch(stream_, fill_.function, &zero, args));
  }
  expect_device_works("launches at and beyond the grid limits");
}

TEST_P(Launch, BlockRules) {
  Buffer y(device(), 4096);
  ASSERT_TRUE(y.ok()) << y.error();
  uint32_t n = 1024;
  float value = 3.0f;
  void* args[] = {&y.ptr, &n, &value};
  hal_function_info fi{};
  fi.struct_size = sizeof fi;
  CTS_ASSERT_OK(hal_function_get_info(fill_.function, &fi));
  EXPECT_LE(fi.max_threads_per_block, info().max_threads_per_block);
  // The kernel's own block, given explicitly; and {0,0,0} where the kernel has a fixed block.
  hal_launch_config c = config(4, 1, 1);
  CTS_EXPECT_OK(hal_launch(stream_, fill_.function, &c, args));
  if (fi.block[0] != 0) {
    c.block[0] = c.block[1] = c.block[2] = 0;
    CTS_EXPECT_OK(hal_launch(stream_, fill_.function, &c, args));
    // Any other block size is refused for a kernel with a fixed block.
    c.block[0] = fi.block[0] / 2;
    c.block[1] = 1;
    c.block[2] = 1;
    CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                      hal_launch(stream_, fill_.function, &c, args));
  }
  // Beyond the device's block limits, in each dimension and in total.
  for (int axis = 0; axis < 3; ++axis) {
    c.block[0] = c.block[1] = c.block[2] = 1;
    c.block[axis] = info().max_block_dim[axis] + 1;
    CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                      hal_launch(stream_, fill_.function, &c, args));
  }
  c.block[0] = info().max_block_dim[0];
  c.block[1] = info().max_threads_per_block / info().max_block_dim[0] + 1;
  c.block[2] = 1;
  if (c.block[1] <= info().max_block_dim[1]) {
    CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                      hal_launch(stream_, fill_.function, &c, args));
  }
  c.block[0] = 0;
  c.block[1] = 1;
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                    hal_launch(stream_, fill_.function, &c, args));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  std::vector<float> got(n);
  CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, got.data(), y.ptr, size_t{n} * 4));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(std::count(got.begin(), got.end(), value), static_cast<long>(n));
}

// Blocks at the device's limits, in each dimension and in volume, through a kernel whose block is
// chosen at launch (cts_kernels.h); one beyond each limit is refused. On a device of built-in
// kernels, its fill_f32, where the driver lets the launch choose its block.
TEST_P(Launch, BlockAtDeviceLimits) {
  if (pack_ir() == HAL_IR_AUTO) GTEST_SKIP() << cannot_run("fill_f32");  // no IR, or not --ir's
  if (pack_ir() == HAL_IR_BUILTIN) {
    expect_builtin_fill_at_block_limits();
    return;
  }
  const bool spirv = pack_ir() == HAL_IR_SPIRV;
  hal_module module = nullptr;
  if (spirv) {
    CTS_ASSERT_OK(hal_module_load(device(), kIndexSpirv, kIndexSpirvBytes, nullptr, &module));
  } else {
    CTS_ASSERT_OK(hal_module_load(device(), kIndexPtx, kIndexPtxBytes, nullptr, &module));
  }
  hal_function f = nullptr;
  CTS_ASSERT_OK(hal_module_get_function(module, spirv ? "main" : "cts_index", &f));
  hal_function_info fi{};
  fi.struct_size = sizeof fi;
  CTS_ASSERT_OK(hal_function_get_info(f, &fi));
  EXPECT_EQ(fi.block[0], 0u) << "the kernel's block is chosen at launch";
  uint32_t limit = info().max_threads_per_block;
  if (fi.max_threads_per_block != 0) limit = std::min(limit, fi.max_threads_per_block);
  const uint32_t grid[3] = {3, 2, 1};
  const uint32_t blocks_in_grid = grid[0] * grid[1] * grid[2];
  const size_t most = size_t{limit} * blocks_in_grid;
  Buffer out(device(), (most + 1) * 4);
  ASSERT_TRUE(out.ok()) << out.error();

  struct Shape {
    uint32_t x, y, z;
  };
  std::vector<Shape> shapes = {{std::min(info().max_block_dim[0], limit), 1, 1},
                               {1, std::min(info().max_block_dim[1], limit), 1},
                               {1, 1, std::min(info().max_block_dim[2], limit)}};
  // The whole volume over three dimensions, where the limit splits that way.
  if (limit % 4 == 0 && limit / 4 <= info().max_block_dim[0] && info().max_block_dim[1] >= 2 &&
      info().max_block_dim[2] >= 2) {
    shapes.push_back({limit / 4, 2, 2});
  }
  for (const Shape& b : shapes) {
    const std::string what = "block {" + std::to_string(b.x) + "," + std::to_string(b.y) + "," +
                             std::to_string(b.z) + "}";
    SCOPED_TRACE(what);
    uint32_t n = b.x * b.y * b.z * blocks_in_grid;
    CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0, most + 1));
    void* args[] = {&out.ptr, &n};
    const hal_launch_config c = {{grid[0], grid[1], grid[2]}, {b.x, b.y, b.z}, 0};
    CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
    std::vector<uint32_t> got(n + 1);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    size_t wrong = 0, first = n;
    for (uint32_t i = 0; i < n; ++i) {
      if (got[i] != i + 1) {
        if (wrong++ == 0) first = i;
      }
    }
    EXPECT_EQ(wrong, 0u) << what << ": " << wrong << " of " << n
                         << " threads wrote the wrong value, the first at " << first;
    EXPECT_EQ(got[n], 0u) << what << ": written past the last thread";
  }
  uint32_t n = 1;
  void* args[] = {&out.ptr, &n};
  for (int axis = 0; axis < 3; ++axis) {
    hal_launch_config c = {{1, 1, 1}, {1, 1, 1}, 0};
    c.block[axis] = info().max_block_dim[axis] + 1;
    CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch", hal_launch(stream_, f, &c, args));
  }
  if (limit < info().max_block_dim[0] * 2 && info().max_block_dim[1] >= 2) {
    const hal_launch_config c = {{1, 1, 1}, {std::min(limit, info().max_block_dim[0]), 2, 1}, 0};
    if (c.block[0] * 2 > limit) {
      CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch", hal_launch(stream_, f, &c, args));
    }
  }
  const hal_launch_config zero = {{1, 1, 1}, {0, 0, 0}, 0};
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_launch", hal_launch(stream_, f, &zero, args));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  CTS_EXPECT_OK(hal_module_unload(module));
}

TEST_P(Launch, SharedMemoryLimits) {
  Buffer y(device(), 4096);
  ASSERT_TRUE(y.ok()) << y.error();
  uint32_t n = 16;
  float value = 1.0f;
  void* args[] = {&y.ptr, &n, &value};
  hal_launch_config c = config(1, 1, 1);
  c.shared_bytes = info().max_shared_memory_per_block + 1;
  // Beyond the device's limit: refused; where the module cannot size shared memory at launch
  // (SPIR-V without a shared-bytes constant) any dynamic amount is HAL_ERROR_NOT_SUPPORTED.
  const hal_status s = hal_launch(stream_, fill_.function, &c, args);
  if (pack_ir() == HAL_IR_SPIRV) {
    EXPECT_EQ(s, HAL_ERROR_NOT_SUPPORTED) << describe(s);
    c.shared_bytes = 16;
    CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_launch",
                      hal_launch(stream_, fill_.function, &c, args));
  } else if (pack_ir() == HAL_IR_BUILTIN) {
    // A built-in kernel takes dynamic shared memory if its driver says so: refused beyond the
    // limit either way, and, where the kernel cannot size it, refused in any amount.
    EXPECT_TRUE(s == HAL_ERROR_NOT_SUPPORTED || s == HAL_ERROR_OUT_OF_RANGE) << describe(s);
    c.shared_bytes = 16;
    if (s == HAL_ERROR_NOT_SUPPORTED) {
      CTS_EXPECT_STATUS(HAL_ERROR_NOT_SUPPORTED, "hal_launch",
                        hal_launch(stream_, fill_.function, &c, args));
    } else if (c.shared_bytes <= info().max_shared_memory_per_block) {
      CTS_EXPECT_OK(hal_launch(stream_, fill_.function, &c, args));
    }
  } else {
    EXPECT_EQ(s, HAL_ERROR_OUT_OF_RANGE) << describe(s);
    c.shared_bytes = 1024;
    CTS_EXPECT_OK(hal_launch(stream_, fill_.function, &c, args));
  }
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
}

TEST_P(Launch, ArgumentValidation) {
  Buffer y(device(), 4096);
  ASSERT_TRUE(y.ok()) << y.error();
  uint32_t n = 16;
  float value = 1.0f;
  hal_launch_config c = config(1, 1, 1);
  void* good[] = {&y.ptr, &n, &value};
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_launch",
                    hal_launch(stream_, fill_.function, nullptr, good));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_launch",
                    hal_launch(stream_, fill_.function, &c, nullptr));
  void* missing[] = {&y.ptr, nullptr, &value};
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_launch",
                    hal_launch(stream_, fill_.function, &c, missing));
  // A null pointer (docs/ABI.md): passed through to a PTX kernel, which takes raw addresses
  // (with a count of 0 the kernel never dereferences it), refused for the pack's SPIR-V, whose
  // buffers are descriptor-bound and cannot be null. A built-in kernel's driver says which.
  hal_deviceptr zero = 0;
  uint32_t none = 0;
  void* null_ptr[] = {&zero, &none, &value};
  if (pack_ir() == HAL_IR_PTX) {
    CTS_EXPECT_OK(hal_launch(stream_, fill_.function, &c, null_ptr));
    CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  } else if (pack_ir() == HAL_IR_BUILTIN) {
    const hal_status s = hal_launch(stream_, fill_.function, &c, null_ptr);
    if (s != HAL_SUCCESS) {
      CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch", s);
    }
    CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  } else {
    CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                      hal_launch(stream_, fill_.function, &c, null_ptr));
  }
  hal_deviceptr past = y.ptr + 4096 + 4096;
  void* outside[] = {&past, &n, &value};
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                    hal_launch(stream_, fill_.function, &c, outside));
  // Each pointer parameter states the alignment it needs (hal_param_info.alignment).
  hal_param_info param{};
  param.struct_size = sizeof param;
  CTS_ASSERT_OK(hal_function_get_param(fill_.function, 0, &param));
  EXPECT_GE(param.alignment, 1u);
  if (param.alignment > 1) {
    hal_deviceptr odd = y.ptr + param.alignment / 2;
    void* misaligned[] = {&odd, &n, &value};
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_launch",
                      hal_launch(stream_, fill_.function, &c, misaligned));
  }
  // An interior pointer at the required alignment is a valid argument.
  hal_deviceptr interior = y.ptr + std::max<uint32_t>(param.alignment, 4) * 4;
  void* inside[] = {&interior, &n, &value};
  CTS_EXPECT_OK(hal_launch(stream_, fill_.function, &c, inside));
  // A pointer into memory that has been freed.
  hal_deviceptr freed = 0;
  CTS_ASSERT_OK(hal_mem_alloc(device(), 4096, &freed));
  CTS_ASSERT_OK(hal_mem_free(device(), freed));
  void* stale[] = {&freed, &n, &value};
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_launch",
                    hal_launch(stream_, fill_.function, &c, stale));
  // Handles.
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_launch",
                    hal_launch(nullptr, fill_.function, &c, good));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_launch", hal_launch(stream_, nullptr, &c, good));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  expect_device_works("refused launches");
}

// Pointers at 4-byte offsets inside their allocations reach kernels that take raw addresses
// (PTX, and SPIR-V buffer device addresses), as `x + 1` on an int* does in CUDA: the kernel
// computes on exactly the elements from there on. y[i] = x[i] * 2 + 1 (SPIR-V, cts_kernels.h) or
// out[i] = i + 1 (PTX). On a device of built-in kernels, the pack's copy_f32 from x + 1 to y + 1.
TEST_P(Launch, RawAddressesAtFourByteOffsets) {
  if (pack_ir() == HAL_IR_BUILTIN) {
    Kernel copy;
    CTS_LOAD_OR_SKIP(copy, "copy_f32");
    uint32_t n = 100;
    std::vector<float> x(n + 1);
    for (uint32_t i = 0; i <= n; ++i) x[i] = static_cast<float>(i * 3) - 50.0f;
    Buffer in(device(), (n + 1) * 4), out(device(), (n + 2) * 4);
    ASSERT_TRUE(in.ok() && out.ok()) << in.error() << out.error();
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, in.ptr, x.data(), x.size() * 4));
    CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xBF800000u, n + 2));  // -1.0f
    hal_deviceptr x1 = in.ptr + 4, y1 = out.ptr + 4;
    ASSERT_NO_FATAL_FAILURE(copy.launch(stream_, 1, 1, 1, {&x1, &y1, &n}));
    std::vector<float> got(n + 2);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    EXPECT_EQ(got[0], -1.0f) << "the element before the pointer was written";
    EXPECT_EQ(got[n + 1], -1.0f) << "the element after the last was written";
    size_t wrong = 0;
    for (uint32_t i = 0; i < n; ++i) wrong += got[i + 1] != x[i + 1];
    EXPECT_EQ(wrong, 0u) << "elements copied from or to the wrong place";
    return;
  }
  const bool spirv = pack_ir() == HAL_IR_SPIRV;
  if (spirv && (info().features & HAL_FEATURE_BUFFER_DEVICE_ADDRESS) == 0) {
    GTEST_SKIP() << "SPIR-V kernels take raw addresses only with buffer device addresses, "
                    "which this device does not have.";
  }
  if (pack_ir() == HAL_IR_AUTO) GTEST_SKIP() << cannot_run("fill_f32");  // no IR, or not --ir's
  hal_module module = nullptr;
  if (spirv) {
    CTS_ASSERT_OK(hal_module_load(device(), kAddressSpirv, kAddressSpirvBytes, nullptr, &module));
  } else {
    CTS_ASSERT_OK(hal_module_load(device(), kIndexPtx, kIndexPtxBytes, nullptr, &module));
  }
  hal_function f = nullptr;
  CTS_ASSERT_OK(hal_module_get_function(module, spirv ? "main" : "cts_index", &f));
  uint32_t n = 100;
  std::vector<int32_t> x(n + 1);
  for (uint32_t i = 0; i <= n; ++i) x[i] = static_cast<int32_t>(i * 3) - 50;
  Buffer in(device(), (n + 1) * 4), out(device(), (n + 2) * 4);
  ASSERT_TRUE(in.ok() && out.ok()) << in.error() << out.error();
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, in.ptr, x.data(), x.size() * 4));
  CTS_ASSERT_OK(hal_memset_d32(stream_, out.ptr, 0xFFFFFFFFu, n + 2));
  hal_deviceptr x1 = in.ptr + 4, y1 = out.ptr + 4;
  void* spirv_args[] = {&x1, &y1, &n};
  void* ptx_args[] = {&y1, &n};
  const hal_launch_config c = {
      {(n + 63) / 64, 1, 1}, {spirv ? 0u : 64u, spirv ? 0u : 1u, spirv ? 0u : 1u}, 0};
  CTS_ASSERT_OK(hal_launch(stream_, f, &c, spirv ? spirv_args : ptx_args));
  std::vector<int32_t> got(n + 2);
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(got[0], -1) << "the element before the pointer was written";
  EXPECT_EQ(got[n + 1], -1) << "the element after the last was written";
  size_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t want = spirv ? x[i + 1] * 2 + 1 : static_cast<int32_t>(i + 1);
    wrong += got[i + 1] != want;
  }
  EXPECT_EQ(wrong, 0u) << "elements computed from the wrong place";
  CTS_EXPECT_OK(hal_module_unload(module));
}

// A uniform block is a pointer parameter (docs/ABI.md): the kernel reads its values, an argument
// not at the parameter's alignment is refused, and so is a block that does not fit between the
// argument and the end of its allocation.
TEST_P(Launch, UniformBufferParameters) {
  if (pack_ir() != HAL_IR_SPIRV) {
    GTEST_SKIP() << "Uniform buffers are a SPIR-V construct; this run does not load SPIR-V on "
                    "this device.";
  }
  hal_module module = nullptr;
  CTS_ASSERT_OK(hal_module_load(device(), kUniformSpirv, kUniformSpirvBytes, nullptr, &module));
  hal_function f = nullptr;
  CTS_ASSERT_OK(hal_module_get_function(module, "main", &f));
  hal_param_info settings_param{};
  settings_param.struct_size = sizeof settings_param;
  CTS_ASSERT_OK(hal_function_get_param(f, 0, &settings_param));
  EXPECT_EQ(settings_param.kind, HAL_PARAM_POINTER);
  const uint32_t alignment = std::max<uint32_t>(settings_param.alignment, 1);
  EXPECT_EQ(alignment & (alignment - 1), 0u) << "the alignment is a power of two";

  // The block at an aligned offset inside a larger allocation, ending at its end, its std140
  // layout filled in.
  constexpr uint32_t kBlock = 64;
  uint32_t block[kBlock / 4] = {};
  block[0] = 7;  // add
  block[4] = 1;  // mul[0], mul[1] and mul[2], 16 bytes apart
  block[8] = 3;
  block[12] = 1000;
  const uint32_t offset = std::max(alignment, kBlock);  // both powers of two
  Buffer settings(device(), offset + kBlock);
  uint32_t n = 130;
  Buffer out(device(), size_t{n} * 4);
  ASSERT_TRUE(settings.ok() && out.ok()) << settings.error() << out.error();
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, settings.ptr + offset, block, kBlock));
  hal_deviceptr at = settings.ptr + offset;
  void* args[] = {&at, &out.ptr, &n};
  const hal_launch_config c = {{(n + 63) / 64, 1, 1}, {0, 0, 0}, 0};
  CTS_ASSERT_OK(hal_launch(stream_, f, &c, args));
  std::vector<uint32_t> got(n);
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), out.ptr, got.size() * 4));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  size_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) wrong += got[i] != i * block[4 + 4 * (i % 3)] + 7;
  EXPECT_EQ(wrong, 0u) << "elements computed from the wrong settings";

  // Four bytes short: the kernel would read past the allocation.
  Buffer short_of_it(device(), kBlock - 4);
  ASSERT_TRUE(short_of_it.ok()) << short_of_it.error();
  hal_deviceptr short_ptr = short_of_it.ptr;
  void* short_args[] = {&short_ptr, &out.ptr, &n};
  EXPECT_EQ(hal_launch(stream_, f, &c, short_args), HAL_ERROR_OUT_OF_RANGE)
      << "a 64-byte uniform block in a 60-byte allocation was launched";
  if (alignment > 1) {
    hal_deviceptr misaligned = settings.ptr + alignment / 2;
    void* misaligned_args[] = {&misaligned, &out.ptr, &n};
    EXPECT_EQ(hal_launch(stream_, f, &c, misaligned_args), HAL_ERROR_INVALID_ARGUMENT)
        << "a uniform buffer argument off its " << alignment << "-byte alignment was launched";
  }
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  CTS_EXPECT_OK(hal_module_unload(module));
}

INSTANTIATE_TEST_SUITE_P(, Launch, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
