// What a pointer argument that is no device address most likely is, for the hint of hal_launch's
// message. The two mistakes this catches are the common ones when an args[] array is built by
// hand: a host address where a device pointer belongs (a malloc'd or stack buffer, or
// hal_host_alloc memory), and args[] shifted by one entry, so that a value parameter's bytes
// land in a pointer slot.
//
// Only called on the failure path (it may read /proc/self/maps). Thread-safety: takes each
// device's host_mutex while it reads that device's host allocations.
#pragma once

#include "common/objects.h"

#include <string>

namespace hal {

// A hint sentence for |value|, a pointer argument that lies in no live device allocation, or ""
// when nothing more likely than "never allocated, or already freed" can be said (and for 0, or
// an address of another device's allocation, whose messages say enough).
std::string pointer_hint(hal_deviceptr value);

}  // namespace hal
