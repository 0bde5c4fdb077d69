#include "ptx_cpu/decompress.h"

#include <dlfcn.h>

#include <cstring>

namespace hal::ptx_cpu {

// The LZ4 block format: sequences of [token][literal length+][literals][offset:2][match length+],
// the token's high nibble counting literals and its low nibble the match length minus 4 (15 in
// either means more length bytes follow, each added until one is below 255). The last sequence
// has literals only.
bool lz4_block_decompress(const uint8_t* src, size_t src_size, uint8_t* dst, size_t size) {
  size_t in = 0;
  size_t out = 0;
  const auto extend = [&](size_t* length) {
    for (;;) {
      if (in >= src_size) return false;
      const uint8_t byte = src[in++];
      *length += byte;
      if (byte != 255) return true;
    }
  };
  while (in < src_size) {
    const uint8_t token = src[in++];
    size_t literals = token >> 4;
    if (literals == 15 && !extend(&literals)) return false;
    if (literals > src_size - in || literals > size - out) return false;
    std::memcpy(dst + out, src + in, literals);
    in += literals;
    out += literals;
    if (in == src_size) break;  // the last sequence
    if (src_size - in < 2) return false;
    const size_t offset = src[in] | (static_cast<size_t>(src[in + 1]) << 8);
    in += 2;
    if (offset == 0 || offset > out) return false;
    size_t match = token & 15;
    if (match == 15 && !extend(&match)) return false;
    match += 4;
    if (match > size - out) return false;
    // Byte by byte: a match may overlap the bytes it produces (a run).
    for (size_t i = 0; i < match; ++i, ++out) dst[out] = dst[out - offset];
  }
  return out == size;
}

namespace {

// The few functions of libzstd's stable API that are needed.
struct Zstd {
  size_t (*decompress)(void* dst, size_t capacity, const void* src, size_t size) = nullptr;
  unsigned (*is_error)(size_t code) = nullptr;
  const char* (*error_name)(size_t code) = nullptr;
  std::string error;
};

const Zstd& zstd() {
  static const Zstd library = [] {
    Zstd z;
    void* handle = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      z.error = std::string("cannot open libzstd.so.1 (") + (why != nullptr ? why : "?") +
                "): install the zstd library (Debian and Ubuntu: libzstd1)";
      return z;
    }
    z.decompress = reinterpret_cast<decltype(z.decompress)>(dlsym(handle, "ZSTD_decompress"));
    z.is_error = reinterpret_cast<decltype(z.is_error)>(dlsym(handle, "ZSTD_isError"));
    z.error_name = reinterpret_cast<decltype(z.error_name)>(dlsym(handle, "ZSTD_getErrorName"));
    if (z.decompress == nullptr || z.is_error == nullptr || z.error_name == nullptr) {
      z.decompress = nullptr;
      z.error = "libzstd.so.1 lacks ZSTD_decompress, ZSTD_isError or ZSTD_getErrorName";
    }
    return z;
  }();
  return library;
}

}  // namespace

bool zstd_decompress(const uint8_t* src, size_t src_size, uint8_t* dst, size_t size,
                     std::string* why) {
  const Zstd& z = zstd();
  if (z.decompress == nullptr) {
    *why = z.error;
    return false;
  }
  const size_t written = z.decompress(dst, size, src, src_size);
  if (z.is_error(written) != 0) {
    *why = std::string("zstd: ") + z.error_name(written);
    return false;
  }
  if (written != size) {
    *why = "zstd: the entry decodes to " + std::to_string(written) + " bytes, not the " +
           std::to_string(size) + " its header announces";
    return false;
  }
  return true;
}

}  // namespace hal::ptx_cpu
