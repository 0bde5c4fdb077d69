// The allocation table of one device: every live hal_mem_alloc, ordered by base address.
//
// Every device pointer that crosses the ABI (copy source or destination, fill target, launch
// argument, free) is checked here before a backend sees it, so backends can trust the ranges
// they receive. Lookups are O(log n).
//
// Thread-safety: all methods may be called concurrently (readers share a lock).
#pragma once

#include <hal/hal_driver.h>

#include <deque>
#include <map>
#include <shared_mutex>

namespace hal {

class AllocationTable {
 public:
  // Adds |alloc|; false (and nothing added) when it overlaps a live allocation, which only a
  // driver breaking its promise of distinct allocations can cause.
  bool insert(const hal_driver_allocation& alloc);

  // Removes the allocation whose base is exactly |base|; false if there is none.
  bool remove(hal_deviceptr base, hal_driver_allocation* removed);

  // The allocation containing byte |ptr|, if any.
  bool find(hal_deviceptr ptr, hal_driver_allocation* out) const;

  // The number of live allocations.
  size_t size() const;

  // The bytes of all live allocations, as their callers asked for them.
  uint64_t bytes() const;

  // The most recently freed allocation that held byte |ptr|, among the last kFreedKept frees
  // (for the hints of error messages: "freed", not "never allocated").
  bool find_freed(hal_deviceptr ptr, hal_driver_allocation* out) const;
  static constexpr size_t kFreedKept = 1024;

 private:
  mutable std::shared_mutex mutex_;
  std::map<hal_deviceptr, hal_driver_allocation> by_base_;
  uint64_t bytes_ = 0;
  std::deque<hal_driver_allocation> freed_;  // newest last
};

}  // namespace hal
