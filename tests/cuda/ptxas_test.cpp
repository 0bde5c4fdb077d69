// Assembles test PTX with the toolkit's ptxas for sm_80 and sm_90, which proves the PTX the
// tests use is real PTX, and checks that the backend's cubin checks accept ptxas's output and
// refuse it truncated.
#include "common/error.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_module.h"
#include "cuda_test_double.h"
#include "ptx/reader.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Hand-written PTX of the kind the backend tests load.
constexpr const char* kHandWrittenPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry add_one(
    .param .u64 .ptr .global .align 4 add_one_data,
    .param .u32 add_one_n
)
.reqntid 64, 1, 1
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [add_one_data];
  ld.param.u32 %r1, [add_one_n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd2, %rd2, %rd3;
  ld.global.u32 %r3, [%rd2];
  add.s32 %r4, %r3, 1;
  st.global.u32 [%rd2], %r4;
DONE:
  ret;
}
)";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class Ptxas : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef HAL_TEST_PTXAS
    GTEST_SKIP() << "ptxas was not found at configure time (install the CUDA toolkit)";
#else
    std::string pattern = std::filesystem::temp_directory_path() / "hal-ptxas-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
#endif
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  // Assembles |ptx| for |arch|; returns the cubin bytes, empty on failure.
  std::string assemble(const std::string& ptx, const std::string& arch) {
#ifdef HAL_TEST_PTXAS
    const std::string in = dir_ + "/in.ptx";
    const std::string out = dir_ + "/out-" + arch + ".cubin";
    std::ofstream(in, std::ios::binary) << ptx;
    const std::string command = std::string("'") + HAL_TEST_PTXAS + "' -arch=" + arch + " '" + in +
                                "' -o '" + out + "' 2>" + dir_ + "/log.txt";
    const int rc = std::system(command.c_str());
    EXPECT_EQ(rc, 0) << command << "\n" << read_file(dir_ + "/log.txt");
    return read_file(out);
#else
    (void)ptx;
    (void)arch;
    return {};
#endif
  }

  void check_cubin(const std::string& cubin) {
    ASSERT_FALSE(cubin.empty());
    const auto* bytes = reinterpret_cast<const uint8_t*>(cubin.data());
    EXPECT_EQ(hal::cuda::check_binary(HAL_IR_CUBIN, bytes, cubin.size()), HAL_SUCCESS)
        << hal::pending_error();
    EXPECT_EQ(hal::cuda::check_binary(HAL_IR_CUBIN, bytes, cubin.size() - 1), HAL_ERROR_INVALID_IR);
    EXPECT_EQ(hal::cuda::check_binary(HAL_IR_CUBIN, bytes, cubin.size() / 2), HAL_ERROR_INVALID_IR);
  }

  std::string dir_;
};

TEST_F(Ptxas, AssemblesHandWrittenPtxForSm80AndSm90) {
  hal::ptx::Module module;
  std::string error;
  ASSERT_TRUE(hal::ptx::parse(kHandWrittenPtx, &module, &error)) << error;
  for (const char* arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    check_cubin(assemble(kHandWrittenPtx, arch));
  }
}

TEST_F(Ptxas, AssemblesNvccPtxForSm80AndSm90) {
#ifndef HAL_TEST_NVCC_PTX
  GTEST_SKIP() << "nvcc was not found at configure time: no generated PTX";
#else
  const std::string ptx = read_file(HAL_TEST_NVCC_PTX);
  ASSERT_FALSE(ptx.empty());
  for (const char* arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    const std::string cubin = assemble(ptx, arch);
    check_cubin(cubin);
    std::vector<std::string> names;
    ASSERT_EQ(hal::cuda::cubin_entries(reinterpret_cast<const uint8_t*>(cubin.data()), cubin.size(),
                                       &names),
              HAL_SUCCESS)
        << hal::pending_error();
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"_Z4fillIfEvPT_S0_i", "_Z5scalePfPKfm4Paircsd",
                                               "_Z7boundedPi", "saxpy"}));
  }
#endif
}

// Corrupted cubins are refused or read within bounds, never crash (run under ASan in CI's
// sanitizer builds to check the "within bounds").
TEST_F(Ptxas, CorruptedCubinsAreReadWithinBounds) {
  const std::string cubin = assemble(kHandWrittenPtx, "sm_80");
  ASSERT_FALSE(cubin.empty());
  std::mt19937 random(99);
  for (int round = 0; round < 4000; ++round) {
    std::vector<uint8_t> bytes(cubin.begin(), cubin.end());
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      // Mostly the headers, where offsets and sizes live.
      const size_t limit = random() % 2 == 0 ? std::min<size_t>(bytes.size(), 64) : bytes.size();
      bytes[random() % limit] = static_cast<uint8_t>(random());
    }
    if (random() % 4 == 0) bytes.resize(random() % bytes.size());
    std::vector<std::string> names;
    hal::cuda::cubin_entries(bytes.data(), bytes.size(), &names);
    hal::clear_pending_error();
  }
}

// A driver without cuModuleEnumerateFunctions: the backend lists a real cubin's kernels from
// its symbol table.
TEST_F(Ptxas, RealCubinLoadsWithoutDriverEnumeration) {
  const std::string cubin = assemble(kHandWrittenPtx, "sm_80");
  ASSERT_FALSE(cubin.empty());
  cuda_test_double_reset();
  cuda_test_double_hide_entry_point("cuModuleEnumerateFunctions");  // as before CUDA 12.4
  cuda_test_double_hide_entry_point("cuFuncGetParamInfo");
  const char* in_the_cubin[] = {"add_one"};  // what the double's module then holds
  cuda_test_double_set_binary_functions(in_the_cubin, 1);
  auto backend = hal::create_cuda_backend();
  std::vector<std::unique_ptr<hal::Device>> devices;
  ASSERT_EQ(backend->init(&devices), HAL_SUCCESS) << hal::pending_error();
  ASSERT_FALSE(devices.empty());
  std::unique_ptr<hal::Module> module;
  ASSERT_EQ(devices[0]->load_module(HAL_IR_CUBIN, reinterpret_cast<const uint8_t*>(cubin.data()),
                                    cubin.size(), {}, &module),
            HAL_SUCCESS)
      << hal::pending_error();
  ASSERT_EQ(module->functions.size(), 1u);
  EXPECT_EQ(module->functions[0]->desc.name, "add_one");
  EXPECT_FALSE(module->functions[0]->desc.params_known);
}

}  // namespace
