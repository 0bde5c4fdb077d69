// The backend registry and the global device list.
//
// Built once, on the first call into hal (std::call_once). The candidates are the driver
// modules: the built-in ones (libhal_driver_<name>.so in hal/drivers next to libhal), then every
// module HAL_DRIVER_PATH names (directories or files, colon-separated). A module that does not
// load, is no hal driver, or has the wrong interface version is kept as "unavailable" with its
// reason, under the name its file suggests. HAL_BACKENDS (comma-separated names) selects and
// orders backends; unknown names are listed as unavailable, with the reason, and make hal_init
// fail with INVALID_ARGUMENT. Each selected driver is initialised; one that fails is kept as
// unavailable and never affects the others. Devices are then ordered: GPUs before CPU devices,
// then backend order, then the driver's order. The registry, its drivers and devices live until
// the process exits. Building it also installs the leak report at exit (accounting.h).
#pragma once

#include "common/driver.h"
#include "common/objects.h"

#include <memory>
#include <string>
#include <vector>

namespace hal {

// A driver that lives in this process rather than in a module (tests' drivers).
struct InProcessDriver {
  hal_driver_query_fn query;
  std::string origin;  // what hal-info shows instead of a file name
};

struct BackendEntry {
  std::string name;
  hal_backend kind = HAL_BACKEND_UNKNOWN;
  bool available = false;
  std::string reason;
  std::string origin;              // the module file (or an in-process driver's description)
  std::unique_ptr<Driver> driver;  // null when the module could not be loaded
  std::vector<std::shared_ptr<DeviceObject>> devices;  // the driver's own order
};

struct Registry {
  hal_status init_status = HAL_SUCCESS;
  std::string init_message;
  std::vector<std::unique_ptr<BackendEntry>> backends;
  std::vector<std::shared_ptr<DeviceObject>> devices;  // global order
  std::vector<std::string> known_names;                // every backend name found
};

// The registry, built on first use. Thread-safe.
const Registry& registry();

// Replaces the driver modules (built-in and HAL_DRIVER_PATH) with drivers in this process. For
// tests that bring their own (a test double, a backend linked in to reach its internals); must
// be called before anything else touches hal. Returns false if too late.
bool set_drivers_for_testing(std::vector<InProcessDriver> drivers);

// Where libhal looks for its built-in driver modules, most likely first.
std::vector<std::string> builtin_driver_dirs();

// Resolves a selector to a device (see hal_device_find).
hal_status find_device(std::string_view selector, std::shared_ptr<DeviceObject>* out);

// The device behind a public handle, or nullptr after hal::fail(INVALID_HANDLE).
std::shared_ptr<DeviceObject> lookup_device(hal_device device);

}  // namespace hal
