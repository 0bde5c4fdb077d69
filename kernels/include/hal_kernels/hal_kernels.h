/*
 * hal_kernels: the reference kernel pack, embedded.
 *
 * Every kernel of the pack exists under one name, with one parameter list, in two IRs: SPIR-V
 * (one module per kernel, entry point named after the kernel) and PTX (one module per source
 * file, several kernels each). The exception is the tensor-core matmul (family
 * "matmul_mma_f16"), which exists in PTX only: hal_kernels_find(name, HAL_IR_SPIRV) is NULL. This
 * static library holds both blobs of every kernel and the kernel's description from
 * kernels/manifest.json, so a program can load a kernel without touching the file system:
 *
 *   const hal_kernel_blob* b = hal_kernels_find("saxpy", HAL_IR_SPIRV);
 *   hal_module_load(device, b->data, b->size, NULL, &module);
 *   hal_module_get_function(module, b->entry_point, &function);
 *
 * The same files are installed under share/hal/kernels/ with manifest.json.
 *
 * A device whose driver brings its own kernels (hal_device_info.ir_mask has HAL_IR_BUILTIN) runs
 * them by name: hal_kernels_find(name, HAL_IR_BUILTIN) gives the blob that names kernel |name|,
 * the bytes "HALK" followed by the name, for every kernel of the pack. Such a driver implements
 * the kernels it chooses, with the pack's parameter lists and block sizes; hal_module_load of
 * one it does not have is HAL_ERROR_NOT_FOUND.
 *
 * Everything returned points to static, immutable data: never freed, safe from any thread.
 */
#ifndef HAL_KERNELS_HAL_KERNELS_H_
#define HAL_KERNELS_HAL_KERNELS_H_

#include <hal/hal.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel parameter. Pointers come first, then 32-bit values. */
typedef struct hal_kernel_param {
  const char* name;
  hal_param_kind kind; /* HAL_PARAM_POINTER or HAL_PARAM_VALUE */
  const char* type;    /* a pointer's element type ("f32", "f16"), or a value's ("u32", "f32") */
  uint32_t size;       /* bytes of the argument: 8 for pointers, 4 for values */
} hal_kernel_param;

/* A tile size or other compile-time choice. In SPIR-V it is the specialization constant
 * |spec_id| (any of |allowed| may be set through hal_module_options.specializations; |value| is
 * the blob's default); in PTX it is fixed at |value|, and the other values are the other kernels
 * of the same family. */
typedef struct hal_kernel_tunable {
  const char* name;
  uint32_t value;
  uint32_t spec_id;
  uint32_t allowed_count;
  const uint32_t* allowed;
} hal_kernel_tunable;

typedef struct hal_kernel_info {
  const char* name;           /* e.g. "matmul_tiled_f32_64x64" */
  const char* family;         /* kernels differing only in tunables, e.g. "matmul_tiled_f32" */
  const char* dtype;          /* storage type: "f32" or "f16" (fp16 storage, fp32 arithmetic) */
  const char* description;    /* what it computes */
  uint32_t block[3];          /* the block size every launch must use */
  uint64_t required_features; /* bits of hal_feature the device needs (HAL_FEATURE_STORAGE_16BIT) */
  uint32_t param_count;
  const hal_kernel_param* params;
  uint32_t tunable_count;
  const hal_kernel_tunable* tunables; /* NULL when tunable_count is 0 */
  /* Dynamic shared memory in bytes that every launch must pass in
   * hal_launch_config.shared_bytes; 0 for kernels whose shared memory is all static (most). The
   * tensor-core matmul keeps its pipeline stages there; hal opts a kernel in to more than
   * 48 KiB itself, up to the device's max_shared_memory_per_block. */
  uint32_t shared_bytes;
} hal_kernel_info;

/* One kernel in one IR. */
typedef struct hal_kernel_blob {
  const hal_kernel_info* kernel;
  hal_ir ir;               /* HAL_IR_SPIRV, HAL_IR_PTX or HAL_IR_BUILTIN */
  const char* entry_point; /* the name for hal_module_get_function; equal to kernel->name */
  /* The blob's file name under share/hal/kernels; "" for HAL_IR_BUILTIN (no file: the blob is
   * only the name). */
  const char* file;
  /* The module (for HAL_IR_BUILTIN, "HALK" and the kernel's name); followed by a NUL byte not
   * counted in |size|. */
  const void* data;
  size_t size;
} hal_kernel_blob;

/* The number of kernels in the pack. */
uint32_t hal_kernels_count(void);

/* Kernel |index| in [0, hal_kernels_count()), in manifest order; NULL beyond. */
const hal_kernel_info* hal_kernels_get(uint32_t index);

/* The kernel named |name|, or NULL. */
const hal_kernel_info* hal_kernels_info(const char* name);

/* The blob of kernel |name| in |ir| (HAL_IR_SPIRV, HAL_IR_PTX or HAL_IR_BUILTIN), or NULL (also
 * for a PTX-only kernel in SPIR-V).
 * Several PTX kernels share one blob (data and file are then the same). Every kernel of the pack
 * has a HAL_IR_BUILTIN blob; whether a device runs it is its driver's choice (see above). */
const hal_kernel_blob* hal_kernels_find(const char* name, hal_ir ir);

/* Whether the device described by |info| can run |kernel| from its |ir| blob: the pack has the
 * kernel in |ir| (a PTX-only kernel has no SPIR-V), the device has every feature in
 * kernel->required_features, and kernel->shared_bytes fits max_shared_memory_per_block.
 * Returns 1 when it can. Returns 0 when it cannot, and writes one sentence saying why (naming
 * the missing feature or the shared memory needed and available) into |why| (|why_size| bytes
 * with the terminating NUL, truncated to fit; |why| may be NULL). NULL |kernel| or |info|: 0.
 * HAL_IR_BUILTIN blobs exist for every kernel; whether the device's driver has one is its own
 * answer at load, so for them only the blob is checked. */
int hal_kernels_runs_on(const hal_kernel_info* kernel, hal_ir ir, const hal_device_info* info,
                        char* why, size_t why_size);

/* The tile of C one block of matmul kernel |kernel| computes, BM rows by BN columns, so that its
 * grid is ceil(N/BN) x ceil(M/BM). |values| holds one value per kernel->tunables[i], in that
 * order (the specialization a SPIR-V module was loaded with), or is NULL for the kernel's own
 * values. Per family: 16 x 16 (matmul_naive); the BM and BN tunables (matmul_tiled, matmul_mma);
 * (threads/TX*TM) x (TX*TN) (matmul_reg) and (threads/SG*TM) x (SG*TN) (matmul_sg), the block's
 * threads arranged TX or SG across. Returns 1 and sets *bm and *bn; 0 (nothing set) for a kernel
 * that is not a matmul, NULL arguments, or values that make no tile (a TX or SG of 0 or one that
 * does not divide the block). */
int hal_kernels_matmul_tile(const hal_kernel_info* kernel, const uint32_t* values, uint32_t* bm,
                            uint32_t* bn);

/* The pack's manifest (JSON text, NUL-terminated); |size| (may be NULL) receives its length. */
const char* hal_kernels_manifest(size_t* size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HAL_KERNELS_HAL_KERNELS_H_ */
