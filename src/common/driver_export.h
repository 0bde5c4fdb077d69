// The C table of hal_driver.h for a driver written with the C++ classes of backend.h.
//
// A C++ driver defines its query function with HAL_DEFINE_CXX_DRIVER (src/vulkan/driver_entry.cpp);
// its module exports it as hal_driver_query (hal_add_driver_module generates that entry), and
// tests that reach a driver's internals register the same function in-process (registry.h,
// set_drivers_for_testing). Driver handles
// are the C++ objects themselves (a hal_driver_device is a hal::Device*, ...), so a test linked
// with the driver can find its own objects behind a handle (device_of).
//
// Every entry catches exceptions (HAL_ERROR_INTERNAL or OUT_OF_MEMORY with the message) and
// clears the thread's pending error first, so error_message always tells the latest failure.
#pragma once

#include "common/backend.h"

#include <memory>
#include <vector>

namespace hal {

// One C++ driver's state: created by init, alive until exit.
struct CxxDriver {
  const char* name;
  hal_backend kind;
  std::unique_ptr<Backend> (*create)();
  std::unique_ptr<Backend> backend;
  std::vector<std::unique_ptr<Device>> devices;
};

hal_status cxx_driver_init(CxxDriver& driver, const hal_driver_host* host, uint32_t* count);
hal_status cxx_driver_device_get(CxxDriver& driver, uint32_t index, hal_driver_device* device,
                                 hal_device_info* info);
// The table without init and device_get (which need the driver's state).
hal_driver cxx_driver_table(const char* name, hal_backend kind);

// The services of the core this driver was initialised by; nullptr before init.
const hal_driver_host* attached_host();
// For tests that drive a driver's devices without a core: the services they see (a host
// double), or nullptr for none.
void attach_host_for_testing(const hal_driver_host* host);
// The driver handle of |device|, as the core knows it.
hal_driver_device handle_of(Device* device);
// The device whose info is |info| (an exported device), or nullptr.
Device* device_with_info(const hal_device_info& info);
// The C++ device behind a handle this driver made.
inline Device* device_of(hal_driver_device handle) {
  return reinterpret_cast<Device*>(handle);
}
inline Stream* stream_of(hal_driver_stream handle) {
  return reinterpret_cast<Stream*>(handle);
}

}  // namespace hal

// Defines |function| (a hal_driver_query_fn) for a C++ driver named |name| whose backend
// |create| makes.
#define HAL_DEFINE_CXX_DRIVER(function, driver_name, backend_kind, create_backend)          \
  hal_status function(uint32_t core_interface_version, const hal_driver** out) {            \
    (void)core_interface_version;                                                           \
    /* Leaked: devices and the backend live until exit, after every static destructor. */   \
    static ::hal::CxxDriver& state =                                                        \
        *new ::hal::CxxDriver{driver_name, backend_kind, create_backend, nullptr, {}};      \
    static const hal_driver table = [] {                                                    \
      hal_driver t = ::hal::cxx_driver_table(driver_name, backend_kind);                    \
      t.init = [](const hal_driver_host* host, uint32_t* count) {                           \
        return ::hal::cxx_driver_init(state, host, count);                                  \
      };                                                                                    \
      t.device_get = [](uint32_t index, hal_driver_device* device, hal_device_info* info) { \
        return ::hal::cxx_driver_device_get(state, index, device, info);                    \
      };                                                                                    \
      return t;                                                                             \
    }();                                                                                    \
    if (out == nullptr) return HAL_ERROR_INVALID_ARGUMENT;                                  \
    *out = &table;                                                                          \
    return HAL_SUCCESS;                                                                     \
  }
