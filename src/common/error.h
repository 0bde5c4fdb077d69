// Failure reporting inside the runtime: the thread-local text behind hal_last_error().
//
// Code below the ABI never writes hal_last_error() directly. It returns hal::fail(status, ...),
// which stores the cause for the current call; the ABI boundary (api_guard.h) then prefixes the
// name of the public call and publishes the text. This keeps one format for every message:
//   "<hal call>: <cause>[ (<driver error name>)]. <hint>"
#pragma once

#include <hal/hal.h>

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace hal {

// Records |message| as the cause of the current call's failure and returns |status|.
hal_status fail(hal_status status, std::string message);

template <typename... Args>
hal_status failf(hal_status status, fmt::format_string<Args...> format, Args&&... args) {
  return fail(status, fmt::format(format, std::forward<Args>(args)...));
}

// The cause recorded by the last fail() on this thread (empty when none since the last clear).
const std::string& pending_error();
void clear_pending_error();

// Publishes the failure of public call |call| as hal_last_error() text.
void publish_error(const char* call, hal_status status);

// The static name of |status|, shared with hal_status_string().
const char* status_name(hal_status status);

}  // namespace hal
