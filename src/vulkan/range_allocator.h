// RangeAllocator: a free-list sub-allocator over one linear range of bytes.
//
// The Vulkan backend carves many hal_mem_alloc allocations out of a few large VkDeviceMemory
// blocks, because drivers limit the number of live VkDeviceMemory objects (often to 4096) and
// each one is expensive. This class only does the arithmetic: it knows nothing about Vulkan,
// so it is tested on its own.
//
// Policy: best fit over a free list ordered by offset, adjacent free ranges merged on release.
// Every returned offset is a multiple of |alignment| (a power of two); sizes are rounded up to
// it, so freed space is always reusable at that alignment.
//
// Thread-safety: none; the owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace hal::vulkan {

class RangeAllocator {
 public:
  // Manages [begin, end). |begin| is rounded up to |alignment|.
  RangeAllocator(uint64_t begin, uint64_t end, uint64_t alignment);

  // Reserves |size| bytes (> 0); false when no free range is large enough.
  bool allocate(uint64_t size, uint64_t* offset);
  // Returns a range from allocate(); false (and no change) if |offset| is not a live one.
  bool release(uint64_t offset);

  uint64_t capacity() const { return end_ - begin_; }
  uint64_t used() const { return used_; }
  bool empty() const { return live_.empty(); }
  size_t live_count() const { return live_.size(); }
  size_t free_range_count() const { return free_.size(); }
  // The largest single allocation that would currently succeed.
  uint64_t largest_free() const;

 private:
  uint64_t begin_;
  uint64_t end_;
  uint64_t alignment_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> free_;  // offset -> size, disjoint and never adjacent
  std::map<uint64_t, uint64_t> live_;  // offset -> rounded size
};

}  // namespace hal::vulkan
