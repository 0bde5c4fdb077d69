// The misuse catalogue's cross-device cases: objects of one device handed to calls on another.
// Runs with two devices, the Vulkan device and the CUDA test double (a fake device that moves
// bytes). After each case both devices still work.
#include "misuse_util.h"
#include "vulkan/validation.h"

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

using hal_misuse::Case;
using hal_misuse::DeviceStillWorks;
using hal_misuse::MessageNames;

constexpr size_t kBytes = 1024;

// One stream, event and buffer on each device.
struct Pair {
  hal_device vk = nullptr, cu = nullptr;
  hal_stream vk_stream = nullptr, cu_stream = nullptr;
  hal_event vk_event = nullptr, cu_event = nullptr;
  hal_deviceptr vk_buf = 0, cu_buf = 0;
  hal_module vk_module = nullptr;
  hal_function vk_fn = nullptr;
  std::vector<uint8_t> host = std::vector<uint8_t>(kBytes);
};

const std::vector<Case<Pair>>& cases() {
  static const std::vector<Case<Pair>> table = {
      {"mem_free_other_device", HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", "belongs to device",
       [](Pair& p) { return hal_mem_free(p.vk, p.cu_buf); }},
      {"host_free_other_device", HAL_ERROR_INVALID_ARGUMENT, "hal_host_free", "host",
       [](Pair& p) {
         void* host = nullptr;
         EXPECT_EQ(hal_host_alloc(p.cu, 64, &host), HAL_SUCCESS) << hal_last_error();
         hal_status s = hal_host_free(p.vk, host);
         std::string text = hal_last_error();
         EXPECT_EQ(hal_host_free(p.cu, host), HAL_SUCCESS) << hal_last_error();
         EXPECT_EQ(text, hal_last_error());
         return s;
       }},
      {"htod_other_device_pointer", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod", "belongs to device",
       [](Pair& p) { return hal_memcpy_htod(p.vk_stream, p.cu_buf, p.host.data(), 16); }},
      {"dtoh_other_device_pointer", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtoh", "belongs to device",
       [](Pair& p) { return hal_memcpy_dtoh(p.cu_stream, p.host.data(), p.vk_buf, 16); }},
      {"dtod_across_devices", HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtod", "belongs to device",
       [](Pair& p) { return hal_memcpy_dtod(p.vk_stream, p.vk_buf, p.cu_buf, 16); }},
      {"memset_other_device_pointer", HAL_ERROR_OUT_OF_RANGE, "hal_memset_d8", "belongs to device",
       [](Pair& p) { return hal_memset_d8(p.cu_stream, p.vk_buf, 0, 16); }},
      {"event_record_other_device_stream", HAL_ERROR_INVALID_HANDLE, "hal_event_record", "device",
       [](Pair& p) { return hal_event_record(p.cu_event, p.vk_stream); }},
      {"wait_event_recorded_on_other_device", HAL_ERROR_INVALID_HANDLE, "hal_stream_wait_event",
       "device",
       [](Pair& p) {
         EXPECT_EQ(hal_event_record(p.cu_event, p.cu_stream), HAL_SUCCESS) << hal_last_error();
         return hal_stream_wait_event(p.vk_stream, p.cu_event);
       }},
      {"elapsed_across_devices", HAL_ERROR_INVALID_HANDLE, "hal_event_elapsed_ms", "device",
       [](Pair& p) {
         EXPECT_EQ(hal_event_record(p.cu_event, p.cu_stream), HAL_SUCCESS) << hal_last_error();
         EXPECT_EQ(hal_event_record(p.vk_event, p.vk_stream), HAL_SUCCESS) << hal_last_error();
         EXPECT_EQ(hal_event_synchronize(p.cu_event), HAL_SUCCESS) << hal_last_error();
         EXPECT_EQ(hal_event_synchronize(p.vk_event), HAL_SUCCESS) << hal_last_error();
         float ms = 0;
         return hal_event_elapsed_ms(p.vk_event, p.cu_event, &ms);
       }},
      {"launch_function_on_other_device_stream", HAL_ERROR_INVALID_HANDLE, "hal_launch", "device",
       [](Pair& p) {
         uint32_t n = 16;
         void* args[] = {&p.vk_buf, &p.vk_buf, &p.vk_buf, &n};
         const hal_launch_config config = {{1, 1, 1}, {256, 1, 1}, 0};
         return hal_launch(p.cu_stream, p.vk_fn, &config, args);
       }},
      {"launch_other_device_pointer_arg", HAL_ERROR_OUT_OF_RANGE, "hal_launch", "belongs to device",
       [](Pair& p) {
         uint32_t n = 16;
         void* args[] = {&p.vk_buf, &p.cu_buf, &p.vk_buf, &n};
         const hal_launch_config config = {{1, 1, 1}, {256, 1, 1}, 0};
         return hal_launch(p.vk_stream, p.vk_fn, &config, args);
       }},
  };
  return table;
}

class CrossDevice : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    ASSERT_EQ(hal_device_find("vulkan:0", &p_.vk), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_device_find("cuda:0", &p_.cu), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_stream_create(p_.vk, &p_.vk_stream), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_stream_create(p_.cu, &p_.cu_stream), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_event_create(p_.vk, &p_.vk_event), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_event_create(p_.cu, &p_.cu_event), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_mem_alloc(p_.vk, kBytes, &p_.vk_buf), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_mem_alloc(p_.cu, kBytes, &p_.cu_buf), HAL_SUCCESS) << hal_last_error();
    const hal_kernel_blob* blob = hal_kernels_find("vector_add_f32", HAL_IR_SPIRV);
    ASSERT_NE(blob, nullptr);
    ASSERT_EQ(hal_module_load(p_.vk, blob->data, blob->size, nullptr, &p_.vk_module), HAL_SUCCESS)
        << hal_last_error();
    ASSERT_EQ(hal_module_get_function(p_.vk_module, "vector_add_f32", &p_.vk_fn), HAL_SUCCESS);
  }
  void TearDown() override {
    if (p_.vk_module) {
      EXPECT_EQ(hal_module_unload(p_.vk_module), HAL_SUCCESS);
    }
    if (p_.vk_buf) {
      EXPECT_EQ(hal_mem_free(p_.vk, p_.vk_buf), HAL_SUCCESS) << hal_last_error();
    }
    if (p_.cu_buf) {
      EXPECT_EQ(hal_mem_free(p_.cu, p_.cu_buf), HAL_SUCCESS) << hal_last_error();
    }
    if (p_.vk_event) {
      EXPECT_EQ(hal_event_destroy(p_.vk_event), HAL_SUCCESS);
    }
    if (p_.cu_event) {
      EXPECT_EQ(hal_event_destroy(p_.cu_event), HAL_SUCCESS);
    }
    if (p_.vk_stream) {
      EXPECT_EQ(hal_stream_destroy(p_.vk_stream), HAL_SUCCESS);
    }
    if (p_.cu_stream) {
      EXPECT_EQ(hal_stream_destroy(p_.cu_stream), HAL_SUCCESS);
    }
    EXPECT_EQ(hal::vulkan::validation_error_count(), 0u);
  }
  Pair p_;
};

TEST_P(CrossDevice, FailsCleanlyAndBothDevicesStillWork) {
  const Case<Pair>& misuse = cases()[GetParam()];
  const hal_status status = misuse.run(p_);
  EXPECT_EQ(status, misuse.expected)
      << misuse.call << " returned " << hal_status_string(status) << ", expected "
      << hal_status_string(misuse.expected) << "; hal_last_error: " << hal_last_error();
  if (status != HAL_SUCCESS) {
    EXPECT_TRUE(MessageNames(misuse.call, misuse.phrase));
  }
  EXPECT_EQ(hal_stream_synchronize(p_.vk_stream), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(hal_stream_synchronize(p_.cu_stream), HAL_SUCCESS) << hal_last_error();
  EXPECT_TRUE(DeviceStillWorks(p_.vk));
  // The double moves bytes but runs no kernels: check it with a round trip instead.
  std::vector<uint8_t> in(kBytes), out(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i) in[i] = static_cast<uint8_t>(i * 7 + 1);
  EXPECT_EQ(hal_memcpy_htod(p_.cu_stream, p_.cu_buf, in.data(), kBytes), HAL_SUCCESS);
  EXPECT_EQ(hal_memcpy_dtoh(p_.cu_stream, out.data(), p_.cu_buf, kBytes), HAL_SUCCESS);
  EXPECT_EQ(hal_stream_synchronize(p_.cu_stream), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(in, out);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, CrossDevice, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& param_info) {
                           return std::string(cases()[param_info.param].name);
                         });

}  // namespace
