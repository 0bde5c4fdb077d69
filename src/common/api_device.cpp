// Device discovery, selection, information and synchronisation.
#include "common/api_guard.h"

#include <cstddef>
#include "common/registry.h"

using namespace hal;

extern "C" {

HAL_API hal_status hal_device_count(uint32_t* count) {
  return guarded("hal_device_count", [&]() -> hal_status {
    HAL_REQUIRE_ARG(count != nullptr, "count is NULL");
    *count = static_cast<uint32_t>(registry().devices.size());
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_device_get(uint32_t index, hal_device* device) {
  return guarded("hal_device_get", [&]() -> hal_status {
    HAL_REQUIRE_ARG(device != nullptr, "device is NULL");
    const Registry& reg = registry();
    if (index >= reg.devices.size()) {
      return failf(HAL_ERROR_NOT_FOUND,
                   "device index {} is out of range: there are {} device(s). Run hal-info to "
                   "list them",
                   index, reg.devices.size());
    }
    *device = to_handle<hal_device>(reg.devices[index]->handle);
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_device_find(const char* selector, hal_device* device) {
  return guarded("hal_device_find", [&]() -> hal_status {
    HAL_REQUIRE_ARG(selector != nullptr, "selector is NULL; pass \"default\" for the default");
    HAL_REQUIRE_ARG(device != nullptr, "device is NULL");
    std::shared_ptr<DeviceObject> found;
    HAL_RETURN_IF_ERROR(find_device(selector, &found));
    *device = to_handle<hal_device>(found->handle);
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_device_get_info(hal_device device, hal_device_info* info) {
  return guarded("hal_device_get_info", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    HAL_REQUIRE_ARG(info != nullptr, "info is NULL");
    // The first published hal_device_info (0.1) ended before driver_info.
    HAL_RETURN_IF_ERROR(check_struct_size(info->struct_size, offsetof(hal_device_info, driver_info),
                                          "hal_device_info"));
    copy_out(dev->info, info);
    return HAL_SUCCESS;
  });
}

HAL_API hal_status hal_device_synchronize(hal_device device) {
  return guarded("hal_device_synchronize", [&]() -> hal_status {
    auto dev = lookup_device(device);
    if (!dev) return HAL_ERROR_INVALID_HANDLE;
    HAL_RETURN_IF_ERROR(check_not_lost(*dev));
    return driver_status(*dev, dev->driver->table.device_synchronize(dev->impl));
  });
}

}  // extern "C"
