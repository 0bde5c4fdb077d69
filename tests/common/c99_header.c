/* The public header compiled as strict C99 (-std=c99 -pedantic, warnings as errors), linked to
 * the shared library. Exits 0 when the few calls below behave as the header says. */
#include <hal/hal.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s (hal_last_error: %s)\n", what, hal_last_error());
    ++failures;
  }
}

int main(void) {
  uint32_t count = 0;
  hal_deviceptr ptr = 0;
  hal_stream stream = NULL;
  hal_device_info info;
  hal_launch_config config;

  memset(&info, 0, sizeof(info));
  memset(&config, 0, sizeof(config));
  check(hal_version() == HAL_VERSION, "hal_version() == HAL_VERSION");
  check(strcmp(hal_status_string(HAL_ERROR_OUT_OF_RANGE), "HAL_ERROR_OUT_OF_RANGE") == 0,
        "hal_status_string(HAL_ERROR_OUT_OF_RANGE)");
  /* Values beyond the enumerators are valid in C (not in C++, where the library is written). */
  check(strcmp(hal_status_string((hal_status)16), "HAL_STATUS_UNKNOWN") == 0,
        "hal_status_string(16)");
  check(strcmp(hal_status_string((hal_status)0x7fffffff), "HAL_STATUS_UNKNOWN") == 0,
        "hal_status_string(0x7fffffff)");
  check(strcmp(hal_last_error(), "") == 0, "hal_last_error() is empty before any failure");
  check(hal_device_count(&count) == HAL_SUCCESS, "hal_device_count");
  check(hal_mem_alloc(NULL, 16, &ptr) == HAL_ERROR_INVALID_HANDLE, "hal_mem_alloc(NULL device)");
  check(strncmp(hal_last_error(), "hal_mem_alloc: ", 15) == 0,
        "hal_last_error names hal_mem_alloc");
  check(ptr == 0, "the output is untouched on failure");
  check(hal_stream_create(NULL, &stream) == HAL_ERROR_INVALID_HANDLE, "hal_stream_create(NULL)");
  check(hal_device_get_info(NULL, &info) == HAL_ERROR_INVALID_HANDLE, "hal_device_get_info(NULL)");
  check(hal_launch(NULL, NULL, &config, NULL) == HAL_ERROR_INVALID_HANDLE, "hal_launch(NULL)");
  check(HAL_MAKE_VERSION(1, 2, 3) == 0x010203u, "HAL_MAKE_VERSION");
  if (failures == 0) printf("the C99 view of hal.h works\n");
  return failures == 0 ? 0 : 1;
}
