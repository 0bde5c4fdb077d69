// SPIR-V reflection on the test shaders, and on malformed input (truncations and random
// mutations of valid modules must fail cleanly or succeed, never read out of bounds).
#include "vulkan/spirv_reflect.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
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

ReflectedModule reflect(const std::string& name) {
  std::vector<uint32_t> words = words_of(name);
  EXPECT_FALSE(words.empty()) << name;
  ReflectedModule module;
  std::string error;
  EXPECT_TRUE(reflect_spirv(words.data(), words.size(), &module, &error)) << error;
  return module;
}

TEST(SpirvReflect, VectorAdd) {
  ReflectedModule module = reflect("vadd");
  ASSERT_EQ(module.entry_points.size(), 1u);
  const ReflectedEntryPoint& entry = module.entry_points[0];
  EXPECT_EQ(entry.name, "main");
  EXPECT_EQ(entry.block[0], 64u);
  EXPECT_EQ(entry.block[1], 1u);
  EXPECT_EQ(entry.block_spec_id[0], kNoSpecId);
  ASSERT_EQ(entry.bindings.size(), 3u);
  for (uint32_t b = 0; b < 3; ++b) {
    EXPECT_EQ(entry.bindings[b].set, 0u);
    EXPECT_EQ(entry.bindings[b].binding, b);
    EXPECT_EQ(entry.bindings[b].kind, DescriptorKind::kStorageBuffer);
  }
  ASSERT_EQ(entry.push_members.size(), 1u);
  EXPECT_EQ(entry.push_members[0].offset, 0u);
  EXPECT_EQ(entry.push_members[0].size, 4u);
  EXPECT_FALSE(entry.push_members[0].is_address);
  EXPECT_EQ(entry.push_constant_size, 4u);
  EXPECT_EQ(entry.workgroup_bytes, 0u);
  EXPECT_TRUE(module.spec_constants.empty());
}

TEST(SpirvReflect, SharedMemorySetsAndPushLayout) {
  ReflectedModule module = reflect("static_shared");
  ASSERT_EQ(module.entry_points.size(), 1u);
  const ReflectedEntryPoint& entry = module.entry_points[0];
  EXPECT_EQ(entry.workgroup_bytes, 128u * 4 + 4u * 16);
  ASSERT_EQ(entry.bindings.size(), 2u);
  EXPECT_EQ(entry.bindings[0].set, 0u);
  EXPECT_EQ(entry.bindings[0].binding, 5u);
  EXPECT_EQ(entry.bindings[1].set, 1u);
  EXPECT_EQ(entry.bindings[1].binding, 3u);
  ASSERT_EQ(entry.push_members.size(), 3u);
  EXPECT_EQ(entry.push_members[0].offset, 0u);
  EXPECT_EQ(entry.push_members[1].offset, 4u);
  EXPECT_EQ(entry.push_members[2].offset, 8u);
  EXPECT_EQ(entry.push_members[2].size, 8u);
  EXPECT_EQ(entry.push_members[2].alignment, 8u);
  EXPECT_EQ(entry.push_constant_size, 16u);
  EXPECT_EQ(entry.block[0], 4u);
  EXPECT_EQ(entry.block[1], 2u);
}

TEST(SpirvReflect, BufferDeviceAddressMembersArePointers) {
  ReflectedModule module = reflect("bda");
  ASSERT_EQ(module.entry_points.size(), 1u);
  const ReflectedEntryPoint& entry = module.entry_points[0];
  EXPECT_TRUE(module.uses_physical_storage_buffer);
  EXPECT_TRUE(entry.bindings.empty());
  ASSERT_EQ(entry.push_members.size(), 4u);
  EXPECT_TRUE(entry.push_members[0].is_address);
  EXPECT_TRUE(entry.push_members[1].is_address);
  EXPECT_TRUE(entry.push_members[2].is_address);
  EXPECT_FALSE(entry.push_members[3].is_address);
  EXPECT_EQ(entry.push_members[1].offset, 8u);
  EXPECT_EQ(entry.push_members[3].offset, 24u);
  EXPECT_EQ(entry.push_constant_size, 28u);
}

TEST(SpirvReflect, SpecConstantsAndWorkgroupSizes) {
  ReflectedModule spec = reflect("spec");
  ASSERT_EQ(spec.spec_constants.size(), 2u);
  EXPECT_EQ(spec.spec_constants[0].id, 3u);
  EXPECT_EQ(spec.spec_constants[0].size, 4u);
  EXPECT_EQ(spec.spec_constants[1].id, 4u);

  for (const char* name : {"local_size_id", "workgroup_size_spec"}) {
    ReflectedModule module = reflect(name);
    ASSERT_EQ(module.entry_points.size(), 1u) << name;
    const ReflectedEntryPoint& entry = module.entry_points[0];
    EXPECT_TRUE(entry.block_declared) << name;
    for (uint32_t d = 0; d < 3; ++d) {
      EXPECT_EQ(entry.block_spec_id[d], d) << name;
      EXPECT_EQ(entry.block[d], 1u) << name;
    }
    ASSERT_EQ(module.spec_constants.size(), 3u) << name;  // ids 0, 1, 2, each once
  }

  ReflectedModule shared = reflect("shared_sum");
  ASSERT_EQ(shared.entry_points.size(), 1u);
  EXPECT_EQ(shared.entry_points[0].workgroup_bytes, 0u);  // sized by a spec constant
  ASSERT_EQ(shared.spec_constants.size(), 1u);
  EXPECT_EQ(shared.spec_constants[0].id, 7u);
}

TEST(SpirvReflect, SeveralEntryPoints) {
  ReflectedModule module = reflect("multi");
  ASSERT_EQ(module.entry_points.size(), 2u);
  EXPECT_EQ(module.entry_points[0].name, "add_value");
  EXPECT_EQ(module.entry_points[1].name, "mul_value");
  EXPECT_EQ(module.entry_points[0].block[0], 16u);
  EXPECT_EQ(module.entry_points[1].block[1], 2u);
  // SPIR-V 1.5: each entry point sees only the resources in its interface.
  EXPECT_EQ(module.entry_points[0].bindings.size(), 1u);
  EXPECT_EQ(module.entry_points[1].bindings.size(), 1u);
}

// Instructions for hand-made modules.
void emit(std::vector<uint32_t>* words, uint32_t opcode, std::initializer_list<uint32_t> operands) {
  words->push_back(static_cast<uint32_t>((operands.size() + 1) << 16) | opcode);
  words->insert(words->end(), operands);
}

TEST(SpirvReflect, DeeplyNestedStructsAreSizedInLinearTime) {
  // struct S(k+1) { S(k) a, b, c; } eighteen times: 3^18 paths through the type graph, but
  // only nineteen distinct types. The workgroup variable is 4 * 3^18 bytes.
  std::vector<uint32_t> words = {0x07230203u, 0x00010500u, 0, 100, 0};
  const uint32_t kMain = 1, kInt = 2, kPtr = 40, kVar = 41;
  const char name[4] = {'m', 'a', 'i', 'n'};
  uint32_t name_word = 0;
  std::memcpy(&name_word, name, 4);
  emit(&words, 15, {5, kMain, name_word, 0, kVar});  // OpEntryPoint GLCompute "main" %var
  emit(&words, 16, {kMain, 17, 1, 1, 1});            // OpExecutionMode LocalSize 1 1 1
  emit(&words, 21, {kInt, 32, 0});                   // OpTypeInt 32
  for (uint32_t k = 0; k < 18; ++k) {
    const uint32_t member = k == 0 ? kInt : 10 + k - 1;
    emit(&words, 30, {10 + k, member, member, member});  // OpTypeStruct
  }
  emit(&words, 32, {kPtr, 4, 10 + 17});  // OpTypePointer Workgroup
  emit(&words, 59, {kPtr, kVar, 4});     // OpVariable
  ReflectedModule module;
  std::string error;
  ASSERT_TRUE(reflect_spirv(words.data(), words.size(), &module, &error)) << error;
  ASSERT_EQ(module.entry_points.size(), 1u);
  uint64_t expected = 4;
  for (int k = 0; k < 18; ++k) expected *= 3;
  EXPECT_EQ(module.entry_points[0].workgroup_bytes, expected);
}

TEST(SpirvReflect, SelfReferentialTypesFail) {
  std::vector<uint32_t> words = {0x07230203u, 0x00010500u, 0, 100, 0};
  uint32_t name_word = 0;
  std::memcpy(&name_word, "main", 4);
  emit(&words, 15, {5, 1, name_word, 0, 41});
  emit(&words, 16, {1, 17, 1, 1, 1});
  emit(&words, 30, {10, 10});  // struct S { S s; }
  emit(&words, 32, {40, 4, 10});
  emit(&words, 59, {40, 41, 4});
  ReflectedModule module;
  std::string error;
  EXPECT_FALSE(reflect_spirv(words.data(), words.size(), &module, &error));
  EXPECT_NE(error.find("nest"), std::string::npos) << error;
}

TEST(SpirvReflect, RejectsBadHeaders) {
  ReflectedModule module;
  std::string error;
  EXPECT_FALSE(reflect_spirv(nullptr, 0, &module, &error));
  uint32_t short_blob[3] = {0x07230203u, 0x00010500u, 0};
  EXPECT_FALSE(reflect_spirv(short_blob, 3, &module, &error));
  EXPECT_NE(error.find("header"), std::string::npos) << error;
  uint32_t bad_magic[5] = {0x12345678u, 0x00010500u, 0, 10, 0};
  EXPECT_FALSE(reflect_spirv(bad_magic, 5, &module, &error));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  // An instruction whose word count runs past the end.
  uint32_t overrun[6] = {0x07230203u, 0x00010500u, 0, 10, 0, (50u << 16) | 17u};
  EXPECT_FALSE(reflect_spirv(overrun, 6, &module, &error));
  EXPECT_NE(error.find("word count"), std::string::npos) << error;
  uint32_t zero_length[6] = {0x07230203u, 0x00010500u, 0, 10, 0, 0};
  EXPECT_FALSE(reflect_spirv(zero_length, 6, &module, &error));
}

TEST(SpirvReflect, EveryTruncationIsHandled) {
  for (const char* name : {"vadd", "bda", "static_shared", "local_size_id", "multi"}) {
    const std::vector<uint32_t> words = words_of(name);
    for (size_t length = 0; length <= words.size(); ++length) {
      // A copy of exactly |length| words, so a read past it is caught by sanitizers.
      std::vector<uint32_t> prefix(words.begin(), words.begin() + static_cast<long>(length));
      ReflectedModule module;
      std::string error;
      const bool ok = reflect_spirv(prefix.data(), prefix.size(), &module, &error);
      if (!ok) {
        EXPECT_FALSE(error.empty()) << name << " at " << length;
      }
    }
  }
}

TEST(SpirvReflect, RandomMutationsAreHandled) {
  std::mt19937 rng(2024);
  for (const char* name : {"vadd", "bda", "static_shared", "spec", "multi"}) {
    const std::vector<uint32_t> words = words_of(name);
    for (int round = 0; round < 2000; ++round) {
      std::vector<uint32_t> mutated = words;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const size_t at = 5 + rng() % (mutated.size() - 5);
        switch (rng() % 3) {
          case 0:
            mutated[at] = static_cast<uint32_t>(rng());
            break;
          case 1:
            mutated[at] ^= 1u << (rng() % 32);
            break;
          default:
            mutated[at] = (mutated[at] & 0xFFFFu) | ((rng() % 8) << 16);  // word count
            break;
        }
      }
      ReflectedModule module;
      std::string error;
      const bool ok = reflect_spirv(mutated.data(), mutated.size(), &module, &error);
      if (!ok) {
        ASSERT_FALSE(error.empty());
      }
    }
  }
}

}  // namespace
}  // namespace hal::vulkan
