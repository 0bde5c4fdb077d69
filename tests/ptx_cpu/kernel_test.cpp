// Kernels run by the interpreter, through the driver API and through hal. These need the real
// interpreter (src/ptx_vm) and fail while it is not built.
#include "driver_fixture.h"
#include "ptx_cpu/ptx_cpu.h"

#include <hal/hal.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

namespace ptx_cpu_test {
namespace {

std::string read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << path;
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

class KernelTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    const std::string ptx = read_file(PTX_CPU_TEST_KERNELS_PTX);
    char error[4096] = {};
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error, reinterpret_cast<void*>(uintptr_t{sizeof(error)})};
    ASSERT_OK(cu().cuModuleLoadDataEx(&module_, ptx.c_str(), 2, keys, values)) << error;
  }
  void TearDown() override {
    if (module_ != nullptr) cu().cuModuleUnload(module_);
  }
  CUfunction function(const char* name) {
    CUfunction handle = nullptr;
    EXPECT_OK(cu().cuModuleGetFunction(&handle, module_, name));
    return handle;
  }
  void reset_context() {
    module_ = nullptr;
    ASSERT_OK(cu().cuDevicePrimaryCtxRelease(0));
    CUcontext context = nullptr;
    ASSERT_OK(cu().cuDevicePrimaryCtxRetain(&context, 0));
    ASSERT_OK(cu().cuCtxSetCurrent(context));
  }
  CUmodule module_ = nullptr;
};

TEST_F(KernelTest, AddOne) {
  constexpr uint32_t kCount = 1000;
  std::vector<uint32_t> data(kCount);
  std::iota(data.begin(), data.end(), 0u);
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, kCount * 4));
  ASSERT_OK(cu().cuMemcpyHtoD(device, data.data(), kCount * 4));
  uint32_t n = kCount;
  void* args[] = {&device, &n};
  ASSERT_OK(cu().cuLaunchKernel(function("add_one"), (kCount + 127) / 128, 1, 1, 128, 1, 1, 0,
                                nullptr, args, nullptr));
  ASSERT_OK(cu().cuCtxSynchronize());
  ASSERT_OK(cu().cuMemcpyDtoH(data.data(), device, kCount * 4));
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(data[i], i + 1) << i;
  hal_ptx_cpu_stats stats{};
  stats.struct_size = sizeof(stats);
  using GetStats = int (*)(void*, hal_ptx_cpu_stats*);
  auto get_stats = reinterpret_cast<GetStats>(dlsym(cu().library, "hal_ptx_cpu_get_stats"));
  ASSERT_EQ(get_stats(nullptr, &stats), CUDA_SUCCESS);
  EXPECT_GE(stats.lane_instructions, kCount * 5u);
  EXPECT_GE(stats.kernels, 1u);
  EXPECT_OK(cu().cuMemFree(device));
}

TEST_F(KernelTest, SharedMemoryStaticAndDynamic) {
  constexpr uint32_t kBlocks = 4;
  constexpr uint32_t kThreads = 256;
  std::vector<uint32_t> data(kBlocks * kThreads);
  std::iota(data.begin(), data.end(), 0u);
  CUdeviceptr device = 0;
  CUdeviceptr sums = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, data.size() * 4));
  ASSERT_OK(cu().cuMemAlloc(&sums, kBlocks * 4));
  ASSERT_OK(cu().cuMemcpyHtoD(device, data.data(), data.size() * 4));
  void* sum_args[] = {&device, &sums};
  ASSERT_OK(cu().cuLaunchKernel(function("block_sum"), kBlocks, 1, 1, kThreads, 1, 1, 0, nullptr,
                                sum_args, nullptr));
  void* reverse_args[] = {&device};
  ASSERT_OK(cu().cuLaunchKernel(function("reverse_block"), kBlocks, 1, 1, kThreads, 1, 1,
                                kThreads * 4, nullptr, reverse_args, nullptr));
  std::vector<uint32_t> out(data.size());
  uint32_t block_sums[kBlocks] = {};
  ASSERT_OK(cu().cuMemcpyDtoH(out.data(), device, out.size() * 4));
  ASSERT_OK(cu().cuMemcpyDtoH(block_sums, sums, sizeof(block_sums)));
  for (uint32_t b = 0; b < kBlocks; ++b) {
    uint32_t expected = 0;
    for (uint32_t t = 0; t < kThreads; ++t) {
      expected += b * kThreads + t;
      ASSERT_EQ(out[b * kThreads + t], b * kThreads + (kThreads - 1 - t));
    }
    EXPECT_EQ(block_sums[b], expected) << b;
  }
  EXPECT_OK(cu().cuMemFree(device));
  EXPECT_OK(cu().cuMemFree(sums));
}

TEST_F(KernelTest, ModuleVariableAndMixedParameters) {
  CUdeviceptr out = 0;
  ASSERT_OK(cu().cuMemAlloc(&out, 32));
  void* bump_args[] = {&out};
  ASSERT_OK(cu().cuLaunchKernel(function("bump_counter"), 1, 1, 1, 1, 1, 1, 0, nullptr, bump_args,
                                nullptr));
  uint32_t counter = 0;
  ASSERT_OK(cu().cuMemcpyDtoH(&counter, out, 4));
  EXPECT_EQ(counter, 8u);
  uint8_t byte = 200;
  double real = -1.25;
  uint64_t pair[2] = {11, 22};
  void* args[] = {&out, &byte, &real, pair};
  ASSERT_OK(
      cu().cuLaunchKernel(function("mixed_params"), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  uint64_t words[4] = {};
  ASSERT_OK(cu().cuMemcpyDtoH(words, out, 32));
  EXPECT_EQ(words[0], 200u);
  double got = 0;
  std::memcpy(&got, &words[1], 8);
  EXPECT_EQ(got, -1.25);
  EXPECT_EQ(words[2], 11u);
  EXPECT_EQ(words[3], 22u);
  EXPECT_OK(cu().cuMemFree(out));
}

TEST_F(KernelTest, FromAnNvccFatbin) {
#ifdef PTX_CPU_TEST_FATBIN_ZSTD
  const std::string fatbin = read_file(PTX_CPU_TEST_FATBIN_ZSTD);
  CUmodule module = nullptr;
  ASSERT_OK(cu().cuModuleLoadData(&module, fatbin.data()));
  CUfunction fill = nullptr;
  ASSERT_OK(cu().cuModuleGetFunction(&fill, module, "fill_u32"));
  CUdeviceptr device = 0;
  ASSERT_OK(cu().cuMemAlloc(&device, 256));
  uint32_t n = 64;
  uint32_t value = 0x5eed;
  void* args[] = {&device, &n, &value};
  ASSERT_OK(cu().cuLaunchKernel(fill, 2, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  uint32_t out[64] = {};
  ASSERT_OK(cu().cuMemcpyDtoH(out, device, sizeof(out)));
  for (uint32_t word : out) ASSERT_EQ(word, 0x5eedu);
  EXPECT_OK(cu().cuMemFree(device));
  EXPECT_OK(cu().cuModuleUnload(module));
#else
  GTEST_SKIP() << "nvcc was not found at configure time";
#endif
}

// An out-of-bounds store: CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronisation, the log names
// the kernel and the address, and the context stays poisoned until it is reset.
TEST_F(KernelTest, OutOfBoundsStoreIsAnIllegalAddress) {
  CUdeviceptr data = 0;
  ASSERT_OK(cu().cuMemAlloc(&data, 4096));
  uint64_t index = 1024;
  void* args[] = {&data, &index};
  skip_logs();
  ASSERT_OK(cu().cuLaunchKernel(function("store_at"), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuCtxSynchronize());
  const std::string log = new_logs();
  char address[64];
  std::snprintf(address, sizeof(address), "%#llx", static_cast<unsigned long long>(data + 4096));
  EXPECT_NE(log.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << log;
  EXPECT_NE(log.find("store_at"), std::string::npos) << log;
  EXPECT_NE(log.find(address), std::string::npos) << log;
  EXPECT_NE(log.find("4096-byte allocation"), std::string::npos) << log;
  CUdeviceptr other = 0;
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuMemAlloc(&other, 16));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuStreamSynchronize(nullptr));
  reset_context();
}

// The same kernel through hal's public API.
TEST(PtxCpuKernelHal, RunsAKernelThroughHal) {
  ASSERT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
  hal_device device = nullptr;
  ASSERT_EQ(hal_device_find("cuda:0", &device), HAL_SUCCESS) << hal_last_error();
  const std::string ptx = read_file(PTX_CPU_TEST_KERNELS_PTX);
  hal_module module = nullptr;
  ASSERT_EQ(hal_module_load(device, ptx.data(), ptx.size(), nullptr, &module), HAL_SUCCESS)
      << hal_last_error();
  hal_function function = nullptr;
  ASSERT_EQ(hal_module_get_function(module, "add_one", &function), HAL_SUCCESS);
  hal_stream stream = nullptr;
  ASSERT_EQ(hal_stream_create(device, &stream), HAL_SUCCESS);
  constexpr uint32_t kCount = 300;
  std::vector<uint32_t> data(kCount, 41);
  hal_deviceptr buffer = 0;
  ASSERT_EQ(hal_mem_alloc(device, kCount * 4, &buffer), HAL_SUCCESS);
  ASSERT_EQ(hal_memcpy_htod(stream, buffer, data.data(), kCount * 4), HAL_SUCCESS);
  uint32_t n = kCount;
  void* args[] = {&buffer, &n};
  const hal_launch_config config = {{3, 1, 1}, {128, 1, 1}, 0};
  ASSERT_EQ(hal_launch(stream, function, &config, args), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memcpy_dtoh(stream, data.data(), buffer, kCount * 4), HAL_SUCCESS);
  ASSERT_EQ(hal_stream_synchronize(stream), HAL_SUCCESS) << hal_last_error();
  for (uint32_t value : data) ASSERT_EQ(value, 42u);
  EXPECT_EQ(hal_mem_free(device, buffer), HAL_SUCCESS);
  EXPECT_EQ(hal_stream_destroy(stream), HAL_SUCCESS);
  EXPECT_EQ(hal_module_unload(module), HAL_SUCCESS);
}

// A fatbin exactly as the CUDA toolkit's nvcc makes it from CUDA C++ (machine code for sm_80 and
// its own zstd-compressed PTX, ISA 9.0), through hal: the backend lists its functions through the
// driver, and the kernel runs from the PTX the fatbin carries.
TEST(PtxCpuKernelHal, RunsAnNvccFatbinThroughHal) {
#ifdef PTX_CPU_TEST_FATBIN_CU
  ASSERT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
  hal_device device = nullptr;
  ASSERT_EQ(hal_device_find("cuda:0", &device), HAL_SUCCESS) << hal_last_error();
  const std::string fatbin = read_file(PTX_CPU_TEST_FATBIN_CU);
  hal_module module = nullptr;
  ASSERT_EQ(hal_module_load(device, fatbin.data(), fatbin.size(), nullptr, &module), HAL_SUCCESS)
      << hal_last_error();
  hal_function function = nullptr;
  ASSERT_EQ(hal_module_get_function(module, "vector_add", &function), HAL_SUCCESS)
      << hal_last_error();
  hal_stream stream = nullptr;
  ASSERT_EQ(hal_stream_create(device, &stream), HAL_SUCCESS);
  constexpr int kCount = 1000;
  std::vector<float> a(kCount), b(kCount), out(kCount, -1.0f);
  for (int i = 0; i < kCount; ++i) {
    a[i] = 0.5f * i;
    b[i] = 3.0f - i;
  }
  hal_deviceptr da = 0, db = 0, dout = 0;
  ASSERT_EQ(hal_mem_alloc(device, kCount * 4, &da), HAL_SUCCESS);
  ASSERT_EQ(hal_mem_alloc(device, kCount * 4, &db), HAL_SUCCESS);
  ASSERT_EQ(hal_mem_alloc(device, kCount * 4, &dout), HAL_SUCCESS);
  ASSERT_EQ(hal_memcpy_htod(stream, da, a.data(), kCount * 4), HAL_SUCCESS);
  ASSERT_EQ(hal_memcpy_htod(stream, db, b.data(), kCount * 4), HAL_SUCCESS);
  int n = kCount;
  void* args[] = {&dout, &da, &db, &n};
  const hal_launch_config config = {{(kCount + 127) / 128, 1, 1}, {128, 1, 1}, 0};
  ASSERT_EQ(hal_launch(stream, function, &config, args), HAL_SUCCESS) << hal_last_error();
  ASSERT_EQ(hal_memcpy_dtoh(stream, out.data(), dout, kCount * 4), HAL_SUCCESS);
  ASSERT_EQ(hal_stream_synchronize(stream), HAL_SUCCESS) << hal_last_error();
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << i;
  for (hal_deviceptr p : {da, db, dout}) EXPECT_EQ(hal_mem_free(device, p), HAL_SUCCESS);
  EXPECT_EQ(hal_stream_destroy(stream), HAL_SUCCESS);
  EXPECT_EQ(hal_module_unload(module), HAL_SUCCESS);
#else
  GTEST_SKIP() << "nvcc was not found at configure time";
#endif
}

}  // namespace
}  // namespace ptx_cpu_test
