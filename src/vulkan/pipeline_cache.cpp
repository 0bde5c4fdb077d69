#include "vulkan/pipeline_cache.h"

#include "common/error.h"
#include "common/log.h"
#include "vulkan/cache_file.h"
#include "vulkan/device.h"
#include "vulkan/vk_status.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace hal::vulkan {
namespace {

constexpr char kMagic[8] = {'H', 'A', 'L', 'V', 'K', 'P', 'C', '1'};

// The file header, written field by field in little-endian order.
struct Header {
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t driver_version = 0;
  uint8_t device_uuid[16] = {};
  uint8_t cache_uuid[16] = {};
  uint64_t payload_size = 0;
  uint64_t checksum = 0;
};
constexpr size_t kHeaderSize = sizeof(kMagic) + 3 * 4 + 16 + 16 + 8 + 8;

uint64_t get(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

Header expected_header(const DeviceCaps& caps) {
  Header header;
  header.vendor_id = caps.vendor_id;
  header.device_id = caps.device_id;
  header.driver_version = caps.driver_version;
  std::memcpy(header.device_uuid, caps.device_uuid, 16);
  std::memcpy(header.cache_uuid, caps.pipeline_cache_uuid, 16);
  return header;
}

// Checks |file| against |expected|; on success |payload| points into |file|.
bool parse(const std::vector<uint8_t>& file, const Header& expected, const uint8_t** payload,
           size_t* payload_size, std::string* why) {
  if (file.size() < kHeaderSize) {
    *why = fmt::format("{} bytes is shorter than the {}-byte header", file.size(), kHeaderSize);
    return false;
  }
  const uint8_t* p = file.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    *why = "not a hal pipeline cache (bad magic)";
    return false;
  }
  p += sizeof(kMagic);
  const uint32_t vendor = static_cast<uint32_t>(get(p, 4));
  const uint32_t device = static_cast<uint32_t>(get(p + 4, 4));
  const uint32_t driver = static_cast<uint32_t>(get(p + 8, 4));
  p += 12;
  if (vendor != expected.vendor_id || device != expected.device_id ||
      driver != expected.driver_version || std::memcmp(p, expected.device_uuid, 16) != 0 ||
      std::memcmp(p + 16, expected.cache_uuid, 16) != 0) {
    *why = "written for another device or driver version";
    return false;
  }
  p += 32;
  const uint64_t size = get(p, 8);
  const uint64_t checksum = get(p + 8, 8);
  p += 16;
  if (size != file.size() - kHeaderSize) {
    *why = fmt::format("the header announces {} bytes of data but {} follow (truncated?)", size,
                       file.size() - kHeaderSize);
    return false;
  }
  if (fnv1a(p, size) != checksum) {
    *why = "checksum mismatch (corrupt)";
    return false;
  }
  *payload = p;
  *payload_size = size;
  return true;
}

std::string hex(const uint8_t* bytes, size_t size) {
  std::string out;
  for (size_t i = 0; i < size; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

}  // namespace

std::string PipelineCache::default_dir() {
  const char* dir = std::getenv("HAL_CACHE_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/hal";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/hal";
  return {};
}

hal_status PipelineCache::init(const std::string& dir_in) {
  const DeviceCaps& caps = device_.caps();
  const std::string dir = dir_in.empty() ? default_dir() : dir_in;
  if (!dir.empty()) {
    path_ =
        fmt::format("{}/vulkan-{}-{:08x}.bin", dir, hex(caps.device_uuid, 16), caps.driver_version);
  }
  const std::vector<uint8_t> file = path_.empty() ? std::vector<uint8_t>{} : read_whole_file(path_);
  const uint8_t* payload = nullptr;
  size_t payload_size = 0;
  if (!file.empty()) {
    std::string why;
    if (parse(file, expected_header(caps), &payload, &payload_size, &why)) {
      warm_ = true;
      hal::log()->debug("vulkan: pipeline cache {} loaded ({} bytes)", path_, payload_size);
    } else {
      hal::log()->warn("vulkan: ignoring pipeline cache file {}: {}", path_, why);
      payload = nullptr;
      payload_size = 0;
    }
  }
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = payload_size;
  info.pInitialData = payload;
  VkResult result = device_.vk().vkCreatePipelineCache(device_.handle(), &info, nullptr, &cache_);
  if (result != VK_SUCCESS && payload != nullptr) {
    hal::log()->warn("vulkan: the driver rejected pipeline cache {} ({}); starting empty", path_,
                     vk_result_name(result));
    warm_ = false;
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    result = device_.vk().vkCreatePipelineCache(device_.handle(), &info, nullptr, &cache_);
  }
  if (result != VK_SUCCESS) return device_.check(result, "vkCreatePipelineCache");
  return HAL_SUCCESS;
}

void PipelineCache::save() {
  if (cache_ == VK_NULL_HANDLE || path_.empty() || !dirty_.exchange(false)) return;
  std::lock_guard<std::mutex> lock(save_mutex_);
  size_t size = 0;
  VkResult result = device_.vk().vkGetPipelineCacheData(device_.handle(), cache_, &size, nullptr);
  std::vector<uint8_t> data(size);
  if (result == VK_SUCCESS && size > 0) {
    result = device_.vk().vkGetPipelineCacheData(device_.handle(), cache_, &size, data.data());
  }
  if (result != VK_SUCCESS) {
    hal::log()->warn("vulkan: vkGetPipelineCacheData failed ({}); cache not saved",
                     vk_result_name(result));
    return;
  }
  data.resize(size);
  const Header header = expected_header(device_.caps());
  std::vector<uint8_t> file(kMagic, kMagic + sizeof(kMagic));
  put(&file, header.vendor_id, 4);
  put(&file, header.device_id, 4);
  put(&file, header.driver_version, 4);
  file.insert(file.end(), header.device_uuid, header.device_uuid + 16);
  file.insert(file.end(), header.cache_uuid, header.cache_uuid + 16);
  put(&file, data.size(), 8);
  put(&file, fnv1a(data.data(), data.size()), 8);
  file.insert(file.end(), data.begin(), data.end());

  write_file_atomically(path_, file, "pipeline cache");
}

PipelineCache::~PipelineCache() {
  save();
  if (cache_ != VK_NULL_HANDLE) {
    device_.vk().vkDestroyPipelineCache(device_.handle(), cache_, nullptr);
  }
}

}  // namespace hal::vulkan
