// The bounds-check rewrite of SPIR-V modules (HAL_VULKAN_VALIDATION=gpu), without a device: the
// checked modules are valid, every access to a runtime array is a site, and modules with
// nothing to check are left alone.
#include "vulkan/spirv_bounds_check.h"

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace hal::vulkan {
namespace {

std::vector<uint32_t> words_of(const std::string& name) {
  std::ifstream in(std::string(HAL_VK_SHADER_DIR) + "/" + name + ".spv", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

// The validator's message for |words| in the Vulkan environment of its SPIR-V version, or "".
std::string validation_error(const std::vector<uint32_t>& words) {
  spv_context context =
      spvContextCreate(words[1] >= 0x00010600u ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2);
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  std::string error;
  if (spvValidate(context, &binary, &diagnostic) != SPV_SUCCESS) {
    error = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "invalid";
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return error;
}

BoundsChecks checked(const std::string& name, uint32_t set, std::vector<uint32_t>* out) {
  std::vector<uint32_t> words = words_of(name);
  EXPECT_FALSE(words.empty()) << name;
  BoundsChecks checks;
  std::string error;
  EXPECT_TRUE(add_bounds_checks(words, set, out, &checks, &error)) << name << ": " << error;
  EXPECT_EQ(checks.set, set);
  return checks;
}

TEST(SpirvBoundsCheck, CheckedModulesStayValid) {
  struct Case {
    const char* shader;
    uint32_t set;
    size_t sites;
  };
  // Sites: every load, store and atomic on a runtime array element.
  const Case cases[] = {
      {"vadd", 1, 3},          {"saxpy", 1, 3},      {"shared_sum", 1, 2},
      {"spec_matmul", 1, 6},   {"multi", 1, 4},      {"local_size_id", 1, 1},
      {"run_length", 1, 2},    {"shift_copy", 1, 2}, {"bounds_patterns", 2, 10},
      {"static_shared", 3, 2},
  };
  for (const Case& c : cases) {
    std::vector<uint32_t> out;
    BoundsChecks checks = checked(c.shader, c.set, &out);
    EXPECT_EQ(checks.sites.size(), c.sites) << c.shader;
    EXPECT_NE(out, words_of(c.shader)) << c.shader;
    EXPECT_EQ(validation_error(out), "") << c.shader;
  }
}

TEST(SpirvBoundsCheck, SitesDescribeTheAccess) {
  std::vector<uint32_t> out;
  BoundsChecks checks = checked("shift_copy", 1, &out);
  ASSERT_EQ(checks.sites.size(), 2u);
  // y[i + write_shift] = x[i + read_shift]: the load of x comes first.
  EXPECT_EQ(checks.sites[0].binding, 1u);
  EXPECT_FALSE(checks.sites[0].write);
  EXPECT_TRUE(checks.sites[0].skipped);
  EXPECT_EQ(checks.sites[1].binding, 0u);
  EXPECT_TRUE(checks.sites[1].write);
  for (const BoundsSite& site : checks.sites) {
    EXPECT_EQ(site.set, 0u);
    EXPECT_EQ(site.stride, 4u);
    EXPECT_EQ(site.array_offset, 0u);
  }

  checks = checked("bounds_patterns", 2, &out);
  bool member_before_array = false, struct_elements = false, atomics = false, halves = false;
  for (const BoundsSite& site : checks.sites) {
    if (site.set == 0 && site.binding == 0) member_before_array = site.array_offset == 4;
    if (site.set == 0 && site.binding == 1) struct_elements = site.stride == 16;
    if (site.set == 1 && site.binding == 0) atomics = site.write;
    // 16-bit values only loaded and stored have no zero to read instead: reported only.
    if (site.set == 1 && site.binding == 1 && !site.write) halves = !site.skipped;
  }
  EXPECT_TRUE(member_before_array);
  EXPECT_TRUE(struct_elements);
  EXPECT_TRUE(atomics);
  EXPECT_TRUE(halves);
}

TEST(SpirvBoundsCheck, ModulesWithoutRuntimeArraysAreLeftAlone) {
  // Buffer device addresses only, and an array of buffers: nothing to check.
  for (const char* shader : {"bda", "buffer_array"}) {
    std::vector<uint32_t> out;
    BoundsChecks checks = checked(shader, 1, &out);
    EXPECT_TRUE(checks.sites.empty()) << shader;
    EXPECT_EQ(out, words_of(shader)) << shader;
  }
}

TEST(SpirvBoundsCheck, MalformedModulesFailCleanly) {
  std::vector<uint32_t> words = words_of("vadd");
  ASSERT_GT(words.size(), 40u);
  std::vector<uint32_t> out;
  BoundsChecks checks;
  std::string error;
  EXPECT_FALSE(add_bounds_checks(std::vector<uint32_t>(words.begin(), words.begin() + 3), 1, &out,
                                 &checks, &error));
  EXPECT_FALSE(error.empty());
  words.resize(words.size() - 3);  // cut inside the last instructions
  error.clear();
  EXPECT_FALSE(add_bounds_checks(words, 1, &out, &checks, &error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace hal::vulkan
