// A program for the leak-report test: it gets objects from hal and exits without releasing some,
// or all, of them, so the test can read what the runtime reports at exit.
//
//   hal_test_leak_helper leak|clean [selector]
//
// leak: one stream and one 4096-byte device allocation stay live at exit; an event, a module
// (with a function handle) and a host allocation are released. clean: everything is released.
// Without a selector the backend test double is the only backend and the first device in the
// global order (its GPU-like "double:1") is used; with one (for instance "vulkan:0") the
// built-in backends are, and the selected device.
// Exits 0 when every call succeeded, 1 (with a message) otherwise, 2 on bad arguments.
#include "backend_double.h"

#include <hal/hal.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

bool ok(hal_status status, const char* what) {
  if (status == HAL_SUCCESS) return true;
  std::fprintf(stderr, "leak helper: %s failed: %s: %s\n", what, hal_status_string(status),
               hal_last_error());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "leak") != 0 && std::strcmp(argv[1], "clean") != 0)) {
    std::fprintf(stderr, "usage: %s leak|clean [selector]\n", argv[0]);
    return 2;
  }
  const bool leak = std::strcmp(argv[1], "leak") == 0;
  const char* selector = argc > 2 ? argv[2] : nullptr;
  if (selector == nullptr) {
    hal::set_drivers_for_testing({hal_test::double_factory()});
    hal_test::declare_module(hal_test::spirv_blob(7), "kernel(ptr)");
  }
  hal_device device = nullptr;
  if (!ok(selector ? hal_device_find(selector, &device) : hal_device_get(0, &device),
          "finding the device")) {
    return 1;
  }
  hal_stream stream = nullptr;
  hal_event event = nullptr;
  hal_deviceptr memory = 0;
  void* host = nullptr;
  if (!ok(hal_stream_create(device, &stream), "hal_stream_create") ||
      !ok(hal_event_create(device, &event), "hal_event_create") ||
      !ok(hal_mem_alloc(device, 4096, &memory), "hal_mem_alloc") ||
      !ok(hal_host_alloc(device, 100, &host), "hal_host_alloc") ||
      !ok(hal_memset_d8(stream, memory, 1, 4096), "hal_memset_d8") ||
      !ok(hal_event_record(event, stream), "hal_event_record") ||
      !ok(hal_stream_synchronize(stream), "hal_stream_synchronize")) {
    return 1;
  }
  if (selector == nullptr) {
    // The double accepts any SPIR-V header; a real device would need a real kernel.
    const std::vector<uint8_t> blob = hal_test::spirv_blob(7);
    hal_module module = nullptr;
    hal_function function = nullptr;
    if (!ok(hal_module_load(device, blob.data(), blob.size(), nullptr, &module),
            "hal_module_load") ||
        !ok(hal_module_get_function(module, "kernel", &function), "hal_module_get_function") ||
        !ok(hal_module_unload(module), "hal_module_unload")) {
      return 1;
    }
  }
  if (!ok(hal_event_destroy(event), "hal_event_destroy") ||
      !ok(hal_host_free(device, host), "hal_host_free")) {
    return 1;
  }
  if (!leak) {
    if (!ok(hal_stream_destroy(stream), "hal_stream_destroy") ||
        !ok(hal_mem_free(device, memory), "hal_mem_free")) {
      return 1;
    }
  }
  std::printf("leak helper: done (%s)\n", leak ? "leaving a stream and an allocation" : "clean");
  return 0;
}
