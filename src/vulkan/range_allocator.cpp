#include "vulkan/range_allocator.h"

namespace hal::vulkan {
namespace {

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace

RangeAllocator::RangeAllocator(uint64_t begin, uint64_t end, uint64_t alignment)
    : alignment_(alignment == 0 ? 1 : alignment) {
  begin_ = align_up(begin, alignment_);
  end_ = end > begin_ ? begin_ + ((end - begin_) & ~(alignment_ - 1)) : begin_;
  if (end_ > begin_) free_.emplace(begin_, end_ - begin_);
}

bool RangeAllocator::allocate(uint64_t size, uint64_t* offset) {
  if (size == 0 || size > end_ - begin_) return false;
  const uint64_t rounded = align_up(size, alignment_);
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < rounded) continue;
    if (best == free_.end() || it->second < best->second) {
      best = it;
      if (it->second == rounded) break;  // exact fit: cannot do better
    }
  }
  if (best == free_.end()) return false;
  const uint64_t start = best->first;
  const uint64_t remaining = best->second - rounded;
  free_.erase(best);
  if (remaining > 0) free_.emplace(start + rounded, remaining);
  live_.emplace(start, rounded);
  used_ += rounded;
  *offset = start;
  return true;
}

bool RangeAllocator::release(uint64_t offset) {
  auto live = live_.find(offset);
  if (live == live_.end()) return false;
  uint64_t start = offset;
  uint64_t size = live->second;
  used_ -= size;
  live_.erase(live);
  // Merge with the free neighbour after, then the one before.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += size;
      return true;
    }
  }
  free_.emplace(start, size);
  return true;
}

uint64_t RangeAllocator::largest_free() const {
  uint64_t largest = 0;
  for (const auto& [offset, size] : free_) {
    if (size > largest) largest = size;
  }
  return largest;
}

}  // namespace hal::vulkan
