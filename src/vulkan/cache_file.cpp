#include "vulkan/cache_file.h"

#include "common/log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

namespace hal::vulkan {

uint64_t fnv1a(const uint8_t* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void put(std::vector<uint8_t>* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

std::vector<uint8_t> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const std::streamoff size = in.tellg();
  if (size <= 0) return {};
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) return {};
  return bytes;
}

void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes,
                           const char* what) {
  // Unique per process and per call: two threads may write the same file at once.
  static std::atomic<uint64_t> serial{0};
  const std::filesystem::path target(path);
  const std::string temp =
      fmt::format("{}.tmp.{}.{}", path, static_cast<long>(getpid()), serial.fetch_add(1));
  std::error_code error;
  std::filesystem::create_directories(target.parent_path(), error);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      hal::log()->warn("vulkan: cannot write the {} {}; not saved", what, temp);
      std::filesystem::remove(temp, error);
      return;
    }
  }
  std::filesystem::rename(temp, target, error);
  if (error) {
    hal::log()->warn("vulkan: cannot rename {} to {}: {}", temp, path, error.message());
    std::filesystem::remove(temp, error);
    return;
  }
  hal::log()->debug("vulkan: {} saved to {} ({} bytes)", what, path, bytes.size());
}

}  // namespace hal::vulkan
