// Driver modules as the core sees them: a loaded hal_driver table (include/hal/hal_driver.h),
// checked and normalised, and where it came from.
//
// Loading checks what the core relies on before any entry is called: the table's interface
// version (a newer one than the core's is refused), its struct_size, the name, and every
// required entry. Entries past a driver's struct_size read as NULL, which is how an older driver
// runs in a newer core. A module is never unloaded: its code may run until the process exits.
//
// Thread-safety: loading happens once, inside the registry's initialisation; a loaded Driver is
// immutable.
#pragma once

#include <hal/hal_driver.h>

#include <memory>
#include <string>

namespace hal {

struct DeviceObject;

struct Driver {
  hal_driver table{};  // the driver's table, zero-filled past its struct_size
  std::string origin;  // the module's file, or "built into this program" for in-process drivers
};

// Opens the shared library at |path| and reads its table. On failure returns
// HAL_ERROR_UNAVAILABLE through fail(), with a reason that says what is wrong with the file
// (does not load, has no hal_driver_query, is not a hal driver, too new an interface, ...).
hal_status open_driver_module(const std::string& path, std::unique_ptr<Driver>* out);

// The same checks for a query function already in this process (tests' drivers).
hal_status adopt_driver(hal_driver_query_fn query, std::string origin,
                        std::unique_ptr<Driver>* out);

// The core's services for drivers (logging, the timeline trace), passed to every init.
const hal_driver_host* driver_host();

// Tells the services of driver_host() which device a driver handle is (the trace uses its
// info, device_lost its latch); |object| must live until exit. False when another device (of
// any driver) already has this handle: the services could not tell the two apart.
bool register_driver_device(hal_driver_device device, DeviceObject* object);

// The backend name a module file suggests ("libhal_driver_npu.so" -> "npu"), used to list a
// module that failed before it could say its own name; the file name itself otherwise.
std::string name_from_module_path(const std::string& path);

// True when |name| is a valid backend name: 1 to 31 of [a-z0-9_], starting with a letter.
bool valid_backend_name(const char* name);

}  // namespace hal
