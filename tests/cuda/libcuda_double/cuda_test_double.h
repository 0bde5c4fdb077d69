// Control interface of the CUDA test double: a stand-in for libcuda used by hal's CUDA tests.
//
// The double is a small shared library that hal loads through HAL_CUDA_LIBRARY exactly as it
// would load the NVIDIA driver: it exports cuGetProcAddress_v2 and hands out host-memory
// implementations of the driver entry points the CUDA backend uses. It is not a GPU and runs no
// kernel. What it does:
//  - device memory is host memory; copies and fills really move bytes;
//  - work on a stream is queued and runs when the stream, an event recorded on it, or the
//    context is synchronised (a first query answers CUDA_ERROR_NOT_READY and runs the work),
//    so asynchronous semantics can be observed: an htod copy from pageable memory captures the
//    source at the call, one from cuMemHostAlloc memory reads it when the copy runs;
//  - module loads accept any bytes and record them; a PTX module has whichever functions are
//    asked for, a cubin or fatbin module lists the functions set by
//    cuda_test_double_set_binary_functions;
//  - launches record the function, grid, block, shared bytes and the bytes of every parameter,
//    whose sizes the test declares per function with cuda_test_double_set_function;
//  - any entry point can be made to fail once or always with a chosen CUresult, or be hidden
//    from cuGetProcAddress, so every error path of the backend can be reached.
//  - the current context is per thread, as in the driver; every entry point that works on
//    memory, streams, events, modules or functions answers CUDA_ERROR_INVALID_CONTEXT on a thread
//    with none, so a call that skips making the context current is caught, destructors included;
//  - a launch may use 48 KiB of shared memory, static included, until the function's
//    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES is set, and then that much dynamic.
// Entry points are named as given to cuGetProcAddress ("cuMemAlloc", not "cuMemAlloc_v2").
// All state is process-wide and guarded by one lock; cuda_test_double_reset restores the
// defaults: one device "CUDA Test Double" of compute capability 8.0 with 1 GiB, 48 KiB of shared
// memory per block and 160 KiB opt-in, 4 multiprocessors, and driver version 12040 (CUDA 12.4).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDA_TEST_DOUBLE_API __attribute__((visibility("default")))

typedef struct cuda_test_double_device {
  char name[64];
  int cc_major;
  int cc_minor;
  size_t total_memory;
  int shared_per_block;       /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK */
  int shared_per_block_optin; /* ..._OPTIN, 0 for none */
  int multiprocessors;
} cuda_test_double_device;

#define CUDA_TEST_DOUBLE_MAX_PARAMS 64
#define CUDA_TEST_DOUBLE_MAX_PARAM_BYTES 4096

typedef struct cuda_test_double_launch {
  char function[256];
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int shared_bytes;
  int param_count; /* -1 when the test declared no sizes for the function */
  size_t param_offsets[CUDA_TEST_DOUBLE_MAX_PARAMS];
  size_t param_sizes[CUDA_TEST_DOUBLE_MAX_PARAMS];
  unsigned char param_bytes[CUDA_TEST_DOUBLE_MAX_PARAM_BYTES];
} cuda_test_double_launch;

CUDA_TEST_DOUBLE_API void cuda_test_double_reset(void);
CUDA_TEST_DOUBLE_API void cuda_test_double_set_devices(const cuda_test_double_device* devices,
                                                       int count);
CUDA_TEST_DOUBLE_API void cuda_test_double_set_driver_version(int version);

/* The next call of |entry_point| returns |result| without doing anything. Calls queue up. */
CUDA_TEST_DOUBLE_API void cuda_test_double_fail_next(const char* entry_point, int result);
/* Every call of |entry_point| returns |result| until reset. */
CUDA_TEST_DOUBLE_API void cuda_test_double_fail_always(const char* entry_point, int result);
/* Every later call of |entry_point| first sleeps |microseconds| without holding the double's
 * lock, to widen races between threads; 0 removes the delay. Reset clears it. */
CUDA_TEST_DOUBLE_API void cuda_test_double_delay(const char* entry_point, int microseconds);
/* cuGetProcAddress reports |entry_point| as not found. */
CUDA_TEST_DOUBLE_API void cuda_test_double_hide_entry_point(const char* entry_point);
/* The CUDA version the backend asked cuGetProcAddress for |entry_point|, or 0 if never asked. */
CUDA_TEST_DOUBLE_API int cuda_test_double_requested_version(const char* entry_point);
/* How many times |entry_point| was called (injected failures included). */
CUDA_TEST_DOUBLE_API int cuda_test_double_call_count(const char* entry_point);

/* Text the next failing cuModuleLoadDataEx writes into the JIT error log buffer. */
CUDA_TEST_DOUBLE_API void cuda_test_double_set_jit_error_log(const char* text);
/* Declares kernel |function|: its parameter sizes (laid out at naturally aligned offsets, at
 * most 8), the threads per block and the static shared bytes it reports. */
CUDA_TEST_DOUBLE_API void cuda_test_double_set_function(const char* function,
                                                        const size_t* param_sizes, int param_count,
                                                        int max_threads, int static_shared_bytes);
/* The functions every later cubin or fatbin module lists (cuModuleEnumerateFunctions). */
CUDA_TEST_DOUBLE_API void cuda_test_double_set_binary_functions(const char* const* names,
                                                                int count);

CUDA_TEST_DOUBLE_API int cuda_test_double_launch_count(void);
/* Copies launch |index| (0 = first since reset); returns 0 when there is no such launch. */
CUDA_TEST_DOUBLE_API int cuda_test_double_get_launch(int index, cuda_test_double_launch* out);
/* The bytes of the last module load: PTX up to and excluding its NUL, binaries by their
 * header's size. Copies at most |capacity| bytes and returns the full length. */
CUDA_TEST_DOUBLE_API size_t cuda_test_double_last_module(void* buffer, size_t capacity);
/* The last value set for CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES of |function|, or -1. */
CUDA_TEST_DOUBLE_API int cuda_test_double_max_dynamic_shared(const char* function);
/* Device allocations (cuMemAlloc) and host allocations (cuMemHostAlloc) still live. */
CUDA_TEST_DOUBLE_API int cuda_test_double_live_allocations(void);
CUDA_TEST_DOUBLE_API int cuda_test_double_live_host_allocations(void);
/* Streams, events and modules created and not yet destroyed. */
CUDA_TEST_DOUBLE_API int cuda_test_double_live_objects(void);

#ifdef __cplusplus
} /* extern "C" */
#endif
