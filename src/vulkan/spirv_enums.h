// SPIR-V opcodes and enumerants hal reads and writes, from the SPIR-V specification: one
// table for the reflection parser (spirv_parser.h) and the bounds-check rewrite
// (spirv_bounds_check.cpp).
#pragma once

#include <cstdint>

namespace hal::vulkan::spirv {

enum Op : uint32_t {
  kOpName = 5,
  kOpLine = 8,
  kOpExtension = 10,
  kOpMemoryModel = 14,
  kOpEntryPoint = 15,
  kOpExecutionMode = 16,
  kOpCapability = 17,
  kOpTypeVoid = 19,
  kOpTypeBool = 20,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeMatrix = 24,
  kOpTypeArray = 28,
  kOpTypeRuntimeArray = 29,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstantTrue = 41,
  kOpConstantFalse = 42,
  kOpConstant = 43,
  kOpConstantComposite = 44,
  kOpConstantNull = 46,
  kOpSpecConstantTrue = 48,
  kOpSpecConstantFalse = 49,
  kOpSpecConstant = 50,
  kOpSpecConstantComposite = 51,
  kOpSpecConstantOp = 52,
  kOpFunction = 54,
  kOpFunctionEnd = 56,
  kOpVariable = 59,
  kOpLoad = 61,
  kOpStore = 62,
  kOpAccessChain = 65,
  kOpInBoundsAccessChain = 66,
  kOpPtrAccessChain = 67,
  kOpArrayLength = 68,
  kOpInBoundsPtrAccessChain = 70,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
  kOpDecorationGroup = 73,
  kOpGroupDecorate = 74,
  kOpGroupMemberDecorate = 75,
  kOpCompositeExtract = 81,
  kOpCopyObject = 83,
  kOpUConvert = 113,
  kOpSConvert = 114,
  kOpConvertPtrToU = 117,
  kOpConvertUToPtr = 120,
  kOpBitcast = 124,
  kOpIAdd = 128,
  kOpISub = 130,
  kOpIEqual = 170,
  kOpULessThan = 176,
  kOpAtomicLoad = 227,
  kOpAtomicStore = 228,
  kOpAtomicExchange = 229,
  kOpAtomicIAdd = 234,
  kOpAtomicXor = 242,
  kOpPhi = 245,
  kOpLoopMerge = 246,
  kOpSelectionMerge = 247,
  kOpLabel = 248,
  kOpBranch = 249,
  kOpBranchConditional = 250,
  kOpNoLine = 317,
  kOpExecutionModeId = 331,
  kOpDecorateId = 332,
  kOpAtomicFMinEXT = 5614,
  kOpAtomicFMaxEXT = 5615,
  kOpDecorateString = 5632,
  kOpMemberDecorateString = 5633,
  kOpAtomicFAddEXT = 6035,
  kOpTypeCooperativeMatrixKHR = 4456,
};
// The OpSpecConstantOp operations evaluated here (the integer and boolean ones a shader may use;
// glslc emits them for array sizes and arithmetic on constants).
enum SpecOp : uint32_t {
  kUConvert = 113,
  kSConvert = 114,
  kSNegate = 126,
  kIAdd = 128,
  kISub = 130,
  kIMul = 132,
  kUDiv = 134,
  kSDiv = 135,
  kUMod = 137,
  kSRem = 138,
  kSMod = 139,
  kLogicalEqual = 164,
  kLogicalNotEqual = 165,
  kLogicalOr = 166,
  kLogicalAnd = 167,
  kLogicalNot = 168,
  kSelect = 169,
  kIEqual = 170,
  kINotEqual = 171,
  kUGreaterThan = 172,
  kSGreaterThan = 173,
  kUGreaterThanEqual = 174,
  kSGreaterThanEqual = 175,
  kULessThan = 176,
  kSLessThan = 177,
  kULessThanEqual = 178,
  kSLessThanEqual = 179,
  kShiftRightLogical = 194,
  kShiftRightArithmetic = 195,
  kShiftLeftLogical = 196,
  kBitwiseOr = 197,
  kBitwiseXor = 198,
  kBitwiseAnd = 199,
  kNot = 200,
};
constexpr uint32_t kMagic = 0x07230203u;
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kModeLocalSizeId = 38;
constexpr uint32_t kDecorationSpecId = 1;
constexpr uint32_t kDecorationBlock = 2;
constexpr uint32_t kDecorationBufferBlock = 3;
constexpr uint32_t kDecorationBuiltIn = 11;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kDecorationOffset = 35;
constexpr uint32_t kDecorationAligned = 44;
constexpr uint32_t kBuiltInWorkgroupSize = 25;
constexpr uint32_t kCapabilityPhysicalStorageBufferAddresses = 5347;
constexpr uint32_t kStorageUniformConstant = 0;
constexpr uint32_t kStorageUniform = 2;
constexpr uint32_t kStorageWorkgroup = 4;
constexpr uint32_t kStoragePushConstant = 9;
constexpr uint32_t kStorageStorageBuffer = 12;
constexpr uint32_t kStoragePhysicalStorageBuffer = 5349;
constexpr uint32_t kMemoryAccessAligned = 0x2;
constexpr uint32_t kVersion14 = 0x00010400u;
constexpr uint32_t kDecorationArrayStride = 6;
constexpr uint32_t kDecorationRowMajor = 4;
constexpr uint32_t kDecorationMatrixStride = 7;
constexpr uint32_t kCapabilityFloat16 = 9;
constexpr uint32_t kCapabilityInt16 = 22;
constexpr uint32_t kCapabilityInt8 = 39;
constexpr uint32_t kMemoryModelVulkan = 3;
constexpr uint32_t kScopeDevice = 1;
constexpr uint32_t kScopeSubgroup = 3;
constexpr uint32_t kScopeQueueFamily = 5;
constexpr uint32_t kVersion13 = 0x00010300u;
constexpr const char* kStorageBufferExtension = "SPV_KHR_storage_buffer_storage_class";

}  // namespace hal::vulkan::spirv
