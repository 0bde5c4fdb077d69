#include "common/selector.h"

#include "common/error.h"

#include <algorithm>
#include <cctype>

namespace hal {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

bool is_identifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Parses decimal digits into a uint32_t; false on overflow.
bool parse_index(std::string_view digits, uint32_t* out) {
  uint64_t value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > UINT32_MAX) return false;
  }
  *out = static_cast<uint32_t>(value);
  return true;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

bool contains_ignore_case(std::string_view haystack, std::string_view needle) {
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

hal_status parse_selector(std::string_view text, const std::vector<std::string>& backend_names,
                          Selector* out) {
  const std::string_view s = trim(text);
  Selector result;
  if (s.empty() || lower(s) == "default") {
    result.kind = Selector::Kind::kDefault;
    *out = result;
    return HAL_SUCCESS;
  }
  if (all_digits(s)) {
    if (!parse_index(s, &result.index)) {
      return failf(HAL_ERROR_INVALID_ARGUMENT, "device index '{}' is too large", s);
    }
    result.kind = Selector::Kind::kGlobalIndex;
    *out = result;
    return HAL_SUCCESS;
  }
  const size_t colon = s.find(':');
  if (colon != std::string_view::npos) {
    const std::string prefix = lower(trim(s.substr(0, colon)));
    const std::string_view rest = trim(s.substr(colon + 1));
    const bool known =
        std::find(backend_names.begin(), backend_names.end(), prefix) != backend_names.end();
    if (known) {
      if (!all_digits(rest)) {
        return failf(HAL_ERROR_INVALID_ARGUMENT,
                     "selector '{}': expected a device index after '{}:', as in '{}:0'", s, prefix,
                     prefix);
      }
      if (!parse_index(rest, &result.index)) {
        return failf(HAL_ERROR_INVALID_ARGUMENT, "selector '{}': index is too large", s);
      }
      result.kind = Selector::Kind::kBackendIndex;
      result.backend = prefix;
      *out = result;
      return HAL_SUCCESS;
    }
    if (is_identifier(prefix) && all_digits(rest)) {
      return failf(HAL_ERROR_INVALID_ARGUMENT,
                   "selector '{}': unknown backend '{}'. Known backends: {}", s, prefix,
                   join(backend_names));
    }
  }
  result.kind = Selector::Kind::kName;
  result.name = std::string(s);
  *out = result;
  return HAL_SUCCESS;
}

}  // namespace hal
