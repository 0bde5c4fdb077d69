// Checks that device addresses handed to hal lie inside live allocations of the right device.
#pragma once

#include "common/objects.h"

namespace hal {

// Resolves [ptr, ptr + size) to one live allocation of |device| (size 0 checks ptr alone).
// Fails with HAL_ERROR_OUT_OF_RANGE naming |what| ("destination", "parameter 2", ...), the
// address, the allocation it overruns (and by how many bytes), or the other device it belongs
// to.
hal_status resolve_range(const DeviceObject& device, hal_deviceptr ptr, size_t size,
                         const char* what, hal_driver_range* out);

}  // namespace hal
