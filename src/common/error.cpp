#include "common/error.h"

#include "common/log.h"

#include <cstring>
#include <type_traits>

namespace hal {
namespace {

thread_local std::string t_pending;
thread_local std::string t_last_error;

// One table: every status and its name.
struct StatusName {
  hal_status status;
  const char* name;
};
constexpr StatusName kStatusNames[] = {
    {HAL_SUCCESS, "HAL_SUCCESS"},
    {HAL_ERROR_INVALID_ARGUMENT, "HAL_ERROR_INVALID_ARGUMENT"},
    {HAL_ERROR_INVALID_HANDLE, "HAL_ERROR_INVALID_HANDLE"},
    {HAL_ERROR_NOT_FOUND, "HAL_ERROR_NOT_FOUND"},
    {HAL_ERROR_NOT_SUPPORTED, "HAL_ERROR_NOT_SUPPORTED"},
    {HAL_ERROR_UNAVAILABLE, "HAL_ERROR_UNAVAILABLE"},
    {HAL_ERROR_OUT_OF_MEMORY, "HAL_ERROR_OUT_OF_MEMORY"},
    {HAL_ERROR_OUT_OF_RANGE, "HAL_ERROR_OUT_OF_RANGE"},
    {HAL_ERROR_INVALID_IR, "HAL_ERROR_INVALID_IR"},
    {HAL_ERROR_COMPILE_FAILED, "HAL_ERROR_COMPILE_FAILED"},
    {HAL_ERROR_LAUNCH_FAILED, "HAL_ERROR_LAUNCH_FAILED"},
    {HAL_ERROR_NOT_READY, "HAL_ERROR_NOT_READY"},
    {HAL_ERROR_TIMEOUT, "HAL_ERROR_TIMEOUT"},
    {HAL_ERROR_DEVICE_LOST, "HAL_ERROR_DEVICE_LOST"},
    {HAL_ERROR_INTERNAL, "HAL_ERROR_INTERNAL"},
};

}  // namespace

hal_status fail(hal_status status, std::string message) {
  t_pending = std::move(message);
  return status;
}

const std::string& pending_error() {
  return t_pending;
}
void clear_pending_error() {
  t_pending.clear();
}

namespace {

using StatusValue = std::underlying_type_t<hal_status>;

const char* name_of_value(StatusValue value) {
  for (const StatusName& entry : kStatusNames) {
    if (static_cast<StatusValue>(entry.status) == value) return entry.name;
  }
  return "HAL_STATUS_UNKNOWN";
}

}  // namespace

const char* status_name(hal_status status) {
  return name_of_value(static_cast<StatusValue>(status));
}

void publish_error(const char* call, hal_status status) {
  // NOT_READY is an answer, not a failure: it must not overwrite the last real error.
  if (status == HAL_SUCCESS || status == HAL_ERROR_NOT_READY) return;
  std::string text = call;
  text += ": ";
  if (t_pending.empty()) {
    text += "failed with ";
    text += status_name(status);
  } else {
    text += t_pending;
  }
  t_last_error = std::move(text);
  t_pending.clear();
  log()->debug("{} -> {}", t_last_error, status_name(status));
}

}  // namespace hal

extern "C" {

HAL_API const char* hal_status_string(hal_status status) {
  // A C caller may pass any value of the enum's integer type, but in C++ reading a hal_status
  // outside its enumerators' range is undefined: the value is taken from its bytes instead.
  hal::StatusValue value;
  static_assert(sizeof value == sizeof status);
  std::memcpy(&value, &status, sizeof value);
  return hal::name_of_value(value);
}

HAL_API const char* hal_last_error(void) {
  return hal::t_last_error.c_str();
}

}  // extern "C"
