#include "fuzz_entries.h"

#include "common/error.h"
#include "common/ir_sniff.h"
#include "common/selector.h"

#include <hal/hal.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace hal_fuzz {

std::string sniff_ir_one(const uint8_t* data, size_t size) {
  // An exact-size copy, so a read past the end is caught by the address sanitizer.
  std::vector<uint8_t> bytes(data, data + size);
  hal::clear_pending_error();
  hal_ir ir = HAL_IR_AUTO;
  const hal_status status = hal::sniff_ir(bytes.data(), bytes.size(), &ir);
  if (status == HAL_SUCCESS) {
    if (ir != HAL_IR_PTX && ir != HAL_IR_SPIRV && ir != HAL_IR_CUBIN && ir != HAL_IR_FATBIN &&
        ir != HAL_IR_BUILTIN) {
      return "sniff_ir succeeded with the kind " + std::to_string(static_cast<int>(ir));
    }
    if (ir == HAL_IR_SPIRV && size < 4) return "SPIR-V sniffed from fewer than 4 bytes";
    if (ir == HAL_IR_BUILTIN && (size <= 4 || std::memcmp(bytes.data(), "HALK", 4) != 0)) {
      return "a built-in kernel sniffed from a blob without \"HALK\" and a name";
    }
    return {};
  }
  if (status != HAL_ERROR_INVALID_IR) {
    return std::string("sniff_ir returned ") + hal::status_name(status);
  }
  if (ir != HAL_IR_AUTO) return "sniff_ir wrote its output on failure";
  if (hal::pending_error().empty()) return "sniff_ir refused the blob without a message";
  return {};
}

std::string selector_one(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> names = {"cuda", "vulkan"};
  hal::clear_pending_error();
  hal::Selector selector;
  const hal_status status = hal::parse_selector(text, names, &selector);
  if (status == HAL_SUCCESS) {
    if (selector.kind == hal::Selector::Kind::kBackendIndex && selector.backend != "cuda" &&
        selector.backend != "vulkan") {
      return "parsed an unknown backend '" + selector.backend + "'";
    }
    if (selector.kind == hal::Selector::Kind::kName) {
      if (selector.name.empty()) return "parsed an empty name";
      if (!hal::contains_ignore_case(text, selector.name)) {
        return "the parsed name '" + selector.name + "' is not part of the text";
      }
    }
    return {};
  }
  if (status != HAL_ERROR_INVALID_ARGUMENT) {
    return std::string("parse_selector returned ") + hal::status_name(status);
  }
  if (hal::pending_error().empty()) return "parse_selector refused the text without a message";
  return {};
}

}  // namespace hal_fuzz
