#include "vulkan/timestamp_pool.h"

#include "vulkan/device.h"

namespace hal::vulkan {

TimestampPool::~TimestampPool() {
  for (VkQueryPool pool : pools_) device_.vk().vkDestroyQueryPool(device_.handle(), pool, nullptr);
}

hal_status TimestampPool::acquire(TimestampQuery* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = kQueriesPerPool;
    VkQueryPool pool = VK_NULL_HANDLE;
    VkResult result = device_.vk().vkCreateQueryPool(device_.handle(), &info, nullptr, &pool);
    if (result != VK_SUCCESS) return device_.check(result, "vkCreateQueryPool");
    pools_.push_back(pool);
    // Handed out from index 0 up, which keeps one event's queries near each other.
    for (uint32_t i = kQueriesPerPool; i > 0; --i) free_.push_back(TimestampQuery{pool, i - 1});
  }
  *out = free_.back();
  free_.pop_back();
  return HAL_SUCCESS;
}

void TimestampPool::release(const TimestampQuery& query) {
  if (query.pool == VK_NULL_HANDLE) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(query);
}

size_t TimestampPool::pool_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pools_.size();
}

}  // namespace hal::vulkan
