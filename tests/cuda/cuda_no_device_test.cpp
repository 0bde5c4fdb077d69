// A driver that loads but sees no GPU (cuInit answers CUDA_ERROR_NO_DEVICE): the CUDA backend is
// listed as unavailable, with the driver's answer and where to look, and hal keeps working.
#include <hal/hal.h>

#include "cuda_test_double.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

// Only the CUDA backend, whatever else the build has; set before the first hal call.
const bool kOnlyCuda = [] { return setenv("HAL_BACKENDS", "cuda", 1) == 0; }();

TEST(CudaNoDevice, BackendIsUnavailableWithTheDriversAnswer) {
  cuda_test_double_set_devices(nullptr, 0);  // before hal discovers anything
  ASSERT_EQ(hal_init(), HAL_SUCCESS) << hal_last_error();
  hal_backend_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(hal_backend_get_info(0, &info), HAL_SUCCESS) << hal_last_error();
  EXPECT_EQ(info.backend, HAL_BACKEND_CUDA);
  EXPECT_EQ(info.available, 0u);
  const std::string reason = info.reason;
  EXPECT_NE(reason.find("CUDA_ERROR_NO_DEVICE"), std::string::npos) << reason;
  EXPECT_NE(reason.find("CUDA_VISIBLE_DEVICES"), std::string::npos) << reason;
  uint32_t count = 1;
  EXPECT_EQ(hal_device_count(&count), HAL_SUCCESS);
  EXPECT_EQ(count, 0u);
}

}  // namespace
