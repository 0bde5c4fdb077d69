// Tests on a real NVIDIA GPU through the public API, with the system's libcuda. Where there is no
// usable driver (HAL_CUDA_LIBRARY is ignored here), every test skips with the backend's reason,
// or fails with it when HAL_TEST_REQUIRE_CUDA=1.
// The last test faults a kernel on purpose and leaves the device unusable in its process.
#include <hal/hal.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Only the CUDA backend, with the system's driver; set before the first hal call.
const bool kSystemCuda = [] {
  unsetenv("HAL_CUDA_LIBRARY");
  return setenv("HAL_BACKENDS", "cuda", 1) == 0;
}();

constexpr const char* kPtx = R"(.version 7.0
.target sm_52
.address_size 64

.visible .entry add_one(
    .param .u64 .ptr .global .align 4 add_one_data,
    .param .u32 add_one_n
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [add_one_data];
  ld.param.u32 %r1, [add_one_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd2, %rd2, %rd3;
  ld.global.u32 %r5, [%rd2];
  add.s32 %r5, %r5, 1;
  st.global.u32 [%rd2], %r5;
DONE:
  ret;
}

.visible .entry fault()
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u64 %rd1, 8;
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kSystemCuda);
    ASSERT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
    hal_backend_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(hal_backend_get_info(0, &info), HAL_SUCCESS);
    if (!info.available || info.device_count == 0) {
      // On a machine that is meant to have a GPU (tools/gpu-check.sh sets this), its absence is
      // a failure, not a skip.
      const char* require = std::getenv("HAL_TEST_REQUIRE_CUDA");
      if (require != nullptr && std::strcmp(require, "1") == 0) {
        FAIL() << "HAL_TEST_REQUIRE_CUDA=1 but there is no CUDA device: " << info.reason;
      }
      GTEST_SKIP() << "no CUDA device: " << info.reason;
    }
    ASSERT_EQ(hal_device_find("cuda:0", &device_), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_stream_create(device_, &stream_), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_module_load(device_, kPtx, std::strlen(kPtx), nullptr, &module_), HAL_SUCCESS)
        << hal_last_error();
  }
  void TearDown() override {
    if (module_ != nullptr) hal_module_unload(module_);
    if (stream_ != nullptr) hal_stream_destroy(stream_);
  }
  hal_device device_ = nullptr;
  hal_stream stream_ = nullptr;
  hal_module module_ = nullptr;
};

TEST_F(CudaGpuTest, RunsAKernel) {
  constexpr uint32_t kCount = 1000;
  hal_deviceptr data = 0;
  ASSERT_EQ(hal_mem_alloc(device_, kCount * 4, &data), HAL_SUCCESS) << hal_last_error();
  std::vector<uint32_t> in(kCount);
  for (uint32_t i = 0; i < kCount; ++i) in[i] = i;
  void* pinned = nullptr;
  ASSERT_EQ(hal_host_alloc(device_, kCount * 4, &pinned), HAL_SUCCESS) << hal_last_error();
  std::memcpy(pinned, in.data(), kCount * 4);
  ASSERT_EQ(hal_memcpy_htod(stream_, data, pinned, kCount * 4), HAL_SUCCESS) << hal_last_error();
  std::memset(pinned, 0xff, kCount * 4);  // the source may be reused at once
  hal_function function = nullptr;
  ASSERT_EQ(hal_module_get_function(module_, "add_one", &function), HAL_SUCCESS)
      << hal_last_error();
  uint32_t n = kCount;
  void* args[] = {&data, &n};
  const hal_launch_config config = {{(kCount + 127) / 128, 1, 1}, {128, 1, 1}, 0};
  hal_event start = nullptr;
  hal_event end = nullptr;
  ASSERT_EQ(hal_event_create(device_, &start), HAL_SUCCESS);
  ASSERT_EQ(hal_event_create(device_, &end), HAL_SUCCESS);
  ASSERT_EQ(hal_event_record(start, stream_), HAL_SUCCESS);
  ASSERT_EQ(hal_launch(stream_, function, &config, args), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_event_record(end, stream_), HAL_SUCCESS);
  std::vector<uint32_t> out(kCount, 0);
  ASSERT_EQ(hal_memcpy_dtoh(stream_, out.data(), data, kCount * 4), HAL_SUCCESS);
  ASSERT_EQ(hal_stream_synchronize(stream_), HAL_SUCCESS) << hal_last_error();
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], i + 1) << i;
  float ms = -1;
  EXPECT_EQ(hal_event_elapsed_ms(start, end, &ms), HAL_SUCCESS) << hal_last_error();
  EXPECT_GE(ms, 0.0f);
  hal_event_destroy(start);
  hal_event_destroy(end);
  EXPECT_EQ(hal_host_free(device_, pinned), HAL_SUCCESS);
  EXPECT_EQ(hal_mem_free(device_, data), HAL_SUCCESS);
}

TEST_F(CudaGpuTest, LargeDynamicSharedMemory) {
  hal_device_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal_device_get_info(device_, &info), HAL_SUCCESS);
  if (info.max_shared_memory_per_block <= 48 * 1024) GTEST_SKIP() << "no shared memory opt-in";
  hal_function function = nullptr;
  ASSERT_EQ(hal_module_get_function(module_, "add_one", &function), HAL_SUCCESS);
  hal_deviceptr data = 0;
  ASSERT_EQ(hal_mem_alloc(device_, 256, &data), HAL_SUCCESS);
  uint32_t n = 64;
  void* args[] = {&data, &n};
  const hal_launch_config config = {{1, 1, 1}, {64, 1, 1}, info.max_shared_memory_per_block};
  EXPECT_EQ(hal_launch(stream_, function, &config, args), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_stream_synchronize(stream_), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_mem_free(device_, data), HAL_SUCCESS);
}

// Last: a fault makes the device unusable for the rest of the process.
TEST_F(CudaGpuTest, ZZ_FaultIsLaunchFailedThenDeviceLost) {
  hal_function function = nullptr;
  ASSERT_EQ(hal_module_get_function(module_, "fault", &function), HAL_SUCCESS);
  const hal_launch_config config = {{1, 1, 1}, {1, 1, 1}, 0};
  ASSERT_EQ(hal_launch(stream_, function, &config, nullptr), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_stream_synchronize(stream_), HAL_ERROR_LAUNCH_FAILED);
  EXPECT_NE(std::string(hal_last_error()).find("CUDA_ERROR_"), std::string::npos)
      << hal_last_error();
  hal_deviceptr data = 0;
  EXPECT_EQ(hal_mem_alloc(device_, 256, &data), HAL_ERROR_DEVICE_LOST);
}

}  // namespace
