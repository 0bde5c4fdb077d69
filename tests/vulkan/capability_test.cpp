// A module's SPIR-V capabilities are checked against the device's enabled features before any
// driver sees the module.
#include "common/error.h"
#include "vulkan/device.h"
#include "vulkan/module.h"
#include "vulkan/spirv_reflect.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using hal::vulkan::DeviceCaps;

// A minimal module: the header, OpCapability Shader, OpCapability |extra|, OpMemoryModel.
hal::vulkan::ReflectedModule reflect_with_capability(uint32_t extra) {
  const std::vector<uint32_t> words = {
      0x07230203u,      0x00010500u, 0u, 1u, 0u,  // header
      (2u << 16) | 17u, 1u,                       // OpCapability Shader
      (2u << 16) | 17u, extra,                    // OpCapability <extra>
      (3u << 16) | 14u, 0u,          1u,          // OpMemoryModel Logical GLSL450
  };
  hal::vulkan::ReflectedModule module;
  std::string error;
  EXPECT_TRUE(hal::vulkan::reflect_spirv(words.data(), words.size(), &module, &error)) << error;
  return module;
}

TEST(Capabilities, SixteenBitStorageNeedsTheFeature) {
  const auto module = reflect_with_capability(4433);  // StorageBuffer16BitAccess
  DeviceCaps caps;
  EXPECT_EQ(hal::vulkan::check_capabilities(module, caps), HAL_ERROR_NOT_SUPPORTED);
  caps.storage_buffer_16bit = true;
  EXPECT_EQ(hal::vulkan::check_capabilities(module, caps), HAL_SUCCESS);
}

TEST(Capabilities, EachFeatureIsNamed) {
  struct Case {
    uint32_t capability;
    bool DeviceCaps::*feature;
    const char* names;
  } cases[] = {
      {9, &DeviceCaps::shader_float16, "Float16"},
      {10, &DeviceCaps::shader_float64, "shaderFloat64"},
      {11, &DeviceCaps::shader_int64, "shaderInt64"},
      {22, &DeviceCaps::shader_int16, "shaderInt16"},
      {39, &DeviceCaps::shader_int8, "shaderInt8"},
      {4448, &DeviceCaps::storage_buffer_8bit, "storageBuffer8BitAccess"},
      {5347, &DeviceCaps::buffer_device_address, "bufferDeviceAddress"},
      {62, &DeviceCaps::subgroup_vote, "GroupNonUniformVote"},
      {63, &DeviceCaps::subgroup_arithmetic, "subgroup arithmetic"},
      {64, &DeviceCaps::subgroup_ballot, "GroupNonUniformBallot"},
      {65, &DeviceCaps::subgroup_shuffle, "subgroup shuffle"},
      {66, &DeviceCaps::subgroup_shuffle_relative, "GroupNonUniformShuffleRelative"},
      {67, &DeviceCaps::subgroup_clustered, "subgroup clustered"},
      {68, &DeviceCaps::subgroup_quad, "GroupNonUniformQuad"},
      {12, &DeviceCaps::int64_atomics, "shaderBufferInt64Atomics"},
      {4441, &DeviceCaps::variable_pointers_storage_buffer, "variablePointersStorageBuffer"},
      {4442, &DeviceCaps::variable_pointers, "VariablePointers"},
      {6016, &DeviceCaps::integer_dot_product, "DotProductInputAll"},
      {6017, &DeviceCaps::integer_dot_product, "DotProductInput4x8Bit"},
      {6018, &DeviceCaps::integer_dot_product, "shaderIntegerDotProduct"},
      {6019, &DeviceCaps::integer_dot_product, "shaderIntegerDotProduct"},
      {6033, &DeviceCaps::atomic_float32_add, "AtomicFloat32AddEXT"},
      {6034, &DeviceCaps::atomic_float64_add, "float64 atomic add"},
      {6095, &DeviceCaps::atomic_float16_add, "VK_EXT_shader_atomic_float2"},
      {5612, &DeviceCaps::atomic_float32_min_max, "AtomicFloat32MinMaxEXT"},
      {5613, &DeviceCaps::atomic_float64_min_max, "AtomicFloat64MinMaxEXT"},
      {5616, &DeviceCaps::atomic_float16_min_max, "AtomicFloat16MinMaxEXT"},
      {5345, &DeviceCaps::vulkan_memory_model, "vulkanMemoryModel"},
      {5346, &DeviceCaps::vulkan_memory_model_device_scope, "VulkanMemoryModelDeviceScope"},
      {6022, &DeviceCaps::cooperative_matrix, "VK_KHR_cooperative_matrix"},
      {5357, &DeviceCaps::cooperative_matrix_nv, "GL_KHR_cooperative_matrix"},
  };
  for (const Case& c : cases) {
    const auto module = reflect_with_capability(c.capability);
    ASSERT_EQ(module.capabilities.size(), 2u);
    DeviceCaps caps;
    EXPECT_EQ(hal::vulkan::check_capabilities(module, caps), HAL_ERROR_NOT_SUPPORTED)
        << c.capability;
    EXPECT_NE(hal::pending_error().find(c.names), std::string::npos) << hal::pending_error();
    caps.*c.feature = true;
    EXPECT_EQ(hal::vulkan::check_capabilities(module, caps), HAL_SUCCESS) << c.capability;
  }
}

TEST(Capabilities, CapabilitiesWithoutAFeatureNeedNothing) {
  const auto module = reflect_with_capability(1);  // Shader again
  EXPECT_EQ(hal::vulkan::check_capabilities(module, DeviceCaps{}), HAL_SUCCESS);
  // GroupNonUniform (basic subgroup operations): every Vulkan 1.1 device has it in compute.
  EXPECT_EQ(hal::vulkan::check_capabilities(reflect_with_capability(61), DeviceCaps{}),
            HAL_SUCCESS);
}

}  // namespace
