// VulkanEvent: a marker in a stream's timeline, with an optional GPU timestamp.
//
// Recording an event captures (stream timeline, value): the event completes when that
// stream's timeline semaphore reaches the value. When the device has timestamps, the captured
// batch also writes a timestamp into a query the capture holds from the device's TimestampPool,
// read back by elapsed_ms (ticks times timestampPeriod).
//
// Recording does not submit: the capture's commands join the open batch, between the work
// before and after it, so events around a kernel time that kernel and not a submission gap. Who
// waits for a capture (event synchronisation and queries, elapsed_ms, another stream's wait)
// first submits the batch it is in, if that has not happened yet.
//
// Each record makes a new capture, so re-recording never disturbs a wait that already took the
// previous one, and the capture (with its query and a reference to the stream's core) is kept
// alive by the batch that writes it until that batch has completed.
//
// Thread-safety: all methods may be called concurrently; the capture pointer is swapped under a
// mutex.
#pragma once

#include "common/backend.h"
#include "vulkan/timestamp_pool.h"
#include "vulkan/vk.h"

#include <memory>
#include <mutex>

namespace hal::vulkan {

class StreamCore;
class VulkanDevice;

struct EventCapture {
  explicit EventCapture(VulkanDevice& d) : device(d) {}
  ~EventCapture();
  EventCapture(const EventCapture&) = delete;
  EventCapture& operator=(const EventCapture&) = delete;

  VulkanDevice& device;
  std::shared_ptr<StreamCore> core;
  uint64_t value = 0;     // the timeline value of the batch it is in
  uint64_t position = 0;  // StreamCore::position_locked() where it was recorded: for faults
  TimestampQuery query;   // its timestamp (pool VK_NULL_HANDLE: the device has none)
};

class VulkanEvent : public hal::Event {
 public:
  explicit VulkanEvent(VulkanDevice& device) : device_(device) {}

  hal_status synchronize() override;
  hal_status query() override;
  hal_status elapsed_ms(hal::Event& end, float* ms) override;

  void set_capture(std::shared_ptr<EventCapture> capture);
  std::shared_ptr<EventCapture> capture();

 private:
  hal_status timestamp(const EventCapture& capture, uint64_t* ticks);

  VulkanDevice& device_;
  std::mutex mutex_;
  std::shared_ptr<EventCapture> capture_;
};

}  // namespace hal::vulkan
