// Copies and fills: every device range is resolved against the allocation table first.
#include "common/api_guard.h"
#include "common/ranges.h"
#include "common/registry.h"

#include <shared_mutex>

using namespace hal;

namespace {

// Looks up |stream|, takes its lock and checks the device; then runs |body| with the stream
// and its device. The lock serialises calls on one stream, as hal_driver.h promises drivers.
template <typename Body>
hal_status with_stream(hal_stream stream, Body&& body) {
  auto s = find_as<StreamObject>(stream, HandleKind::kStream, "stream");
  if (!s) return HAL_ERROR_INVALID_HANDLE;
  std::shared_lock memory(s->device->memory_mutex);  // no free while the ranges are in use
  std::lock_guard lock(s->mutex);
  if (!s->impl) return fail(HAL_ERROR_INVALID_HANDLE, "the stream was destroyed");
  HAL_RETURN_IF_ERROR(check_not_lost(*s->device));
  return body(s->device->driver->table, s->impl, *s->device);
}

}  // namespace

extern "C" {

HAL_API hal_status hal_memcpy_htod(hal_stream stream, hal_deviceptr dst, const void* src,
                                   size_t size) {
  return guarded("hal_memcpy_htod", [&]() -> hal_status {
    return with_stream(
        stream, [&](const hal_driver& d, hal_driver_stream s, DeviceObject& dev) -> hal_status {
          if (size == 0) return HAL_SUCCESS;
          HAL_REQUIRE_ARG(src != nullptr, "src is NULL with size {}", size);
          hal_driver_range range;
          HAL_RETURN_IF_ERROR(resolve_range(dev, dst, size, "destination", &range));
          hal_driver_host_allocation host;
          const bool pinned = dev.find_host_allocation(src, size, &host);
          return driver_status(dev, d.copy_htod(s, &range, src, size, pinned ? &host : nullptr));
        });
  });
}

HAL_API hal_status hal_memcpy_dtoh(hal_stream stream, void* dst, hal_deviceptr src, size_t size) {
  return guarded("hal_memcpy_dtoh", [&]() -> hal_status {
    return with_stream(
        stream, [&](const hal_driver& d, hal_driver_stream s, DeviceObject& dev) -> hal_status {
          if (size == 0) return HAL_SUCCESS;
          HAL_REQUIRE_ARG(dst != nullptr, "dst is NULL with size {}", size);
          hal_driver_range range;
          HAL_RETURN_IF_ERROR(resolve_range(dev, src, size, "source", &range));
          hal_driver_host_allocation host;
          const bool pinned = dev.find_host_allocation(dst, size, &host);
          return driver_status(dev, d.copy_dtoh(s, dst, &range, size, pinned ? &host : nullptr));
        });
  });
}

HAL_API hal_status hal_memcpy_dtod(hal_stream stream, hal_deviceptr dst, hal_deviceptr src,
                                   size_t size) {
  return guarded("hal_memcpy_dtod", [&]() -> hal_status {
    return with_stream(
        stream, [&](const hal_driver& d, hal_driver_stream s, DeviceObject& dev) -> hal_status {
          if (size == 0) return HAL_SUCCESS;
          hal_driver_range to;
          hal_driver_range from;
          HAL_RETURN_IF_ERROR(resolve_range(dev, dst, size, "destination", &to));
          HAL_RETURN_IF_ERROR(resolve_range(dev, src, size, "source", &from));
          return driver_status(dev, d.copy_dtod(s, &to, &from, size));
        });
  });
}

HAL_API hal_status hal_memset_d8(hal_stream stream, hal_deviceptr dst, uint8_t value,
                                 size_t count) {
  return guarded("hal_memset_d8", [&]() -> hal_status {
    return with_stream(
        stream, [&](const hal_driver& d, hal_driver_stream s, DeviceObject& dev) -> hal_status {
          if (count == 0) return HAL_SUCCESS;
          hal_driver_range range;
          HAL_RETURN_IF_ERROR(resolve_range(dev, dst, count, "destination", &range));
          return driver_status(dev, d.fill(s, &range, value, 1, count));
        });
  });
}

HAL_API hal_status hal_memset_d32(hal_stream stream, hal_deviceptr dst, uint32_t value,
                                  size_t count) {
  return guarded("hal_memset_d32", [&]() -> hal_status {
    return with_stream(
        stream, [&](const hal_driver& d, hal_driver_stream s, DeviceObject& dev) -> hal_status {
          if (count == 0) return HAL_SUCCESS;
          HAL_REQUIRE_ARG(dst % 4 == 0, "destination {:#x} is not 4-byte aligned", dst);
          HAL_REQUIRE_ARG(count <= SIZE_MAX / 4, "count {} words overflows a byte size", count);
          hal_driver_range range;
          HAL_RETURN_IF_ERROR(resolve_range(dev, dst, count * 4, "destination", &range));
          return driver_status(dev, d.fill(s, &range, value, 4, count * 4));
        });
  });
}

}  // extern "C"
