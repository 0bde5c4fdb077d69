// End-to-end tests of the CUDA backend through the public C API, with HAL_BACKENDS=cuda and the
// libcuda test double named by HAL_CUDA_LIBRARY. The double keeps its default configuration
// (one compute capability 8.0 device) because hal discovers devices once per process.
#include <hal/hal.h>

#include "cuda_test_double.h"

#include <gtest/gtest.h>

#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Only the CUDA backend, whatever else the build has; set before the first hal call.
const bool kOnlyCuda = [] { return setenv("HAL_BACKENDS", "cuda", 1) == 0; }();

constexpr const char* kPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry _Z5scalePfmf(
    .param .u64 _Z5scalePfmf_param_0,
    .param .u64 _Z5scalePfmf_param_1,
    .param .f32 _Z5scalePfmf_param_2
)
{
  ret;
}
)";

bool contains(const char* text, const std::string& part) {
  return std::string(text).find(part) != std::string::npos;
}

class CudaApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kOnlyCuda);
    ASSERT_EQ(hal_device_find("cuda:0", &device_), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_stream_create(device_, &stream_), HAL_SUCCESS) << hal_last_error();
  }
  void TearDown() override {
    if (stream_ != nullptr) hal_stream_destroy(stream_);
  }
  hal_module load(const std::string& ptx, hal_status expected = HAL_SUCCESS) {
    hal_module module = nullptr;
    EXPECT_EQ(hal_module_load(device_, ptx.data(), ptx.size(), nullptr, &module), expected)
        << hal_last_error();
    return module;
  }
  hal_device device_ = nullptr;
  hal_stream stream_ = nullptr;
};

TEST_F(CudaApiTest, ListsTheDoublesDevice) {
  hal_device_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal_device_get_info(device_, &info), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(info.backend, HAL_BACKEND_CUDA);
  EXPECT_STREQ(info.name, "CUDA Test Double");
  EXPECT_EQ(info.compute_capability_major, 8u);
  EXPECT_EQ(info.vendor_id, 0x10deu);
  EXPECT_EQ(info.ir_mask, unsigned{HAL_IR_PTX | HAL_IR_CUBIN | HAL_IR_FATBIN});
  hal_backend_info backend{};
  backend.struct_size = sizeof(backend);
  ASSERT_EQ(hal_backend_get_info(0, &backend), HAL_SUCCESS);
  EXPECT_EQ(backend.available, 1u);
  EXPECT_EQ(backend.device_count, 1u);
}

TEST_F(CudaApiTest, CopiesRoundTrip) {
  hal_deviceptr a = 0;
  hal_deviceptr b = 0;
  ASSERT_EQ(hal_mem_alloc(device_, 4096, &a), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_mem_alloc(device_, 4096, &b), HAL_SUCCESS) << hal_last_error();
  std::vector<uint32_t> in(1024);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 3 + 1);
  ASSERT_EQ(hal_memcpy_htod(stream_, a, in.data(), 4096), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memcpy_dtod(stream_, b, a, 4096), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memset_d32(stream_, b + 8, 0xCAFEu, 2), HAL_SUCCESS) << hal_last_error();
  std::vector<uint32_t> out(1024, 0);
  ASSERT_EQ(hal_memcpy_dtoh(stream_, out.data(), b, 4096), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_stream_synchronize(stream_), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(out[0], 1u);
  EXPECT_EQ(out[2], 0xCAFEu);
  EXPECT_EQ(out[3], 0xCAFEu);
  EXPECT_EQ(out[1023], in[1023]);
  EXPECT_EQ(hal_mem_free(device_, a), HAL_SUCCESS);
  EXPECT_EQ(hal_mem_free(device_, b), HAL_SUCCESS);
}

TEST_F(CudaApiTest, LaunchMarshalsArguments) {
  const size_t sizes[] = {8, 8, 4};
  cuda_test_double_set_function("_Z5scalePfmf", sizes, 3, 1024, 0);
  hal_module module = load(kPtx);
  ASSERT_NE(module, nullptr);
  hal_function function = nullptr;
  ASSERT_EQ(hal_module_get_function(module, "_Z5scalePfmf", &function), HAL_SUCCESS)
      << hal_last_error();
  hal_function_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal_function_get_info(function, &info), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(info.param_count, 3u);
  hal_param_info param{};
  param.struct_size = sizeof(param);
  ASSERT_EQ(hal_function_get_param(function, 1, &param), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(param.kind, HAL_PARAM_VALUE);  // size_t, from the mangled name
  hal_deviceptr data = 0;
  ASSERT_EQ(hal_mem_alloc(device_, 1024, &data), HAL_SUCCESS);
  hal_deviceptr pointer = data + 64;
  uint64_t n = 100;
  float factor = 1.5f;
  void* args[] = {&pointer, &n, &factor};
  hal_launch_config config = {{4, 1, 1}, {32, 1, 1}, 0};
  const int before = cuda_test_double_launch_count();
  ASSERT_EQ(hal_launch(stream_, function, &config, args), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(cuda_test_double_launch_count(), before + 1);
  cuda_test_double_launch launch{};
  ASSERT_EQ(cuda_test_double_get_launch(before, &launch), 1);
  EXPECT_EQ(launch.grid[0], 4u);
  EXPECT_EQ(launch.block[0], 32u);
  uint64_t seen_pointer = 0;
  uint64_t seen_n = 0;
  float seen_factor = 0;
  std::memcpy(&seen_pointer, launch.param_bytes + launch.param_offsets[0], 8);
  std::memcpy(&seen_n, launch.param_bytes + launch.param_offsets[1], 8);
  std::memcpy(&seen_factor, launch.param_bytes + launch.param_offsets[2], 4);
  EXPECT_EQ(seen_pointer, data + 64);
  EXPECT_EQ(seen_n, 100u);
  EXPECT_EQ(seen_factor, 1.5f);
  EXPECT_EQ(hal_stream_synchronize(stream_), HAL_SUCCESS);
  EXPECT_EQ(hal_module_unload(module), HAL_SUCCESS);
  EXPECT_EQ(hal_mem_free(device_, data), HAL_SUCCESS);
}

// A PTX pointer parameter takes a raw address: 0 reaches the kernel as a null pointer (Triton's
// launcher passes 0 for its scratch parameters), while an address outside every allocation is
// still refused.
TEST_F(CudaApiTest, NullPointerArgumentsReachTheKernel) {
  const size_t sizes[] = {8, 8, 4};
  cuda_test_double_set_function("_Z5scalePfmf", sizes, 3, 1024, 0);
  hal_module module = load(kPtx);
  ASSERT_NE(module, nullptr);
  hal_function function = nullptr;
  ASSERT_EQ(hal_module_get_function(module, "_Z5scalePfmf", &function), HAL_SUCCESS);
  hal_deviceptr null_pointer = 0;
  uint64_t n = 7;
  float factor = 2.0f;
  void* args[] = {&null_pointer, &n, &factor};
  hal_launch_config config = {{1, 1, 1}, {32, 1, 1}, 0};
  const int before = cuda_test_double_launch_count();
  ASSERT_EQ(hal_launch(stream_, function, &config, args), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(cuda_test_double_launch_count(), before + 1);
  cuda_test_double_launch launch{};
  ASSERT_EQ(cuda_test_double_get_launch(before, &launch), 1);
  uint64_t seen_pointer = 1;
  std::memcpy(&seen_pointer, launch.param_bytes + launch.param_offsets[0], 8);
  EXPECT_EQ(seen_pointer, 0u);
  hal_deviceptr stray = 0x1000;
  args[0] = &stray;
  EXPECT_EQ(hal_launch(stream_, function, &config, args), HAL_ERROR_OUT_OF_RANGE);
  EXPECT_TRUE(contains(hal_last_error(), "not inside any live allocation")) << hal_last_error();
  EXPECT_EQ(hal_stream_synchronize(stream_), HAL_SUCCESS);
  EXPECT_EQ(hal_module_unload(module), HAL_SUCCESS);
}

TEST_F(CudaApiTest, JitLogReachesLastError) {
  cuda_test_double_set_jit_error_log("ptxas fatal : Unresolved extern function 'missing'");
  cuda_test_double_fail_next("cuModuleLoadDataEx", CUDA_ERROR_INVALID_PTX);
  load(kPtx, HAL_ERROR_COMPILE_FAILED);
  EXPECT_TRUE(contains(hal_last_error(), "Unresolved extern function 'missing'"))
      << hal_last_error();
  EXPECT_TRUE(contains(hal_last_error(), "CUDA_ERROR_INVALID_PTX")) << hal_last_error();
  EXPECT_TRUE(contains(hal_last_error(), "hal_module_load")) << hal_last_error();
}

TEST_F(CudaApiTest, NewerTargetIsNotSupported) {
  load(".version 8.0\n.target sm_90\n.address_size 64\n", HAL_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(hal_last_error(), "sm_90")) << hal_last_error();
  EXPECT_TRUE(contains(hal_last_error(), "8.0")) << hal_last_error();
}

TEST_F(CudaApiTest, UnsupportedPtxVersionHint) {
  cuda_test_double_fail_next("cuModuleLoadDataEx", CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  load(".version 9.9\n.target sm_80\n.address_size 64\n", HAL_ERROR_COMPILE_FAILED);
  EXPECT_TRUE(contains(hal_last_error(), ".version 9.9")) << hal_last_error();
  EXPECT_TRUE(contains(hal_last_error(), "CUDA 12.4")) << hal_last_error();
}

TEST_F(CudaApiTest, OutOfMemory) {
  cuda_test_double_fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  hal_deviceptr pointer = 0;
  EXPECT_EQ(hal_mem_alloc(device_, 1 << 20, &pointer), HAL_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(hal_last_error(), "CUDA_ERROR_OUT_OF_MEMORY")) << hal_last_error();
  EXPECT_EQ(hal_mem_alloc(device_, 1 << 20, &pointer), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_mem_free(device_, pointer), HAL_SUCCESS);
}

TEST_F(CudaApiTest, QueryNotReadyLeavesLastErrorAlone) {
  hal_deviceptr pointer = 0;
  ASSERT_EQ(hal_mem_alloc(device_, 256, &pointer), HAL_SUCCESS);
  ASSERT_EQ(hal_mem_free(device_, pointer + 1), HAL_ERROR_INVALID_ARGUMENT);  // sets an error
  const std::string before = hal_last_error();
  ASSERT_EQ(hal_memset_d8(stream_, pointer, 7, 256), HAL_SUCCESS);
  EXPECT_EQ(hal_stream_query(stream_), HAL_ERROR_NOT_READY);
  EXPECT_EQ(before, hal_last_error());
  EXPECT_EQ(hal_stream_synchronize(stream_), HAL_SUCCESS);
  EXPECT_EQ(hal_mem_free(device_, pointer), HAL_SUCCESS);
}

// Last: it leaves the device unusable for the rest of the process.
TEST_F(CudaApiTest, ZZ_FaultMakesTheDeviceUnusable) {
  cuda_test_double_fail_next("cuStreamSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(hal_stream_synchronize(stream_), HAL_ERROR_LAUNCH_FAILED);
  EXPECT_TRUE(contains(hal_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS")) << hal_last_error();
  // The core refuses later calls itself, quoting the fault: they never reach libcuda.
  const int allocs = cuda_test_double_call_count("cuMemAlloc");
  const int syncs = cuda_test_double_call_count("cuCtxSynchronize");
  hal_deviceptr pointer = 0;
  EXPECT_EQ(hal_mem_alloc(device_, 256, &pointer), HAL_ERROR_DEVICE_LOST);
  EXPECT_TRUE(contains(hal_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS")) << hal_last_error();
  EXPECT_TRUE(contains(hal_last_error(), "was lost earlier")) << hal_last_error();
  EXPECT_EQ(hal_device_synchronize(device_), HAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(cuda_test_double_call_count("cuMemAlloc"), allocs);
  EXPECT_EQ(cuda_test_double_call_count("cuCtxSynchronize"), syncs);
}

}  // namespace
