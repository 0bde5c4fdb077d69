/* A test driver module: the skeleton driver (samples/driver_skeleton) with one fault, chosen at
 * compile time by HAL_TEST_FAULT, so the tests can show how libhal treats each kind of broken
 * module. skeleton.c is compiled into the same module with its entry renamed
 * skeleton_base_query; this file exports the real hal_driver_query. */
#undef hal_driver_query /* skeleton.c's entry is renamed on the command line; this file's is real \
                         */
#include <hal/hal_driver.h>

#include <stddef.h>
#include <string.h>

#define FAULT_NONE 0
#define FAULT_NEWER_INTERFACE 1
#define FAULT_REQUIRED_ENTRY_NULL 2
#define FAULT_INIT_FAILS 3
#define FAULT_QUERY_FAILS 4
#define FAULT_BAD_NAME 5
#define FAULT_TABLE_TOO_SMALL 6
#define FAULT_HOST_ALLOC_WITHOUT_FREE 7
#define FAULT_NO_OPTIONAL_ENTRIES 8
#define FAULT_NEEDS_ABSENT_LIBRARY 9
#define FAULT_WRONG_KIND 10

#ifndef HAL_TEST_FAULT
#error "HAL_TEST_FAULT selects the fault"
#endif
#ifndef HAL_TEST_NAME
#error "HAL_TEST_NAME is the backend name"
#endif

hal_status skeleton_base_query(uint32_t core_interface_version, const hal_driver** driver);

#if HAL_TEST_FAULT == FAULT_NEEDS_ABSENT_LIBRARY
/* Defined in a library the module links but that the loader cannot find at run time. */
int hal_test_absent_dependency(void);
int hal_test_use_dependency(void) {
  return hal_test_absent_dependency();
}
#endif

static hal_driver table;

static const char* init_error(void) {
  return "the test device's firmware did not answer. Power-cycle the test device";
}

static hal_status init_fails(const hal_driver_host* host, uint32_t* device_count) {
  (void)host;
  (void)device_count;
  return HAL_ERROR_UNAVAILABLE;
}

static hal_status host_alloc_only(hal_driver_device device, size_t size,
                                  hal_driver_host_allocation* out) {
  (void)device;
  (void)size;
  (void)out;
  return HAL_ERROR_NOT_SUPPORTED;
}

HAL_DRIVER_EXPORT hal_status hal_driver_query(uint32_t core_interface_version,
                                              const hal_driver** driver) {
  const hal_driver* base = NULL;
  if (HAL_TEST_FAULT == FAULT_QUERY_FAILS) return HAL_ERROR_INTERNAL;
  hal_status status = skeleton_base_query(core_interface_version, &base);
  if (status != HAL_SUCCESS) return status;
  memcpy(&table, base, sizeof(table));
  table.name = HAL_TEST_NAME;
  switch (HAL_TEST_FAULT) {
    case FAULT_NEWER_INTERFACE:
      table.interface_version = HAL_DRIVER_INTERFACE_VERSION + 1;
      break;
    case FAULT_REQUIRED_ENTRY_NULL:
      table.launch = NULL;
      break;
    case FAULT_INIT_FAILS:
      table.init = init_fails;
      table.error_message = init_error;
      break;
    case FAULT_BAD_NAME:
      table.name = "Not-A-Name";
      break;
    case FAULT_TABLE_TOO_SMALL:
      table.struct_size = (uint32_t)offsetof(hal_driver, launch);
      break;
    case FAULT_HOST_ALLOC_WITHOUT_FREE:
      table.host_alloc = host_alloc_only;
      table.host_free = NULL;
      break;
    case FAULT_WRONG_KIND:
      table.backend = HAL_BACKEND_CUDA; /* only the backend named "cuda" may say so */
      break;
    case FAULT_NO_OPTIONAL_ENTRIES:
      /* What a driver written before these entries existed looks like to a newer core. */
      table.host_alloc = NULL;
      table.host_free = NULL;
      table.host_pointer = NULL;
      table.event_elapsed_ms = NULL;
      break;
    default:
      break;
  }
  *driver = &table;
  return HAL_SUCCESS;
}
