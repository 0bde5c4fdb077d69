// HAL_BACKENDS, set for this whole process by the test's environment (see CMakeLists.txt):
//   HAL_BACKENDS=" Twin ,bogus,double,BROKEN,twin"
// and HAL_DEVICE=twin:0, set below before anything touches hal.
// The process knows three backends: "double" and "twin" (test doubles, two devices each) and
// "broken" (a test double whose initialisation fails).
#include "test_util.h"

#include <cstdlib>
#include <string>

namespace hal_test {
namespace {

const bool kDeviceSet = setenv("HAL_DEVICE", "twin:0", 1) == 0;
const bool kInstalled =
    hal::set_drivers_for_testing({double_factory(), twin_factory(), broken_factory()});

std::string device_name(hal_device device) {
  hal_device_info info{};
  info.struct_size = sizeof(info);
  EXPECT_OK(hal_device_get_info(device, &info));
  return info.name;
}

TEST(BackendEnv, EnvironmentIsAsExpected) {
  ASSERT_TRUE(kInstalled);
  ASSERT_NE(std::getenv("HAL_BACKENDS"), nullptr) << "run this test through ctest";
  EXPECT_STREQ(std::getenv("HAL_BACKENDS"), " Twin ,bogus,double,BROKEN,twin");
  ASSERT_TRUE(kDeviceSet);
  EXPECT_STREQ(std::getenv("HAL_DEVICE"), "twin:0");
}

TEST(BackendEnv, UnknownBackendFailsInitButTheOthersWork) {
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_init());
  EXPECT_TRUE(LastErrorIs("hal_init",
                          {"HAL_BACKENDS names 'bogus'", "Backends found: double, twin, broken"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_init()) << "the first result is kept";
  hal_device device = nullptr;
  ASSERT_OK(hal_device_find("double:1", &device));
  hal_deviceptr p = 0;
  ASSERT_OK(hal_mem_alloc(device, 64, &p));
  EXPECT_OK(hal_mem_free(device, p));
}

TEST(BackendEnv, BackendsAreListedInTheOrderGivenOnceEach) {
  uint32_t count = 0;
  ASSERT_OK(hal_backend_count(&count));
  ASSERT_EQ(count, 4u);
  const struct {
    const char* name;
    uint32_t available;
    uint32_t devices;
    const char* reason;
  } expected[] = {
      {"twin", 1, 2, ""},
      {"bogus", 0, 0, "HAL_BACKENDS names 'bogus', which no driver provides"},
      {"double", 1, 2, ""},
      {"broken", 0, 0, kBrokenReason},
  };
  for (uint32_t i = 0; i < count; ++i) {
    hal_backend_info info{};
    info.struct_size = sizeof(info);
    ASSERT_OK(hal_backend_get_info(i, &info));
    EXPECT_STREQ(info.name, expected[i].name);
    EXPECT_EQ(info.available, expected[i].available) << info.name;
    EXPECT_EQ(info.device_count, expected[i].devices) << info.name;
    EXPECT_NE(std::string(info.reason).find(expected[i].reason), std::string::npos)
        << info.name << ": " << info.reason;
    if (expected[i].available) {
      EXPECT_STREQ(info.reason, "");
    }
  }
}

TEST(BackendEnv, GpusFirstThenBackendOrder) {
  uint32_t count = 0;
  ASSERT_OK(hal_device_count(&count));
  ASSERT_EQ(count, 4u);
  const char* expected[] = {"Twin GPU (test double)", "Double GPU (test double)",
                            "Twin CPU (test double)", "Double CPU (test double)"};
  for (uint32_t i = 0; i < count; ++i) {
    hal_device device = nullptr;
    ASSERT_OK(hal_device_get(i, &device));
    EXPECT_EQ(device_name(device), expected[i]) << i;
  }
}

TEST(BackendEnv, SelectorsSeeTheUnavailableBackend) {
  hal_device device = nullptr;
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_device_find("broken:0", &device));
  EXPECT_TRUE(LastErrorIs("hal_device_find", {"the broken backend is unavailable", kBrokenReason}));
  // 'bogus' is no backend of this build: a malformed selector, not a missing device.
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_device_find("bogus:0", &device));
  EXPECT_TRUE(LastErrorIs("hal_device_find", {"unknown backend 'bogus'"}));
  ASSERT_OK(hal_device_find("twin:1", &device));
  EXPECT_EQ(device_name(device), "Twin GPU (test double)");
  ASSERT_OK(hal_device_find("double gpu", &device));
  EXPECT_EQ(device_name(device), "Double GPU (test double)");
  // Case-insensitive, first match in global order: "(test double)" is in every name.
  ASSERT_OK(hal_device_find("DOUBLE", &device));
  EXPECT_EQ(device_name(device), "Twin GPU (test double)");
}

TEST(BackendEnv, HalDeviceNamesTheDefault) {
  hal_device device = nullptr;
  ASSERT_OK(hal_device_find("default", &device));
  EXPECT_EQ(device_name(device), "Twin CPU (test double)");
  ASSERT_OK(hal_device_find("0", &device));
  EXPECT_EQ(device_name(device), "Twin GPU (test double)");
}

}  // namespace
}  // namespace hal_test
