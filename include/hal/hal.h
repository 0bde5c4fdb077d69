/*
 * hal: a vendor-neutral C ABI for running PTX and SPIR-V compute kernels.
 *
 * This header is the whole public contract of libhal. It compiles as C99 and as C++.
 *
 * ===========================================================================================
 * General rules (they hold for every call below unless its own comment says otherwise)
 * ===========================================================================================
 *
 * Status: every call that can fail returns a |hal_status|. HAL_SUCCESS is 0. On failure the
 *   calling thread's hal_last_error() names the call, the cause, the backend's own error name
 *   where there is one (for instance CUDA_ERROR_OUT_OF_MEMORY or VK_ERROR_DEVICE_LOST), and a
 *   hint for what to do. Output parameters are left untouched on failure.
 *
 * Validation: every handle and argument is checked before anything reaches a driver. A NULL,
 *   destroyed, garbage or wrong-kind handle is HAL_ERROR_INVALID_HANDLE and never crashes.
 *   Handle values are never reused within a process, so a stale handle cannot alias a new object.
 *
 * Initialisation: hal_init() is optional; every call initialises the runtime on first use.
 *
 * Thread-safety: every call may be made from any thread at any time. Calls on one stream from
 *   several threads are serialised by the runtime in an unspecified order; keep one stream per
 *   thread for a defined order. Destroying an object while another thread still uses it makes
 *   that other call fail with HAL_ERROR_INVALID_HANDLE or complete normally; it never crashes.
 *
 * Exceptions and signals: nothing is thrown across this ABI. An unexpected internal failure is
 *   HAL_ERROR_INTERNAL with its message.
 *
 * Extensible structs: a struct that may grow starts with |struct_size|. The caller sets it to
 *   sizeof(the struct) as its header knew it; the library reads and writes only that many bytes,
 *   so an old program keeps working with a newer library. A |struct_size| smaller than the first
 *   published version of the struct is HAL_ERROR_INVALID_ARGUMENT.
 *
 * Stream ordering: copies, fills, launches and event records on one stream execute in the order
 *   they were issued. Work on different streams may overlap unless ordered with events.
 */
#ifndef HAL_HAL_H_
#define HAL_HAL_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define HAL_API __declspec(dllexport)
#elif defined(__GNUC__)
#define HAL_API __attribute__((visibility("default")))
#else
#define HAL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================================
 * Versions
 * ===========================================================================================*/

#define HAL_VERSION_MAJOR 0
#define HAL_VERSION_MINOR 5
#define HAL_VERSION_PATCH 0
/* A packed version: major in bits 16..31, minor in bits 8..15, patch in bits 0..7. */
#define HAL_MAKE_VERSION(major, minor, patch) \
  ((uint32_t)(((major) << 16) | ((minor) << 8) | (patch)))
#define HAL_VERSION HAL_MAKE_VERSION(HAL_VERSION_MAJOR, HAL_VERSION_MINOR, HAL_VERSION_PATCH)

/* ===========================================================================================
 * Status
 * ===========================================================================================*/

typedef enum hal_status {
  HAL_SUCCESS = 0,
  /* An argument is malformed: NULL where a value is needed, a size of 0, a bad struct_size. */
  HAL_ERROR_INVALID_ARGUMENT = 1,
  /* A handle is NULL, destroyed, garbage, of the wrong kind, or belongs to another device. */
  HAL_ERROR_INVALID_HANDLE = 2,
  /* A selector, device index or function name matches nothing. */
  HAL_ERROR_NOT_FOUND = 3,
  /* The device cannot do this: an IR it does not accept, a feature it lacks. */
  HAL_ERROR_NOT_SUPPORTED = 4,
  /* A backend's vendor library (libcuda, the Vulkan loader) is missing or unusable. */
  HAL_ERROR_UNAVAILABLE = 5,
  /* Device or host memory is exhausted. */
  HAL_ERROR_OUT_OF_MEMORY = 6,
  /* A pointer or range lies outside every live allocation, or a limit is exceeded. */
  HAL_ERROR_OUT_OF_RANGE = 7,
  /* A blob is not well-formed PTX, SPIR-V, cubin or fatbin. */
  HAL_ERROR_INVALID_IR = 8,
  /* The driver's compiler rejected a well-formed blob; the compiler log is in hal_last_error. */
  HAL_ERROR_COMPILE_FAILED = 9,
  /* A kernel faulted or could not be launched; on CUDA the device is unusable afterwards. */
  HAL_ERROR_LAUNCH_FAILED = 10,
  /* Work is still pending (hal_stream_query, hal_event_query). Not an error: does not change
   * hal_last_error(). */
  HAL_ERROR_NOT_READY = 11,
  /* A bounded wait ran out of time. */
  HAL_ERROR_TIMEOUT = 12,
  /* The device was lost; every later call on it returns this status. */
  HAL_ERROR_DEVICE_LOST = 13,
  /* A bug in hal or an unexpected driver answer; the message says what happened. */
  HAL_ERROR_INTERNAL = 14
} hal_status;

/* A static, never-NULL English name for |status|, such as "HAL_ERROR_OUT_OF_RANGE". Unknown values
 * give "HAL_STATUS_UNKNOWN". Thread-safe. */
HAL_API const char* hal_status_string(hal_status status);

/* The text of the most recent failure on the calling thread, or "" if the thread has seen none.
 * Each thread has its own; successful calls and HAL_ERROR_NOT_READY leave it unchanged. The
 * pointer stays valid until the next failing hal call on the same thread. Never NULL. */
HAL_API const char* hal_last_error(void);

/* ===========================================================================================
 * Library
 * ===========================================================================================*/

/* Discovers backends and devices. Idempotent and thread-safe: the first call does the work and
 * later calls return its result. A missing vendor library is not a failure: that backend is
 * listed as unavailable (see hal_backend_get_info) and the others keep working.
 * Returns: HAL_SUCCESS, even with zero devices; HAL_ERROR_INVALID_ARGUMENT when HAL_BACKENDS
 * names an unknown backend; HAL_ERROR_INTERNAL. */
HAL_API hal_status hal_init(void);

/* The library's version as HAL_MAKE_VERSION(major, minor, patch). Compare against HAL_VERSION to
 * check that the header and the library agree. Never fails, needs no init. */
HAL_API uint32_t hal_version(void);

/* ===========================================================================================
 * Backends
 * ===========================================================================================*/

typedef enum hal_backend {
  HAL_BACKEND_UNKNOWN = 0, /* none of the built-in backends: a third-party driver module */
  HAL_BACKEND_CUDA = 1,
  HAL_BACKEND_VULKAN = 2
} hal_backend;

typedef struct hal_backend_info {
  uint32_t struct_size;
  hal_backend backend;
  char name[32];      /* "cuda", "vulkan": the prefix used in device selectors */
  uint32_t available; /* 1 when the backend loaded; 0 with |reason| saying why not */
  uint32_t device_count;
  char reason[512]; /* why the backend is unavailable, where to look, what to install; or "" */
  /* Since 0.4.0: the driver module the backend came from (its file; for a built-in module that
   * is missing, where it belongs), or "" when there is none (a name HAL_BACKENDS gives that no
   * module provides). */
  char module[512];
} hal_backend_info;

/* The number of backends this runtime considered, available or not: the driver modules it found
 * (the built-in ones, then those of HAL_DRIVER_PATH; see docs/ABI.md, "Driver modules"), as
 * selected and ordered by HAL_BACKENDS. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_ARGUMENT if |count|
 * is NULL. */
HAL_API hal_status hal_backend_count(uint32_t* count);

/* Fills |info| for backend |index| in [0, hal_backend_count). Returns: HAL_SUCCESS;
 * HAL_ERROR_INVALID_ARGUMENT (NULL |info| or bad struct_size); HAL_ERROR_NOT_FOUND (index). */
HAL_API hal_status hal_backend_get_info(uint32_t index, hal_backend_info* info);

/* ===========================================================================================
 * Devices
 * ===========================================================================================*/

/* A device. Device handles are owned by the runtime and live until the process exits; there is
 * nothing to release. */
typedef struct hal_device_s* hal_device;

/* IR kinds. As bits they form hal_device_info.ir_mask. */
typedef enum hal_ir {
  HAL_IR_AUTO = 0,   /* sniff the blob: SPIR-V magic, PTX text, ELF (cubin), fatbin magic, "HALK" */
  HAL_IR_PTX = 1,    /* NVIDIA PTX assembly text */
  HAL_IR_SPIRV = 2,  /* Khronos SPIR-V binary, either endianness */
  HAL_IR_CUBIN = 4,  /* NVIDIA ELF binary for one architecture */
  HAL_IR_FATBIN = 8, /* NVIDIA fat binary (several cubins and/or PTX) */
  /* Since 0.4.0: one of the device's built-in kernels, by name: the 4 bytes "HALK" followed by
   * the kernel's name (the blob's size ends it). For devices whose driver brings its own kernels
   * rather than compiling an IR; the kernel pack's names and parameter lists apply. */
  HAL_IR_BUILTIN = 16
} hal_ir;

/* Optional capabilities, as bits of hal_device_info.features. */
typedef enum hal_feature {
  HAL_FEATURE_FLOAT16 = 1u << 0,               /* fp16 arithmetic in kernels */
  HAL_FEATURE_INT8 = 1u << 1,                  /* int8 arithmetic in kernels */
  HAL_FEATURE_STORAGE_16BIT = 1u << 2,         /* 16-bit loads and stores in buffers */
  HAL_FEATURE_STORAGE_8BIT = 1u << 3,          /* 8-bit loads and stores in buffers */
  HAL_FEATURE_BUFFER_DEVICE_ADDRESS = 1u << 4, /* hal_deviceptr is the real device address */
  HAL_FEATURE_TIMELINE_SEMAPHORE = 1u << 5,
  HAL_FEATURE_SUBGROUP_SIZE_CONTROL = 1u << 6,
  HAL_FEATURE_COOPERATIVE_MATRIX = 1u << 7,
  HAL_FEATURE_TIMESTAMPS = 1u << 8, /* events measure device time */
  /* Since 0.5.0: subgroup (warp) operations in kernels, beyond the basic ones every device has.
   * Vulkan: the operation classes VkPhysicalDeviceSubgroupProperties reports for the compute
   * stage (a SPIR-V module declaring GroupNonUniformVote, ...Arithmetic, ...Ballot or ...Shuffle
   * on a device without the class is refused at load); CUDA: every GPU (warp vote, shuffle and
   * ballot instructions). */
  HAL_FEATURE_SUBGROUP_VOTE = 1u << 9,        /* all, any, all-equal */
  HAL_FEATURE_SUBGROUP_ARITHMETIC = 1u << 10, /* reductions and scans (add, min, max, ...) */
  HAL_FEATURE_SUBGROUP_BALLOT = 1u << 11,     /* ballot, broadcast, broadcast-first */
  HAL_FEATURE_SUBGROUP_SHUFFLE = 1u << 12     /* shuffle by index and by xor */
} hal_feature;

typedef struct hal_device_info {
  uint32_t struct_size;
  hal_backend backend;
  uint32_t backend_index; /* N in the selector "<backend>:N" */
  uint32_t global_index;  /* N in the selector "N" and for hal_device_get */
  char name[256];
  char driver_name[64];
  uint32_t vendor_id; /* PCI vendor id (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel, ...) or 0 */
  uint32_t device_id;
  uint8_t uuid[16];
  uint32_t driver_version; /* the driver's own encoding (CUDA: 1000*major + 10*minor) */
  /* Bits of hal_ir that hal_module_load accepts on this device. Since 0.5.0 a Vulkan device
   * with bufferDeviceAddress and shaderInt64 also takes PTX, translated to SPIR-V (docs/ABI.md). */
  uint32_t ir_mask;
  uint64_t total_memory;        /* bytes of device memory */
  uint64_t max_allocation_size; /* largest single hal_mem_alloc the device can satisfy */
  uint32_t max_threads_per_block;
  uint32_t max_block_dim[3];
  uint32_t max_grid_dim[3];
  uint32_t max_shared_memory_per_block; /* bytes, static plus dynamic; 0: none */
  uint32_t subgroup_size;               /* warp size on CUDA */
  uint32_t compute_units;               /* SMs on CUDA, an estimate elsewhere (0 if unknown) */
  uint32_t pointer_alignment; /* bytes; buffer parameters need it (hal_param_info.alignment) */
  uint32_t is_cpu;            /* 1 for a CPU device such as lavapipe */
  uint32_t unified_memory;    /* 1 when device memory is host memory */
  uint32_t compute_capability_major; /* CUDA only, else 0 */
  uint32_t compute_capability_minor;
  uint64_t features; /* bits of hal_feature */
  /* Since 0.2.0: the driver's own identification, for reports. */
  char driver_info[256];        /* Vulkan driverInfo (e.g. the Mesa version); "CUDA 12.4" */
  uint32_t api_version;         /* Vulkan apiVersion (VK_MAKE_API_VERSION); CUDA: 1000*maj+10*min */
  uint32_t driver_id;           /* VkDriverId, or 0 on other backends */
  uint32_t conformance_version; /* Vulkan conformanceVersion, major<<24|minor<<16|subminor<<8|patch,
                                   0 when the driver claims none */
  /* Since 0.4.0: the backend's name as selectors and HAL_BACKENDS use it: "cuda", "vulkan", or
   * a driver module's own (|backend| is then HAL_BACKEND_UNKNOWN). */
  char backend_name[32];
} hal_device_info;

/* The number of devices over all available backends. GPUs come before CPU devices; within each
 * group, backends in HAL_BACKENDS order (default: "cuda,vulkan", then the modules of
 * HAL_DRIVER_PATH in the order found), then the backend's own order.
 * Returns: HAL_SUCCESS (also with zero devices); HAL_ERROR_INVALID_ARGUMENT (NULL |count|). */
HAL_API hal_status hal_device_count(uint32_t* count);

/* The device at global |index|. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_ARGUMENT (NULL |device|);
 * HAL_ERROR_NOT_FOUND (index >= count). */
HAL_API hal_status hal_device_get(uint32_t index, hal_device* device);

/* Finds a device by |selector|:
 *   "vulkan:0", "cuda:1"  index within a backend;
 *   "2"                   global index;
 *   "default" or ""       the device named by the environment variable HAL_DEVICE (any other
 *                         selector form), else global device 0;
 *   anything else         a case-insensitive substring of the device name; the first match wins.
 * Returns: HAL_SUCCESS; HAL_ERROR_INVALID_ARGUMENT (NULL arguments, malformed selector, unknown
 * backend name); HAL_ERROR_NOT_FOUND (no match; the message lists the devices, and the reason
 * when the named backend is unavailable). */
HAL_API hal_status hal_device_find(const char* selector, hal_device* device);

/* Fills |info| (set info->struct_size first). Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE;
 * HAL_ERROR_INVALID_ARGUMENT (NULL |info| or bad struct_size). */
HAL_API hal_status hal_device_get_info(hal_device device, hal_device_info* info);

/* Blocks until all work on every stream of |device| has completed.
 * Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE; HAL_ERROR_LAUNCH_FAILED (a kernel faulted);
 * HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_device_synchronize(hal_device device);

/* ===========================================================================================
 * Memory
 * ===========================================================================================*/

/* A device address. Arithmetic inside an allocation is allowed: base + offset names byte
 * |offset| of that allocation, for copies and for kernel pointer arguments alike. 0 is never a
 * valid allocation. On Vulkan devices without buffer device addresses the runtime assigns the
 * values; they are then meaningful only to hal calls, not inside kernels. */
typedef uint64_t hal_deviceptr;

/* Allocates |size| bytes of device memory; *ptr receives its base address, aligned to at least
 * 256 bytes. Contents are undefined. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE;
 * HAL_ERROR_INVALID_ARGUMENT (NULL |ptr|, |size| 0); HAL_ERROR_OUT_OF_MEMORY (also for a size
 * above hal_device_info.max_allocation_size; the device keeps working). */
HAL_API hal_status hal_mem_alloc(hal_device device, size_t size, hal_deviceptr* ptr);

/* Frees an allocation. |ptr| must be a base address returned by hal_mem_alloc on |device|, and
 * no work may be issued on it once the call returns. Work already issued that uses the memory
 * still completes with it: the memory is handed out again only after the work issued on |device|
 * before the free has completed. On Vulkan devices the call does not wait for that work (it may
 * wait briefly for a launch or copy another thread is issuing on the device); CUDA devices wait
 * for the device.
 * Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE; HAL_ERROR_INVALID_ARGUMENT (|ptr| is not the
 * base of a live allocation of |device|: never allocated, already freed, interior, or another
 * device's). */
HAL_API hal_status hal_mem_free(hal_device device, hal_deviceptr ptr);

/* Allocates |size| bytes of host memory that |device| copies to and from at full speed (pinned
 * memory on CUDA, host-visible device-mapped memory on Vulkan). Returns: HAL_SUCCESS;
 * HAL_ERROR_INVALID_HANDLE; HAL_ERROR_INVALID_ARGUMENT (NULL |host|, |size| 0);
 * HAL_ERROR_OUT_OF_MEMORY. */
HAL_API hal_status hal_host_alloc(hal_device device, size_t size, void** host);

/* Frees memory from hal_host_alloc on the same |device|; |host| must not be used once the call
 * returns. Copies already issued that use it still complete with it: the memory is released only
 * after the work issued on |device| before the free has completed, which, as for hal_mem_free,
 * the call does not wait for on Vulkan devices (CUDA devices wait). Returns: HAL_SUCCESS;
 * HAL_ERROR_INVALID_HANDLE; HAL_ERROR_INVALID_ARGUMENT (not such a pointer, or already freed). */
HAL_API hal_status hal_host_free(hal_device device, void* host);

/* Since 0.3.0. The host address of the device memory at |ptr| (anywhere inside a live
 * allocation of |device|), on a device whose memory the host reads and writes directly: a Vulkan
 * device whose device memory is host-visible and coherent (lavapipe, many integrated GPUs). The
 * address stays valid until the allocation is freed. The host sees the device's writes, and the
 * device the host's, only across a synchronisation: synchronize the work that writes (or reads)
 * those bytes before touching them, and issue work that reads what the host wrote after writing.
 * Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE; HAL_ERROR_INVALID_ARGUMENT (NULL |host|);
 * HAL_ERROR_OUT_OF_RANGE (|ptr| is inside no live allocation of |device|);
 * HAL_ERROR_NOT_SUPPORTED (the device's memory has no host address: copy it with
 * hal_memcpy_dtoh); HAL_ERROR_DEVICE_LOST. |*host| is untouched on failure. */
HAL_API hal_status hal_mem_host_pointer(hal_device device, hal_deviceptr ptr, void** host);

/* ===========================================================================================
 * Streams
 * ===========================================================================================*/

/* An in-order queue of work on one device. Owned by the caller: destroy with
 * hal_stream_destroy. */
typedef struct hal_stream_s* hal_stream;
/* A marker in a stream's work, for ordering between streams and for timing. Owned by the
 * caller: destroy with hal_event_destroy. */
typedef struct hal_event_s* hal_event;

/* Creates a stream on |device|. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE;
 * HAL_ERROR_INVALID_ARGUMENT (NULL |stream|); HAL_ERROR_OUT_OF_MEMORY; HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_stream_create(hal_device device, hal_stream* stream);

/* Waits for the stream's pending work, then destroys it; the handle is invalid afterwards.
 * Returns: HAL_SUCCESS (also when the pending work failed: the stream is destroyed all the
 * same); HAL_ERROR_INVALID_HANDLE (including a second destroy). */
HAL_API hal_status hal_stream_destroy(hal_stream stream);

/* Blocks until every command issued on |stream| so far has completed. Returns: HAL_SUCCESS;
 * HAL_ERROR_INVALID_HANDLE; HAL_ERROR_LAUNCH_FAILED; HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_stream_synchronize(hal_stream stream);

/* HAL_SUCCESS when all issued work has completed, HAL_ERROR_NOT_READY otherwise. Never blocks.
 * Also: HAL_ERROR_INVALID_HANDLE; HAL_ERROR_LAUNCH_FAILED; HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_stream_query(hal_stream stream);

/* Makes later work on |stream| wait until the work captured by the last hal_event_record of
 * |event| has completed. Does not block the host. An event that was never recorded is already
 * complete (nothing to wait for). The event may be re-recorded or destroyed right after this
 * call; the wait keeps what it captured. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE (either
 * handle, or stream and event on different devices). */
HAL_API hal_status hal_stream_wait_event(hal_stream stream, hal_event event);

/* ===========================================================================================
 * Events
 * ===========================================================================================*/

/* Creates an event on |device|. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE;
 * HAL_ERROR_INVALID_ARGUMENT (NULL |event|); HAL_ERROR_OUT_OF_MEMORY. */
HAL_API hal_status hal_event_create(hal_device device, hal_event* event);

/* Destroys an event. Waits that already captured it are unaffected. Returns: HAL_SUCCESS;
 * HAL_ERROR_INVALID_HANDLE. */
HAL_API hal_status hal_event_destroy(hal_event event);

/* Captures all work issued on |stream| so far; the event completes when that work has, and
 * records the device time then. Re-recording replaces the capture. Returns: HAL_SUCCESS;
 * HAL_ERROR_INVALID_HANDLE (either handle, or different devices); HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_event_record(hal_event event, hal_stream stream);

/* Blocks until the captured work completes (at once if never recorded). Returns: HAL_SUCCESS;
 * HAL_ERROR_INVALID_HANDLE; HAL_ERROR_LAUNCH_FAILED; HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_event_synchronize(hal_event event);

/* HAL_SUCCESS when the captured work has completed (or the event was never recorded),
 * HAL_ERROR_NOT_READY otherwise. Never blocks. Also HAL_ERROR_INVALID_HANDLE. */
HAL_API hal_status hal_event_query(hal_event event);

/* Milliseconds of device time between two completed events of the same device. Returns:
 * HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE (either, or different devices);
 * HAL_ERROR_INVALID_ARGUMENT (NULL |ms|, or an event never recorded); HAL_ERROR_NOT_READY (one
 * has not completed yet); HAL_ERROR_NOT_SUPPORTED (the device has no timestamps). */
HAL_API hal_status hal_event_elapsed_ms(hal_event start, hal_event end, float* ms);

/* ===========================================================================================
 * Copies and fills (all ordered on a stream)
 * ===========================================================================================
 *
 * One semantics on every backend:
 *  - the source of hal_memcpy_htod may be modified or freed as soon as the call returns;
 *  - the destination of hal_memcpy_dtoh holds the data once the stream has been synchronised
 *    (hal_stream_synchronize, or an event recorded after it has completed);
 *  - every device range [ptr, ptr + size) must lie inside one live allocation of the stream's
 *    device, else HAL_ERROR_OUT_OF_RANGE, checked before any backend sees the call;
 *  - a size of 0 does nothing and succeeds (the stream is still validated);
 *  - host pointers must not be NULL when size > 0 (HAL_ERROR_INVALID_ARGUMENT).
 * Every call also returns HAL_ERROR_INVALID_HANDLE for a bad stream and HAL_ERROR_DEVICE_LOST. */

HAL_API hal_status hal_memcpy_htod(hal_stream stream, hal_deviceptr dst, const void* src,
                                   size_t size);
HAL_API hal_status hal_memcpy_dtoh(hal_stream stream, void* dst, hal_deviceptr src, size_t size);
/* Overlapping ranges give undefined contents in the overlap (as memcpy). */
HAL_API hal_status hal_memcpy_dtod(hal_stream stream, hal_deviceptr dst, hal_deviceptr src,
                                   size_t size);
/* Sets |count| bytes at |dst| to |value|. */
HAL_API hal_status hal_memset_d8(hal_stream stream, hal_deviceptr dst, uint8_t value, size_t count);
/* Sets |count| 32-bit words at |dst| to |value|. |dst| must be 4-byte aligned
 * (HAL_ERROR_INVALID_ARGUMENT otherwise). */
HAL_API hal_status hal_memset_d32(hal_stream stream, hal_deviceptr dst, uint32_t value,
                                  size_t count);

/* ===========================================================================================
 * Modules and functions
 * ===========================================================================================*/

/* Loaded code. Owned by the caller: release with hal_module_unload. */
typedef struct hal_module_s* hal_module;
/* An entry point of a module. Owned by its module; invalid once the module is unloaded. */
typedef struct hal_function_s* hal_function;

/* A specialization constant (SPIR-V OpSpecConstant with SpecId |id|): |size| bytes (1, 2, 4 or 8)
 * at |data| are copied during hal_module_load. As in Vulkan, an id the module does not declare is
 * ignored; a declared one given with another size than the constant's (booleans are 4 bytes) is
 * HAL_ERROR_INVALID_ARGUMENT. The module is described after specialization: a workgroup size
 * built of constants given here is the function's fixed block, and shared arrays sized by them
 * count at their specialized sizes (docs/ABI.md). PTX has no specialization constants: passing
 * any for a PTX module is HAL_ERROR_NOT_SUPPORTED. */
typedef struct hal_specialization {
  uint32_t id;
  uint32_t size;
  const void* data;
} hal_specialization;

/* hal_module_options.flags */
typedef enum hal_module_flags {
  /* The shader sizes its shared memory through the specialization constant
   * |shared_bytes_constant_id| (an integer in bytes); hal_launch then sets it from
   * hal_launch_config.shared_bytes, which must not be 0 (an empty array is not valid SPIR-V:
   * HAL_ERROR_INVALID_ARGUMENT). Vulkan only. */
  HAL_MODULE_SHARED_BYTES_CONSTANT = 1u << 0
} hal_module_flags;

typedef struct hal_module_options {
  uint32_t struct_size;
  hal_ir ir; /* HAL_IR_AUTO sniffs; a declared kind must match what the blob is */
  uint32_t specialization_count;
  const hal_specialization* specializations; /* copied; may be freed after the call */
  uint32_t flags;                            /* bits of hal_module_flags */
  uint32_t shared_bytes_constant_id;
} hal_module_options;

/* Loads |size| bytes of IR at |blob| onto |device|. |blob| is read only within [blob, blob+size)
 * and only during the call. |options| may be NULL (sniff the IR, no specialization).
 * Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE; HAL_ERROR_INVALID_ARGUMENT (NULL |blob| or
 * |module|, |size| 0, bad options); HAL_ERROR_INVALID_IR (not recognisable, or malformed: the
 * message shows what was seen or the validator's message); HAL_ERROR_NOT_SUPPORTED (the device
 * does not accept this IR, or the PTX targets a newer architecture than the device, or, on a
 * Vulkan device, uses what hal cannot translate to SPIR-V for it, such as warp-level
 * instructions: named); HAL_ERROR_COMPILE_FAILED (the driver's compiler failed; its log is in
 * the message); HAL_ERROR_OUT_OF_MEMORY; HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_module_load(hal_device device, const void* blob, size_t size,
                                   const hal_module_options* options, hal_module* module);

/* Reads the file at |path| and loads it as hal_module_load does. Returns, beyond those:
 * HAL_ERROR_NOT_FOUND (no such file, or unreadable: the message carries the system's reason). */
HAL_API hal_status hal_module_load_file(hal_device device, const char* path,
                                        const hal_module_options* options, hal_module* module);

/* Unloads a module; its functions become invalid handles. Launches already issued complete
 * first. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE. */
HAL_API hal_status hal_module_unload(hal_module module);

/* Looks up the entry point |name|. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE;
 * HAL_ERROR_INVALID_ARGUMENT (NULL arguments); HAL_ERROR_NOT_FOUND (the message lists the
 * module's entry points); HAL_ERROR_NOT_SUPPORTED (the entry point is in the module but cannot
 * run on this device, such as a PTX kernel with warp-level instructions on a Vulkan device,
 * while the module's other kernels can; the message says why). */
HAL_API hal_status hal_module_get_function(hal_module module, const char* name,
                                           hal_function* function);

/* hal_function_info.param_count when the IR does not describe its parameters (a cubin on a
 * driver without parameter queries). hal_launch then checks only what it can. */
#define HAL_PARAM_COUNT_UNKNOWN 0xFFFFFFFFu

typedef struct hal_function_info {
  uint32_t struct_size;
  char name[256];
  uint32_t param_count; /* or HAL_PARAM_COUNT_UNKNOWN */
  /* The kernel's fixed block size, or {0,0,0} if it has none. A SPIR-V kernel may fix some
   * dimensions of its workgroup size and leave others to specialization constants: it reports
   * {0,0,0} here, and hal_launch refuses a block that differs in a fixed dimension, naming it. */
  uint32_t block[3];
  uint32_t static_shared_bytes; /* shared memory the kernel declares itself */
  uint32_t max_threads_per_block;
} hal_function_info;

typedef enum hal_param_kind {
  HAL_PARAM_POINTER = 1, /* its argument is a hal_deviceptr */
  HAL_PARAM_VALUE = 2    /* its argument is |size| bytes passed by value */
} hal_param_kind;

/* What a value parameter holds, as far as its IR says (hal_param_info.type, since 0.3.0). */
typedef enum hal_param_type {
  HAL_PARAM_TYPE_UNKNOWN = 0, /* pointers, PTX bit types (.b32), aggregates, binaries */
  HAL_PARAM_TYPE_INTEGER = 1, /* an integer of |size| bytes; signedness is not recorded */
  HAL_PARAM_TYPE_FLOAT = 2    /* a floating-point number of |size| bytes */
} hal_param_type;

typedef struct hal_param_info {
  uint32_t struct_size;
  hal_param_kind kind;
  uint32_t size; /* bytes the argument occupies (8 for a pointer) */
  /* Bytes. A value's alignment; for a pointer, the alignment the kernel needs of the address,
   * which hal_launch checks: the device's pointer_alignment for a descriptor-bound SPIR-V buffer,
   * the widest access through it for a SPIR-V buffer device address, ".ptr .align N" for PTX
   * (else 1), 1 for a binary. See docs/ABI.md. */
  uint32_t alignment;
  /* Since 0.3.0. hal_launch takes untyped bytes and cannot check it; a binding that packs
   * arguments from typed values uses it (docs/ABI.md). */
  hal_param_type type;
} hal_param_info;

/* Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE; HAL_ERROR_INVALID_ARGUMENT (NULL or bad
 * struct_size). */
HAL_API hal_status hal_function_get_info(hal_function function, hal_function_info* info);

/* Describes parameter |index|. Returns: HAL_SUCCESS; HAL_ERROR_INVALID_HANDLE;
 * HAL_ERROR_INVALID_ARGUMENT (NULL or bad struct_size); HAL_ERROR_NOT_FOUND (index beyond the
 * parameter list, or the list is unknown). */
HAL_API hal_status hal_function_get_param(hal_function function, uint32_t index,
                                          hal_param_info* param);

/* ===========================================================================================
 * Launch
 * ===========================================================================================*/

typedef struct hal_launch_config {
  uint32_t grid[3];      /* number of blocks (CUDA) or workgroups (Vulkan) in x, y, z; each >= 1 */
  uint32_t block[3];     /* threads per block; {0,0,0} means the kernel's fixed block size */
  uint32_t shared_bytes; /* dynamic shared memory in bytes */
} hal_launch_config;

/* Issues |function| on |stream|. |args| has one entry per parameter, in order; args[i] points to
 * the value of parameter i (as with cuLaunchKernel): a hal_deviceptr for a pointer parameter,
 * |size| bytes for a value parameter. The values are copied before the call returns.
 *
 * Checked before any driver sees the launch, each failure naming the parameter or limit:
 *  - |function| and |stream| belong to the same device (HAL_ERROR_INVALID_HANDLE);
 *  - |config| and, for functions with parameters, |args| and every args[i] are non-NULL
 *    (HAL_ERROR_INVALID_ARGUMENT);
 *  - every pointer argument lies inside a live allocation of the stream's device and is a
 *    multiple of its parameter's hal_param_info.alignment (HAL_ERROR_OUT_OF_RANGE,
 *    HAL_ERROR_INVALID_ARGUMENT); 0 is a null pointer, passed to kernels that take the raw
 *    address (PTX, SPIR-V buffer device addresses) and refused for descriptor-bound SPIR-V
 *    buffers (HAL_ERROR_OUT_OF_RANGE), see docs/ABI.md;
 *  - grid and block are >= 1 in every dimension and within the device's and the function's
 *    limits; a block that differs from the kernel's fixed block size is refused
 *    (HAL_ERROR_OUT_OF_RANGE); a block of {0,0,0} for a kernel without a fixed block size is
 *    HAL_ERROR_INVALID_ARGUMENT;
 *  - static plus dynamic shared memory fits the device (HAL_ERROR_OUT_OF_RANGE); dynamic shared
 *    memory on a backend or module that cannot size it is HAL_ERROR_NOT_SUPPORTED.
 * A fault while the kernel runs is reported by a later synchronize or query as
 * HAL_ERROR_LAUNCH_FAILED.
 * Returns: HAL_SUCCESS (issued); HAL_ERROR_INVALID_HANDLE; HAL_ERROR_INVALID_ARGUMENT;
 * HAL_ERROR_OUT_OF_RANGE; HAL_ERROR_NOT_SUPPORTED (all as above); HAL_ERROR_COMPILE_FAILED (a
 * SPIR-V kernel whose pipeline for this block or shared size is built at its first launch, and
 * the driver's compiler failed); HAL_ERROR_OUT_OF_MEMORY; HAL_ERROR_DEVICE_LOST. */
HAL_API hal_status hal_launch(hal_stream stream, hal_function function,
                              const hal_launch_config* config, void* const* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HAL_HAL_H_ */
