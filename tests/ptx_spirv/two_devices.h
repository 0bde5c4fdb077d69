// The fixture of the translator's run-time tests: the first Vulkan device that takes PTX (the
// translation under test) and the CPU PTX device as cuda:0 (the reference, an interpreter that
// follows the PTX as written), each with a stream. Without either, the test skips naming it.
#pragma once

#include <gtest/gtest.h>
#include <hal/hal.h>

namespace ptx_spirv_testing {

struct Device {
  hal_device device = nullptr;
  hal_stream stream = nullptr;
};

class TwoDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    hal_device_info info{};
    info.struct_size = sizeof info;
    if (hal_device_find("vulkan:0", &vulkan_.device) != HAL_SUCCESS) {
      GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
    }
    ASSERT_EQ(hal_device_get_info(vulkan_.device, &info), HAL_SUCCESS);
    if ((info.ir_mask & HAL_IR_PTX) == 0) GTEST_SKIP() << info.name << " does not take PTX";
    if (hal_device_find("cuda:0", &cpu_.device) != HAL_SUCCESS) {
      GTEST_SKIP() << "no CUDA device (set HAL_CUDA_LIBRARY to the CPU PTX driver): "
                   << hal_last_error();
    }
    for (Device* d : {&vulkan_, &cpu_}) {
      ASSERT_EQ(hal_stream_create(d->device, &d->stream), HAL_SUCCESS) << hal_last_error();
    }
  }
  void TearDown() override {
    for (Device* d : {&vulkan_, &cpu_}) {
      if (d->stream != nullptr) hal_stream_destroy(d->stream);
    }
  }

  Device vulkan_, cpu_;
};

}  // namespace ptx_spirv_testing
