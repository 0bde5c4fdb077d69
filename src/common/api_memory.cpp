// Device and host allocations.
#include "common/api_guard.h"
#include "common/registry.h"

#include <cstdint>
#include <cstdlib>

using namespace hal;

extern "C" {

HAL_API hal_status hal_mem_alloc(hal_device device, size_t size, hal_deviceptr* ptr) {
  return guarded("hal_mem_alloc", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(ptr != nullptr, "ptr is NULL");
    HAL_REQUIRE_ARG(size > 0, "size is 0; allocate at least 1 byte");
    HAL_RETURN_IF_ERROR(check_not_lost(*dev));
    const hal_device_info& info = dev->info;
    if (info.max_allocation_size != 0 && size > info.max_allocation_size) {
      return failf(HAL_ERROR_OUT_OF_MEMORY,
                   "{} bytes is more than the largest allocation device {} supports ({} bytes). "
                   "Split the buffer",
                   size, dev->label, info.max_allocation_size);
    }
    const hal_driver& driver = dev->driver->table;
    hal_driver_allocation alloc{};
    HAL_RETURN_IF_ERROR(driver_status(*dev, driver.mem_alloc(dev->impl, size, &alloc)));
    // The rules of hal_driver.h's mem_alloc, each named, so that a driver's author reads which
    // one the allocation broke rather than decoding the numbers.
    const char* broken = alloc.base == 0         ? "its base is 0, which is the null pointer"
                         : alloc.base % 256 != 0 ? "its base is not a multiple of 256 bytes, "
                                                   "the alignment every allocation must have"
                         : alloc.size < size     ? "it is smaller than the size asked for"
                                                 : nullptr;
    if (broken != nullptr) {
      driver.mem_free(dev->impl, &alloc);
      return failf(HAL_ERROR_INTERNAL,
                   "the driver of device {} returned an invalid allocation (base {:#x}, {} bytes "
                   "for {} asked): {}. A bug in {}",
                   dev->label, alloc.base, alloc.size, size, broken, dev->driver->origin);
    }
    alloc.size = size;  // ranges are checked against what the caller asked for
    if (!dev->allocations.insert(alloc)) {
      driver.mem_free(dev->impl, &alloc);
      return failf(HAL_ERROR_INTERNAL,
                   "the driver of device {} returned allocation {:#x} ({} bytes), which overlaps "
                   "a live one: a bug in {}",
                   dev->label, alloc.base, size, dev->driver->origin);
    }
    *ptr = alloc.base;
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_mem_free(hal_device device, hal_deviceptr ptr) {
  return guarded("hal_mem_free", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    std::unique_lock memory(dev->memory_mutex);  // waits for copies and launches in progress
    hal_driver_allocation alloc{};
    if (!dev->allocations.remove(ptr, &alloc)) {
      hal_driver_allocation inside{};
      if (ptr != 0 && dev->allocations.find(ptr, &inside)) {
        return failf(HAL_ERROR_INVALID_ARGUMENT,
                     "{:#x} is inside the allocation at {:#x}, not its base. Free the base "
                     "address hal_mem_alloc returned",
                     ptr, inside.base);
      }
      if (ptr != 0) {
        for (const auto& other : registry().devices) {
          if (other == dev || !other->allocations.find(ptr, &inside)) continue;
          return failf(HAL_ERROR_INVALID_ARGUMENT,
                       "{:#x} belongs to device {}, not to {}. Free it with the device that "
                       "allocated it",
                       ptr, other->label, dev->label);
        }
      }
      return failf(HAL_ERROR_INVALID_ARGUMENT,
                   "{:#x} is not a live allocation of device {} (already freed, never "
                   "allocated, or another device's)",
                   ptr, dev->label);
    }
    // A lost device cannot free anything; the table entry is gone either way.
    if (dev->lost.load()) return HAL_SUCCESS;
    return driver_status(*dev, dev->driver->table.mem_free(dev->impl, &alloc));
  });
}

HAL_API hal_status hal_host_alloc(hal_device device, size_t size, void** host) {
  return guarded("hal_host_alloc", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(host != nullptr, "host is NULL");
    HAL_REQUIRE_ARG(size > 0, "size is 0; allocate at least 1 byte");
    HAL_RETURN_IF_ERROR(check_not_lost(*dev));
    hal_driver_host_allocation out{};
    const hal_driver& driver = dev->driver->table;
    if (driver.host_alloc != nullptr) {
      HAL_RETURN_IF_ERROR(driver_status(*dev, driver.host_alloc(dev->impl, size, &out)));
      if (out.base == nullptr) {
        return failf(HAL_ERROR_INTERNAL, "the {} driver's host_alloc succeeded without memory",
                     dev->driver->table.name);
      }
    } else {
      // The driver has no page-locked memory of its own: ordinary page-aligned memory.
      const size_t page = 4096;
      if (size > SIZE_MAX - page) {
        return failf(HAL_ERROR_OUT_OF_MEMORY, "{} bytes of host memory cannot be allocated", size);
      }
      out.base = std::aligned_alloc(page, (size + page - 1) / page * page);
      if (out.base == nullptr) {
        return failf(HAL_ERROR_OUT_OF_MEMORY, "{} bytes of host memory are not available", size);
      }
    }
    out.size = size;
    std::lock_guard lock(dev->host_mutex);
    dev->host_allocations.emplace(out.base, out);
    *host = out.base;
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_host_free(hal_device device, void* host) {
  return guarded("hal_host_free", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    std::unique_lock memory(dev->memory_mutex);  // copies may be using the allocation
    hal_driver_host_allocation allocation{};
    {
      std::lock_guard lock(dev->host_mutex);
      auto it = dev->host_allocations.find(host);
      if (it == dev->host_allocations.end()) {
        return failf(HAL_ERROR_INVALID_ARGUMENT,
                     "{} is not live host memory from hal_host_alloc on device {} (already "
                     "freed, or allocated elsewhere)",
                     host, dev->label);
      }
      allocation = it->second;
      dev->host_allocations.erase(it);
    }
    const hal_driver& driver = dev->driver->table;
    if (driver.host_free == nullptr) {
      // The core's own memory: work already issued may still read or write it (a driver may
      // complete a copy to it when its batch does), so the device finishes first.
      if (!dev->lost.load()) {
        const hal_status status = driver.device_synchronize(dev->impl);
        if (status != HAL_SUCCESS && status != HAL_ERROR_DEVICE_LOST) {
          std::free(host);
          return driver_failure(*dev, status);
        }
        clear_pending_error();
      }
      std::free(host);
      return HAL_SUCCESS;
    }
    if (dev->lost.load()) return HAL_SUCCESS;
    return driver_status(*dev, driver.host_free(dev->impl, &allocation));
  });
}

HAL_API hal_status hal_mem_host_pointer(hal_device device, hal_deviceptr ptr, void** host) {
  return guarded("hal_mem_host_pointer", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(host != nullptr, "host is NULL");
    if (dev->lost.load()) {
      return failf(HAL_ERROR_DEVICE_LOST, "device {} was lost; its memory is gone", dev->label);
    }
    std::shared_lock memory(dev->memory_mutex);  // the allocation stays while the backend looks
    hal_driver_allocation alloc{};
    if (!dev->allocations.find(ptr, &alloc)) {
      return failf(HAL_ERROR_OUT_OF_RANGE,
                   "{:#x} is inside no live allocation of device {}. Pass an address from "
                   "hal_mem_alloc on this device (base plus an offset inside it)",
                   ptr, dev->label);
    }
    void* out = nullptr;
    const hal_driver& driver = dev->driver->table;
    const hal_status status = driver.host_pointer == nullptr
                                  ? HAL_ERROR_NOT_SUPPORTED
                                  : driver.host_pointer(dev->impl, &alloc, ptr - alloc.base, &out);
    if (status == HAL_ERROR_NOT_SUPPORTED) {
      return failf(HAL_ERROR_NOT_SUPPORTED,
                   "device {} gives no host address for its memory (it is not host-visible and "
                   "coherent to hal). Copy it with hal_memcpy_dtoh instead",
                   dev->label);
    }
    if (status != HAL_SUCCESS) return driver_status(*dev, status);
    *host = out;
    return HAL_SUCCESS;
  });
}

}  // extern "C"

namespace hal {

bool DeviceObject::find_host_allocation(const void* host, size_t size,
                                        hal_driver_host_allocation* out) {
  if (driver->table.host_alloc == nullptr) return false;
  std::lock_guard lock(host_mutex);
  if (host_allocations.empty()) return false;
  auto it = host_allocations.upper_bound(const_cast<void*>(host));
  if (it == host_allocations.begin()) return false;
  --it;
  const uintptr_t start =
      reinterpret_cast<uintptr_t>(host) - reinterpret_cast<uintptr_t>(it->first);
  if (start >= it->second.size || size > it->second.size - start) return false;
  *out = it->second;
  return true;
}

}  // namespace hal
