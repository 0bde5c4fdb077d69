// Module images made by hand for the driver's tests, so that the format handling is tested
// without nvcc: fatbins (see src/ptx_cpu/image.h for the layout), their wrapper, LZ4 blocks,
// zstd frames of raw blocks, and the ELF header of a cubin.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ptx_cpu_test {

struct FatbinEntry {
  uint16_t kind = 1;  // 1 PTX, 2 ELF
  uint32_t arch = 80;
  std::string payload;           // as stored (compressed or not)
  uint64_t flags = 0x11;         // 64-bit, Linux; | 0x2000 LZ4, | 0x8000 zstd
  uint32_t compressed_size = 0;  // payload.size() when compressed
  uint64_t decompressed_size = 0;
};

template <typename T>
void put(std::vector<uint8_t>* bytes, size_t offset, T value) {
  std::memcpy(bytes->data() + offset, &value, sizeof(T));
}

inline std::vector<uint8_t> make_fatbin(const std::vector<FatbinEntry>& entries) {
  std::vector<uint8_t> bytes(16, 0);
  for (const FatbinEntry& entry : entries) {
    const uint32_t header = entry.kind == 1 ? 80 : 64;
    const uint64_t padded = (entry.payload.size() + 7) / 8 * 8;
    const size_t at = bytes.size();
    bytes.resize(at + header + padded, 0);
    put<uint16_t>(&bytes, at + 0, entry.kind);
    put<uint16_t>(&bytes, at + 2, 0x0101);
    put<uint32_t>(&bytes, at + 4, header);
    put<uint64_t>(&bytes, at + 8, padded);
    put<uint32_t>(&bytes, at + 16, entry.compressed_size);
    put<uint16_t>(&bytes, at + 24, 0);
    put<uint16_t>(&bytes, at + 26, entry.kind == 1 ? 8 : 1);
    put<uint32_t>(&bytes, at + 28, entry.arch);
    put<uint64_t>(&bytes, at + 40, entry.flags);
    put<uint64_t>(&bytes, at + 56, entry.decompressed_size);
    std::memcpy(bytes.data() + at + header, entry.payload.data(), entry.payload.size());
  }
  put<uint32_t>(&bytes, 0, 0xBA55ED50u);
  put<uint16_t>(&bytes, 4, 1);
  put<uint16_t>(&bytes, 6, 16);
  put<uint64_t>(&bytes, 8, bytes.size() - 16);
  bytes.resize(bytes.size() + 8, 0);  // room for 8-byte reads past the end by careless readers
  return bytes;
}

// What host objects register: the wrapper around a fatbin.
struct FatbinWrapper {
  uint32_t magic = 0x466243B1u;
  uint32_t version = 1;
  const void* data = nullptr;
  const void* unused = nullptr;
};

// A valid LZ4 block: |prefix| as literals, then |repeat| bytes copied from |offset| back, then
// |tail| as the last literals.
inline std::string lz4_block(const std::string& prefix, size_t offset, size_t repeat,
                             const std::string& tail) {
  std::string out;
  const auto length = [&](size_t value) {
    for (value -= 15; value >= 255; value -= 255) out += static_cast<char>(255);
    out += static_cast<char>(value);
  };
  if (repeat == 0) {
    const std::string all = prefix + tail;
    out += static_cast<char>(std::min<size_t>(all.size(), 15) << 4);
    if (all.size() >= 15) length(all.size());
    return out + all;
  }
  const size_t match = repeat - 4;
  out +=
      static_cast<char>((std::min<size_t>(prefix.size(), 15) << 4) | std::min<size_t>(match, 15));
  if (prefix.size() >= 15) length(prefix.size());
  out += prefix;
  out += static_cast<char>(offset & 0xff);
  out += static_cast<char>(offset >> 8);
  if (match >= 15) length(match);
  out += static_cast<char>(std::min<size_t>(tail.size(), 15) << 4);
  if (tail.size() >= 15) length(tail.size());
  return out + tail;
}

// A zstd frame of raw (stored) blocks with its content size: valid input for any zstd decoder.
inline std::string zstd_raw_frame(const std::string& content) {
  std::string out("\x28\xb5\x2f\xfd", 4);
  out += static_cast<char>(0xA0);  // single segment, 4-byte content size, no checksum
  const uint32_t size = static_cast<uint32_t>(content.size());
  out.append(reinterpret_cast<const char*>(&size), 4);
  size_t done = 0;
  do {
    const size_t block = std::min<size_t>(content.size() - done, 128 * 1024);
    const bool last = done + block == content.size();
    const uint32_t header = (last ? 1u : 0u) | (0u << 1) | static_cast<uint32_t>(block << 3);
    out.append(reinterpret_cast<const char*>(&header), 3);
    out.append(content, done, block);
    done += block;
  } while (done < content.size());
  return out;
}

// The 64-byte ELF header of a cubin for sm_<sm>, as nvcc 13 writes it (EI_OSABI 0x41, the
// architecture in bits 8..15 of e_flags), and a NUL-padded body.
inline std::vector<uint8_t> cubin_header(uint32_t sm) {
  std::vector<uint8_t> elf(256, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 8};
  std::memcpy(elf.data(), ident, sizeof(ident));
  put<uint16_t>(&elf, 16, 2);    // ET_EXEC
  put<uint16_t>(&elf, 18, 190);  // EM_CUDA
  put<uint32_t>(&elf, 20, 1);
  put<uint32_t>(&elf, 48, 0x06000004u | (sm << 8));
  return elf;
}

}  // namespace ptx_cpu_test
