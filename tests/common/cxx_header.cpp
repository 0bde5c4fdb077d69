// The public header compiled as C++ on its own (nothing else of hal included), linked to the
// shared library. Exits 0 when the few calls below behave as the header says.
#include <hal/hal.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(std::is_standard_layout_v<hal_device_info>);
static_assert(std::is_trivially_copyable_v<hal_launch_config>);
static_assert(sizeof(hal_deviceptr) == 8);
static_assert(HAL_SUCCESS == 0);

int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "FAILED: %s (hal_last_error: %s)\n", what, hal_last_error());
      ++failures;
    }
  };
  check(hal_version() == HAL_VERSION, "hal_version() == HAL_VERSION");
  check(std::strcmp(hal_status_string(static_cast<hal_status>(99)), "HAL_STATUS_UNKNOWN") == 0,
        "hal_status_string(99)");
  uint32_t count = 0;
  check(hal_backend_count(&count) == HAL_SUCCESS, "hal_backend_count");
  check(hal_backend_count(nullptr) == HAL_ERROR_INVALID_ARGUMENT, "hal_backend_count(nullptr)");
  check(std::strncmp(hal_last_error(), "hal_backend_count: ", 19) == 0,
        "hal_last_error names hal_backend_count");
  hal_device device = nullptr;
  check(hal_device_find(nullptr, &device) == HAL_ERROR_INVALID_ARGUMENT,
        "hal_device_find(nullptr)");
  check(hal_stream_destroy(reinterpret_cast<hal_stream>(0x1230)) == HAL_ERROR_INVALID_HANDLE,
        "hal_stream_destroy(garbage)");
  if (failures == 0) std::printf("the C++ view of hal.h works\n");
  return failures == 0 ? 0 : 1;
}
