// Everything the driver does around a kernel, against libhal_ptx_cpu_fake_vm.so (the driver
// linked to the stand-in interpreter of fake_vm/): loading PTX and fatbins (plain, LZ4, zstd,
// wrapped), functions and their attributes and parameters, launch checks, the parameter
// buffer, kernels ordered with copies, memory snapshots, faults and sticky errors, module
// variables, unloading, statistics.
#include "driver_fixture.h"
#include "fake_vm/fake_vm.h"
#include "images.h"
#include "ptx_cpu/ptx_cpu.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ptx_cpu_test {
namespace {

using std::chrono::milliseconds;

std::string read_text(const char* path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << path;
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

const std::string& kernels_ptx() {
  static const std::string text = read_text(PTX_CPU_TEST_KERNELS_PTX);
  return text;
}

// Kernels the stand-in interpreter acts on that kernels.ptx does not have.
constexpr const char* kFakeKernels = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry sleep_ms(
    .param .u32 sleep_ms_ms
)
{
  ret;
}
.visible .entry fault_trap()
{
  trap;
}
.visible .entry fault_assert()
{
  trap;
}
.visible .entry fault_barrier()
{
  trap;
}
.visible .entry fault_misaligned()
{
  trap;
}
.visible .entry fault_illegal_instruction()
{
  trap;
}
)";

constexpr const char* kKernelNames[] = {"add_one",       "fill_u32",    "store_at",
                                        "reverse_block", "block_sum",   "small_blocks",
                                        "bump_counter",  "mixed_params"};

class ModuleTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    ASSERT_NE(last_launch_, nullptr) << "not the fake-interpreter build of the driver";
    ASSERT_OK(cu().cuModuleLoadData(&module_, kernels_ptx().c_str()));
    ASSERT_OK(cu().cuModuleLoadData(&fakes_, kFakeKernels));
  }
  void TearDown() override {
    // A test that failed halfway may leave a faulted context behind: reset it for the next.
    if (cu().cuCtxSynchronize() != CUDA_SUCCESS) {
      reset_context();
      return;
    }
    if (module_ != nullptr) cu().cuModuleUnload(module_);
    if (fakes_ != nullptr) cu().cuModuleUnload(fakes_);
  }

  CUfunction function(const char* name, CUmodule module = nullptr) {
    CUfunction handle = nullptr;
    EXPECT_OK(cu().cuModuleGetFunction(&handle, module != nullptr ? module : module_, name));
    return handle;
  }
  CUfunction fake(const char* name) { return function(name, fakes_); }

  int attribute(CUfunction handle, CUfunction_attribute which) {
    int value = -1;
    EXPECT_OK(cu().cuFuncGetAttribute(&value, which, handle));
    return value;
  }

  CUresult launch(CUfunction handle, unsigned grid, unsigned block, void** args,
                  unsigned shared = 0, CUstream stream = nullptr) {
    return cu().cuLaunchKernel(handle, grid, 1, 1, block, 1, 1, shared, stream, args, nullptr);
  }

  hal_ptx_cpu_fake_launch last() {
    hal_ptx_cpu_fake_launch out{};
    last_launch_(&out);
    return out;
  }

  // After a fault: the last release of the primary context resets it (and its modules go).
  void reset_context() {
    module_ = nullptr;
    fakes_ = nullptr;
    ASSERT_OK(cu().cuDevicePrimaryCtxRelease(0));
    CUcontext context = nullptr;
    ASSERT_OK(cu().cuDevicePrimaryCtxRetain(&context, 0));
    ASSERT_OK(cu().cuCtxSetCurrent(context));
  }

  CUmodule module_ = nullptr;
  CUmodule fakes_ = nullptr;
  const hal_ptx_cpu_fake_vm_last_launch_fn last_launch_ =
      reinterpret_cast<hal_ptx_cpu_fake_vm_last_launch_fn>(
          dlsym(api().library, "hal_ptx_cpu_fake_vm_last_launch"));
};

// ===========================================================================================
// Loading
// ===========================================================================================

TEST_F(ModuleTest, ListsFunctionsInOrder) {
  unsigned count = 0;
  ASSERT_OK(cu().cuModuleGetFunctionCount(&count, module_));
  ASSERT_EQ(count, 8u);
  std::vector<CUfunction> handles(count);
  ASSERT_OK(cu().cuModuleEnumerateFunctions(handles.data(), count, module_));
  for (unsigned i = 0; i < count; ++i) {
    const char* name = nullptr;
    ASSERT_OK(cu().cuFuncGetName(&name, handles[i]));
    EXPECT_STREQ(name, kKernelNames[i]);
    EXPECT_EQ(function(kKernelNames[i]), handles[i]);
    CUmodule owner = nullptr;
    ASSERT_OK(cu().cuFuncGetModule(&owner, handles[i]));
    EXPECT_EQ(owner, module_);
  }
  skip_logs();
  CUfunction missing = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cu().cuModuleGetFunction(&missing, module_, "no_such_kernel"));
  const std::string log = new_logs();
  EXPECT_NE(log.find("no kernel 'no_such_kernel' (it has: add_one, fill_u32"), std::string::npos)
      << log;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuModuleGetFunction(&missing, module_, nullptr));
}

TEST_F(ModuleTest, JitLogsAndWallTime) {
  char error[256] = {};
  char info[512] = {};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_WALL_TIME,        CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {error,   reinterpret_cast<void*>(uintptr_t{sizeof(error)}),
                    info,    reinterpret_cast<void*>(uintptr_t{sizeof(info)}),
                    nullptr, reinterpret_cast<void*>(uintptr_t{4})};
  CUmodule module = nullptr;
  ASSERT_OK(cu().cuModuleLoadDataEx(&module, kernels_ptx().c_str(), 6, keys, values));
  const std::string info_log(info, reinterpret_cast<uintptr_t>(values[3]));
  EXPECT_NE(info_log.find("loaded PTX text"), std::string::npos) << info_log;
  EXPECT_NE(info_log.find("PTX ISA 8.0 for sm_80; 8 kernels: add_one, fill_u32"), std::string::npos)
      << info_log;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values[1]), 0u);  // no errors
  float wall_ms = -1;
  std::memcpy(&wall_ms, &values[4], sizeof(wall_ms));
  EXPECT_GE(wall_ms, 0.0f);
  EXPECT_OK(cu().cuModuleUnload(module));

  const std::string broken = std::string(kFakeKernels) + "  fake_vm_invalid;\n";
  values[1] = reinterpret_cast<void*>(uintptr_t{sizeof(error)});
  EXPECT_CU(CUDA_ERROR_INVALID_PTX,
            cu().cuModuleLoadDataEx(&module, broken.c_str(), 4, keys, values));
  const std::string fake_kernels(kFakeKernels);
  const long line = std::count(fake_kernels.begin(), fake_kernels.end(), '\n') + 1;
  EXPECT_EQ(std::string(error),
            "line " + std::to_string(line) + ": 'fake_vm_invalid': not an instruction");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values[1]), std::strlen(error));
}

TEST_F(ModuleTest, LoadsAFile) {
  CUmodule module = nullptr;
  ASSERT_OK(cu().cuModuleLoad(&module, PTX_CPU_TEST_KERNELS_PTX));
  unsigned count = 0;
  ASSERT_OK(cu().cuModuleGetFunctionCount(&count, module));
  EXPECT_EQ(count, 8u);
  EXPECT_OK(cu().cuModuleUnload(module));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuModuleUnload(module));
}

// Hand-made fatbins: every payload form, and the choice of the newest PTX not above sm_80.
TEST_F(ModuleTest, FatbinPayloadForms) {
  const std::string& ptx = kernels_ptx();
  const std::string lz4_plain = lz4_block(ptx, 0, 0, "");
  // A block with a match (a run of the prefix's last byte), then the rest as literals.
  const std::string lz4_match = lz4_block(ptx.substr(0, 1), 1, 4, "");
  const std::vector<FatbinEntry> entries[] = {
      {{1, 80, ptx}},
      {{1, 80, lz4_plain, 0x2011, static_cast<uint32_t>(lz4_plain.size()), ptx.size()}},
      {{1, 80, zstd_raw_frame(ptx), 0x8011, static_cast<uint32_t>(zstd_raw_frame(ptx).size()),
        ptx.size()}},
  };
  for (const auto& list : entries) {
    const std::vector<uint8_t> fatbin = make_fatbin(list);
    CUmodule module = nullptr;
    ASSERT_OK(cu().cuModuleLoadData(&module, fatbin.data())) << "flags " << list[0].flags;
    unsigned count = 0;
    ASSERT_OK(cu().cuModuleGetFunctionCount(&count, module));
    EXPECT_EQ(count, 8u);
    EXPECT_OK(cu().cuModuleUnload(module));
  }
  // "/" then 4 more: the match copies the byte before it, over and over.
  const std::vector<uint8_t> run =
      make_fatbin({{1, 80, lz4_match, 0x2011, static_cast<uint32_t>(lz4_match.size()), 5}});
  char error[256] = {};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error, reinterpret_cast<void*>(uintptr_t{sizeof(error)})};
  CUmodule module = nullptr;
  // "/////" is not PTX, but it decompressed: the refusal is the PTX's.
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, cu().cuModuleLoadDataEx(&module, run.data(), 2, keys, values));
  EXPECT_NE(std::string(error).find("no .version"), std::string::npos) << error;
}

TEST_F(ModuleTest, FatbinPicksTheNewestPtxTheDeviceRuns) {
  const auto kernel = [](const char* name, const char* target) {
    return std::string(".version 8.0\n.target ") + target + "\n.address_size 64\n" +
           ".visible .entry " + name + "()\n{\n  ret;\n}\n";
  };
  const std::string elf(reinterpret_cast<const char*>(cubin_header(80).data()), 256);
  const std::vector<uint8_t> fatbin = make_fatbin({{1, 70, kernel("old", "sm_70")},
                                                   {2, 80, elf},
                                                   {1, 80, kernel("best", "sm_80")},
                                                   {1, 90, kernel("newer", "sm_90")}});
  CUmodule module = nullptr;
  ASSERT_OK(cu().cuModuleLoadData(&module, fatbin.data()));
  CUfunction handle = nullptr;
  EXPECT_OK(cu().cuModuleGetFunction(&handle, module, "best"));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cu().cuModuleGetFunction(&handle, module, "old"));
  EXPECT_OK(cu().cuModuleUnload(module));
  // The same through the wrapper that host objects register, and cuModuleLoadFatBinary.
  FatbinWrapper wrapper;
  wrapper.data = fatbin.data();
  ASSERT_OK(cu().cuModuleLoadFatBinary(&module, &wrapper));
  EXPECT_OK(cu().cuModuleGetFunction(&handle, module, "best"));
  EXPECT_OK(cu().cuModuleUnload(module));
}

// nvcc's own fatbins of kernels.ptx: zstd (its default), LZ4 and uncompressed PTX entries.
TEST_F(ModuleTest, NvccFatbins) {
#if defined(PTX_CPU_TEST_FATBIN_ZSTD) && defined(PTX_CPU_TEST_FATBIN_LZ4) && \
    defined(PTX_CPU_TEST_FATBIN_PLAIN)
  const std::pair<const char*, const char*> fatbins[] = {
      {PTX_CPU_TEST_FATBIN_ZSTD, "zstd"},
      {PTX_CPU_TEST_FATBIN_LZ4, "lz4"},
      {PTX_CPU_TEST_FATBIN_PLAIN, "compute_80 PTX ("}};
  for (const auto& [path, form] : fatbins) {
    const std::string bytes = read_text(path);
    char info[512] = {};
    CUjit_option keys[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {info, reinterpret_cast<void*>(uintptr_t{sizeof(info)})};
    CUmodule module = nullptr;
    ASSERT_OK(cu().cuModuleLoadDataEx(&module, bytes.data(), 2, keys, values)) << path;
    EXPECT_NE(std::string(info).find(form), std::string::npos) << info;
    unsigned count = 0;
    ASSERT_OK(cu().cuModuleGetFunctionCount(&count, module));
    EXPECT_EQ(count, 8u) << path;
    EXPECT_OK(cu().cuModuleUnload(module));
  }
#else
  GTEST_SKIP() << "nvcc was not found at configure time";
#endif
}

// ===========================================================================================
// Functions
// ===========================================================================================

TEST_F(ModuleTest, FunctionAttributes) {
  const CUfunction add_one = function("add_one");
  const CUfunction block_sum = function("block_sum");
  const CUfunction small = function("small_blocks");
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
  EXPECT_EQ(attribute(block_sum, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 256);
  EXPECT_EQ(attribute(small, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 128);
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 0);
  EXPECT_EQ(attribute(block_sum, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 1024);
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 48 * 1024);
  EXPECT_EQ(attribute(block_sum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
            48 * 1024 - 1024);
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_PTX_VERSION), 80);
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_BINARY_VERSION), 80);
  EXPECT_GT(attribute(add_one, CU_FUNC_ATTRIBUTE_NUM_REGS), 0);
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), 0);
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), -1);
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH), 0);
  int value = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX, add_one));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, add_one));

  // Up to 163 KiB of shared memory per block, static included.
  EXPECT_OK(cu().cuFuncSetAttribute(block_sum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    163 * 1024 - 1024));
  EXPECT_EQ(attribute(block_sum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
            163 * 1024 - 1024);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuFuncSetAttribute(block_sum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    163 * 1024 - 1023));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1));
  EXPECT_OK(
      cu().cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
  EXPECT_EQ(attribute(add_one, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), 50);
  EXPECT_CU(
      CUDA_ERROR_INVALID_VALUE,
      cu().cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_NUM_REGS, 8));
}

TEST_F(ModuleTest, ParameterLayout) {
  const CUfunction mixed = function("mixed_params");
  const size_t expected[][2] = {{0, 8}, {8, 1}, {16, 8}, {32, 16}};
  for (size_t i = 0; i < 4; ++i) {
    size_t offset = 99;
    size_t size = 99;
    ASSERT_OK(cu().cuFuncGetParamInfo(mixed, i, &offset, &size));
    EXPECT_EQ(offset, expected[i][0]) << i;
    EXPECT_EQ(size, expected[i][1]) << i;
  }
  size_t offset = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuFuncGetParamInfo(mixed, 4, &offset, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuFuncGetParamInfo(mixed, 0, nullptr, nullptr));
  EXPECT_OK(cu().cuFuncGetParamInfo(mixed, 3, &offset, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuFuncGetParamInfo(fake("fault_trap"), 0, &offset, nullptr));
}

// ===========================================================================================
// Launches
// ===========================================================================================

// The parameters are copied, laid out as the kernel declares them, before the call returns.
TEST_F(ModuleTest, ParametersAreCopiedIntoTheKernelsLayout) {
  Gate gate;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  CUdeviceptr out = 0x1234;
  uint8_t byte = 0xab;
  double real = 2.5;
  uint64_t pair[2] = {0x1111222233334444ull, 0x5555666677778888ull};
  void* args[] = {&out, &byte, &real, pair};
  ASSERT_OK(
      cu().cuLaunchKernel(function("mixed_params"), 2, 3, 4, 5, 6, 7, 100, stream, args, nullptr));
  out = 0;  // the caller may reuse its memory at once
  byte = 0;
  real = 0;
  pair[0] = pair[1] = 0;
  gate.open();
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  const hal_ptx_cpu_fake_launch launched = last();
  EXPECT_STREQ(launched.kernel, "mixed_params");
  EXPECT_EQ(launched.grid[0], 2u);
  EXPECT_EQ(launched.grid[2], 4u);
  EXPECT_EQ(launched.block[0], 5u);
  EXPECT_EQ(launched.block[2], 7u);
  EXPECT_EQ(launched.dynamic_shared_bytes, 100u);
  ASSERT_EQ(launched.param_bytes, 48u);
  uint64_t word = 0;
  std::memcpy(&word, launched.params + 0, 8);
  EXPECT_EQ(word, 0x1234u);
  EXPECT_EQ(launched.params[8], 0xab);
  double got = 0;
  std::memcpy(&got, launched.params + 16, 8);
  EXPECT_EQ(got, 2.5);
  std::memcpy(&word, launched.params + 32, 8);
  EXPECT_EQ(word, 0x1111222233334444ull);
  std::memcpy(&word, launched.params + 40, 8);
  EXPECT_EQ(word, 0x5555666677778888ull);
  EXPECT_OK(cu().cuStreamDestroy(stream));
}

TEST_F(ModuleTest, ParametersThroughExtra) {
  unsigned char buffer[48] = {};
  const uint64_t marker = 0xfeedfacecafebeefull;
  std::memcpy(buffer + 32, &marker, 8);
  size_t size = sizeof(buffer);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  const CUfunction mixed = function("mixed_params");
  ASSERT_OK(cu().cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
  ASSERT_OK(cu().cuCtxSynchronize());
  uint64_t word = 0;
  std::memcpy(&word, last().params + 32, 8);
  EXPECT_EQ(word, marker);
  size = 40;  // too small for the kernel's 48 bytes
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
  void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_END};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, no_size));
  void* unknown[] = {reinterpret_cast<void*>(7), buffer, CU_LAUNCH_PARAM_END};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, unknown));
  CUdeviceptr out = 0;
  uint8_t byte = 0;
  double real = 0;
  uint64_t pair[2] = {};
  void* args[] = {&out, &byte, &real, pair};
  size = sizeof(buffer);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, args, extra));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  args[2] = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  // A kernel without parameters needs neither.
  EXPECT_OK(cu().cuLaunchKernel(fake("sleep_ms"), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
}

TEST_F(ModuleTest, LaunchGeometryAndSharedMemoryAreChecked) {
  CUdeviceptr data = 0;
  ASSERT_OK(cu().cuMemAlloc(&data, 4096));
  uint32_t n = 0;
  void* args[] = {&data, &n};
  const CUfunction add_one = function("add_one");
  const auto geometry = [&](CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared = 0) {
    return cu().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, nullptr, args, nullptr);
  };
  skip_logs();
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 0, 1, 1, 32, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 65536, 1, 32, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 1, 65536, 32, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 1, 1, 1025, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 1, 1, 1, 1, 65));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 1, 1, 32, 32, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 1, 1, 0, 1, 1));
  EXPECT_OK(geometry(add_one, 2147483647, 65535, 1, 32, 32, 1));  // n = 0: nothing runs long
  const CUfunction block_sum = function("block_sum");
  void* sum_args[] = {&data, &data};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(block_sum, 1, 1, 1, 128, 1, 1, 0, nullptr, sum_args, nullptr));
  std::string log = new_logs();
  EXPECT_NE(log.find("'block_sum' requires blocks of 256x1x1 threads (.reqntid), not 128x1x1"),
            std::string::npos)
      << log;
  EXPECT_OK(cu().cuLaunchKernel(block_sum, 1, 1, 1, 256, 1, 1, 0, nullptr, sum_args, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(function("small_blocks"), 1, 1, 1, 256, 1, 1));
  EXPECT_OK(geometry(function("small_blocks"), 1, 1, 1, 128, 1, 1));

  // Dynamic shared memory: 48 KiB by default, more once the function's attribute allows it.
  EXPECT_OK(geometry(add_one, 1, 1, 1, 32, 1, 1, 48 * 1024));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 1, 1, 32, 1, 1, 48 * 1024 + 1));
  ASSERT_OK(cu().cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    100 * 1024));
  EXPECT_OK(geometry(add_one, 1, 1, 1, 32, 1, 1, 100 * 1024));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, geometry(add_one, 1, 1, 1, 32, 1, 1, 100 * 1024 + 4));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernel(block_sum, 1, 1, 1, 256, 1, 1, 48 * 1024 - 1023, nullptr, sum_args,
                                nullptr));

  // cuLaunchKernelEx: the same checks, and what its attributes can ask for.
  CUlaunchAttribute attributes[1] = {};
  CUlaunchConfig config = {};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 64;
  config.blockDimY = config.blockDimZ = 1;
  config.attrs = attributes;
  config.numAttrs = 1;
  attributes[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  attributes[0].value.priority = 1;
  EXPECT_OK(cu().cuLaunchKernelEx(&config, add_one, args, nullptr));
  attributes[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attributes[0].value.cooperative = 1;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cu().cuLaunchKernelEx(&config, add_one, args, nullptr));
  attributes[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attributes[0].value.clusterDim.x = 2;
  attributes[0].value.clusterDim.y = attributes[0].value.clusterDim.z = 1;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cu().cuLaunchKernelEx(&config, add_one, args, nullptr));
  config.numAttrs = 0;
  config.blockDimX = 2048;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuLaunchKernelEx(&config, add_one, args, nullptr));
  ASSERT_OK(cu().cuCtxSynchronize());
  EXPECT_OK(cu().cuMemFree(data));
}

// Kernels take their place in stream order between copies, and run while the host goes on.
TEST_F(ModuleTest, KernelsRunInStreamOrder) {
  constexpr uint32_t kCount = 1000;
  std::vector<uint32_t> host(kCount);
  for (uint32_t i = 0; i < kCount; ++i) host[i] = i;
  CUdeviceptr data = 0;
  ASSERT_OK(cu().cuMemAlloc(&data, kCount * 4));
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  uint32_t n = kCount;
  void* args[] = {&data, &n};
  ASSERT_OK(cu().cuMemcpyHtoDAsync(data, host.data(), kCount * 4, stream));
  ASSERT_OK(launch(function("add_one"), (kCount + 127) / 128, 128, args, 0, stream));
  ASSERT_OK(launch(function("add_one"), (kCount + 127) / 128, 128, args, 0, stream));
  std::vector<uint32_t> out(kCount, 0);
  ASSERT_OK(cu().cuMemcpyDtoHAsync(out.data(), data, kCount * 4, stream));
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], i + 2) << i;

  uint32_t ms = 200;
  void* sleep_args[] = {&ms};
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK(launch(fake("sleep_ms"), 1, 1, sleep_args, 0, stream));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(150));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu().cuStreamQuery(stream));
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(190));
  EXPECT_OK(cu().cuStreamDestroy(stream));
  EXPECT_OK(cu().cuMemFree(data));
}

// A kernel sees device memory, page-locked host memory and its module's variables; pageable
// host memory is not in its memory map.
TEST_F(ModuleTest, WhatKernelsMayTouch) {
  uint32_t* pinned = nullptr;
  ASSERT_OK(cu().cuMemHostAlloc(reinterpret_cast<void**>(&pinned), 64, 0));
  CUdeviceptr target = reinterpret_cast<CUdeviceptr>(pinned);
  uint32_t n = 16;
  uint32_t value = 9;
  void* args[] = {&target, &n, &value};
  ASSERT_OK(launch(function("fill_u32"), 1, 32, args));
  ASSERT_OK(cu().cuCtxSynchronize());
  EXPECT_EQ(pinned[15], 9u);

  CUdeviceptr out = 0;
  ASSERT_OK(cu().cuMemAlloc(&out, 4));
  void* bump_args[] = {&out};
  uint32_t counter = 0;
  ASSERT_OK(launch(function("bump_counter"), 1, 1, bump_args));
  ASSERT_OK(cu().cuMemcpyDtoH(&counter, out, 4));
  EXPECT_EQ(counter, 8u);  // initialised to 7
  ASSERT_OK(launch(function("bump_counter"), 1, 1, bump_args));
  ASSERT_OK(cu().cuMemcpyDtoH(&counter, out, 4));
  EXPECT_EQ(counter, 9u);
  EXPECT_OK(cu().cuMemFree(out));
  EXPECT_OK(cu().cuMemFreeHost(pinned));

  std::vector<uint32_t> pageable(16);
  target = reinterpret_cast<CUdeviceptr>(pageable.data());
  ASSERT_OK(launch(function("fill_u32"), 1, 32, args));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuCtxSynchronize());
  reset_context();
}

// Unloading returns at once; launches already issued still have their code and variables.
TEST_F(ModuleTest, UnloadKeepsIssuedLaunchesWorking) {
  Gate gate;
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr out = 0;
  ASSERT_OK(cu().cuMemAlloc(&out, 4));
  ASSERT_OK(cu().cuLaunchHostFunc(stream, &Gate::wait, &gate));
  const CUfunction bump = function("bump_counter");
  void* args[] = {&out};
  ASSERT_OK(launch(bump, 1, 1, args, 0, stream));
  ASSERT_OK(cu().cuModuleUnload(module_));
  CUmodule gone = module_;
  module_ = nullptr;
  CUfunction handle = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuModuleGetFunction(&handle, gone, "bump_counter"));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, launch(bump, 1, 1, args, 0, stream));
  gate.open();
  ASSERT_OK(cu().cuStreamSynchronize(stream));
  uint32_t counter = 0;
  ASSERT_OK(cu().cuMemcpyDtoH(&counter, out, 4));
  EXPECT_EQ(counter, 8u);
  EXPECT_OK(cu().cuStreamDestroy(stream));
  EXPECT_OK(cu().cuMemFree(out));
}

// ===========================================================================================
// Faults
// ===========================================================================================

// An out-of-bounds store: the launch succeeds, the next synchronisation reports
// CUDA_ERROR_ILLEGAL_ADDRESS, the log names the kernel and the address, and the context stays
// unusable until its primary context is released.
TEST_F(ModuleTest, FaultIsStickyAndLogged) {
  struct Seen {
    std::mutex mutex;
    std::string messages;
  } seen;
  CUlogsCallbackHandle callback = nullptr;
  ASSERT_OK(cu().cuLogsRegisterCallback(
      [](void* data, CUlogLevel, char* message, size_t length) {
        auto* s = static_cast<Seen*>(data);
        std::lock_guard<std::mutex> lock(s->mutex);
        s->messages.append(message, length).append("\n");
      },
      &seen, &callback));
  CUdeviceptr data = 0;
  ASSERT_OK(cu().cuMemAlloc(&data, 4096));
  uint64_t index = 1024;  // one past the end
  void* args[] = {&data, &index};
  skip_logs();
  Gate gate;  // holds the stream until the work after the faulting kernel is queued
  ASSERT_OK(cu().cuLaunchHostFunc(nullptr, &Gate::wait, &gate));
  ASSERT_OK(launch(function("store_at"), 1, 1, args));
  Flag after_fault;
  ASSERT_OK(cu().cuLaunchHostFunc(nullptr, &Flag::raise, &after_fault));
  gate.open();
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuCtxSynchronize());
  EXPECT_FALSE(after_fault.raised());  // nothing runs after a fault
  const std::string log = new_logs();
  char address[64];
  std::snprintf(address, sizeof(address), "%#llx", static_cast<unsigned long long>(data + 4096));
  EXPECT_NE(log.find("device 0: CUDA_ERROR_ILLEGAL_ADDRESS: kernel 'store_at'"), std::string::npos)
      << log;
  EXPECT_NE(log.find(address), std::string::npos) << log;
  EXPECT_NE(log.find("just past the end of the 4096-byte allocation"), std::string::npos) << log;
  {
    std::lock_guard<std::mutex> lock(seen.mutex);
    EXPECT_NE(seen.messages.find("kernel 'store_at'"), std::string::npos) << seen.messages;
  }
  ASSERT_OK(cu().cuLogsUnregisterCallback(callback));

  // Sticky: every call that uses the context answers with the fault.
  CUdeviceptr other = 0;
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuMemAlloc(&other, 16));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuStreamQuery(nullptr));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuCtxSynchronize());
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, launch(function("store_at"), 1, 1, args));
  CUstream stream = nullptr;
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuStreamCreate(&stream, 0));
  uint32_t word = 0;
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuMemcpyDtoH(&word, data, 4));
  reset_context();
  ASSERT_OK(cu().cuMemAlloc(&other, 16));  // a fresh context
  EXPECT_OK(cu().cuMemFree(other));
}

TEST_F(ModuleTest, FarAwayAddressesAreNotNearAnyAllocation) {
  CUdeviceptr data = 0;
  ASSERT_OK(cu().cuMemAlloc(&data, 256));
  uint64_t index = uint64_t{1} << 40;
  void* args[] = {&data, &index};
  skip_logs();
  ASSERT_OK(launch(function("store_at"), 1, 1, args));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu().cuCtxSynchronize());
  const std::string log = new_logs();
  EXPECT_NE(log.find("not near any allocation"), std::string::npos) << log;
  reset_context();
}

TEST_F(ModuleTest, EachFaultKindHasItsResult) {
  const std::pair<const char*, CUresult> faults[] = {
      {"fault_trap", CUDA_ERROR_LAUNCH_FAILED},
      {"fault_assert", CUDA_ERROR_ASSERT},
      {"fault_barrier", CUDA_ERROR_LAUNCH_FAILED},
      {"fault_misaligned", CUDA_ERROR_MISALIGNED_ADDRESS},
      {"fault_illegal_instruction", CUDA_ERROR_ILLEGAL_INSTRUCTION}};
  for (const auto& [name, result] : faults) {
    ASSERT_OK(launch(fake(name), 1, 1, nullptr));
    CUevent event = nullptr;
    EXPECT_CU(result, cu().cuStreamSynchronize(nullptr)) << name;
    EXPECT_CU(result, cu().cuEventCreate(&event, 0)) << name;
    reset_context();
    ASSERT_OK(cu().cuModuleLoadData(&fakes_, kFakeKernels));
  }
}

// ===========================================================================================
// Statistics
// ===========================================================================================

TEST_F(ModuleTest, InstructionCounters) {
  using GetStats = int (*)(void*, hal_ptx_cpu_stats*);
  auto get_stats = reinterpret_cast<GetStats>(dlsym(cu().library, "hal_ptx_cpu_get_stats"));
  ASSERT_NE(get_stats, nullptr);
  hal_ptx_cpu_stats before{};
  before.struct_size = sizeof(before);
  ASSERT_EQ(get_stats(nullptr, &before), CUDA_SUCCESS);
  CUdeviceptr data = 0;
  ASSERT_OK(cu().cuMemAlloc(&data, 4096));
  uint32_t n = 0;
  void* args[] = {&data, &n};
  ASSERT_OK(launch(function("add_one"), 4, 64, args));  // 256 threads, 8 warps
  ASSERT_OK(launch(function("add_one"), 1, 33, args));  // 33 threads, 2 warps
  ASSERT_OK(cu().cuCtxSynchronize());
  hal_ptx_cpu_stats after{};
  after.struct_size = sizeof(after);
  ASSERT_EQ(get_stats(primary_context(), &after), CUDA_SUCCESS);
  EXPECT_EQ(after.kernels - before.kernels, 2u);
  EXPECT_EQ(after.lane_instructions - before.lane_instructions, (256u + 33u) * 10);
  EXPECT_EQ(after.warp_instructions - before.warp_instructions, (8u + 2u) * 10);
  EXPECT_EQ(get_stats(nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  hal_ptx_cpu_stats small{};
  small.struct_size = 4;
  EXPECT_EQ(get_stats(nullptr, &small), CUDA_ERROR_INVALID_VALUE);
  int garbage = 0;
  EXPECT_EQ(get_stats(&garbage, &after), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_OK(cu().cuMemFree(data));
}

}  // namespace
}  // namespace ptx_cpu_test
