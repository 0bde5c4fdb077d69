/*
 * hal_driver.h: the interface between libhal and a device driver module.
 *
 * A driver module is a shared library that makes one kind of device available to hal: the
 * Vulkan and CUDA backends are two, and a hardware team adds its own without recompiling hal.
 * It exports one symbol, hal_driver_query, which hands libhal a table of entry points. libhal
 * (the "core") owns everything users see: handles, validation, the allocation table, the
 * device-lost latch, host allocations, error text, tracing. A driver only talks to its device.
 *
 * This header compiles as C99 and as C++ and needs only hal.h. It is versioned on its own:
 * HAL_DRIVER_INTERFACE_VERSION changes when the table or a struct below changes; docs/ABI.md
 * ("Driver modules") has the rules and the history.
 *
 * ===========================================================================================
 * What the core promises every entry point
 * ===========================================================================================
 *
 * Checked before the call: every object passed was created by this driver and is live; every
 * device range lies inside a live allocation of the object's device (from mem_alloc) and the
 * allocation passed is that allocation, as mem_alloc returned it, except that |size| is the size
 * the caller asked for; sizes are > 0; a launch's grid, block, shared bytes and arguments have
 * been checked against the device's limits and the function's reflected signature; a module's
 * blob is of one IR the device listed in hal_device_info.ir_mask. A driver need not check any
 * of it again, and should not: the core's messages already name the caller's mistake.
 *
 * Threads: any entry point may be called from several threads at once, except that calls on
 * one stream are serialised by the core. A driver locks what its devices share.
 *
 * Lifetime: the core destroys what it created (streams after synchronising them, events,
 * modules after the launches issued with them have been issued; the driver keeps device objects
 * alive until that work completes). Devices, and the driver module itself, live until the
 * process exits: a module is never unloaded.
 *
 * ===========================================================================================
 * What the core expects of a driver
 * ===========================================================================================
 *
 * Status: every fallible entry point returns a hal_status. On failure it also leaves the cause
 * for the calling thread, returned by |error_message|: one sentence naming the driver's own
 * error (such as VK_ERROR_OUT_OF_DEVICE_MEMORY) and a hint. The core prefixes the name of the
 * public call and gives it to the user through hal_last_error(). HAL_ERROR_DEVICE_LOST marks the
 * device lost for good: the core then fails every later call on it without calling the driver
 * (hal_driver_host.device_lost does the same where no such status can be returned).
 *
 * Nothing may unwind across this interface: a driver written in C++ catches its exceptions.
 *
 * Optional entry points are marked "optional": NULL is allowed and the core either falls back
 * (said at each) or reports HAL_ERROR_NOT_SUPPORTED to the user. Every other entry point is
 * required; a table with a required entry NULL is refused at load, with the entry's name.
 */
#ifndef HAL_HAL_DRIVER_H_
#define HAL_HAL_DRIVER_H_

#include <hal/hal.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the table and structs below. A core loads a driver whose table has this
 * version or an older one; it refuses a newer one. */
#define HAL_DRIVER_INTERFACE_VERSION 3u

/* The name of the one symbol a driver module exports, of type hal_driver_query_fn. */
#define HAL_DRIVER_QUERY_SYMBOL "hal_driver_query"

/* Opaque driver objects. The core never looks inside; it wraps each in its own checked handle. */
typedef struct hal_driver_device_s* hal_driver_device;
typedef struct hal_driver_stream_s* hal_driver_stream;
typedef struct hal_driver_event_s* hal_driver_event;
typedef struct hal_driver_module_s* hal_driver_module;
typedef struct hal_driver_function_s* hal_driver_function;

/* One live device allocation. */
typedef struct hal_driver_allocation {
  hal_deviceptr base; /* never 0, 256-byte aligned, unique among the device's live allocations */
  size_t size;
  /* Whatever the driver needs to find its own record again (a buffer and an offset, ...). Set by
   * mem_alloc, handed back on every use of the allocation, never interpreted by the core. */
  uint64_t driver_data;
} hal_driver_allocation;

/* One live allocation of host memory from host_alloc. */
typedef struct hal_driver_host_allocation {
  void* base;
  size_t size;
  /* Set by host_alloc (a buffer the device reads through, ...), handed back with the allocation,
   * never interpreted by the core. */
  uint64_t driver_data;
} hal_driver_host_allocation;

/* The bytes [allocation.base + offset, ... + size) inside one live allocation; the size is the
 * call's own argument. */
typedef struct hal_driver_range {
  hal_driver_allocation allocation;
  uint64_t offset;
} hal_driver_range;

/* One specialization constant of a SPIR-V module: the first |size| bytes of |value| hold it,
 * little-endian as in memory. */
typedef struct hal_driver_specialization {
  uint32_t id;
  uint32_t size; /* 1, 2, 4 or 8 */
  uint64_t value;
} hal_driver_specialization;

typedef struct hal_driver_module_options {
  const hal_driver_specialization* specializations; /* ids distinct */
  uint32_t specialization_count;
  uint32_t shared_bytes_constant; /* 1: the id below is sized by hal_launch_config.shared_bytes */
  uint32_t shared_bytes_constant_id;
} hal_driver_module_options;

/* One parameter of a function, as the driver reflects it from the IR. */
typedef struct hal_driver_param {
  hal_param_kind kind;
  uint32_t size;      /* bytes of the argument: 8 for a pointer */
  uint32_t alignment; /* what the argument needs: a pointer's address alignment */
  /* 1 when the kernel receives a pointer as a raw address, so an argument of 0 reaches it as a
   * null pointer; 0 when it cannot be null (a descriptor-bound buffer). */
  uint32_t nullable;
  hal_param_type type; /* values only: integer, float or unknown */
} hal_driver_param;

/* What the core needs to know of a function to check its launches. Owned by the module. */
typedef struct hal_driver_function_info {
  const char* name;      /* the entry point's name, NUL-terminated */
  uint32_t params_known; /* 0 when the IR does not say (the core then checks no arguments) */
  uint32_t param_count;
  const hal_driver_param* params;
  /* The kernel's fixed block size, per dimension: block[d] != 0 fixes dimension d (a SPIR-V
   * workgroup size may fix x and leave y to a specialization constant); all zeros, none fixed.
   * The core refuses a launch whose block differs in a fixed dimension. */
  uint32_t block[3];
  uint32_t static_shared_bytes;
  uint32_t max_threads_per_block; /* 0: the device's limit applies */
  /* 1 when hal_launch_config.shared_bytes > 0 can be honoured. */
  uint32_t dynamic_shared;
  /* 1 when the kernel's shared array is sized by shared_bytes alone, so 0 is refused. */
  uint32_t shared_bytes_required;
  /* Interface 2. NULL when the entry point runs on the device; otherwise why it cannot
   * (NUL-terminated, owned by the module), e.g. an instruction the driver's compiler does not
   * take. The rest of the module loads; hal_module_get_function of this entry returns
   * HAL_ERROR_NOT_SUPPORTED with this text. The core reads it from version-2 drivers only. */
  const char* unavailable;
  /* Interface 3. NULL, or param_count entries owned by the module: for pointer parameter i, the
   * bytes the kernel reads from its argument on (a uniform block's size), which the core checks
   * lie inside the argument's allocation before launch; 0 where that is not known (a buffer
   * ending in a runtime array, a raw address) and for value parameters. The core reads it from
   * version-3 drivers only. */
  const uint64_t* param_min_bytes;
} hal_driver_function_info;

/* A launch after the core checked it: block resolved (never 0 in any dimension), and for every
 * parameter i of a function whose parameters are known, pointers[i] is the allocation that
 * pointer argument lies in (value parameters and null pointers: all zero). */
typedef struct hal_driver_launch {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes;
  uint32_t param_count;
  void* const* args;                /* as given to hal_launch; valid during the call only */
  const hal_driver_range* pointers; /* param_count entries, or NULL when param_count is 0 */
} hal_driver_launch;

/* ===========================================================================================
 * What the core gives a driver
 * ===========================================================================================*/

typedef enum hal_driver_log_level {
  HAL_DRIVER_LOG_DEBUG = 1,
  HAL_DRIVER_LOG_INFO = 2,
  HAL_DRIVER_LOG_WARN = 3,
  HAL_DRIVER_LOG_ERROR = 4
} hal_driver_log_level;

typedef enum hal_driver_trace_kind {
  HAL_DRIVER_TRACE_KERNEL = 0,
  HAL_DRIVER_TRACE_COPY_HTOD = 1,
  HAL_DRIVER_TRACE_COPY_DTOH = 2,
  HAL_DRIVER_TRACE_COPY_DTOD = 3,
  HAL_DRIVER_TRACE_FILL = 4
} hal_driver_trace_kind;

/* One completed device operation for the timeline trace (HAL_TRACE). */
typedef struct hal_driver_trace_op {
  hal_driver_trace_kind kind;
  const char* kernel; /* kernels: the entry point's name */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes;
  uint32_t on_host; /* 1 when the driver did the work on the host, timed by the host clock */
  uint64_t bytes;   /* copies and fills */
} hal_driver_trace_op;

/* Services of the core, valid from init until the process exits. Every function may be called
 * from any thread. */
typedef struct hal_driver_host {
  uint32_t struct_size;
  uint32_t interface_version; /* the core's HAL_DRIVER_INTERFACE_VERSION */
  /* Writes |message| to hal's log (HAL_LOG_LEVEL) if |level| is enabled. */
  void (*log)(hal_driver_log_level level, const char* message);
  /* 1 when messages of |level| would be written, so a driver can skip formatting them. */
  int (*log_enabled)(hal_driver_log_level level);
  /* 1 when HAL_TRACE is on. When 0, a driver need not describe its work at all. */
  int (*trace_enabled)(void);
  /* The trace's host clock, steady nanoseconds; device timestamps are converted to it. */
  uint64_t (*trace_now_ns)(void);
  /* A new timeline row for one stream of |device|, named after the device. */
  uint32_t (*trace_stream_row)(hal_driver_device device);
  /* One completed operation on |row| of |device|, [begin_ns, end_ns] on the trace's clock. */
  void (*trace_span)(hal_driver_device device, uint32_t row, const hal_driver_trace_op* op,
                     uint64_t begin_ns, uint64_t end_ns);
  /* Marks |device| lost for good, as returning HAL_ERROR_DEVICE_LOST does, where the driver
   * finds the loss without that status to return: a fault that this call reports as
   * HAL_ERROR_LAUNCH_FAILED but that leaves the device unusable (a poisoned CUDA context), or
   * one seen inside a destroy entry or on a thread of the driver's own. |cause| is one
   * sentence naming the driver's error (copied; may be NULL); the first cause is kept and
   * quoted by every later call on the device, which the core fails without calling the
   * driver. The core keeps the only record of loss: a driver keeps none of its own. */
  void (*device_lost)(hal_driver_device device, const char* cause);
  /* 1 once |device| is lost (reported either way), else 0. A driver asks before it waits for
   * the device where the core cannot answer for it (destroy entries, frees): a lost device may
   * never finish its work. */
  int (*device_is_lost)(hal_driver_device device);
} hal_driver_host;

/* ===========================================================================================
 * The table a driver gives the core
 * ===========================================================================================*/

typedef struct hal_driver {
  /* sizeof(hal_driver) as the driver was compiled: entries past it are treated as NULL, so an
   * older driver loads into a newer core. */
  uint32_t struct_size;
  /* HAL_DRIVER_INTERFACE_VERSION as the driver was compiled. */
  uint32_t interface_version;
  /* The backend name used in selectors ("mynpu:0") and HAL_BACKENDS: 1 to 31 characters of
   * [a-z0-9_], starting with a letter. Static storage. */
  const char* name;
  /* HAL_BACKEND_CUDA or HAL_BACKEND_VULKAN for those; HAL_BACKEND_UNKNOWN for any other. */
  hal_backend backend;

  /* The cause of the last failure on the calling thread, NUL-terminated, valid until the next
   * call into the driver on this thread. Never NULL (may be ""). */
  const char* (*error_message)(void);

  /* Called once, before anything else: opens the device's own driver and lists the devices.
   * |host| stays valid until exit. Returns HAL_SUCCESS with |*device_count| set (0 is fine), or
   * HAL_ERROR_UNAVAILABLE with a reason saying where the driver looked and what to install:
   * the core lists it in hal-info and every other backend keeps working. */
  hal_status (*init)(const hal_driver_host* host, uint32_t* device_count);
  /* Device |index| (< device_count) and its info. |info| arrives zeroed with struct_size set to
   * the core's sizeof(hal_device_info): write nothing beyond it (a driver built against a newer
   * hal.h fills a local struct and copies struct_size bytes). The core sets struct_size, backend,
   * backend_index, backend_name and global_index itself; the driver fills the rest, ir_mask
   * included. */
  hal_status (*device_get)(uint32_t index, hal_driver_device* device, hal_device_info* info);
  /* Waits for all work on the device. */
  hal_status (*device_synchronize)(hal_driver_device device);

  /* Device memory. |size| is at most info.max_allocation_size (when that is not 0). */
  hal_status (*mem_alloc)(hal_driver_device device, size_t size, hal_driver_allocation* out);
  /* Frees after the work already issued on it has completed: the memory may not be handed out
   * again before then. The core has removed the allocation from its table first, so no later
   * work refers to it. The core holds the device's memory lock around this call, which every
   * launch and copy on the device needs: a driver that waits for the device here stalls them
   * all, so one that can should defer the release until that work completes, and return. */
  hal_status (*mem_free)(hal_driver_device device, const hal_driver_allocation* allocation);
  /* Optional. Host memory the device copies from and to directly (page-locked, mapped). Sets
   * out->base (page-aligned) and out->driver_data; the core sets out->size. The core keeps the
   * table of host allocations: a copy whose host side lies in one is given it (copy_htod,
   * copy_dtoh), so a driver need not look host pointers up. NULL: the core allocates ordinary
   * page-aligned memory and copies see no allocation. */
  hal_status (*host_alloc)(hal_driver_device device, size_t size, hal_driver_host_allocation* out);
  /* With host_alloc. Frees after the work already issued on the memory has completed, as
   * mem_free does (the same lock, the same advice). */
  hal_status (*host_free)(hal_driver_device device, const hal_driver_host_allocation* allocation);
  /* Optional. The host address of byte |offset| of |allocation| when the device's memory is
   * host-addressable and coherent; HAL_ERROR_NOT_SUPPORTED (no message needed) otherwise. */
  hal_status (*host_pointer)(hal_driver_device device, const hal_driver_allocation* allocation,
                             uint64_t offset, void** out);

  hal_status (*stream_create)(hal_driver_device device, hal_driver_stream* out);
  /* The core synchronises the stream first. */
  void (*stream_destroy)(hal_driver_stream stream);
  hal_status (*stream_synchronize)(hal_driver_stream stream);
  /* HAL_SUCCESS when idle, HAL_ERROR_NOT_READY (no message) while work is pending. */
  hal_status (*stream_query)(hal_driver_stream stream);
  /* Stream-ordered copies. |src| of copy_htod may be reused when the call returns. |host| is the
   * allocation from this device's host_alloc that holds the whole host range, or NULL when the
   * host range is any other memory (which the driver must stage, or wait for, as it needs). */
  hal_status (*copy_htod)(hal_driver_stream stream, const hal_driver_range* dst, const void* src,
                          size_t size, const hal_driver_host_allocation* host);
  hal_status (*copy_dtoh)(hal_driver_stream stream, void* dst, const hal_driver_range* src,
                          size_t size, const hal_driver_host_allocation* host);
  hal_status (*copy_dtod)(hal_driver_stream stream, const hal_driver_range* dst,
                          const hal_driver_range* src, size_t size);
  /* Repeats |pattern| (its low |pattern_size| bytes, 1 or 4) over |bytes| bytes; |bytes| is a
   * multiple of |pattern_size| and, for 4, the address is 4-aligned. */
  hal_status (*fill)(hal_driver_stream stream, const hal_driver_range* dst, uint32_t pattern,
                     uint32_t pattern_size, size_t bytes);
  hal_status (*launch)(hal_driver_stream stream, hal_driver_function function,
                       const hal_driver_launch* launch);

  hal_status (*event_create)(hal_driver_device device, hal_driver_event* out);
  void (*event_destroy)(hal_driver_event event);
  /* |event| and |stream| are of one device. Re-recording an event is allowed. */
  hal_status (*event_record)(hal_driver_stream stream, hal_driver_event event);
  /* Later work on |stream| waits for |event|'s last record (the core checks it was recorded). */
  hal_status (*stream_wait)(hal_driver_stream stream, hal_driver_event event);
  hal_status (*event_synchronize)(hal_driver_event event);
  /* HAL_SUCCESS when complete, HAL_ERROR_NOT_READY (no message) otherwise. */
  hal_status (*event_query)(hal_driver_event event);
  /* Optional: NULL makes hal_event_elapsed_ms HAL_ERROR_NOT_SUPPORTED. Both events recorded, of
   * one device. The core does not wait: HAL_ERROR_NOT_READY (no message) while either is not
   * complete. */
  hal_status (*event_elapsed_ms)(hal_driver_event start, hal_driver_event end, float* ms);

  /* Loads |blob| (|ir| is one bit of the device's ir_mask; the core sniffed and checked it) and
   * reflects its entry points. Specializations only reach SPIR-V. */
  hal_status (*module_load)(hal_driver_device device, hal_ir ir, const void* blob, size_t size,
                            const hal_driver_module_options* options, hal_driver_module* out,
                            uint32_t* function_count);
  /* Entry point |index| (< function_count) and what it is. |info| points into the module and
   * stays valid until module_unload. */
  hal_status (*module_function)(hal_driver_module module, uint32_t index,
                                hal_driver_function* function,
                                const hal_driver_function_info** info);
  /* Launches already issued with the module's functions still complete. */
  void (*module_unload)(hal_driver_module module);
} hal_driver;

/* The one symbol a driver exports. |core_interface_version| is the core's
 * HAL_DRIVER_INTERFACE_VERSION: a driver that knows several may return the table of any version
 * up to it. Sets |*driver| to a table with static storage and returns HAL_SUCCESS, or returns a
 * failure (the core lists the module as unavailable). */
typedef hal_status (*hal_driver_query_fn)(uint32_t core_interface_version,
                                          const hal_driver** driver);

#if defined(__GNUC__)
#define HAL_DRIVER_EXPORT __attribute__((visibility("default")))
#else
#define HAL_DRIVER_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* HAL_HAL_DRIVER_H_ */
