// PipelineCache: the device's VkPipelineCache, persisted across processes.
//
// File: <dir>/vulkan-<device UUID>-<driver version>.bin, where <dir> is HAL_CACHE_DIR, else
// $XDG_CACHE_HOME/hal, else $HOME/.cache/hal. The file holds a header of our own (magic, the
// device's vendor and device ids, driver version, device UUID and pipelineCacheUUID, payload
// size, FNV-1a checksum) followed by the driver's cache data. A file that is missing,
// truncated, corrupt or written for another device or driver is ignored with a log line: some
// drivers do not defend against bad cache data, so it never reaches them.
//
// Saving writes a temporary file next to the target and renames it over the target, so a
// reader never sees a partial file and concurrent writers do not corrupt each other. Failures to
// save are logged, never reported: the cache is an optimisation.
//
// Thread-safety: handle() may be used concurrently (VkPipelineCache is internally synchronised);
// save() locks.
#pragma once

#include "vulkan/vk.h"

#include <hal/hal.h>

#include <atomic>
#include <mutex>
#include <string>

namespace hal::vulkan {

class VulkanDevice;

class PipelineCache {
 public:
  explicit PipelineCache(VulkanDevice& device) : device_(device) {}
  ~PipelineCache();  // saves, then destroys the VkPipelineCache
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  // Loads the file for this device from |dir| (empty: default_dir()), if it is valid, and
  // creates the VkPipelineCache. Only a driver failure is an error.
  hal_status init(const std::string& dir = {});

  VkPipelineCache handle() const { return cache_; }
  // Whether init() found a valid file (a warm start).
  bool warm() const { return warm_; }
  const std::string& path() const { return path_; }
  // Records that a pipeline was created, so the next save() has something to write.
  void mark_dirty() { dirty_.store(true); }
  // Writes the cache if pipelines were created since the last save.
  void save();

  static std::string default_dir();

 private:
  VulkanDevice& device_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string path_;
  bool warm_ = false;
  std::atomic<bool> dirty_{false};
  std::mutex save_mutex_;
};

}  // namespace hal::vulkan
