// Accounting of what callers own, and the leak report at process exit.
//
// Every live handle is counted by kind in the handle table (handles.h), and every live
// allocation, with its size, in its device's tables (DeviceObject::allocations and
// host_allocations); this file puts the two together. Device handles are counted too but are
// never leaks: devices belong to the runtime, which keeps them for the whole process. A function
// handle is released with its module, so live functions are reported only as part of a module.
//
// At process exit (an atexit handler installed when the registry is built, so it runs before
// the handlers of the drivers loaded then) the runtime logs one warning naming, per kind, what
// the program still holds, with the bytes of the allocations per device. Nothing is logged when
// nothing is left. HAL_LOG_LEVEL=error or off silences it.
//
// Thread-safety: all functions may be called concurrently with any other hal call; a count taken
// while other threads create or release objects is a snapshot of some moment during the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hal {

struct Registry;

// Allocations of one device that are still live.
struct DeviceLiveMemory {
  std::string device;  // the device's label, as in messages
  uint64_t device_allocations = 0;
  uint64_t device_bytes = 0;
  uint64_t host_allocations = 0;
  uint64_t host_bytes = 0;
};

struct LiveCounts {
  uint64_t devices = 0;  // runtime-owned: never reported
  uint64_t streams = 0;
  uint64_t events = 0;
  uint64_t modules = 0;
  uint64_t functions = 0;
  uint64_t device_allocations = 0;
  uint64_t device_bytes = 0;
  uint64_t host_allocations = 0;
  uint64_t host_bytes = 0;
  std::vector<DeviceLiveMemory> memory;  // devices with live allocations only, registry order
};

// What is live now, over every device of |registry|.
LiveCounts count_live(const Registry& registry);

// The leak report for |counts|: one line per kind the caller still owns, each naming the call
// that releases it; empty when nothing is left.
std::vector<std::string> describe_leaks(const LiveCounts& counts);

// Installs the report at process exit (idempotent). Called by the registry once it is built.
void install_leak_report_at_exit();

}  // namespace hal
