// VK_KHR_cooperative_matrix: which matrix shapes and component types a device multiplies in its
// matrix units, and the check of a module's cooperative matrix types against them.
//
// The extension lets a subgroup hold an M×K, K×N or M×N matrix (OpTypeCooperativeMatrixKHR) and
// multiply-add them. A device supports a short list of configurations, and a shader that uses
// any other is undefined behaviour in Vulkan, not an error: so hal checks every cooperative
// matrix type of a module against the list before the driver sees the module, and refuses one
// the device lacks with the configurations it has.
//
// The Vulkan headers hal builds with may predate the extension (header 1.3.255), so the
// structures used here are declared in this file under hal's own names, with the registry's
// values and layouts; they do not depend on the header version.
//
// Thread-safety: pure functions.
#pragma once

#include "hal/hal.h"
#include "vulkan/spirv_reflect.h"
#include "vulkan/vk.h"

#include <string>
#include <vector>

namespace hal::vulkan {

namespace khr_cooperative_matrix {

constexpr const char* kExtensionName = "VK_KHR_cooperative_matrix";
constexpr auto kFeaturesType = static_cast<VkStructureType>(1000506000);
constexpr auto kConfigurationType = static_cast<VkStructureType>(1000506001);
constexpr auto kPropertiesType = static_cast<VkStructureType>(1000506002);

// VkPhysicalDeviceCooperativeMatrixFeaturesKHR
struct Features {
  VkStructureType sType = kFeaturesType;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};

// VkPhysicalDeviceCooperativeMatrixPropertiesKHR
struct Properties {
  VkStructureType sType = kPropertiesType;
  void* pNext = nullptr;
  VkShaderStageFlags cooperativeMatrixSupportedStages = 0;
};

// VkCooperativeMatrixPropertiesKHR: one supported configuration. The component types are
// VkComponentTypeKHR values (ComponentType below), the scope a VkScopeKHR, which numbers scopes
// as SPIR-V does (3 subgroup).
struct Configuration {
  VkStructureType sType = kConfigurationType;
  void* pNext = nullptr;
  uint32_t MSize = 0;
  uint32_t NSize = 0;
  uint32_t KSize = 0;
  uint32_t AType = 0;
  uint32_t BType = 0;
  uint32_t CType = 0;
  uint32_t ResultType = 0;
  VkBool32 saturatingAccumulation = VK_FALSE;
  uint32_t scope = 0;
};

// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR
using GetConfigurations = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, Configuration*);

// VkComponentTypeKHR values.
enum ComponentType : uint32_t {
  kFloat16 = 0,
  kFloat32 = 1,
  kFloat64 = 2,
  kSInt8 = 3,
  kSInt16 = 4,
  kSInt32 = 5,
  kSInt64 = 6,
  kUInt8 = 7,
  kUInt16 = 8,
  kUInt32 = 9,
  kUInt64 = 10,
};

}  // namespace khr_cooperative_matrix

// One configuration the device supports: D (M×N, |result|) = A (M×K, |a|) · B (K×N, |b|) + C
// (M×N, |c|), component types as VkComponentTypeKHR values.
struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t a = 0, b = 0, c = 0, result = 0;
  uint32_t scope = 0;
  bool saturating = false;
};

// The device's configurations in compute shaders; empty when it has no VK_KHR_cooperative_matrix,
// its cooperativeMatrix feature is off, or compute shaders cannot use it. |get| is the
// instance's vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR.
std::vector<CooperativeMatrixShape> query_cooperative_matrix_shapes(
    VkPhysicalDevice physical, khr_cooperative_matrix::GetConfigurations get);

// "16x16x16 float16*float16+float32=float32 (subgroup)", for messages and logs.
std::string describe(const CooperativeMatrixShape& shape);

// Checks each cooperative matrix type of |module| against |shapes|, as Vulkan defines a valid
// type: one of the matrices of some configuration at its scope, A (M×K, component type A),
// B (K×N, B), C or the result (M×N, C or the result type), whatever its Use. Not checked: that
// the operands of each multiply-add come from one configuration. Returns:
//   HAL_SUCCESS              every type matches a configuration (or the module has none);
//   HAL_ERROR_NOT_SUPPORTED  one does not (the message names it and lists the configurations),
//                            or its shape depends on a value decided at each launch.
hal_status check_cooperative_matrices(const ReflectedModule& module,
                                      const std::vector<CooperativeMatrixShape>& shapes);

// A kernel with subgroup-scope cooperative matrices must run whole subgroups: Vulkan requires
// its workgroup's x size to be a multiple of the device's subgroup size. Returns HAL_SUCCESS, or
// HAL_ERROR_INVALID_ARGUMENT naming |entry|, the block and the subgroup size.
hal_status check_cooperative_matrix_block(const std::string& entry, const uint32_t block[3],
                                          uint32_t subgroup_size);

}  // namespace hal::vulkan
