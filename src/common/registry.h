// The backend registry and the global device list.
//
// Built once, on the first call into hal (std::call_once): each selected backend is created and
// initialised; one that fails is kept as "unavailable" with its reason and never affects the
// others. HAL_BACKENDS (comma-separated names) selects and orders backends; unknown names are
// listed as unavailable, with the reason, and make hal_init fail with INVALID_ARGUMENT.
// Devices are then ordered: GPUs before CPU devices, then backend order, then backend order
// of devices. The registry and its devices live until the process exits. Building it also
// installs the leak report at exit (accounting.h).
#pragma once

#include "common/backend.h"
#include "common/objects.h"

#include <memory>
#include <string>
#include <vector>

namespace hal {

struct BackendFactory {
  const char* name;
  hal_backend kind;
  std::unique_ptr<Backend> (*create)();
};

struct BackendEntry {
  std::string name;
  hal_backend kind = HAL_BACKEND_UNKNOWN;
  bool available = false;
  std::string reason;
  std::unique_ptr<Backend> impl;
  std::vector<std::shared_ptr<DeviceObject>> devices;  // the backend's own order
};

struct Registry {
  hal_status init_status = HAL_SUCCESS;
  std::string init_message;
  std::vector<std::unique_ptr<BackendEntry>> backends;
  std::vector<std::shared_ptr<DeviceObject>> devices;  // global order
  std::vector<std::string> known_names;                // every backend name this build has
};

// The registry, built on first use. Thread-safe.
const Registry& registry();

// Replaces the built-in backend factories. For tests that bring their own backend (a test
// double); must be called before anything else touches hal. Returns false if too late.
bool set_backend_factories_for_testing(std::vector<BackendFactory> factories);

// Resolves a selector to a device (see hal_device_find).
hal_status find_device(std::string_view selector, std::shared_ptr<DeviceObject>* out);

// The device behind a public handle, or nullptr after hal::fail(INVALID_HANDLE).
std::shared_ptr<DeviceObject> lookup_device(hal_device device);

}  // namespace hal
