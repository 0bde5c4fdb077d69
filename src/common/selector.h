// Device selectors: the text form of "which device" used by hal_device_find, HAL_DEVICE and
// the tools' --device option. Parsing is separate from resolution so it can be tested (and
// fuzzed) without devices.
#pragma once

#include <hal/hal.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hal {

struct Selector {
  enum class Kind { kDefault, kGlobalIndex, kBackendIndex, kName };
  Kind kind = Kind::kDefault;
  std::string backend;  // kBackendIndex: the backend's name, lower case
  uint32_t index = 0;   // kGlobalIndex, kBackendIndex
  std::string name;     // kName: the substring to look for, as given (trimmed)
};

// Parses |text| (see hal_device_find). |backend_names| are the known backend names, lower
// case: "<known>:<digits>" is a backend index, "<unknown>:<digits>" is an error, and any other
// text is a name substring. Fails with HAL_ERROR_INVALID_ARGUMENT and a message naming the
// problem.
hal_status parse_selector(std::string_view text, const std::vector<std::string>& backend_names,
                          Selector* out);

// Case-insensitive substring search.
bool contains_ignore_case(std::string_view haystack, std::string_view needle);

}  // namespace hal
