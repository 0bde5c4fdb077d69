// Cooperative matrix types: reflected after specialization, checked against the device's
// configurations, and modules that declare them accepted although hal's SPIR-V validator is
// older than the extension.
#include "common/error.h"
#include "vulkan/cooperative_matrix.h"
#include "vulkan/module.h"
#include "vulkan/spirv_reflect.h"

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using hal::vulkan::CooperativeMatrixShape;
using hal::vulkan::ReflectedCooperativeMatrix;
using hal::vulkan::ReflectedModule;

constexpr uint32_t op(uint32_t length, uint32_t opcode) {
  return (length << 16) | opcode;
}

// Two cooperative matrix types, fp16 A and fp32 accumulator, 16 columns, at subgroup scope,
// their rows a specialization constant (SpecId 7, default 8).
const std::vector<uint32_t> kModule = {
    0x07230203u, 0x00010600u, 0u,  11u, 0u,          // header
    op(2, 17),   1u,                                 // OpCapability Shader
    op(2, 17),   6022u,                              // OpCapability CooperativeMatrixKHR
    op(3, 14),   0u,          3u,                    // OpMemoryModel Logical Vulkan
    op(4, 71),   5u,          1u,  7u,               // OpDecorate %5 SpecId 7
    op(3, 22),   1u,          16u,                   // %1 = OpTypeFloat 16
    op(4, 21),   2u,          32u, 0u,               // %2 = OpTypeInt 32 0
    op(4, 43),   2u,          3u,  3u,               // %3 = OpConstant %2 3 (Subgroup)
    op(4, 43),   2u,          4u,  16u,              // %4 = OpConstant %2 16
    op(4, 50),   2u,          5u,  8u,               // %5 = OpSpecConstant %2 8
    op(4, 43),   2u,          6u,  0u,               // %6 = OpConstant %2 0 (MatrixA)
    op(4, 43),   2u,          7u,  2u,               // %7 = OpConstant %2 2 (MatrixAccumulator)
    op(3, 22),   8u,          32u,                   // %8 = OpTypeFloat 32
    op(7, 4456), 9u,          1u,  3u,  5u, 4u, 6u,  // %9 = OpTypeCooperativeMatrixKHR %1 ...
    op(7, 4456), 10u,         8u,  3u,  5u, 4u, 7u,  // %10 = ... %8 ... accumulator
};

ReflectedModule reflect(const hal::vulkan::ReflectOptions& options) {
  ReflectedModule module;
  std::string error;
  EXPECT_TRUE(hal::vulkan::reflect_spirv(kModule.data(), kModule.size(), options, &module, &error))
      << error;
  return module;
}

// 16x16x16 fp16*fp16+fp32=fp32 at subgroup scope.
const CooperativeMatrixShape kShape16{16, 16, 16, 0, 0, 1, 1, 3, false};

TEST(CooperativeMatrixTypes, ReflectedAfterSpecialization) {
  ReflectedModule module = reflect({});
  ASSERT_EQ(module.cooperative_matrices.size(), 2u);
  const ReflectedCooperativeMatrix& a = module.cooperative_matrices[0];
  EXPECT_TRUE(a.known);
  EXPECT_EQ(a.kind, ReflectedCooperativeMatrix::Kind::kFloat);
  EXPECT_EQ(a.width, 16u);
  EXPECT_EQ(a.scope, 3u);
  EXPECT_EQ(a.rows, 8u);  // the constant's default
  EXPECT_EQ(a.columns, 16u);
  EXPECT_EQ(a.use, 0u);
  EXPECT_EQ(module.cooperative_matrices[1].width, 32u);
  EXPECT_EQ(module.cooperative_matrices[1].use, 2u);

  hal::vulkan::ReflectOptions given;
  given.specializations.push_back({7, 16});
  module = reflect(given);
  ASSERT_EQ(module.cooperative_matrices.size(), 2u);
  EXPECT_EQ(module.cooperative_matrices[0].rows, 16u);

  hal::vulkan::ReflectOptions at_launch;
  at_launch.launch_spec_id = 7;
  module = reflect(at_launch);
  ASSERT_EQ(module.cooperative_matrices.size(), 2u);
  EXPECT_FALSE(module.cooperative_matrices[0].known);
}

// Reflection reads unvalidated modules: an id declared as a cooperative matrix and then again as
// another type (found by fuzzing) is a clean failure, not a read past the operands.
TEST(CooperativeMatrixTypes, RedeclaredTypeIsAFailure) {
  std::vector<uint32_t> words = kModule;
  words.insert(words.end(), {op(3, 22), 9u, 32u});  // %9 = OpTypeFloat 32, again
  ReflectedModule module;
  std::string error;
  EXPECT_FALSE(hal::vulkan::reflect_spirv(words.data(), words.size(), &module, &error));
  EXPECT_NE(error.find("%9"), std::string::npos) << error;
}

TEST(CooperativeMatrixTypes, CheckedAgainstTheDeviceShapes) {
  hal::vulkan::ReflectOptions given;
  given.specializations.push_back({7, 16});
  const ReflectedModule fits = reflect(given);
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(fits, {kShape16}), HAL_SUCCESS);

  // 8 rows: no configuration has M = 8; the message names the matrix and the device's shapes.
  const ReflectedModule eight_rows = reflect({});
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(eight_rows, {kShape16}),
            HAL_ERROR_NOT_SUPPORTED);
  const std::string message = hal::pending_error();
  EXPECT_NE(message.find("8x16 float16 cooperative matrix A at subgroup scope"), std::string::npos)
      << message;
  EXPECT_NE(message.find("16x16x16 float16*float16+float32=float32 (subgroup)"), std::string::npos)
      << message;
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(eight_rows, {}), HAL_ERROR_NOT_SUPPORTED);

  // A device whose only configuration is M = 8 takes it.
  CooperativeMatrixShape m8 = kShape16;
  m8.m = 8;
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(eight_rows, {m8}), HAL_SUCCESS);
  // The same shape at workgroup scope does not match.
  m8.scope = 2;
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(eight_rows, {m8}), HAL_ERROR_NOT_SUPPORTED);
  // Nor do fp32 A and B (the module's 16x16 fp16 A is then none of the configuration's
  // matrices; with fp32 A alone it would be shaped and typed as B, which is valid).
  CooperativeMatrixShape fp32_ab = kShape16;
  fp32_ab.a = 1;
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(fits, {fp32_ab}), HAL_SUCCESS);
  fp32_ab.b = 1;
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(fits, {fp32_ab}), HAL_ERROR_NOT_SUPPORTED);

  // Decided at launch: not checkable, refused with the way out.
  hal::vulkan::ReflectOptions at_launch;
  at_launch.launch_spec_id = 7;
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(reflect(at_launch), {kShape16}),
            HAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(hal::pending_error().find("at load"), std::string::npos) << hal::pending_error();
}

ReflectedCooperativeMatrix matrix(ReflectedCooperativeMatrix::Kind kind, uint32_t width,
                                  uint32_t rows, uint32_t columns, uint32_t use) {
  ReflectedCooperativeMatrix m;
  m.kind = kind;
  m.width = width;
  m.scope = 3;
  m.rows = rows;
  m.columns = columns;
  m.use = use;
  m.known = true;
  return m;
}

// M, N and K all differ, so a check that mixed up rows and columns, or M, N and K, fails here.
TEST(CooperativeMatrixTypes, EachMatrixHasItsOwnDimensions) {
  using Kind = ReflectedCooperativeMatrix::Kind;
  // 16x8x32 int8*int8+int32=int32 at subgroup scope.
  const CooperativeMatrixShape int8{16, 8, 32, 3, 3, 5, 5, 3, false};
  ReflectedModule module;
  module.cooperative_matrices = {matrix(Kind::kSignedInt, 8, 16, 32, 0),   // A: M x K
                                 matrix(Kind::kSignedInt, 8, 32, 8, 1),    // B: K x N
                                 matrix(Kind::kSignedInt, 32, 16, 8, 2)};  // C: M x N
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(module, {int8}), HAL_SUCCESS)
      << hal::pending_error();
  for (const ReflectedCooperativeMatrix& wrong :
       {matrix(Kind::kSignedInt, 8, 32, 16, 0),      // A transposed
        matrix(Kind::kSignedInt, 8, 8, 32, 1),       // B transposed
        matrix(Kind::kSignedInt, 32, 8, 16, 2),      // C transposed
        matrix(Kind::kUnsignedInt, 8, 16, 32, 0),    // unsigned A
        matrix(Kind::kSignedInt, 16, 16, 32, 0)}) {  // 16-bit A
    ReflectedModule one;
    one.cooperative_matrices = {wrong};
    EXPECT_EQ(hal::vulkan::check_cooperative_matrices(one, {int8}), HAL_ERROR_NOT_SUPPORTED)
        << wrong.rows << "x" << wrong.columns << " use " << wrong.use;
  }
}

// Vulkan's rule for a type is that it is one of a configuration's matrices, whatever its Use:
// an accumulator shaped and typed like A is valid, and so is one of the result type.
TEST(CooperativeMatrixTypes, UseDoesNotNarrowTheShape) {
  using Kind = ReflectedCooperativeMatrix::Kind;
  // 8x16x16 float16*float16+float32=float16.
  const CooperativeMatrixShape shape{8, 16, 16, 0, 0, 1, 0, 3, false};
  ReflectedModule module;
  module.cooperative_matrices = {matrix(Kind::kFloat, 16, 8, 16, 2),    // like A (and result)
                                 matrix(Kind::kFloat, 32, 8, 16, 2),    // C
                                 matrix(Kind::kFloat, 16, 16, 16, 0)};  // like B, used as A
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(module, {shape}), HAL_SUCCESS)
      << hal::pending_error();
}

TEST(CooperativeMatrixTypes, BlocksRunWholeSubgroups) {
  const uint32_t good[3] = {64, 2, 1};
  const uint32_t bad[3] = {48, 1, 1};
  EXPECT_EQ(hal::vulkan::check_cooperative_matrix_block("k", good, 32), HAL_SUCCESS);
  EXPECT_EQ(hal::vulkan::check_cooperative_matrix_block("k", bad, 32), HAL_ERROR_INVALID_ARGUMENT);
  const std::string message = hal::pending_error();
  EXPECT_NE(message.find("'k'"), std::string::npos) << message;
  EXPECT_NE(message.find("(32)"), std::string::npos) << message;
  EXPECT_NE(message.find("{48,1,1}"), std::string::npos) << message;
  EXPECT_EQ(hal::vulkan::check_cooperative_matrix_block("k", bad, 16), HAL_SUCCESS);
}

TEST(CooperativeMatrixTypes, ModulesWithNoneNeedNoShapes) {
  const std::vector<uint32_t> words(kModule.begin(), kModule.begin() + 16);  // up to the types
  ReflectedModule module;
  std::string error;
  ASSERT_TRUE(hal::vulkan::reflect_spirv(words.data(), words.size(), &module, &error)) << error;
  EXPECT_TRUE(module.cooperative_matrices.empty());
  EXPECT_EQ(hal::vulkan::check_cooperative_matrices(module, {}), HAL_SUCCESS);
}

std::vector<uint32_t> read_words(const std::string& name) {
  std::ifstream in(std::string(HAL_VK_SHADER_DIR) + "/" + name + ".spv", std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

// The SPIR-V tools hal is built with predate SPV_KHR_cooperative_matrix: their validator cannot
// read such a module. hal finds that capability and lets the device's features decide.
TEST(CooperativeMatrixTypes, CapabilitiesNewerThanTheValidatorAreFound) {
  const std::vector<uint32_t> glslang_module = read_words("coopmat_matmul");
  ASSERT_GT(glslang_module.size(), 5u);
  const std::vector<uint32_t> unknown = hal::vulkan::capabilities_unknown_to_validator(
      SPV_ENV_VULKAN_1_2, glslang_module.data(), glslang_module.size());
  // Which ones depends on the tools' age; CooperativeMatrixKHR is among them up to SPIRV-Tools
  // 2023.2, and Shader, Float16 and the memory model never are.
  for (uint32_t capability : unknown) {
    EXPECT_TRUE(capability == 6022u) << capability;
  }
  // They are found exactly when the validator refuses the module.
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_2);
  spv_const_binary_t binary{glslang_module.data(), glslang_module.size()};
  const bool validates = spvValidate(context, &binary, nullptr) == SPV_SUCCESS;
  spvContextDestroy(context);
  EXPECT_EQ(unknown.empty(), validates);
  EXPECT_EQ(hal::vulkan::check_unvalidated_capabilities(unknown), HAL_SUCCESS);

  // Shader, GroupNonUniformBallot, VulkanMemoryModel: older than the tools, whatever the module's
  // own version word says.
  std::vector<uint32_t> known_only(kModule.begin(), kModule.begin() + 7);
  known_only.insert(known_only.end(), {op(2, 17), 64u, op(2, 17), 5345u});
  known_only[1] = 0x00090000u;
  EXPECT_TRUE(hal::vulkan::capabilities_unknown_to_validator(SPV_ENV_VULKAN_1_2, known_only.data(),
                                                             known_only.size())
                  .empty());
  std::vector<uint32_t> bogus = kModule;
  bogus[8] = 0x7FFF0u;  // no capability has this number
  const std::vector<uint32_t> unknown_bogus = hal::vulkan::capabilities_unknown_to_validator(
      SPV_ENV_VULKAN_1_2, bogus.data(), bogus.size());
  ASSERT_EQ(unknown_bogus.size(), 1u);
  EXPECT_EQ(unknown_bogus[0], 0x7FFF0u);
  EXPECT_EQ(hal::vulkan::check_unvalidated_capabilities(unknown_bogus), HAL_ERROR_INVALID_IR);
  EXPECT_NE(hal::pending_error().find("524272"), std::string::npos) << hal::pending_error();
  // Skipping the validator is decided capability by capability: one whose feature hal checks
  // (VulkanMemoryModel) is not thereby allowed through unvalidated.
  EXPECT_EQ(hal::vulkan::check_unvalidated_capabilities({5345u}), HAL_ERROR_INVALID_IR);
}

}  // namespace
