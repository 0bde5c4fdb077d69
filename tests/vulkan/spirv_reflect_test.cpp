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

ReflectedModule reflect(const std::string& name, const ReflectOptions& options = {}) {
  std::vector<uint32_t> words = words_of(name);
  EXPECT_FALSE(words.empty()) << name;
  ReflectedModule module;
  std::string error;
  EXPECT_TRUE(reflect_spirv(words.data(), words.size(), options, &module, &error)) << error;
  return module;
}

const ReflectedEntryPoint* entry_named(const ReflectedModule& module, const std::string& name) {
  for (const ReflectedEntryPoint& entry : module.entry_points) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
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

TEST(SpirvReflect, UniformBlocksAreSizedByTheirLayout) {
  // std140: |scale| at 0, then four floats 16 bytes apart (ArrayStride 16) from offset 16.
  const ReflectedEntryPoint entry = reflect("uniform_buffer").entry_points.at(0);
  ASSERT_EQ(entry.bindings.size(), 2u);
  EXPECT_EQ(entry.bindings[0].kind, DescriptorKind::kUniformBuffer);
  EXPECT_EQ(entry.bindings[0].block_bytes, 80u);
  EXPECT_EQ(entry.bindings[1].kind, DescriptorKind::kStorageBuffer);
  EXPECT_EQ(reflect("uniform_too_large").entry_points.at(0).bindings.at(0).block_bytes, 80000u);
  // Matrices by their MatrixStride: a std140 mat3 after a vec4 ends at 64, a row_major mat2x4
  // spans four 16-byte rows.
  const ReflectedEntryPoint matrices = reflect("uniform_matrix").entry_points.at(0);
  ASSERT_EQ(matrices.bindings.size(), 3u);
  EXPECT_EQ(matrices.bindings[0].block_bytes, 64u);
  EXPECT_EQ(matrices.bindings[1].block_bytes, 64u);
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

  // shared_sum sizes its array by constant 7 (SHARED_BYTES / 4, default 4 bytes).
  ReflectedModule shared = reflect("shared_sum");
  ASSERT_EQ(shared.entry_points.size(), 1u);
  EXPECT_EQ(shared.entry_points[0].workgroup_bytes, 4u);
  ASSERT_EQ(shared.spec_constants.size(), 1u);
  EXPECT_EQ(shared.spec_constants[0].id, 7u);
  ReflectOptions given;
  given.specializations = {{7, 256}};
  EXPECT_EQ(reflect("shared_sum", given).entry_points[0].workgroup_bytes, 256u);
  // As the shared-bytes constant it is decided at launch: dynamic, not static, memory.
  ReflectOptions at_launch;
  at_launch.launch_spec_id = 7;
  EXPECT_EQ(reflect("shared_sum", at_launch).entry_points[0].workgroup_bytes, 0u);
}

// A workgroup size made of specialization constants is fixed once they are given at load; a
// dimension left without a value stays the launch's to choose.
TEST(SpirvReflect, WorkgroupSizeFixedBySpecialization) {
  for (const char* name : {"local_size_id", "workgroup_size_spec"}) {
    SCOPED_TRACE(name);
    ReflectOptions all;
    all.specializations = {{0, 8}, {1, 2}, {2, 1}, {42, 5}};
    const ReflectedEntryPoint entry = reflect(name, all).entry_points.at(0);
    EXPECT_EQ(entry.block[0], 8u);
    EXPECT_EQ(entry.block[1], 2u);
    EXPECT_EQ(entry.block[2], 1u);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(entry.block_spec_id[d], kNoSpecId) << d;

    ReflectOptions x_only;
    x_only.specializations = {{0, 16}};
    const ReflectedEntryPoint partial = reflect(name, x_only).entry_points.at(0);
    EXPECT_EQ(partial.block[0], 16u);
    EXPECT_EQ(partial.block_spec_id[0], kNoSpecId);
    EXPECT_EQ(partial.block_spec_id[1], 1u);
    EXPECT_EQ(partial.block_spec_id[2], 2u);
  }
}

// spec_matmul.comp: a production-style shader. Shared arrays sized by OpSpecConstantOp
// expressions of the tile constants, the workgroup size by constant 0, an aliased binding.
TEST(SpirvReflect, ProductionStyleMatmulAfterSpecialization) {
  const ReflectedModule defaults = reflect("spec_matmul");
  ASSERT_EQ(defaults.entry_points.size(), 1u);
  const ReflectedEntryPoint& d = defaults.entry_points[0];
  // glslc gives local_size_x_id its own constant, default 1, besides BLOCK_SIZE's (64), both
  // SpecId 0: unspecialized, they disagree, which is why engines always give constant 0.
  EXPECT_EQ(d.block[0], 1u);
  EXPECT_EQ(d.block_spec_id[0], 0u);  // no value given: the launch chooses
  // vec2 buf_a[BM * (BK / 2 + 1)] + float buf_b[BN * (BK + 1)] at BM = BN = 32, BK = 8.
  EXPECT_EQ(d.workgroup_bytes, 32u * 5 * 8 + 32u * 9 * 4);
  ASSERT_EQ(d.bindings.size(), 3u) << "two views of binding 0 are one parameter";
  EXPECT_EQ(d.bindings[0].binding, 0u);
  EXPECT_EQ(d.bindings[1].binding, 1u);
  EXPECT_EQ(d.push_members.size(), 15u);
  ASSERT_EQ(defaults.spec_constants.size(), 6u);

  ReflectOptions options;
  options.specializations = {{0, 128}, {1, 64}, {2, 16}, {3, 16}, {4, 8}, {5, 1}, {6, 0}, {9, 77}};
  const ReflectedEntryPoint e = reflect("spec_matmul", options).entry_points.at(0);
  EXPECT_EQ(e.block[0], 128u);
  EXPECT_EQ(e.block_spec_id[0], kNoSpecId);
  EXPECT_EQ(e.workgroup_bytes, 64u * 9 * 8 + 16u * 17 * 4);
  // BK is signed: -4 makes BK / 2 + 1 negative, and the sizes wrap as 32-bit unsigned values.
  ReflectOptions negative;
  negative.specializations = {{3, static_cast<uint32_t>(-4)}};
  std::vector<uint32_t> words = words_of("spec_matmul");
  ReflectedModule module;
  std::string error;
  EXPECT_FALSE(reflect_spirv(words.data(), words.size(), negative, &module, &error));
  EXPECT_NE(error.find("larger than 4 GiB"), std::string::npos) << error;
}

// Every OpSpecConstantOp operation a shader may use, evaluated as SPIR-V defines it.
TEST(SpirvReflect, SpecConstantOpsAreEvaluated) {
  struct Case {
    const char* entry;
    uint32_t value;  // the array length
  };
  const Case cases[] = {{"smod", 2},     {"srem", 6},     {"sdiv", 13},    {"shl", 16},
                        {"sra", 4},      {"slt", 7},      {"ult", 9},      {"uconvert", 5},
                        {"extract", 11}, {"div_zero", 0}, {"spec_mul", 6}, {"bits", 48},
                        {"logic", 2},    {"spec_bool", 8}};
  const ReflectedModule module = reflect("spec_ops");
  for (const Case& c : cases) {
    const ReflectedEntryPoint* entry = entry_named(module, c.entry);
    ASSERT_NE(entry, nullptr) << c.entry;
    EXPECT_EQ(entry->workgroup_bytes, 4 * c.value) << c.entry;
  }
  ReflectOptions options;
  // kNoSpecId is no SpecId: a value given for it must not reach the plain constants.
  options.specializations = {{0, 10}, {1, 1}, {kNoSpecId, 1000}};
  const ReflectedModule given = reflect("spec_ops", options);
  EXPECT_EQ(entry_named(given, "shl")->workgroup_bytes, 4u * 16);
  EXPECT_EQ(entry_named(given, "spec_mul")->workgroup_bytes, 4u * 20);
  EXPECT_EQ(entry_named(given, "spec_bool")->workgroup_bytes, 4u * 4);
}

// The alignment a buffer-device-address parameter needs is that of the widest access through it.
TEST(SpirvReflect, AddressAlignmentFromAccesses) {
  const ReflectedEntryPoint entry = reflect("bda_align").entry_points.at(0);
  ASSERT_EQ(entry.push_members.size(), 5u);
  EXPECT_EQ(entry.push_members[0].address_alignment, 4u);   // float loads and stores
  EXPECT_EQ(entry.push_members[1].address_alignment, 16u);  // vec4 stores, Aligned 16
  EXPECT_EQ(entry.push_members[2].address_alignment, 4u);   // a uint atomic, address + 4
  EXPECT_EQ(entry.push_members[3].address_alignment, 1u);   // never dereferenced
  EXPECT_FALSE(entry.push_members[4].is_address);
  const ReflectedEntryPoint bda = reflect("bda").entry_points.at(0);
  for (int m = 0; m < 3; ++m) EXPECT_EQ(bda.push_members[m].address_alignment, 4u) << m;

  // An Aligned decoration on the pointer an atomic uses (atomics have no memory operands) is
  // what that access needs: add "OpDecorate %pointer Aligned 8" after the first decoration.
  std::vector<uint32_t> words = words_of("bda_align");
  constexpr uint32_t kOpDecorate = 71, kOpAtomicIAdd = 234, kAligned = 44;
  uint32_t pointer = 0;
  size_t first_decoration = 0;
  for (size_t at = 5; at < words.size() && (words[at] >> 16) != 0; at += words[at] >> 16) {
    const uint32_t op = words[at] & 0xFFFF;
    if (op == kOpDecorate && first_decoration == 0) first_decoration = at;
    if (op == kOpAtomicIAdd) pointer = words[at + 3];
  }
  ASSERT_NE(pointer, 0u);
  ASSERT_NE(first_decoration, 0u);
  const uint32_t decoration[] = {(4u << 16) | kOpDecorate, pointer, kAligned, 8};
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(first_decoration),
               std::begin(decoration), std::end(decoration));
  ReflectedModule decorated;
  std::string error;
  ASSERT_TRUE(reflect_spirv(words.data(), words.size(), &decorated, &error)) << error;
  EXPECT_EQ(decorated.entry_points.at(0).push_members[2].address_alignment, 8u);
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
