// Area DeviceInfo: the device's limits are present and consistent, it is found again through its
// selectors, and every IR it claims to accept really loads (while the others are refused).
#include <cstring>
#include <string>

#include "cts.h"

namespace cts {
namespace {

class DeviceInfo : public DeviceTest {};

bool power_of_two(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

TEST_P(DeviceInfo, LimitsPresentAndConsistent) {
  const hal_device_info& i = info();
  EXPECT_NE(std::string(i.name), "") << "the device has no name";
  EXPECT_NE(std::string(i.driver_name), "") << "the driver has no name";
  EXPECT_NE(i.ir_mask, 0u) << "the device accepts no IR";
  EXPECT_EQ(i.ir_mask & ~uint32_t{HAL_IR_PTX | HAL_IR_SPIRV | HAL_IR_CUBIN | HAL_IR_FATBIN |
                                  HAL_IR_BUILTIN},
            0u)
      << "ir_mask has bits that are no hal_ir";
  EXPECT_GT(i.total_memory, 0u);
  EXPECT_GT(i.max_allocation_size, 0u);
  if (!i.unified_memory) {
    EXPECT_LE(i.max_allocation_size, i.total_memory)
        << "one allocation cannot be larger than the device's memory";
  }
  EXPECT_GT(i.max_threads_per_block, 0u);
  uint64_t block_volume = 1;
  for (int d = 0; d < 3; ++d) {
    EXPECT_GT(i.max_block_dim[d], 0u) << "max_block_dim[" << d << "]";
    EXPECT_LE(i.max_block_dim[d], i.max_threads_per_block) << "max_block_dim[" << d << "]";
    EXPECT_GT(i.max_grid_dim[d], 0u) << "max_grid_dim[" << d << "]";
    block_volume *= i.max_block_dim[d];
  }
  EXPECT_GE(block_volume, i.max_threads_per_block);
  if ((i.ir_mask & (HAL_IR_PTX | HAL_IR_SPIRV)) != 0) {
    // Kernels written in an IR may use it. A device of built-in kernels only need not have any.
    EXPECT_GE(i.max_shared_memory_per_block, 16384u)
        << "both CUDA and Vulkan promise at least 16 KiB of shared memory per block";
  }
  EXPECT_TRUE(power_of_two(i.subgroup_size)) << "subgroup_size " << i.subgroup_size;
  EXPECT_LE(i.subgroup_size, i.max_threads_per_block);
  EXPECT_TRUE(power_of_two(i.pointer_alignment)) << "pointer_alignment " << i.pointer_alignment;
  EXPECT_LE(i.pointer_alignment, 256u) << "allocations are aligned to 256 bytes, so every base "
                                          "address must satisfy pointer_alignment";
  switch (i.backend) {
    case HAL_BACKEND_CUDA:
      EXPECT_NE(i.ir_mask & HAL_IR_PTX, 0u) << "a CUDA device accepts PTX";
      EXPECT_GT(i.compute_capability_major, 0u);
      EXPECT_EQ(i.subgroup_size, 32u) << "the warp size";
      if (!i.is_cpu) {
        EXPECT_EQ(i.vendor_id, 0x10deu) << "NVIDIA's PCI vendor id";
      }
      EXPECT_EQ(i.api_version, i.driver_version) << "api_version is the CUDA version";
      EXPECT_NE(i.driver_info[0], '\0') << "driver_info names the CUDA version";
      break;
    case HAL_BACKEND_VULKAN:
      EXPECT_NE(i.ir_mask & HAL_IR_SPIRV, 0u) << "a Vulkan device accepts SPIR-V";
      EXPECT_EQ(i.compute_capability_major, 0u) << "compute capability is CUDA only";
      EXPECT_GE(i.max_threads_per_block, 128u) << "Vulkan promises 128 invocations";
      // hal needs Vulkan 1.2: VK_API_VERSION_MAJOR/MINOR of the device's apiVersion.
      EXPECT_TRUE(((i.api_version >> 22) & 0x7F) > 1 ||
                  (((i.api_version >> 22) & 0x7F) == 1 && ((i.api_version >> 12) & 0x3FF) >= 2))
          << "api_version 0x" << std::hex << i.api_version << " is below Vulkan 1.2";
      EXPECT_NE(i.driver_id, 0u) << "a Vulkan 1.2 driver reports its VkDriverId";
      break;
    default:
      break;
  }
  if (i.is_cpu) {
    EXPECT_TRUE(i.unified_memory) << "a CPU device's memory is host memory";
  }
}

TEST_P(DeviceInfo, FoundAgainBySelector) {
  hal_device again = nullptr;
  CTS_ASSERT_OK(hal_device_get(info().global_index, &again));
  EXPECT_EQ(again, device()) << "hal_device_get(global_index)";
  // The backend's own name: "cuda", "vulkan", or a driver module's ("skeleton:0").
  const std::string selector =
      std::string(info().backend_name) + ":" + std::to_string(info().backend_index);
  again = nullptr;
  CTS_ASSERT_OK(hal_device_find(selector.c_str(), &again));
  EXPECT_EQ(again, device()) << "hal_device_find(\"" << selector << "\")";
  again = nullptr;
  const std::string global = std::to_string(info().global_index);
  CTS_ASSERT_OK(hal_device_find(global.c_str(), &again));
  EXPECT_EQ(again, device()) << "hal_device_find(\"" << global << "\")";
  hal_device_info second{};
  second.struct_size = sizeof second;
  CTS_ASSERT_OK(hal_device_get_info(device(), &second));
  EXPECT_EQ(std::string(second.name), std::string(info().name)) << "the info is stable";
  EXPECT_EQ(second.total_memory, info().total_memory);
}

// The UUID is the device's identity for every program that keeps per-device state (caches, tuning
// databases, device selection across runs): it must not be all zeros, and no other device in the
// process, of any backend, may report the same one. A driver copied from the skeleton without
// its own UUID shares the skeleton's.
TEST_P(DeviceInfo, UuidIdentifiesTheDevice) {
  const uint8_t zero[16] = {};
  EXPECT_NE(std::memcmp(info().uuid, zero, sizeof zero), 0) << "the device's UUID is all zeros";
  uint32_t count = 0;
  CTS_ASSERT_OK(hal_device_count(&count));
  for (uint32_t i = 0; i < count; ++i) {
    if (i == info().global_index) continue;
    hal_device other = nullptr;
    CTS_ASSERT_OK(hal_device_get(i, &other));
    hal_device_info o{};
    o.struct_size = sizeof o;
    CTS_ASSERT_OK(hal_device_get_info(other, &o));
    EXPECT_NE(std::memcmp(info().uuid, o.uuid, sizeof o.uuid), 0)
        << "device " << o.backend_name << ":" << o.backend_index << " (" << o.name
        << ") reports the same UUID: give each device a UUID of its own (a driver made from the "
           "skeleton must not keep the skeleton's)";
  }
}

TEST_P(DeviceInfo, StructSizeChecked) {
  hal_device_info small{};
  small.struct_size = 4;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_device_get_info",
                    hal_device_get_info(device(), &small));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_device_get_info",
                    hal_device_get_info(device(), nullptr));
  EXPECT_EQ(hal_version(), uint32_t{HAL_VERSION}) << "the library and the header disagree";
}

// Every IR in ir_mask loads a real module; every other IR the pack has is refused as
// HAL_ERROR_NOT_SUPPORTED. A device of built-in kernels loads at least one of the pack's.
TEST_P(DeviceInfo, AcceptedIrsLoad) {
  const std::pair<hal_ir, const char*> pack[] = {
      {HAL_IR_PTX, "PTX"}, {HAL_IR_SPIRV, "SPIR-V"}, {HAL_IR_BUILTIN, "built-in kernels"}};
  for (const auto& [ir, name] : pack) {
    SCOPED_TRACE(name);
    if (ir == HAL_IR_BUILTIN && takes(ir)) {
      // Its driver chooses which of the pack's kernels it brings; the others are NOT_FOUND.
      int loaded = 0;
      for (uint32_t k = 0; k < hal_kernels_count() && loaded == 0; ++k) {
        const hal_kernel_blob* blob = hal_kernels_find(hal_kernels_get(k)->name, ir);
        ASSERT_NE(blob, nullptr);
        hal_module module = nullptr;
        const hal_status s = hal_module_load(device(), blob->data, blob->size, nullptr, &module);
        if (s == HAL_ERROR_NOT_FOUND) continue;
        ASSERT_EQ(s, HAL_SUCCESS) << blob->entry_point << ": " << describe(s);
        hal_function f = nullptr;
        CTS_EXPECT_OK(hal_module_get_function(module, blob->entry_point, &f));
        CTS_EXPECT_OK(hal_module_unload(module));
        ++loaded;
      }
      EXPECT_GT(loaded, 0) << "the device claims built-in kernels, but its driver has none of "
                              "the kernel pack's";
      continue;
    }
    const hal_kernel_blob* blob = hal_kernels_find("fill_f32", ir);
    ASSERT_NE(blob, nullptr);
    hal_module module = nullptr;
    const hal_status s = hal_module_load(device(), blob->data, blob->size, nullptr, &module);
    if (takes(ir)) {
      ASSERT_EQ(s, HAL_SUCCESS) << "the device claims " << name << ": " << describe(s);
      hal_function f = nullptr;
      CTS_EXPECT_OK(hal_module_get_function(module, "fill_f32", &f));
      CTS_EXPECT_OK(hal_module_unload(module));
    } else {
      EXPECT_EQ(s, HAL_ERROR_NOT_SUPPORTED)
          << "the device does not claim " << name << ": " << describe(s);
      if (s == HAL_SUCCESS) hal_module_unload(module);
    }
  }
}

TEST_P(DeviceInfo, BinaryIrsClaimed) {
  if ((info().ir_mask & (HAL_IR_CUBIN | HAL_IR_FATBIN)) == 0) {
    GTEST_SKIP() << "The device does not accept cubin or fatbin, so there is nothing to check.";
  }
  GTEST_SKIP() << "The device accepts cubin or fatbin, but the kernel pack ships PTX and SPIR-V "
                  "only; load a binary built for this device by hand to check it.";
}

INSTANTIATE_TEST_SUITE_P(, DeviceInfo, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
