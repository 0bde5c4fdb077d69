// The pipeline-cache fuzz entry. The file reader has no entry point that takes bytes, so the
// input is written as the device's cache file into a private directory and read back through
// hal::vulkan::PipelineCache::init, on the real Vulkan device.
#include "common/driver_export.h"
#include "common/handles.h"
#include "common/objects.h"
#include "fuzz_entries.h"
#include "vulkan/device.h"
#include "vulkan/pipeline_cache.h"

#include <hal/hal.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

namespace hal_fuzz {
namespace {

constexpr char kMagic[8] = {'H', 'A', 'L', 'V', 'K', 'P', 'C', '1'};

struct Setup {
  hal::vulkan::VulkanDevice* device = nullptr;
  std::string dir;
  std::string path;
  std::string error;
};

// Removes the private cache directory when the process exits.
struct DirectoryRemover {
  std::string dir;
  ~DirectoryRemover() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Setup make_setup() {
  Setup setup;
  hal_device handle = nullptr;
  if (hal_device_find("vulkan:0", &handle) != HAL_SUCCESS) {
    setup.error = std::string("no Vulkan device: ") + hal_last_error();
    return setup;
  }
  auto object = hal::find_as<hal::DeviceObject>(handle, hal::HandleKind::kDevice, "device");
  setup.device =
      object ? dynamic_cast<hal::vulkan::VulkanDevice*>(hal::device_of(object->impl)) : nullptr;
  if (setup.device == nullptr) {
    setup.error = "vulkan:0 is not a Vulkan device";
    return setup;
  }
  setup.dir = (std::filesystem::temp_directory_path() /
               ("hal-fuzz-pipeline-cache-" + std::to_string(::getpid())))
                  .string();
  std::error_code ec;
  std::filesystem::create_directories(setup.dir, ec);
  static DirectoryRemover remover{setup.dir};
  // A first reader over the empty directory tells the file name the device looks for.
  hal::vulkan::PipelineCache probe(*setup.device);
  if (probe.init(setup.dir) != HAL_SUCCESS) {
    setup.error =
        std::string("PipelineCache::init failed on an empty directory: ") + hal_last_error();
    return setup;
  }
  setup.path = probe.path();
  if (setup.path.empty()) setup.error = "PipelineCache::init chose no file";
  return setup;
}

const Setup& setup() {
  static const Setup instance = make_setup();
  return instance;
}

void put(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

}  // namespace

std::string pipeline_cache_one(const uint8_t* data, size_t size) {
  const Setup& s = setup();
  if (!s.error.empty()) return s.error;
  std::string file;
  if (size > 0 && (data[0] & 1) == 1) {
    const hal::vulkan::DeviceCaps& caps = s.device->caps();
    file.append(kMagic, sizeof(kMagic));
    put(&file, caps.vendor_id, 4);
    put(&file, caps.device_id, 4);
    put(&file, caps.driver_version, 4);
    file.append(reinterpret_cast<const char*>(caps.device_uuid), 16);
    file.append(reinterpret_cast<const char*>(caps.pipeline_cache_uuid), 16);
  }
  if (size > 1) file.append(reinterpret_cast<const char*>(data + 1), size - 1);
  {
    std::ofstream out(s.path, std::ios::binary | std::ios::trunc);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
    if (!out) return "cannot write " + s.path;
  }
  hal::vulkan::PipelineCache cache(*s.device);
  const hal_status status = cache.init(s.dir);
  if (status != HAL_SUCCESS) {
    return std::string("PipelineCache::init returned ") + hal_status_string(status) +
           " for a bad file; a bad file must be ignored";
  }
  if (cache.handle() == VK_NULL_HANDLE) return "PipelineCache::init created no VkPipelineCache";
  return {};
}

}  // namespace hal_fuzz
