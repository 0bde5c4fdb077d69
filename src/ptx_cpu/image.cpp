#include "ptx_cpu/image.h"

#include "ptx_cpu/decompress.h"
#include "ptx_cpu/driver.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <vector>

namespace hal::ptx_cpu {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint32_t kWrapperMagic = 0x466243B1u;
constexpr uint16_t kKindPtx = 1;
constexpr uint16_t kKindElf = 2;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint16_t kMachineCuda = 190;
// A sanity bound on what a header may claim, since the image's real size is unknown.
constexpr uint64_t kMaxFatbinBytes = 1ull << 32;

template <typename T>
T read(const uint8_t* bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes + offset, sizeof(T));
  return value;
}

std::string arch_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// The architecture a cubin was built for: e_flags bits 8..15 in the ELF ABI nvcc uses since
// CUDA 12.8 (EI_OSABI 0x41), the low byte before.
uint32_t cubin_arch(const uint8_t* elf) {
  const bool elf64 = elf[4] == 2;
  const uint32_t flags = read<uint32_t>(elf, elf64 ? 48 : 36);
  return elf[7] == 0x41 ? (flags >> 8) & 0xff : flags & 0xff;
}

CUresult from_fatbin(const uint8_t* fatbin, PtxSource* out, std::string* error_log) {
  const uint16_t header_size = read<uint16_t>(fatbin, 6);
  const uint64_t body_size = read<uint64_t>(fatbin, 8);
  if (header_size < 16 || body_size > kMaxFatbinBytes) {
    *error_log = fmt::format("malformed fatbin: header of {} bytes, {} bytes of entries",
                             header_size, body_size);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  const uint64_t end = header_size + body_size;
  struct Entry {
    uint64_t offset;
    uint32_t header_size;
    uint64_t payload_size;
    uint32_t arch;
  };
  const Entry* best = nullptr;
  Entry candidate{};
  std::vector<std::string> machine_code;
  std::vector<std::string> ptx_too_new;
  std::vector<std::string> other;
  for (uint64_t offset = header_size; offset < end;) {
    if (end - offset < 64) {
      *error_log = fmt::format("malformed fatbin: a truncated entry header at offset {}", offset);
      return CUDA_ERROR_INVALID_IMAGE;
    }
    const uint8_t* entry = fatbin + offset;
    const uint16_t kind = read<uint16_t>(entry, 0);
    const uint32_t entry_header = read<uint32_t>(entry, 4);
    const uint64_t payload = read<uint64_t>(entry, 8);
    const uint32_t arch = read<uint32_t>(entry, 28);
    if (entry_header < 64 || entry_header > end - offset || payload > end - offset - entry_header) {
      *error_log = fmt::format(
          "malformed fatbin: the entry at offset {} claims {} + {} bytes, "
          "past the fatbin's end",
          offset, entry_header, payload);
      return CUDA_ERROR_INVALID_IMAGE;
    }
    if (kind == kKindPtx) {
      if (arch <= kSm && (best == nullptr || arch > best->arch)) {
        candidate = Entry{offset, entry_header, payload, arch};
        best = &candidate;
      } else if (arch > kSm) {
        ptx_too_new.push_back(fmt::format("compute_{}", arch));
      }
    } else if (kind == kKindElf) {
      machine_code.push_back(fmt::format("sm_{}", arch));
    } else {
      other.push_back(fmt::format("kind {} for {}", kind, arch));
    }
    offset += entry_header + payload;
  }
  if (best == nullptr) {
    std::string carries;
    if (!machine_code.empty()) {
      carries += "machine code for GPUs (" + arch_list(machine_code) + ")";
    }
    if (!ptx_too_new.empty()) {
      if (!carries.empty()) carries += " and ";
      carries += "PTX only for newer architectures (" + arch_list(ptx_too_new) + ")";
    }
    if (!other.empty()) {
      if (!carries.empty()) carries += " and ";
      carries += "entries of other kinds (" + arch_list(other) + ")";
    }
    if (carries.empty()) carries = "no entries";
    *error_log = fmt::format(
        "the fatbin carries {}; the CPU PTX device runs PTX for compute_{} or older only: "
        "build with -gencode arch=compute_{},code=compute_{}",
        carries, kSm, kSm, kSm);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }

  const uint8_t* entry = fatbin + best->offset;
  const uint8_t* payload = entry + best->header_size;
  const uint32_t packed = read<uint32_t>(entry, 16);
  const uint64_t flags = read<uint64_t>(entry, 40);
  const uint64_t unpacked = read<uint64_t>(entry, 56);
  const std::string name = fmt::format("compute_{}", best->arch);
  if ((flags & (kFlagLz4 | kFlagZstd)) == 0) {
    const size_t length = strnlen(reinterpret_cast<const char*>(payload), best->payload_size);
    out->text.assign(reinterpret_cast<const char*>(payload), length);
    out->origin = fmt::format("the fatbin's {} PTX ({} bytes)", name, length);
    return CUDA_SUCCESS;
  }
  const bool zstd = (flags & kFlagZstd) != 0;
  if (packed == 0 || packed > best->payload_size || unpacked == 0 || unpacked > kMaxFatbinBytes) {
    *error_log = fmt::format(
        "malformed fatbin: the {} PTX entry claims {} compressed bytes "
        "decoding to {}",
        name, packed, unpacked);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  std::vector<uint8_t> text(unpacked);
  std::string why;
  const bool decoded = zstd ? zstd_decompress(payload, packed, text.data(), text.size(), &why)
                            : lz4_block_decompress(payload, packed, text.data(), text.size());
  if (!decoded) {
    if (!zstd) why = "lz4: malformed block";
    *error_log = fmt::format("cannot decompress the fatbin's {} PTX: {}", name, why);
    return zstd && why.find("libzstd.so.1") != std::string::npos ? CUDA_ERROR_NOT_SUPPORTED
                                                                 : CUDA_ERROR_INVALID_IMAGE;
  }
  const size_t length = strnlen(reinterpret_cast<const char*>(text.data()), text.size());
  out->text.assign(reinterpret_cast<const char*>(text.data()), length);
  out->origin = fmt::format("the fatbin's {} PTX ({}, {} -> {} bytes)", name, zstd ? "zstd" : "lz4",
                            packed, unpacked);
  return CUDA_SUCCESS;
}

}  // namespace

CUresult find_ptx(const void* image, PtxSource* out, std::string* error_log) {
  const auto* bytes = static_cast<const uint8_t*>(image);
  // Every format is recognised by its first four bytes; a shorter PTX text ends with its NUL
  // within them, which the checks below stop at.
  bool short_text = false;
  for (size_t i = 0; i < 4 && !short_text; ++i) short_text = bytes[i] == 0;
  const uint32_t magic = short_text ? 0 : read<uint32_t>(bytes, 0);
  if (magic == kWrapperMagic) {
    const void* fatbin = read<const void*>(bytes, 8);
    if (fatbin == nullptr ||
        read<uint32_t>(static_cast<const uint8_t*>(fatbin), 0) != kFatbinMagic) {
      *error_log = "a fatbin wrapper (magic 0x466243B1) that does not point to a fatbin";
      return CUDA_ERROR_INVALID_IMAGE;
    }
    return from_fatbin(static_cast<const uint8_t*>(fatbin), out, error_log);
  }
  if (magic == kFatbinMagic) return from_fatbin(bytes, out, error_log);
  if (!short_text && std::memcmp(bytes,
                                 "\x7f"
                                 "ELF",
                                 4) == 0) {
    if (read<uint16_t>(bytes, 18) != kMachineCuda) {
      *error_log = "an ELF file, but not for a CUDA device (e_machine is not EM_CUDA)";
      return CUDA_ERROR_INVALID_IMAGE;
    }
    *error_log = fmt::format(
        "the image is a cubin: machine code for a GPU (sm_{}) cannot run on the CPU PTX device; "
        "load PTX or a fatbin that carries PTX",
        cubin_arch(bytes));
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  // PTX is text: anything with control characters before its end is not.
  const size_t length = std::strlen(reinterpret_cast<const char*>(bytes));
  if (length == 0) {
    *error_log = "the image is empty (a NUL first)";
    return CUDA_ERROR_INVALID_IMAGE;
  }
  for (size_t i = 0; i < length; ++i) {
    const uint8_t c = bytes[i];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v') {
      *error_log = fmt::format(
          "the image is neither PTX text, a fatbin (magic 0xBA55ED50) nor a cubin (ELF): byte {} "
          "is {:#04x}; it starts with {:02x} {:02x} {:02x} {:02x}",
          i, c, bytes[0], length > 1 ? bytes[1] : 0, length > 2 ? bytes[2] : 0,
          length > 3 ? bytes[3] : 0);
      return CUDA_ERROR_INVALID_IMAGE;
    }
  }
  out->text.assign(reinterpret_cast<const char*>(bytes), length);
  out->origin = fmt::format("PTX text ({} bytes)", length);
  return CUDA_SUCCESS;
}

PtxHeader scan_ptx_header(std::string_view text) {
  PtxHeader header;
  size_t i = 0;
  const auto skip_space_and_comments = [&] {
    for (;;) {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      if (text.substr(i, 2) == "//") {
        const size_t newline = text.find('\n', i);
        i = newline == std::string_view::npos ? text.size() : newline + 1;
      } else if (text.substr(i, 2) == "/*") {
        const size_t close = text.find("*/", i + 2);
        i = close == std::string_view::npos ? text.size() : close + 2;
      } else {
        return;
      }
    }
  };
  const auto word = [&] {
    const size_t begin = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                               text[i] == '_' || text[i] == '.')) {
      ++i;
    }
    return text.substr(begin, i - begin);
  };
  // The header directives come first; stop at the first other one.
  for (int directives = 0; directives < 8; ++directives) {
    skip_space_and_comments();
    const std::string_view directive = word();
    skip_space_and_comments();
    if (directive == ".version") {
      const std::string_view number = word();
      const size_t dot = number.find('.');
      if (dot != std::string_view::npos && dot > 0 && dot + 1 < number.size()) {
        uint32_t major = 0;
        uint32_t minor = 0;
        for (char c : number.substr(0, dot)) major = major * 10 + static_cast<uint32_t>(c - '0');
        for (char c : number.substr(dot + 1)) minor = minor * 10 + static_cast<uint32_t>(c - '0');
        header.version = major * 10 + minor;
      }
    } else if (directive == ".target") {
      // The architecture is one of a comma-separated list ("sm_80, texmode_independent").
      for (;;) {
        const std::string_view name = word();
        if (name.substr(0, 3) == "sm_" && name.size() > 3) {
          header.target = std::string(name);
          size_t digits = 3;
          while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) {
            header.target_sm = header.target_sm * 10 + static_cast<uint32_t>(name[digits] - '0');
            ++digits;
          }
          if (digits < name.size()) header.suffix = name[digits];
        }
        skip_space_and_comments();
        if (i < text.size() && text[i] == ',') {
          ++i;
          skip_space_and_comments();
          continue;
        }
        break;
      }
    } else if (directive == ".address_size") {
      word();
    } else {
      break;
    }
  }
  return header;
}

}  // namespace hal::ptx_cpu
