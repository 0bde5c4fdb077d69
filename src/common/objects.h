// The runtime's records behind each public handle. A backend object (hal::Device, hal::Stream,
// ...) is wrapped by one of these, which adds what every backend shares: the owning device,
// the allocation table, per-stream serialisation, and device-lost bookkeeping.
#pragma once

#include "common/alloc_table.h"
#include "common/backend.h"
#include "common/handles.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace hal {

struct BackendEntry;

struct DeviceObject : Object {
  DeviceObject() : Object(HandleKind::kDevice) {}
  std::unique_ptr<Device> impl;
  const BackendEntry* backend = nullptr;
  std::string label;  // "vulkan:0 (llvmpipe ...)": used in messages
  AllocationTable allocations;
  // Held shared by every call that resolves device or host pointers and hands them to the
  // backend (copies, fills, launches), and exclusively by the frees. Without it a free on one
  // thread could release the backend's record of an allocation that a launch on another thread
  // has already validated and is about to use.
  std::shared_mutex memory_mutex;
  std::mutex host_mutex;
  std::map<void*, size_t> host_allocations;  // live hal_host_alloc memory -> its size
  // Set once a backend call reports HAL_ERROR_DEVICE_LOST; every later call fails fast.
  std::atomic<bool> lost{false};
};

struct StreamObject : Object {
  StreamObject() : Object(HandleKind::kStream) {}
  DeviceObject* device = nullptr;
  std::mutex mutex;  // serialises calls on this stream (backends may rely on it)
  std::unique_ptr<Stream> impl;
};

struct EventObject : Object {
  EventObject() : Object(HandleKind::kEvent) {}
  DeviceObject* device = nullptr;
  std::atomic<bool> recorded{false};
  std::unique_ptr<Event> impl;
};

struct ModuleObject : Object {
  ModuleObject() : Object(HandleKind::kModule) {}
  DeviceObject* device = nullptr;
  std::unique_ptr<Module> impl;
  std::mutex mutex;                                  // guards the two fields below
  std::map<std::string, uint64_t> function_handles;  // handed out so far, by name
  bool unloaded = false;
};

struct FunctionObject : Object {
  FunctionObject() : Object(HandleKind::kFunction) {}
  std::shared_ptr<ModuleObject> module;  // keeps the module alive while a call uses the function
  Function* impl = nullptr;
};

// Records a backend status on |device|: HAL_ERROR_DEVICE_LOST marks it lost for good.
inline hal_status note_device_status(DeviceObject& device, hal_status status) {
  if (status == HAL_ERROR_DEVICE_LOST) device.lost.store(true);
  return status;
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
