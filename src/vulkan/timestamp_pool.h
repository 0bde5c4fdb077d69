// TimestampPool: the device's timestamp queries for events, one query per recorded event.
//
// Queries come from pools of kQueriesPerPool, created as events need them and kept for the
// device's life; a query is handed back when the event capture that wrote it is gone. So
// recording an event creates nothing in the common case: it takes a free query, and the
// capture's command resets and writes it in the stream's open batch.
//
// Ownership: the device owns the pool; every query must be back before it is destroyed (event
// captures are released before their device). Thread-safety: acquire and release may be called
// from any thread.
#pragma once

#include "vulkan/vk.h"

#include <hal/hal.h>

#include <mutex>
#include <vector>

namespace hal::vulkan {

class VulkanDevice;

struct TimestampQuery {
  VkQueryPool pool = VK_NULL_HANDLE;
  uint32_t index = 0;
};

class TimestampPool {
 public:
  static constexpr uint32_t kQueriesPerPool = 256;

  explicit TimestampPool(VulkanDevice& device) : device_(device) {}
  ~TimestampPool();
  TimestampPool(const TimestampPool&) = delete;
  TimestampPool& operator=(const TimestampPool&) = delete;

  // A free query (not reset: the command that writes it resets it first). Returns HAL_SUCCESS,
  // or vkCreateQueryPool's failure (HAL_ERROR_OUT_OF_MEMORY, HAL_ERROR_DEVICE_LOST).
  hal_status acquire(TimestampQuery* out);
  // Hands |query| back once nothing will read or write it again.
  void release(const TimestampQuery& query);
  // For tests: the query pools created so far.
  size_t pool_count() const;

 private:
  VulkanDevice& device_;
  mutable std::mutex mutex_;
  std::vector<VkQueryPool> pools_;
  std::vector<TimestampQuery> free_;
};

}  // namespace hal::vulkan
