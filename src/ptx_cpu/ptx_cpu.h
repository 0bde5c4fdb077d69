/*
 * libhal_ptx_cpu.so's own interface, beside the CUDA driver API it implements (see driver.h in
 * the sources): counters of the work its CPU PTX devices have done, for benchmarks that report
 * lane-instructions per second. C99 and C++.
 *
 * The function is exported under its name; a program that loaded the library through hal
 * (HAL_CUDA_LIBRARY) finds it with dlopen of the same path (which returns the loaded library)
 * and dlsym.
 */
#ifndef HAL_PTX_CPU_H_
#define HAL_PTX_CPU_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first bytes of every CPU PTX device's UUID (cuDeviceGetUuid; the last byte is the
 * device's ordinal). The CUDA driver API has no device type, so this is how a program (hal's
 * CUDA backend among them) tells that a CUDA device is this library's host CPU. */
#define HAL_PTX_CPU_UUID_PREFIX "hal-ptx-cpu-"

typedef struct hal_ptx_cpu_stats {
  uint32_t struct_size;       /* set by the caller to sizeof(hal_ptx_cpu_stats) */
  uint64_t lane_instructions; /* instructions executed, times the lanes that executed them */
  uint64_t warp_instructions; /* instructions executed, once per warp */
  uint64_t kernels;           /* kernel launches completed (also those that faulted) */
} hal_ptx_cpu_stats;

/* Fills |stats| with the counts of |context| (a CUcontext; NULL for the calling thread's current
 * context) since its primary context was last retained from a count of zero. Kernels still
 * running are not counted yet: synchronise first.
 * Returns a CUresult: 0 (CUDA_SUCCESS); 1 (CUDA_ERROR_INVALID_VALUE: |stats| is NULL or its
 * struct_size is smaller than this first version of the struct); 3 (CUDA_ERROR_NOT_INITIALIZED:
 * before cuInit); 201 (CUDA_ERROR_INVALID_CONTEXT: not a context of this library, not retained,
 * or NULL with no current context). Thread-safe. */
int hal_ptx_cpu_get_stats(void* context, hal_ptx_cpu_stats* stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HAL_PTX_CPU_H_ */
