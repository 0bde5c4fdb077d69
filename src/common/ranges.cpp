#include "common/ranges.h"

#include "common/error.h"
#include "common/registry.h"

namespace hal {

hal_status resolve_range(const DeviceObject& device, hal_deviceptr ptr, size_t size,
                         const char* what, hal_driver_range* out) {
  hal_driver_allocation alloc{};
  if (ptr == 0) {
    return failf(HAL_ERROR_OUT_OF_RANGE,
                 "{} is the null device address; pass an address from "
                 "hal_mem_alloc",
                 what);
  }
  if (!device.allocations.find(ptr, &alloc)) {
    for (const auto& other : registry().devices) {
      if (other.get() == &device) continue;
      if (other->allocations.find(ptr, &alloc)) {
        return failf(HAL_ERROR_OUT_OF_RANGE,
                     "{} {:#x} belongs to device {}, not to {}. Allocate on the device that "
                     "uses it, or copy between devices through the host",
                     what, ptr, other->label, device.label);
      }
    }
    return failf(HAL_ERROR_OUT_OF_RANGE,
                 "{} {:#x} is not inside any live allocation of device {} (never allocated, "
                 "or already freed)",
                 what, ptr, device.label);
  }
  const uint64_t offset = ptr - alloc.base;
  const uint64_t room = alloc.size - offset;
  if (size > room) {
    return failf(HAL_ERROR_OUT_OF_RANGE,
                 "{} range [{:#x}, +{}) runs {} byte(s) past the end of its allocation "
                 "[{:#x}, +{}) on device {}",
                 what, ptr, size, size - room, alloc.base, alloc.size, device.label);
  }
  out->allocation = alloc;
  out->offset = offset;
  return HAL_SUCCESS;
}

}  // namespace hal
