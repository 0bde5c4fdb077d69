// HAL_BACKENDS set to separators only (see CMakeLists.txt): a mistake, said as such, rather than
// a silent runtime with no backends.
#include "common/registry.h"

#include <hal/hal.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backend_double.h"

namespace {

const bool kInstalled = hal::set_drivers_for_testing({hal_test::double_factory()});

TEST(BlankBackends, InitSaysHalBackendsNamesNothing) {
  ASSERT_TRUE(kInstalled);
  ASSERT_NE(std::getenv("HAL_BACKENDS"), nullptr) << "run this test through ctest";
  EXPECT_EQ(hal_init(), HAL_ERROR_INVALID_ARGUMENT);
  const std::string text = hal_last_error();
  EXPECT_NE(text.find("hal_init: HAL_BACKENDS="), std::string::npos) << text;
  EXPECT_NE(text.find("names no backend"), std::string::npos) << text;
  uint32_t count = 7;
  EXPECT_EQ(hal_backend_count(&count), HAL_SUCCESS);
  EXPECT_EQ(count, 0u);
}

}  // namespace
