// Without a CUDA driver (HAL_CUDA_LIBRARY names a file that does not exist), the CUDA backend is
// listed as unavailable with its reason, and the rest of hal keeps working.
#include <hal/hal.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

TEST(CudaUnavailable, BackendIsListedWithItsReason) {
  ASSERT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
  uint32_t count = 0;
  ASSERT_EQ(hal_backend_count(&count), HAL_SUCCESS);
  bool found = false;
  for (uint32_t i = 0; i < count; ++i) {
    hal_backend_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(hal_backend_get_info(i, &info), HAL_SUCCESS) << hal_last_error();
    if (info.backend != HAL_BACKEND_CUDA) continue;
    found = true;
    EXPECT_STREQ(info.name, "cuda");
    EXPECT_EQ(info.available, 0u);
    EXPECT_EQ(info.device_count, 0u);
    const std::string reason = info.reason;
    EXPECT_NE(reason.find("HAL_CUDA_LIBRARY"), std::string::npos) << reason;
    EXPECT_NE(reason.find(std::getenv("HAL_CUDA_LIBRARY")), std::string::npos) << reason;
  }
  EXPECT_TRUE(found) << "the CUDA backend is not listed";
}

TEST(CudaUnavailable, OtherCallsWork) {
  uint32_t devices = 0;
  EXPECT_EQ(hal_device_count(&devices), HAL_SUCCESS) << hal_last_error();
  hal_device device = nullptr;
  EXPECT_EQ(hal_device_find("cuda:0", &device), HAL_ERROR_NOT_FOUND);
  EXPECT_EQ(hal_version(), HAL_VERSION);
  EXPECT_STREQ(hal_status_string(HAL_ERROR_UNAVAILABLE), "HAL_ERROR_UNAVAILABLE");
}

}  // namespace
