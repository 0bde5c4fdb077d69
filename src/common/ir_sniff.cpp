#include "common/ir_sniff.h"

#include "common/error.h"

#include <cctype>
#include <cstring>

namespace hal {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203u;
constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr size_t kSpirvHeaderBytes = 20;  // five words: magic, version, generator, bound, schema

uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

uint32_t byte_swap(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

// Skips whitespace and // and /* */ comments from |i|; returns the index of the first other
// byte, or |size|.
size_t skip_blank(const uint8_t* data, size_t size, size_t i) {
  while (i < size) {
    if (std::isspace(data[i])) {
      ++i;
    } else if (data[i] == '/' && i + 1 < size && data[i + 1] == '/') {
      while (i < size && data[i] != '\n') ++i;
    } else if (data[i] == '/' && i + 1 < size && data[i + 1] == '*') {
      i += 2;
      while (i + 1 < size && !(data[i] == '*' && data[i + 1] == '/')) ++i;
      i = (i + 1 < size) ? i + 2 : size;
    } else {
      break;
    }
  }
  return i;
}

std::string describe_start(const uint8_t* data, size_t size) {
  std::string hex;
  std::string text;
  const size_t n = size < 8 ? size : 8;
  for (size_t i = 0; i < n; ++i) {
    hex += fmt::format("{}{:02x}", i == 0 ? "" : " ", data[i]);
    text += std::isprint(data[i]) ? static_cast<char>(data[i]) : '.';
  }
  return fmt::format("{} ('{}'){}", hex, text, size > n ? " ..." : "");
}

}  // namespace

hal_status sniff_ir(const uint8_t* data, size_t size, hal_ir* ir) {
  if (size >= 4) {
    const uint32_t word = load_le32(data);
    if (word == kSpirvMagic || byte_swap(word) == kSpirvMagic) {
      if (size < kSpirvHeaderBytes || size % 4 != 0) {
        return failf(HAL_ERROR_INVALID_IR,
                     "the blob starts with the SPIR-V magic number but is {} bytes; SPIR-V is a "
                     "whole number of 4-byte words and at least {} bytes. Was it truncated?",
                     size, kSpirvHeaderBytes);
      }
      *ir = HAL_IR_SPIRV;
      return HAL_SUCCESS;
    }
    if (data[0] == 0x7f && data[1] == 'E' && data[2] == 'L' && data[3] == 'F') {
      *ir = HAL_IR_CUBIN;
      return HAL_SUCCESS;
    }
    if (word == kFatbinMagic) {
      *ir = HAL_IR_FATBIN;
      return HAL_SUCCESS;
    }
    if (std::memcmp(data, "HALK", 4) == 0) {
      if (size == 4) {
        return fail(HAL_ERROR_INVALID_IR,
                    "the blob is \"HALK\" with no kernel name after it; a built-in kernel is "
                    "named by the bytes that follow, as in \"HALKvector_add_f32\"");
      }
      *ir = HAL_IR_BUILTIN;
      return HAL_SUCCESS;
    }
  }
  const size_t first = skip_blank(data, size, 0);
  static constexpr char kVersion[] = ".version";
  const size_t len = sizeof(kVersion) - 1;
  if (first + len <= size && std::memcmp(data + first, kVersion, len) == 0) {
    *ir = HAL_IR_PTX;
    return HAL_SUCCESS;
  }
  if (size == 0) return fail(HAL_ERROR_INVALID_IR, "the blob is empty");
  return failf(HAL_ERROR_INVALID_IR,
               "the blob is not SPIR-V, PTX, cubin, fatbin or a built-in kernel's name: it "
               "starts with {}. Expected the SPIR-V magic 0x07230203, PTX text beginning with "
               ".version, an ELF header, the fatbin magic 0xba55ed50, or \"HALK\" and a name",
               describe_start(data, size));
}

const char* ir_name(hal_ir ir) {
  switch (ir) {
    case HAL_IR_AUTO:
      return "auto";
    case HAL_IR_PTX:
      return "PTX";
    case HAL_IR_SPIRV:
      return "SPIR-V";
    case HAL_IR_CUBIN:
      return "cubin";
    case HAL_IR_FATBIN:
      return "fatbin";
    case HAL_IR_BUILTIN:
      return "built-in kernel";
  }
  return "unknown IR";
}

std::string ir_mask_names(uint32_t mask) {
  std::string out;
  for (hal_ir ir : {HAL_IR_PTX, HAL_IR_SPIRV, HAL_IR_CUBIN, HAL_IR_FATBIN, HAL_IR_BUILTIN}) {
    if ((mask & ir) == 0) continue;
    if (!out.empty()) out += ", ";
    out += ir_name(ir);
  }
  return out.empty() ? "none" : out;
}

}  // namespace hal
