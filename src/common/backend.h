// The C++ side of a driver module: one abstract class per object kind, for drivers written in
// C++ (the Vulkan and CUDA drivers, the test double). driver_export.h turns a Backend into the
// C table of include/hal/hal_driver.h, which is all the core ever sees; this header is never
// included by the core.
//
// Everything the core promises in hal_driver.h holds here: handles, ranges, launch geometry and
// arguments are checked before a method runs, and the device-lost latch lives in the core
// (Device::report_lost and Device::lost reach it).
//
// Conventions for every method:
//  - return HAL_SUCCESS, or the result of hal::fail(status, message): the message reaches
//    hal_last_error() through hal_driver.error_message; name the driver's own error
//    (cuGetErrorName, VkResult name) and a hint;
//  - exceptions are caught at the table's boundary and reported as HAL_ERROR_INTERNAL;
//  - device methods may be called from several threads at once and must lock what they share;
//    the core serialises calls on one Stream object, never on Device or Event objects.
//
// To add a C++ driver: implement these classes in src/<name>/, define its hal_driver_query with
// HAL_DEFINE_CXX_DRIVER (driver_export.h), and build it with hal_add_driver_module
// (src/<name>/CMakeLists.txt).
#pragma once

#include <hal/hal_driver.h>

#include "common/function_desc.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hal {

class Event;
class Function;
class Module;
class Stream;

// One live device allocation, as recorded in the runtime's allocation table.
struct Allocation {
  hal_deviceptr base = 0;
  size_t size = 0;
  // Whatever the backend needs to find its own object again (a VkBuffer block and offset, ...).
  // Set by Device::mem_alloc, handed back on every use, never interpreted by the runtime.
  uint64_t backend_data = 0;
};

// A byte range inside one live allocation: [alloc.base + offset, ... + size).
struct DeviceRange {
  Allocation alloc;
  uint64_t offset = 0;
  hal_deviceptr address() const { return alloc.base + offset; }
};

struct Specialization {
  uint32_t id = 0;
  uint32_t size = 0;   // 1, 2, 4 or 8
  uint64_t value = 0;  // the first |size| bytes hold the constant, little-endian as in memory
};

struct ModuleOptions {
  std::vector<Specialization> specializations;
  bool shared_bytes_constant = false;
  uint32_t shared_bytes_constant_id = 0;
};

// A launch after validation, as hal_driver.h describes it: pointers[i] is the allocation
// parameter i lies in (index it only for pointer parameters), as a hal_driver_range.
using LaunchParams = hal_driver_launch;

// One live allocation from Device::host_alloc, as hal_driver.h describes it.
using HostAllocation = hal_driver_host_allocation;

// The allocation record of a launch's pointer parameter, converted to the C++ types.
inline DeviceRange launch_range(const LaunchParams& params, size_t index) {
  const hal_driver_range& r = params.pointers[index];
  return DeviceRange{{r.allocation.base, r.allocation.size, r.allocation.driver_data}, r.offset};
}

class Function {
 public:
  virtual ~Function() = default;
  FunctionDesc desc;
};

class Module {
 public:
  virtual ~Module() = default;
  // Every entry point, created at load time, owned by the module. The destructor runs only
  // after the runtime removed the module's handles; it must keep driver objects alive until
  // launches already issued have completed (wait, or defer the release).
  std::vector<std::unique_ptr<Function>> functions;
};

class Event {
 public:
  virtual ~Event() = default;
  virtual hal_status synchronize() = 0;
  // HAL_SUCCESS when complete or never recorded, HAL_ERROR_NOT_READY otherwise.
  virtual hal_status query() = 0;
  // Both events recorded and of the same device (checked by the runtime).
  virtual hal_status elapsed_ms(Event& end, float* ms) = 0;
};

class Stream {
 public:
  virtual ~Stream() = default;  // the runtime synchronises before destroying
  // |host|: the host_alloc allocation holding the whole host range, or null for other memory.
  virtual hal_status copy_htod(const DeviceRange& dst, const void* src, size_t size,
                               const HostAllocation* host) = 0;
  virtual hal_status copy_dtoh(void* dst, const DeviceRange& src, size_t size,
                               const HostAllocation* host) = 0;
  virtual hal_status copy_dtod(const DeviceRange& dst, const DeviceRange& src, size_t size) = 0;
  // Repeats |pattern| (|pattern_size| 1 or 4 bytes) over |bytes| bytes; bytes is a multiple of
  // pattern_size, and for 4 the address is 4-aligned.
  virtual hal_status fill(const DeviceRange& dst, uint32_t pattern, uint32_t pattern_size,
                          size_t bytes) = 0;
  virtual hal_status launch(Function& function, const LaunchParams& params) = 0;
  virtual hal_status record(Event& event) = 0;
  virtual hal_status wait(Event& event) = 0;
  virtual hal_status synchronize() = 0;
  virtual hal_status query() = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  // Filled by the backend at discovery; the registry sets backend_index and global_index.
  hal_device_info info{};

  // size > 0 and <= info.max_allocation_size. Fills base (unique among live allocations of this
  // device, never 0, 256-byte aligned), size and backend_data.
  virtual hal_status mem_alloc(size_t size, Allocation* out) = 0;
  // |alloc| is what mem_alloc returned, except that |size| is the size the caller asked for
  // (the runtime checks ranges against that); find the backend's own record via backend_data.
  virtual hal_status mem_free(const Allocation& alloc) = 0;
  // Sets out->base and out->driver_data (the core sets size and keeps the table).
  virtual hal_status host_alloc(size_t size, HostAllocation* out) = 0;
  virtual hal_status host_free(const HostAllocation& allocation) = 0;
  // The host address of byte |offset| of |alloc| (inside it), when the device's memory is
  // host-addressable and coherent. The default: HAL_ERROR_NOT_SUPPORTED, without a message (the
  // runtime writes it).
  virtual hal_status host_pointer(const Allocation& alloc, uint64_t offset, void** out) {
    (void)alloc;
    (void)offset;
    (void)out;
    return HAL_ERROR_NOT_SUPPORTED;
  }
  virtual hal_status create_stream(std::unique_ptr<Stream>* out) = 0;
  virtual hal_status create_event(std::unique_ptr<Event>* out) = 0;
  // |ir| is one bit of info.ir_mask, already sniffed and checked against the mask.
  virtual hal_status load_module(hal_ir ir, const uint8_t* blob, size_t size,
                                 const ModuleOptions& options, std::unique_ptr<Module>* out) = 0;
  virtual hal_status synchronize() = 0;

  // Device loss, of which the core keeps the only record (hal_driver_host.device_lost and
  // device_is_lost). report_lost tells the core, with |cause|, where the driver finds the device
  // unusable without returning HAL_ERROR_DEVICE_LOST (a poisoned context, a fault seen in a
  // destructor); lost() asks it, before waiting for the device where a lost one may never
  // finish. The core checks loss before every call, so no method needs to ask first. Without a
  // core (a test driving a device directly) they go to the host the test attached
  // (attach_host_for_testing), or report_lost only logs and lost() is false.
  void report_lost(const std::string& cause);
  bool lost() const;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Opens the vendor library and lists the devices, in the backend's own order. A missing or
  // unusable library is hal::fail(HAL_ERROR_UNAVAILABLE, reason): the reason says where it
  // looked and what to install, and is shown by hal-info.
  virtual hal_status init(std::vector<std::unique_ptr<Device>>* devices) = 0;
};

}  // namespace hal
