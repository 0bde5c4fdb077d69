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
/* Loads and runs, but computes wrong: vector_add_f32 adds B to itself, and saxpy is dropped.
 * For the conformance suite, which must fail it however few kernels it has. */
#define FAULT_WRONG_KERNEL 11
/* Loads and runs, but reports a block limit (2^20 threads, in volume and along x) that its
 * launches do not honour: a block above 1024 threads fails. */
#define FAULT_INFLATED_LIMIT 12
/* Every allocation's base is 16 bytes past a multiple of 256. */
#define FAULT_MISALIGNED_ALLOCATION 13

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

#if HAL_TEST_FAULT == FAULT_WRONG_KERNEL
static hal_status (*base_module_load)(hal_driver_device, hal_ir, const void*, size_t,
                                      const hal_driver_module_options*, hal_driver_module*,
                                      uint32_t*);
static hal_status (*base_module_function)(hal_driver_module, uint32_t, hal_driver_function*,
                                          const hal_driver_function_info**);
static hal_status (*base_launch)(hal_driver_stream, hal_driver_function, const hal_driver_launch*);
static const char* (*base_error_message)(void);
static void (*base_module_unload)(hal_driver_module);
/* vector_add_f32's function handle and its module while that module is loaded: the handle is
 * an address inside the module, which a later module may reuse once this one is unloaded. */
static hal_driver_function vector_add;
static hal_driver_module vector_add_module;
static const char* own_error; /* this module's own last failure, else NULL */

static const char* wrong_kernel_error(void) {
  return own_error != NULL ? own_error : base_error_message();
}

static hal_status without_saxpy(hal_driver_device device, hal_ir ir, const void* blob, size_t size,
                                const hal_driver_module_options* options, hal_driver_module* out,
                                uint32_t* count) {
  /* A built-in blob is "HALK" and the kernel's name. A failure leaves its own cause, as the
   * interface asks: the skeleton's last message would belong to another call. */
  own_error = NULL;
  if (size == 9 && memcmp((const char*)blob + 4, "saxpy", 5) == 0) {
    own_error = "wrong_kernel has no built-in kernel saxpy (this test driver leaves it out)";
    return HAL_ERROR_NOT_FOUND;
  }
  return base_module_load(device, ir, blob, size, options, out, count);
}

static hal_status noting_vector_add(hal_driver_module module, uint32_t index,
                                    hal_driver_function* function,
                                    const hal_driver_function_info** info) {
  hal_status status = base_module_function(module, index, function, info);
  if (status == HAL_SUCCESS && strcmp((*info)->name, "vector_add_f32") == 0) {
    vector_add = *function;
    vector_add_module = module;
  }
  return status;
}

static void forgetting_vector_add(hal_driver_module module) {
  if (module == vector_add_module) {
    vector_add = NULL;
    vector_add_module = NULL;
  }
  base_module_unload(module);
}

static hal_status wrong_vector_add(hal_driver_stream stream, hal_driver_function function,
                                   const hal_driver_launch* config) {
  if (function == vector_add && config->param_count >= 2) {
    /* B + B instead of A + B: the first argument replaced by the second. */
    hal_driver_launch wrong = *config;
    void* args[4];
    hal_driver_range pointers[4];
    uint32_t i;
    for (i = 0; i < config->param_count && i < 4; ++i) {
      args[i] = config->args[i];
      pointers[i] = config->pointers[i];
    }
    args[0] = args[1];
    pointers[0] = pointers[1];
    wrong.args = args;
    wrong.pointers = pointers;
    return base_launch(stream, function, &wrong);
  }
  return base_launch(stream, function, config);
}
#endif

#if HAL_TEST_FAULT == FAULT_INFLATED_LIMIT
enum { kRealThreadsPerBlock = 1024, kClaimedThreadsPerBlock = 1 << 20 };
static hal_status (*base_device_get)(uint32_t, hal_driver_device*, hal_device_info*);
static hal_status (*base_launch)(hal_driver_stream, hal_driver_function, const hal_driver_launch*);
static const char* (*base_error_message)(void);
static const char* own_error;

static const char* inflated_error(void) {
  return own_error != NULL ? own_error : base_error_message();
}

static hal_status inflated_device_get(uint32_t index, hal_driver_device* device,
                                      hal_device_info* info) {
  hal_status status = base_device_get(index, device, info);
  if (status == HAL_SUCCESS) {
    info->max_threads_per_block = kClaimedThreadsPerBlock;
    info->max_block_dim[0] = kClaimedThreadsPerBlock;
  }
  return status;
}

static hal_status launch_within_real_limit(hal_driver_stream stream, hal_driver_function function,
                                           const hal_driver_launch* config) {
  own_error = NULL;
  if ((uint64_t)config->block[0] * config->block[1] * config->block[2] > kRealThreadsPerBlock) {
    own_error = "inflated_limit: the hardware runs at most 1024 threads per block";
    return HAL_ERROR_LAUNCH_FAILED;
  }
  return base_launch(stream, function, config);
}
#endif

#if HAL_TEST_FAULT == FAULT_MISALIGNED_ALLOCATION
static hal_status (*base_mem_alloc)(hal_driver_device, size_t, hal_driver_allocation*);

static hal_status misaligned_alloc(hal_driver_device device, size_t size,
                                   hal_driver_allocation* out) {
  /* driver_data still finds the memory; only the address users would see is off. */
  hal_status status = base_mem_alloc(device, size + 16, out);
  if (status == HAL_SUCCESS) out->base += 16;
  return status;
}
#endif

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
#if HAL_TEST_FAULT == FAULT_WRONG_KERNEL
    case FAULT_WRONG_KERNEL:
      base_module_load = table.module_load;
      base_module_function = table.module_function;
      base_launch = table.launch;
      base_error_message = table.error_message;
      base_module_unload = table.module_unload;
      table.module_unload = forgetting_vector_add;
      table.error_message = wrong_kernel_error;
      table.module_load = without_saxpy;
      table.module_function = noting_vector_add;
      table.launch = wrong_vector_add;
      break;
#endif
#if HAL_TEST_FAULT == FAULT_INFLATED_LIMIT
    case FAULT_INFLATED_LIMIT:
      base_device_get = table.device_get;
      base_launch = table.launch;
      base_error_message = table.error_message;
      table.device_get = inflated_device_get;
      table.launch = launch_within_real_limit;
      table.error_message = inflated_error;
      break;
#endif
#if HAL_TEST_FAULT == FAULT_MISALIGNED_ALLOCATION
    case FAULT_MISALIGNED_ALLOCATION:
      base_mem_alloc = table.mem_alloc;
      table.mem_alloc = misaligned_alloc;
      break;
#endif
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
