// Helpers for the Vulkan backend's tests: status assertions that show hal_last_error(), shader
// loading, and a fixture on the first Vulkan device that fails any test during which the
// validation layer reported an error.
#pragma once

#include "common/driver_export.h"
#include "common/handles.h"
#include "common/objects.h"
#include "vulkan/device.h"
#include "vulkan/stream.h"
#include "vulkan/stream_core.h"
#include "vulkan/validation.h"

#include "hal_assertions.h"

#include <hal/hal.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace hal_vk_test {

using hal_testing::LastErrorHas;

// The bytes of a test shader built into HAL_VK_SHADER_DIR.
inline std::vector<uint8_t> read_shader(const std::string& name) {
  std::ifstream in(std::string(HAL_VK_SHADER_DIR) + "/" + name + ".spv", std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::vector<uint32_t> read_words(const std::string& name) {
  std::vector<uint8_t> bytes = read_shader(name);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

// The backend's own device object behind |device|, for tests of internals.
inline hal::vulkan::VulkanDevice* backend_device(hal_device device) {
  auto object = hal::find_as<hal::DeviceObject>(device, hal::HandleKind::kDevice, "device");
  if (!object) return nullptr;
  return dynamic_cast<hal::vulkan::VulkanDevice*>(hal::device_of(object->impl));
}

// The backend's batching core behind |stream|, for tests of when work is submitted.
inline std::shared_ptr<hal::vulkan::StreamCore> backend_stream_core(hal_stream stream) {
  auto object = hal::find_as<hal::StreamObject>(stream, hal::HandleKind::kStream, "stream");
  if (!object) return nullptr;
  auto* vulkan_stream = dynamic_cast<hal::vulkan::VulkanStream*>(hal::stream_of(object->impl));
  return vulkan_stream != nullptr ? vulkan_stream->core() : nullptr;
}

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(hal_device_find("vulkan:0", &device_));
    info_.struct_size = sizeof(info_);
    ASSERT_OK(hal_device_get_info(device_, &info_));
    ASSERT_OK(hal_stream_create(device_, &stream_));
  }

  void TearDown() override {
    for (hal_module module : modules_) EXPECT_OK(hal_module_unload(module));
    for (hal_deviceptr ptr : allocations_) EXPECT_OK(hal_mem_free(device_, ptr));
    if (stream_ != nullptr) {
      EXPECT_OK(hal_stream_destroy(stream_));
    }
    EXPECT_EQ(hal::vulkan::validation_error_count(), 0u)
        << "the Vulkan validation layer reported errors (see the log above)";
  }

  hal_module load(const std::string& name, const hal_module_options* options = nullptr) {
    std::vector<uint8_t> blob = read_shader(name);
    EXPECT_FALSE(blob.empty()) << "missing test shader " << name;
    hal_module module = nullptr;
    hal_status status = hal_module_load(device_, blob.data(), blob.size(), options, &module);
    EXPECT_EQ(status, HAL_SUCCESS) << name << ": " << hal_last_error();
    if (module != nullptr) modules_.push_back(module);
    return module;
  }

  hal_function function(hal_module module, const char* name) {
    hal_function fn = nullptr;
    EXPECT_OK(hal_module_get_function(module, name, &fn));
    return fn;
  }

  hal_deviceptr alloc(size_t size) {
    hal_deviceptr ptr = 0;
    EXPECT_OK(hal_mem_alloc(device_, size, &ptr));
    if (ptr != 0) allocations_.push_back(ptr);
    return ptr;
  }

  template <typename T>
  hal_deviceptr upload(const std::vector<T>& values) {
    hal_deviceptr ptr = alloc(values.size() * sizeof(T));
    EXPECT_OK(hal_memcpy_htod(stream_, ptr, values.data(), values.size() * sizeof(T)));
    return ptr;
  }

  template <typename T>
  std::vector<T> download(hal_deviceptr ptr, size_t count) {
    std::vector<T> values(count);
    EXPECT_OK(hal_memcpy_dtoh(stream_, values.data(), ptr, count * sizeof(T)));
    EXPECT_OK(hal_stream_synchronize(stream_));
    return values;
  }

  hal_device device_ = nullptr;
  hal_device_info info_{};
  hal_stream stream_ = nullptr;
  std::vector<hal_module> modules_;
  std::vector<hal_deviceptr> allocations_;
};

}  // namespace hal_vk_test
