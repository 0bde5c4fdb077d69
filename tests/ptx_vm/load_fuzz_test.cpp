// The loader fuzz target's entry point (load_fuzz_entry.h) in every build: over the PTX the
// fuzzer is seeded with, and over small modules that reach each of its paths. Inputs the fuzzer
// finds are kept here as cases.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "load_fuzz_entry.h"
#include "vm_test_util.h"

namespace ptx_vm_test {
namespace {

std::string load_one(const std::string& text) {
  return ptx_vm_fuzz::load_one(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

TEST(PtxVmLoadFuzz, Seeds) {
  std::vector<std::filesystem::path> files = {HAL_TEST_KERNELS_PTX};
  for (const char* dir : {HAL_TEST_PACK_PTX_DIR, HAL_TEST_TRITON_PTX_DIR, HAL_TEST_NVCC_PTX_DIR}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".ptx") files.push_back(entry.path());
    }
  }
  ASSERT_GE(files.size(), 8u);
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(load_one(text.str()), "") << file.filename().string();
  }
}

TEST(PtxVmLoadFuzz, SmallModules) {
  const std::vector<std::string> inputs = {
      "",
      std::string("\0\0\0", 3),
      ".version 99.9\n.target sm_80\n.address_size 64\n",
      module(".visible .entry e() { ret; }"),
      // Runs, and faults: no global memory but the module's.
      module(R"(
.visible .entry store(.param .u64 p)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], 1;
  ret;
}
)"),
      // Runs within the module's own variable.
      module(R"(
.global .align 4 .u32 g[32];
.visible .entry own()
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, g;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)"),
      // Loads but is not run: it loops.
      module(R"(
.visible .entry spin()
{
LOOP:
  bra LOOP;
}
)"),
      // A barrier on a .reqntid block of two warps.
      module(R"(
.visible .entry bar() .reqntid 64
{
  bar.sync 0;
  ret;
}
)"),
  };
  for (const std::string& input : inputs) EXPECT_EQ(load_one(input), "") << input;
}

}  // namespace
}  // namespace ptx_vm_test
