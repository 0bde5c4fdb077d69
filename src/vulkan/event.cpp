#include "vulkan/event.h"

#include "common/error.h"
#include "vulkan/device.h"
#include "vulkan/stream_core.h"

namespace hal::vulkan {

EventCapture::~EventCapture() {
  device.timestamps().release(query);
}

void VulkanEvent::set_capture(std::shared_ptr<EventCapture> capture) {
  std::lock_guard<std::mutex> lock(mutex_);
  capture_ = std::move(capture);
}

std::shared_ptr<EventCapture> VulkanEvent::capture() {
  std::lock_guard<std::mutex> lock(mutex_);
  return capture_;
}

hal_status VulkanEvent::synchronize() {
  std::shared_ptr<EventCapture> captured = capture();
  if (!captured) return HAL_SUCCESS;
  hal_status status = captured->core->submit_through(captured->value);
  if (status == HAL_SUCCESS) status = captured->core->wait_value(captured->value);
  if (status != HAL_SUCCESS) return status;
  return captured->core->take_fault(captured->position);
}

namespace {

// HAL_SUCCESS when |captured|'s work has completed, HAL_ERROR_NOT_READY while it runs. A query is
// a promise of progress too: work recorded before the event is submitted now (event.h).
hal_status completed(const EventCapture& captured) {
  hal_status status = captured.core->submit_through(captured.value);
  if (status != HAL_SUCCESS) return status;
  bool done = false;
  status = captured.core->query_value(captured.value, &done);
  if (status != HAL_SUCCESS) return status;
  return done ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
}

}  // namespace

hal_status VulkanEvent::query() {
  std::shared_ptr<EventCapture> captured = capture();
  if (!captured) return HAL_SUCCESS;
  hal_status status = completed(*captured);
  if (status != HAL_SUCCESS) return status;
  return captured->core->take_fault(captured->position);
}

hal_status VulkanEvent::timestamp(const EventCapture& captured, uint64_t* ticks) {
  uint64_t value = 0;
  VkResult result = device_.vk().vkGetQueryPoolResults(
      device_.handle(), captured.query.pool, captured.query.index, 1, sizeof(value), &value,
      sizeof(value), VK_QUERY_RESULT_64_BIT);
  if (result == VK_NOT_READY) return HAL_ERROR_NOT_READY;
  if (result != VK_SUCCESS) return device_.check(result, "vkGetQueryPoolResults");
  const uint32_t bits = device_.caps().timestamp_valid_bits;
  if (bits < 64) value &= (uint64_t{1} << bits) - 1;
  *ticks = value;
  return HAL_SUCCESS;
}

hal_status VulkanEvent::elapsed_ms(hal::Event& end_event, float* ms) {
  if (!device_.caps().timestamps) {
    return hal::fail(HAL_ERROR_NOT_SUPPORTED,
                     "the device's compute queue has no timestamps (timestampValidBits is 0)");
  }
  std::shared_ptr<EventCapture> start = capture();
  std::shared_ptr<EventCapture> end = static_cast<VulkanEvent&>(end_event).capture();
  if (!start || !end) {
    return hal::fail(HAL_ERROR_INVALID_ARGUMENT, "both events must have been recorded");
  }
  for (const auto& captured : {start, end}) {
    hal_status status = completed(*captured);
    if (status != HAL_SUCCESS) return status;
  }
  if (start->query.pool == VK_NULL_HANDLE || end->query.pool == VK_NULL_HANDLE) {
    return hal::fail(HAL_ERROR_INTERNAL, "a recorded event has no timestamp query");
  }
  uint64_t t0 = 0;
  uint64_t t1 = 0;
  hal_status status = timestamp(*start, &t0);
  if (status == HAL_SUCCESS) status = timestamp(*end, &t1);
  if (status != HAL_SUCCESS) return status;
  const double ticks = t1 >= t0 ? static_cast<double>(t1 - t0) : -static_cast<double>(t0 - t1);
  *ms = static_cast<float>(ticks * device_.caps().timestamp_period / 1.0e6);
  return HAL_SUCCESS;
}

}  // namespace hal::vulkan
