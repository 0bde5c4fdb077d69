// The runtime's records behind each public handle. A driver object (hal_driver_device,
// hal_driver_stream, ...) is wrapped by one of these, which adds what every backend shares: the
// owning device, the allocation table, per-stream serialisation, and the device-lost latch.
#pragma once

#include "common/alloc_table.h"
#include "common/driver.h"
#include "common/function_desc.h"
#include "common/handles.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace hal {

struct BackendEntry;

struct DeviceObject : Object {
  DeviceObject() : Object(HandleKind::kDevice) {}
  const Driver* driver = nullptr;  // owned by the backend entry, lives until exit
  hal_driver_device impl = nullptr;
  hal_device_info info{};
  const BackendEntry* backend = nullptr;
  std::string label;  // "vulkan:0 (llvmpipe ...)": used in messages
  AllocationTable allocations;
  // Held shared by every call that resolves device or host pointers and hands them to the
  // backend (copies, fills, launches), and exclusively by the frees. Without it a free on one
  // thread could release the backend's record of an allocation that a launch on another thread
  // has already validated and is about to use.
  std::shared_mutex memory_mutex;
  // The one table of live hal_host_alloc memory, by base. Copies hand the driver the entry that
  // holds their host range (find_host_allocation), so drivers keep no table of their own.
  std::mutex host_mutex;
  std::map<void*, hal_driver_host_allocation> host_allocations;

  // The live host allocation holding all of [host, host + size), copied into |*out|; false when
  // none does (ordinary memory) or the driver has no host_alloc of its own.
  bool find_host_allocation(const void* host, size_t size, hal_driver_host_allocation* out);
  // The one record of device loss (drivers keep none). Set when a driver call returns
  // HAL_ERROR_DEVICE_LOST or the driver reports loss through hal_driver_host.device_lost; every
  // later call on the device fails fast (check_not_lost), quoting the first cause.
  std::atomic<bool> lost{false};
  // Latches the loss with |cause| (the first cause is kept) and logs it once.
  void mark_lost(std::string_view cause);
  std::string lost_cause() const;

 private:
  mutable std::mutex lost_mutex_;
  std::string lost_cause_;  // guarded by lost_mutex_
};

struct StreamObject : Object {
  StreamObject() : Object(HandleKind::kStream) {}
  ~StreamObject() override;  // destroys the driver's stream if hal_stream_destroy did not
  DeviceObject* device = nullptr;
  std::mutex mutex;  // serialises calls on this stream (drivers rely on it); guards |impl|
  hal_driver_stream impl = nullptr;  // nullptr once destroyed
};

struct EventObject : Object {
  EventObject() : Object(HandleKind::kEvent) {}
  ~EventObject() override;  // destroys the driver's event
  DeviceObject* device = nullptr;
  std::atomic<bool> recorded{false};
  hal_driver_event impl = nullptr;
};

// One entry point of a loaded module: the driver's handle and the core's copy of what it is.
struct FunctionEntry {
  hal_driver_function impl = nullptr;
  FunctionDesc desc;
};

struct ModuleObject : Object {
  ModuleObject() : Object(HandleKind::kModule) {}
  ~ModuleObject() override;  // unloads the driver's module
  DeviceObject* device = nullptr;
  hal_driver_module impl = nullptr;
  std::vector<FunctionEntry> functions;              // fixed at load
  std::mutex mutex;                                  // guards the two fields below
  std::map<std::string, uint64_t> function_handles;  // handed out so far, by name
  bool unloaded = false;
};

struct FunctionObject : Object {
  FunctionObject() : Object(HandleKind::kFunction) {}
  std::shared_ptr<ModuleObject> module;  // keeps the module alive while a call uses the function
  const FunctionEntry* entry = nullptr;  // inside module->functions
};

// The failure |status| of a driver call on |device|: the driver's message becomes the cause of
// the current call, and HAL_ERROR_DEVICE_LOST marks the device lost for good.
hal_status driver_failure(DeviceObject& device, hal_status status);

// What every driver call's status goes through. HAL_ERROR_NOT_READY is an answer, not a failure.
inline hal_status driver_status(DeviceObject& device, hal_status status) {
  if (status == HAL_SUCCESS || status == HAL_ERROR_NOT_READY) [[likely]]
    return status;
  return driver_failure(device, status);
}

// The threads a block of |fn| may have on a device with |info|: the tighter of the function's
// and the device's limits (0 in either means that side sets none).
inline uint32_t max_threads_per_block(const FunctionDesc& fn, const hal_device_info& info) {
  if (fn.max_threads_per_block == 0) return info.max_threads_per_block;
  if (info.max_threads_per_block == 0) return fn.max_threads_per_block;
  return fn.max_threads_per_block < info.max_threads_per_block ? fn.max_threads_per_block
                                                               : info.max_threads_per_block;
}

// HAL_ERROR_DEVICE_LOST with a message when |device| was lost earlier, else HAL_SUCCESS.
hal_status check_not_lost(const DeviceObject& device);

}  // namespace hal
