// VulkanStream: hal::Stream on top of a StreamCore (see stream_core.h for batching and ordering).
//
// Host copies: when device memory is host-visible and the stream is idle (nothing recorded,
// nothing in flight), copies and fills touch the memory directly with the CPU; the result is
// the same as issuing them in order. Otherwise:
//  - htod copies the source into staging memory at once (the caller may reuse it when the call
//    returns) and records a buffer copy, so stream order holds;
//  - dtoh records a copy into the caller's hal_host_alloc buffer when the destination is one,
//    else into staging memory, and copies from staging to the destination when the batch
//    completes (the destination is valid after synchronisation, as hal.h promises); the batch
//    is submitted at once, since the host will wait for it.
//
// Thread-safety: the runtime serialises calls on one stream; the core's lock covers what other
// threads (events, device synchronisation) touch.
#pragma once

#include "common/backend.h"
#include "common/trace.h"
#include "vulkan/vk.h"

#include <functional>
#include <memory>
#include <vector>

namespace hal::vulkan {

class StreamCore;
class VulkanDevice;
struct FunctionState;

class VulkanStream : public hal::Stream {
 public:
  explicit VulkanStream(std::shared_ptr<StreamCore> core);
  ~VulkanStream() override;

  hal_status copy_htod(const DeviceRange& dst, const void* src, size_t size,
                       const HostAllocation* host) override;
  hal_status copy_dtoh(void* dst, const DeviceRange& src, size_t size,
                       const HostAllocation* host) override;
  hal_status copy_dtod(const DeviceRange& dst, const DeviceRange& src, size_t size) override;
  hal_status fill(const DeviceRange& dst, uint32_t pattern, uint32_t pattern_size,
                  size_t bytes) override;
  hal_status launch(hal::Function& function, const LaunchParams& params) override;
  hal_status record(hal::Event& event) override;
  hal_status wait(hal::Event& event) override;
  hal_status synchronize() override;
  hal_status query() override;

  const std::shared_ptr<StreamCore>& core() const { return core_; }

 private:
  // Records a buffer copy; |kind| names it in the timeline trace; |on_complete| (optional) runs
  // once the batch holding it completed.
  hal_status record_copy(VkBuffer src, uint64_t src_offset, VkBuffer dst, uint64_t dst_offset,
                         uint64_t size, trace::Op::Kind kind,
                         std::function<void()> on_complete = nullptr);
  hal_status fill_bytes_staged(VkBuffer buffer, uint64_t offset, uint8_t value, uint64_t size);

  std::shared_ptr<StreamCore> core_;
  VulkanDevice& device_;
  // What the open batch's command buffer has bound, so that back-to-back launches of one function
  // on the same buffers reuse their descriptor sets and skip rebinding.
  struct Bound {
    uint64_t batch = 0;  // StreamCore::open_serial_locked() when this was bound
    const FunctionState* state = nullptr;
    VkPipeline pipeline = VK_NULL_HANDLE;
    std::vector<VkDescriptorBufferInfo> buffers;  // what |state|'s bound sets describe
  };
  bool same_buffers(const std::vector<VkDescriptorBufferInfo>& buffers) const;

  // launch()'s working storage (calls on one stream are serialised by the runtime).
  std::vector<uint8_t> push_scratch_;
  std::vector<VkDescriptorBufferInfo> buffer_scratch_;
  std::vector<VkWriteDescriptorSet> write_scratch_;
  std::vector<VkDescriptorSet> set_scratch_;
  Bound bound_;
};

}  // namespace hal::vulkan
