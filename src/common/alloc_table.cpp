#include "common/alloc_table.h"

#include <iterator>
#include <mutex>

namespace hal {

bool AllocationTable::insert(const hal_driver_allocation& alloc) {
  std::unique_lock lock(mutex_);
  auto next = by_base_.lower_bound(alloc.base);
  if (next != by_base_.end() && next->first - alloc.base < alloc.size) return false;
  if (next != by_base_.begin()) {
    auto prev = std::prev(next);
    if (alloc.base - prev->first < prev->second.size) return false;
  }
  by_base_.emplace_hint(next, alloc.base, alloc);
  bytes_ += alloc.size;
  return true;
}

bool AllocationTable::remove(hal_deviceptr base, hal_driver_allocation* removed) {
  std::unique_lock lock(mutex_);
  auto it = by_base_.find(base);
  if (it == by_base_.end()) return false;
  *removed = it->second;
  bytes_ -= it->second.size;
  by_base_.erase(it);
  if (freed_.size() == kFreedKept) freed_.pop_front();
  freed_.push_back(*removed);
  return true;
}

bool AllocationTable::find(hal_deviceptr ptr, hal_driver_allocation* out) const {
  std::shared_lock lock(mutex_);
  auto it = by_base_.upper_bound(ptr);
  if (it == by_base_.begin()) return false;
  --it;
  const hal_driver_allocation& alloc = it->second;
  if (ptr - alloc.base >= alloc.size) return false;
  *out = alloc;
  return true;
}

size_t AllocationTable::size() const {
  std::shared_lock lock(mutex_);
  return by_base_.size();
}

uint64_t AllocationTable::bytes() const {
  std::shared_lock lock(mutex_);
  return bytes_;
}

bool AllocationTable::find_freed(hal_deviceptr ptr, hal_driver_allocation* out) const {
  std::shared_lock lock(mutex_);
  for (auto it = freed_.rbegin(); it != freed_.rend(); ++it) {
    if (ptr - it->base < it->size) {
      *out = *it;
      return true;
    }
  }
  return false;
}

}  // namespace hal
