// A runtime with no backend at all: discovery succeeds with zero devices, and every way of
// asking for a device says there is none.
#include "common/registry.h"

#include <hal/hal.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace {

const bool kInstalled = hal::set_drivers_for_testing({});

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

TEST(NoBackends, InitSucceedsWithZeroDevices) {
  ASSERT_TRUE(kInstalled);
  EXPECT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
  uint32_t count = 7;
  EXPECT_EQ(hal_backend_count(&count), HAL_SUCCESS);
  EXPECT_EQ(count, 0u);
  count = 7;
  EXPECT_EQ(hal_device_count(&count), HAL_SUCCESS);
  EXPECT_EQ(count, 0u);
  hal_backend_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(hal_backend_get_info(0, &info), HAL_ERROR_NOT_FOUND);
}

// Run first in its own process (ctest runs every test alone), several threads race to build the
// registry; all see the same result.
TEST(NoBackends, ConcurrentFirstUseAgrees) {
  std::vector<std::thread> threads;
  std::vector<hal_status> statuses(8, HAL_ERROR_INTERNAL);
  std::vector<uint32_t> counts(8, 7);
  for (size_t i = 0; i < 8; ++i) {
    threads.emplace_back(
        [&, i] { statuses[i] = i % 2 ? hal_init() : hal_device_count(&counts[i]); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(statuses[i], HAL_SUCCESS) << i;
    if (i % 2 == 0) {
      EXPECT_EQ(counts[i], 0u) << i;
    }
  }
}

TEST(NoBackends, NoDeviceCanBeFound) {
  hal_device device = nullptr;
  EXPECT_EQ(hal_device_get(0, &device), HAL_ERROR_NOT_FOUND);
  EXPECT_TRUE(starts_with(hal_last_error(), "hal_device_get: ")) << hal_last_error();

  EXPECT_EQ(hal_device_find("default", &device), HAL_ERROR_NOT_FOUND);
  std::string text = hal_last_error();
  EXPECT_TRUE(starts_with(text, "hal_device_find: there are no devices")) << text;
  EXPECT_NE(text.find("hal-info"), std::string::npos) << text;
  EXPECT_EQ(hal_device_find("", &device), HAL_ERROR_NOT_FOUND);

  EXPECT_EQ(hal_device_find("0", &device), HAL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(hal_last_error()).find("there are no devices"), std::string::npos)
      << hal_last_error();
  EXPECT_EQ(hal_device_find("gpu", &device), HAL_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(hal_last_error()).find("no device name contains 'gpu'"), std::string::npos)
      << hal_last_error();
  // No backend is known in this process, so "<name>:<index>" names an unknown backend.
  EXPECT_EQ(hal_device_find("cuda:0", &device), HAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hal_last_error()).find("Known backends: none"), std::string::npos)
      << hal_last_error();
  EXPECT_EQ(device, nullptr);
}

TEST(NoBackends, HandlesAreStillValidated) {
  hal_deviceptr ptr = 0;
  EXPECT_EQ(hal_mem_alloc(nullptr, 16, &ptr), HAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(hal_mem_alloc(reinterpret_cast<hal_device>(0x11), 16, &ptr), HAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(hal_stream_synchronize(reinterpret_cast<hal_stream>(0x12)), HAL_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(starts_with(hal_last_error(), "hal_stream_synchronize: ")) << hal_last_error();
}

}  // namespace
