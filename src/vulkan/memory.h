// MemoryManager: device memory for hal_mem_alloc, host-visible memory for hal_host_alloc and for
// staging.
//
// Device allocations are carved out of large blocks (one VkDeviceMemory bound to one VkBuffer
// each), so thousands of small allocations use a handful of driver allocations
// (maxMemoryAllocationCount is often 4096). Requests above half a block get a dedicated block of
// their own. Every block respects maxMemoryAllocationSize, and no buffer is larger than
// maxBufferSize.
//
// Addresses: with buffer device addresses an allocation's hal_deviceptr is the real address of
// its bytes, usable inside kernels; without, each block gets a unique range of made-up
// addresses (never reused, never 0). Either way allocation bases are 256-byte aligned.
//
// Allocation::backend_data holds a pointer to the DeviceChunk (block and offset), so commands
// find their VkBuffer without a lookup. The chunk lives until the allocation is released.
//
// Host allocations: each is a HostBuffer of its own, named by the allocation's driver_data. The
// core keeps the table of them and hands the record to the copies that use it.
//
// Releases: release() and host_release() return memory at once. VulkanDevice frees through a
// PendingRelease (below) instead, which calls them once the work issued before the free has
// completed; the manager only counts those in waiting (pending_releases()).
//
// Thread-safety: every method may be called concurrently; one mutex guards the block list. Lock
// order: a stream's lock (StreamCore) may be held when release() runs, because completed batches
// drop their PendingReleases under it; so nothing may take a stream's lock while holding this
// manager's mutex (and nothing here calls into a stream).
#pragma once

#include "common/backend.h"
#include "vulkan/range_allocator.h"
#include "vulkan/vk.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace hal::vulkan {

class VulkanDevice;

struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t size = 0;          // bytes of the buffer
  uint64_t address = 0;       // hal address of buffer byte |pad|
  uint64_t pad = 0;           // first usable byte, so that |address| is 256-aligned
  uint8_t* mapped = nullptr;  // host pointer to byte 0, when the memory is host-visible
  std::unique_ptr<RangeAllocator> ranges;  // null for a dedicated block
};

// One device allocation: bytes [offset, offset + size) of |block->buffer|.
struct DeviceChunk {
  MemoryBlock* block = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t range_offset = 0;  // the offset inside |block->ranges| (sub-allocated chunks)
};

// A host-visible, mapped buffer (hal_host_alloc memory and staging).
struct HostBuffer {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t size = 0;
  uint8_t* mapped = nullptr;
  uint64_t address = 0;  // its device address where the device has bufferDeviceAddress, else 0
};

class MemoryManager {
 public:
  static constexpr uint64_t kDefaultBlockSize = 32ull << 20;
  static constexpr uint64_t kAddressAlignment = 256;

  // |block_size| is capped by the device's limits. Call init() before anything else.
  MemoryManager(VulkanDevice& device, uint64_t block_size = kDefaultBlockSize);
  ~MemoryManager();
  hal_status init();

  hal_status allocate(uint64_t size, Allocation* out);
  // Returns the allocation's bytes to the allocator now: the caller knows no work uses them.
  // HAL_ERROR_INTERNAL for an allocation without backend data.
  hal_status release(const Allocation& alloc);
  static const DeviceChunk& chunk(const Allocation& alloc) {
    return *reinterpret_cast<const DeviceChunk*>(static_cast<uintptr_t>(alloc.backend_data));
  }

  // Whether device allocations are host-visible and coherent (mapped): copies then memcpy.
  bool device_mapped() const { return device_mapped_; }
  // The largest allocation allocate() accepts.
  uint64_t max_allocation_size() const { return max_allocation_size_; }
  uint64_t total_memory() const { return total_memory_; }
  uint64_t block_size() const { return block_size_; }
  size_t block_count() const;
  // Bytes of device allocations not yet released (live ones and those whose release waits for
  // work), each rounded up to kAddressAlignment.
  uint64_t device_bytes() const;
  // Frees (device and host) whose release waits for work issued before them (PendingRelease).
  uint64_t pending_releases() const { return pending_releases_.load(); }
  // Live VkDeviceMemory objects (blocks, host buffers, staging).
  uint64_t memory_objects() const { return memory_objects_.load(); }
  // For tests, to run out of memory on purpose: at most |limit| live memory objects (still no
  // more than maxMemoryAllocationCount); 0 restores the device's limit.
  void set_memory_object_limit_for_testing(uint32_t limit) { object_limit_for_testing_ = limit; }

  hal_status host_allocate(uint64_t size, HostAllocation* out);
  // Destroys the allocation's buffer now: the caller knows no work uses it.
  void host_release(const HostAllocation& allocation);
  static const HostBuffer& host_buffer(const HostAllocation& allocation) {
    return *reinterpret_cast<const HostBuffer*>(static_cast<uintptr_t>(allocation.driver_data));
  }

  // Creates / destroys a host-visible mapped buffer usable as a transfer source and target (and
  // for |extra_usage|).
  hal_status create_host_buffer(uint64_t size, HostBuffer* out, VkBufferUsageFlags extra_usage = 0);
  void destroy_host_buffer(HostBuffer* buffer);

 private:
  hal_status create_block(uint64_t size, bool dedicated, std::unique_ptr<MemoryBlock>* out);
  void destroy_block(MemoryBlock* block);
  hal_status allocate_memory(uint64_t size, uint32_t type, bool device_address,
                             VkDeviceMemory* out);
  void free_memory(VkDeviceMemory memory);

  VulkanDevice& device_;
  uint64_t block_size_;
  uint64_t max_allocation_size_ = 0;
  uint64_t total_memory_ = 0;
  uint32_t device_type_ = 0;
  uint32_t host_type_ = 0;
  bool device_mapped_ = false;
  VkBufferUsageFlags device_usage_ = 0;
  uint64_t next_fake_address_ = 1ull << 40;
  std::atomic<uint64_t> memory_objects_{0};
  std::atomic<uint64_t> pending_releases_{0};
  std::atomic<uint32_t> object_limit_for_testing_{0};

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;
  uint64_t device_bytes_ = 0;  // guarded by |mutex_|

  friend class PendingRelease;
};

// One freed allocation, device or host, whose memory work issued before the free may still use.
// The destructor releases it (MemoryManager::release or host_release): VulkanDevice::mem_free and
// host_free create one and hand a reference to each stream with unfinished work, which keeps it
// in its newest batch; the last of those batches to complete (or to be dropped unrun) releases
// the memory. Until then the allocator does not hand the bytes out again.
//
// Ownership: std::shared_ptr, held by stream batches only. Every holder must go before the
// MemoryManager does: stream cores are destroyed before their device.
// Thread-safety: the destructor runs on whichever thread drops the last reference, often under
// a stream's lock (see the lock order above); it takes the manager's mutex and nothing else.
class PendingRelease {
 public:
  PendingRelease(MemoryManager& memory, const Allocation& alloc);
  PendingRelease(MemoryManager& memory, const HostAllocation& host);
  ~PendingRelease();
  PendingRelease(const PendingRelease&) = delete;
  PendingRelease& operator=(const PendingRelease&) = delete;

 private:
  MemoryManager& memory_;
  bool host_;
  Allocation device_allocation_;
  HostAllocation host_allocation_{};
};

}  // namespace hal::vulkan
