// Module images the CPU PTX device refuses, and why (JIT error log, driver log): cubins,
// fatbins without usable PTX, PTX that is too new or for a newer GPU, garbage. None needs the
// interpreter. The fatbins nvcc makes at build time are used when nvcc is installed.
#include "driver_fixture.h"
#include "images.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace ptx_cpu_test {
namespace {

struct Loaded {
  CUresult result = CUDA_ERROR_UNKNOWN;
  CUmodule module = nullptr;
  std::string error_log;
  std::string info_log;
};

Loaded load(const void* image, size_t log_bytes = 4096) {
  Loaded out;
  std::vector<char> error(log_bytes, 'x');
  std::vector<char> info(4096, 'x');
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error.data(), reinterpret_cast<void*>(uintptr_t{log_bytes}), info.data(),
                    reinterpret_cast<void*>(uintptr_t{4096})};
  out.result = api().cuModuleLoadDataEx(&out.module, image, 4, keys, values);
  const size_t error_length = reinterpret_cast<uintptr_t>(values[1]);
  const size_t info_length = reinterpret_cast<uintptr_t>(values[3]);
  // The size options now hold what was written, without the NUL that follows it.
  EXPECT_LT(error_length, log_bytes);
  EXPECT_EQ(error[error_length], '\0');
  EXPECT_EQ(info[info_length], '\0');
  out.error_log.assign(error.data(), error_length);
  out.info_log.assign(info.data(), info_length);
  return out;
}

std::vector<char> read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << path;
  return std::vector<char>((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
}

TEST_F(DriverTest, CubinIsRefusedWithTheReason) {
  const std::vector<uint8_t> cubin = cubin_header(80);
  skip_logs();
  const Loaded loaded = load(cubin.data());
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, loaded.result);
  EXPECT_NE(loaded.error_log.find("machine code for a GPU (sm_80) cannot run on the CPU PTX "
                                  "device; load PTX or a fatbin that carries PTX"),
            std::string::npos)
      << loaded.error_log;
  const std::string log = new_logs();
  EXPECT_NE(log.find("cuModuleLoadDataEx: CUDA_ERROR_NO_BINARY_FOR_GPU"), std::string::npos) << log;
  // Any other ELF file is no image at all.
  std::vector<uint8_t> other = cubin;
  other[18] = 62;  // EM_X86_64
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(other.data()).result);
}

TEST_F(DriverTest, FatbinWithoutUsablePtxIsNoBinaryForGpu) {
  const std::string elf(reinterpret_cast<const char*>(cubin_header(80).data()), 256);
  const std::vector<uint8_t> sass = make_fatbin({{2, 80, elf}, {2, 90, elf}});
  Loaded loaded = load(sass.data());
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, loaded.result);
  EXPECT_NE(loaded.error_log.find("machine code for GPUs (sm_80, sm_90)"), std::string::npos)
      << loaded.error_log;
  const std::vector<uint8_t> newer = make_fatbin({{1, 90, ".version 8.0\n.target sm_90\n"}});
  loaded = load(newer.data());
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, loaded.result);
  EXPECT_NE(loaded.error_log.find("PTX only for newer architectures (compute_90)"),
            std::string::npos)
      << loaded.error_log;
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, load(make_fatbin({}).data()).result);
}

TEST_F(DriverTest, MalformedFatbinsAreInvalidImages) {
  std::vector<uint8_t> fatbin = make_fatbin({{1, 80, ".version 8.0\n.target sm_80\n"}});
  std::vector<uint8_t> truncated = fatbin;
  put<uint64_t>(&truncated, 24, 1u << 20);  // the entry claims more than the fatbin holds
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(truncated.data()).result);
  // A compressed entry that does not decompress.
  const std::vector<uint8_t> corrupt =
      make_fatbin({{1, 80, std::string("\xff\xff\xff\xff", 4), 0x2011, 4, 100}});
  const Loaded loaded = load(corrupt.data());
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, loaded.result);
  EXPECT_NE(loaded.error_log.find("cannot decompress the fatbin's compute_80 PTX"),
            std::string::npos)
      << loaded.error_log;
  FatbinWrapper wrapper;
  const uint64_t not_a_fatbin = 0;
  wrapper.data = &not_a_fatbin;
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(&wrapper).result);
}

TEST_F(DriverTest, GarbageIsAnInvalidImage) {
  const unsigned char garbage[] = {0x12, 0x34, 0x56, 0x78, 0x01, 0x02, 0x00};
  Loaded loaded = load(garbage);
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, loaded.result);
  EXPECT_NE(loaded.error_log.find("neither PTX text, a fatbin"), std::string::npos)
      << loaded.error_log;
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load("").result);
  // Text that is not PTX: the JIT refuses it.
  loaded = load("hello, world\n");
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, loaded.result);
  EXPECT_NE(loaded.error_log.find("no .version"), std::string::npos) << loaded.error_log;
}

TEST_F(DriverTest, PtxNewerThanTheDriverOrTheDevice) {
  Loaded loaded = load(".version 9.1\n.target sm_80\n.address_size 64\n");
  EXPECT_CU(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, loaded.result);
  EXPECT_NE(loaded.error_log.find("ISA 9.1"), std::string::npos) << loaded.error_log;
  loaded = load("// comment\n.version 8.5\n.target sm_90a\n.address_size 64\n");
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, loaded.result);
  EXPECT_NE(loaded.error_log.find("the PTX targets sm_90a"), std::string::npos) << loaded.error_log;
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, load(".version 8.0\n.target sm_86\n").result);
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, load(".version 8.0\n.address_size 64\n").result);
}

TEST_F(DriverTest, JitErrorLogIsCutToItsBuffer) {
  const std::vector<uint8_t> cubin = cubin_header(80);
  const Loaded loaded = load(cubin.data(), 16);
  EXPECT_EQ(loaded.error_log.size(), 15u);
  EXPECT_EQ(loaded.error_log, "the image is a ");
}

TEST_F(DriverTest, ModuleLoadArgumentsAndHandles) {
  CUmodule module = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuModuleLoadData(nullptr, ".version 8.0"));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuModuleLoadData(&module, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuModuleLoadDataEx(&module, ".version 8.0", 1, nullptr, nullptr));
  CUjit_option unknown[] = {static_cast<CUjit_option>(9999)};
  void* values[] = {nullptr};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuModuleLoadDataEx(&module, ".version 8.0", 1, unknown, values));
  EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND, cu().cuModuleLoad(&module, "/nonexistent/kernels.ptx"));
  int garbage = 0;
  const auto bad_module = reinterpret_cast<CUmodule>(&garbage);
  const auto bad_function = reinterpret_cast<CUfunction>(&garbage);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuModuleUnload(bad_module));
  CUfunction function = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuModuleGetFunction(&function, bad_module, "k"));
  unsigned count = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuModuleGetFunctionCount(&count, bad_module));
  int value = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, bad_function));
  EXPECT_CU(
      CUDA_ERROR_INVALID_HANDLE,
      cu().cuFuncSetAttribute(bad_function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
  const char* name = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuFuncGetName(&name, bad_function));
  size_t offset = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuFuncGetParamInfo(bad_function, 0, &offset, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu().cuLaunchKernel(bad_function, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuLaunchKernelEx(nullptr, bad_function, nullptr, nullptr));
}

// ===========================================================================================
// What nvcc makes (built from kernels.ptx and from a .cu file when nvcc is installed)
// ===========================================================================================

TEST_F(DriverTest, NvccCubinAndMachineCodeFatbin) {
#if defined(PTX_CPU_TEST_CUBIN) && defined(PTX_CPU_TEST_FATBIN_SASS)
  std::vector<char> cubin = read_file(PTX_CPU_TEST_CUBIN);
  Loaded loaded = load(cubin.data());
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, loaded.result);
  EXPECT_NE(loaded.error_log.find("(sm_80)"), std::string::npos) << loaded.error_log;
  std::vector<char> fatbin = read_file(PTX_CPU_TEST_FATBIN_SASS);
  loaded = load(fatbin.data());
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, loaded.result);
  EXPECT_NE(loaded.error_log.find("machine code for GPUs (sm_80, sm_90)"), std::string::npos)
      << loaded.error_log;
#else
  GTEST_SKIP() << "nvcc was not found at configure time";
#endif
}

// nvcc 13 writes PTX ISA 9.0 and compresses it with zstd: the fatbin's PTX is found,
// decompressed and loaded (the CPU PTX driver is CUDA 13.0).
TEST_F(DriverTest, NvccCudaFatbinIsDecompressedAndLoaded) {
#ifdef PTX_CPU_TEST_FATBIN_CU
  std::vector<char> fatbin = read_file(PTX_CPU_TEST_FATBIN_CU);
  Loaded loaded = load(fatbin.data());
  EXPECT_OK(loaded.result) << loaded.error_log;
  CUfunction function = nullptr;
  EXPECT_OK(cu().cuModuleGetFunction(&function, loaded.module, "vector_add"));
  EXPECT_OK(cu().cuModuleUnload(loaded.module));
#else
  GTEST_SKIP() << "nvcc was not found at configure time";
#endif
}

}  // namespace
}  // namespace ptx_cpu_test
