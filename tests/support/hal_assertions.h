// Assertions shared by every test suite: a status check that shows hal_last_error() when it
// fails, and checks of the last-error text.
#pragma once

#include <hal/hal.h>

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace hal_testing {

// Passes when |actual| is |expected|; on failure shows both names and hal_last_error().
inline ::testing::AssertionResult StatusIs(const char* expected_text, const char* actual_text,
                                           hal_status expected, hal_status actual) {
  if (expected == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << actual_text << " returned " << hal_status_string(actual) << ", expected "
         << hal_status_string(expected) << " (" << expected_text
         << "); hal_last_error: " << hal_last_error();
}

// Passes when hal_last_error() contains every part.
inline ::testing::AssertionResult LastErrorHas(std::initializer_list<std::string_view> parts) {
  const std::string text = hal_last_error();
  for (std::string_view part : parts) {
    if (text.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "hal_last_error lacks '" << part << "': " << text;
    }
  }
  return ::testing::AssertionSuccess();
}

// Passes when hal_last_error() starts with "<call>: " and contains every part.
inline ::testing::AssertionResult LastErrorIs(const char* call,
                                              std::initializer_list<std::string_view> parts) {
  const std::string text = hal_last_error();
  const std::string prefix = std::string(call) + ": ";
  if (text.compare(0, prefix.size(), prefix) != 0) {
    return ::testing::AssertionFailure()
           << "hal_last_error does not start with '" << prefix << "': " << text;
  }
  return LastErrorHas(parts);
}

}  // namespace hal_testing

#define EXPECT_HAL(expected, expr) EXPECT_PRED_FORMAT2(::hal_testing::StatusIs, expected, expr)
#define ASSERT_HAL(expected, expr) ASSERT_PRED_FORMAT2(::hal_testing::StatusIs, expected, expr)
#define EXPECT_OK(expr) EXPECT_HAL(HAL_SUCCESS, expr)
#define ASSERT_OK(expr) ASSERT_HAL(HAL_SUCCESS, expr)
