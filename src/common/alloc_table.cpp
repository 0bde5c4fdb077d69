#include "common/alloc_table.h"

#include <mutex>

namespace hal {

void AllocationTable::insert(const hal_driver_allocation& alloc) {
  std::unique_lock lock(mutex_);
  auto [it, inserted] = by_base_.try_emplace(alloc.base, alloc);
  if (!inserted) {
    bytes_ -= it->second.size;
    it->second = alloc;
  }
  bytes_ += alloc.size;
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
