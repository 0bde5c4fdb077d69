/*
 * skeleton.c: a complete hal driver module, the one to copy when bringing up a new device.
 *
 * It drives one pretend device whose memory is host memory and whose queue runs each piece of
 * work on the calling thread the moment it is submitted. Every entry of the hal_driver table is
 * implemented in the simplest way that is still correct; the comments that start "A real
 * device" say what a driver for hardware does there instead. docs/NEW_DEVICE.md walks through
 * it entry by entry.
 *
 * The device takes one IR, HAL_IR_BUILTIN: kernels the driver brings itself, named as in hal's
 * kernel pack and with the pack's parameter lists. This one has fill_f32,
 * copy_f32, vector_add_f32 and saxpy, which run below on the host, every thread of every block,
 * as the pack's GPU versions do.
 *
 * libhal (the core) checks handles, ranges, sizes, the launch geometry and the arguments before
 * it calls any entry (hal_driver.h, "What the core promises every entry point"), so nothing is
 * checked twice here. What the core cannot know is checked: a kernel name, and how far a kernel
 * reads and writes from the pointers it was given.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, clock_gettime, sysconf */

#include <hal/hal_driver.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The driver's version, packed as hal's tools decode it for drivers other than CUDA's:
 * major << 22 | minor << 12 | patch. */
#define SKELETON_VERSION_TEXT "0.1.0"
#define SKELETON_VERSION ((0u << 22) | (1u << 12) | 0u)
/* The vendor: a PCI vendor id, or for a device without PCI the vendor id Khronos registered for
 * its maker. The skeleton is nobody's product and says 0, which hal-cts reports: a driver made
 * from it sets its own (docs/NEW_DEVICE.md). */
#define SKELETON_VENDOR_ID 0u

/* ===========================================================================================
 * Errors and the core's services
 * ===========================================================================================*/

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SKELETON_THREAD_LOCAL _Thread_local
#else
#define SKELETON_THREAD_LOCAL __thread /* GCC and Clang have it in C99 too */
#endif

#if defined(__GNUC__) /* printf-style arguments, checked by the compiler */
#define SKELETON_PRINTF(format_at) __attribute__((format(printf, format_at, format_at + 1)))
#else
#define SKELETON_PRINTF(format_at)
#endif

/* The calling thread's last failure: what error_message returns. */
static SKELETON_THREAD_LOCAL char g_error[512];

/* Sets the calling thread's message and returns |status|. A message is one sentence naming
 * what failed and a hint; the core puts the public call's name in front of it. */
SKELETON_PRINTF(2) static hal_status fail(hal_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(g_error, sizeof g_error, format, args);
  va_end(args);
  return status;
}

static const char* error_message(void) {
  return g_error;
}

/* The core's log and trace, valid from init until exit. */
static const hal_driver_host* g_host;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ===========================================================================================
 * Objects
 * ===========================================================================================*/

/* The device. There is one, for the life of the process. */
struct hal_driver_device_s {
  pthread_mutex_t lock; /* guards |fault|: streams of the device may run on several threads */
  /* A kernel's fault not yet reported, or "". A device finds faults while its work runs, after
   * the launch call returned: the next synchronize or query reports the fault
   * (HAL_ERROR_LAUNCH_FAILED), once. */
  char fault[400];
};
static struct hal_driver_device_s g_device = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct hal_driver_stream_s {
  struct hal_driver_device_s* device;
  uint32_t trace_row; /* the stream's row in the HAL_TRACE timeline, when tracing */
};

struct hal_driver_event_s {
  struct hal_driver_device_s* device;
  uint64_t recorded_ns; /* when the work before the last record completed */
};

struct builtin_kernel;
struct hal_driver_function_s {
  const struct builtin_kernel* kernel;
};
/* A module of built-in kernels holds one function: the kernel its blob names. */
struct hal_driver_module_s {
  struct hal_driver_function_s function;
};

SKELETON_PRINTF(2)
static void record_fault(struct hal_driver_device_s* device, const char* format, ...) {
  va_list args;
  pthread_mutex_lock(&device->lock);
  if (device->fault[0] == '\0') { /* the first fault is the one to report */
    va_start(args, format);
    vsnprintf(device->fault, sizeof device->fault, format, args);
    va_end(args);
  }
  pthread_mutex_unlock(&device->lock);
}

/* HAL_ERROR_LAUNCH_FAILED with the fault's message when a kernel faulted since the last report,
 * else HAL_SUCCESS. */
static hal_status take_fault(struct hal_driver_device_s* device) {
  hal_status status = HAL_SUCCESS;
  pthread_mutex_lock(&device->lock);
  if (device->fault[0] != '\0') {
    status = fail(HAL_ERROR_LAUNCH_FAILED, "%s", device->fault);
    device->fault[0] = '\0';
  }
  pthread_mutex_unlock(&device->lock);
  return status;
}

/* The host address of a device range. mem_alloc put the memory's address in driver_data; the
 * core hands the allocation back with every range, so nothing needs looking up. */
static unsigned char* host_address(const hal_driver_allocation* allocation, uint64_t offset) {
  return (unsigned char*)(uintptr_t)allocation->driver_data + offset;
}

/* Adds one completed operation to the HAL_TRACE timeline (when it is on). */
static void trace(const struct hal_driver_stream_s* stream, hal_driver_trace_kind kind,
                  const char* kernel, const hal_driver_launch* config, uint64_t bytes,
                  uint64_t begin_ns) {
  hal_driver_trace_op op;
  int i;
  if (!g_host->trace_enabled()) return;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.kernel = kernel;
  for (i = 0; i < 3 && config != NULL; ++i) {
    op.grid[i] = config->grid[i];
    op.block[i] = config->block[i];
  }
  op.on_host = 1; /* timed by the host clock: a real device gives its own timestamps */
  op.bytes = bytes;
  g_host->trace_span(stream->device, stream->trace_row, &op, begin_ns, g_host->trace_now_ns());
}

/* ===========================================================================================
 * The built-in kernels
 * ===========================================================================================*/

/* One thread of a launch, as a GPU kernel sees it. */
typedef struct kernel_thread {
  uint32_t block_idx[3], thread_idx[3]; /* blockIdx, threadIdx */
  uint32_t grid_dim[3], block_dim[3];   /* gridDim, blockDim */
} kernel_thread;

/* A launch's arguments: pointer parameter i at host address ptr[i]; value parameter i (4 bytes)
 * in u32[i] and, the same bits, f32[i]. */
typedef struct kernel_args {
  void* ptr[4];
  uint32_t u32[4];
  float f32[4];
} kernel_args;

/* The pack's smoke kernels walk the vector with a grid-stride loop over x, so any grid covers
 * it: thread i = blockIdx.x * blockDim.x + threadIdx.x takes i, i + stride, ... below n.
 * Computed in 64 bits, so that a large grid cannot wrap the index. */
static uint64_t first_index(const kernel_thread* t) {
  return (uint64_t)t->block_idx[0] * t->block_dim[0] + t->thread_idx[0];
}
static uint64_t grid_stride(const kernel_thread* t) {
  return (uint64_t)t->grid_dim[0] * t->block_dim[0];
}

/* fill_f32(Y, n, value): Y[i] = value for i < n. */
static void fill_f32(const kernel_thread* t, const kernel_args* a) {
  float* y = (float*)a->ptr[0];
  const uint32_t n = a->u32[1];
  uint64_t i;
  for (i = first_index(t); i < n; i += grid_stride(t)) y[i] = a->f32[2];
}

/* copy_f32(X, Y, n): Y[i] = X[i] for i < n. */
static void copy_f32(const kernel_thread* t, const kernel_args* a) {
  const float* x = (const float*)a->ptr[0];
  float* y = (float*)a->ptr[1];
  const uint32_t n = a->u32[2];
  uint64_t i;
  for (i = first_index(t); i < n; i += grid_stride(t)) y[i] = x[i];
}

/* vector_add_f32(A, B, C, n): C[i] = A[i] + B[i] for i < n. */
static void vector_add_f32(const kernel_thread* t, const kernel_args* a) {
  const float* x = (const float*)a->ptr[0];
  const float* y = (const float*)a->ptr[1];
  float* z = (float*)a->ptr[2];
  const uint32_t n = a->u32[3];
  uint64_t i;
  for (i = first_index(t); i < n; i += grid_stride(t)) z[i] = x[i] + y[i];
}

/* saxpy(X, Y, n, alpha): Y[i] = alpha * X[i] + Y[i] for i < n. */
static void saxpy(const kernel_thread* t, const kernel_args* a) {
  const float* x = (const float*)a->ptr[0];
  float* y = (float*)a->ptr[1];
  const uint32_t n = a->u32[2];
  uint64_t i;
  for (i = first_index(t); i < n; i += grid_stride(t)) y[i] = a->f32[3] * x[i] + y[i];
}

/* What the core learns of each parameter (hal_function_get_param shows it to users): pointers
 * are 8 bytes, need 4-byte aligned addresses (the kernels access floats) and cannot be null;
 * values are 4 bytes, an integer or a float. */
#define POINTER \
  { .kind = HAL_PARAM_POINTER, .size = 8, .alignment = 4, .nullable = 0 }
#define U32 \
  { .kind = HAL_PARAM_VALUE, .size = 4, .alignment = 4, .type = HAL_PARAM_TYPE_INTEGER }
#define F32 \
  { .kind = HAL_PARAM_VALUE, .size = 4, .alignment = 4, .type = HAL_PARAM_TYPE_FLOAT }
static const hal_driver_param kFillParams[] = {POINTER, U32, F32};
static const hal_driver_param kCopyParams[] = {POINTER, POINTER, U32};
static const hal_driver_param kVectorAddParams[] = {POINTER, POINTER, POINTER, U32};
static const hal_driver_param kSaxpyParams[] = {POINTER, POINTER, U32, F32};

typedef struct builtin_kernel {
  hal_driver_function_info info;
  void (*run)(const kernel_thread* t, const kernel_args* a); /* one thread's work */
  uint32_t count_param; /* the parameter n: each pointer is accessed at floats [0, n) */
} builtin_kernel;

/* The parameter lists are the kernel pack's (kernels/manifest.json). The block is chosen at
 * launch (block {0, 0, 0}, up to the device's limits): these kernels walk their elements with a
 * stride, so any block computes the same result, and hal-cts uses fill_f32 to launch blocks at
 * the limits device_get reports. A kernel that needs one block size declares it here instead, as
 * the pack's manifest gives it (256 for these). No shared memory, none sized at launch. */
#define KERNEL(fn, parameters, count)                                 \
  {                                                                   \
    .info = {.name = #fn,                                             \
             .params_known = 1,                                       \
             .param_count = sizeof parameters / sizeof parameters[0], \
             .params = parameters,                                    \
             .block = {0, 0, 0},                                      \
             .max_threads_per_block = 0},                             \
    .run = fn, .count_param = count                                   \
  }
static const builtin_kernel kKernels[] = {
    KERNEL(fill_f32, kFillParams, 1),
    KERNEL(copy_f32, kCopyParams, 2),
    KERNEL(vector_add_f32, kVectorAddParams, 3),
    KERNEL(saxpy, kSaxpyParams, 2),
};
#define KERNEL_COUNT (sizeof kKernels / sizeof kKernels[0])

/* ===========================================================================================
 * The table's entries, in its order
 * ===========================================================================================*/

static hal_status init(const hal_driver_host* host, uint32_t* device_count) {
  g_host = host;
  /* A real device: open the device's kernel driver here (its device node or user-space
   * library) and count the devices. When it is missing, return
   * fail(HAL_ERROR_UNAVAILABLE, "...") saying where you looked and what to install: hal-info
   * shows that reason, and the other backends keep working. */
  *device_count = 1;
  if (host->log_enabled(HAL_DRIVER_LOG_INFO)) {
    host->log(HAL_DRIVER_LOG_INFO, "skeleton: 1 device (host memory, kernels run on the host)");
  }
  return HAL_SUCCESS;
}

/* A real device has its own (a serial number, a PCI function). This one is made up from the
 * driver's name, so a driver copied from the skeleton and renamed (docs/NEW_DEVICE.md) gets a
 * UUID of its own: programs tell devices apart by it, and hal-cts fails two that share one.
 * Two FNV-1a hashes of the name, with different starting values, fill the 16 bytes. */
static void make_uuid(uint8_t uuid[16]) {
  static const char kName[] = "skeleton";
  uint64_t halves[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  size_t h, i;
  for (h = 0; h < 2; ++h) {
    for (i = 0; kName[i] != '\0'; ++i) {
      halves[h] ^= (unsigned char)kName[i];
      halves[h] *= 0x100000001b3ull;
    }
    for (i = 0; i < 8; ++i) uuid[8 * h + i] = (uint8_t)(halves[h] >> (8 * i));
  }
}

static hal_status device_get(uint32_t index, hal_driver_device* device, hal_device_info* out) {
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  uint64_t memory = pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size : 1u << 30;
  hal_device_info info;
  (void)index; /* always 0: init said there is one device */
  *device = &g_device;
  /* A real device: read these from the hardware. The core fills struct_size, backend,
   * backend_name, backend_index and global_index; every field not set here is 0. */
  memset(&info, 0, sizeof info);
  snprintf(info.name, sizeof info.name, "hal skeleton device (host memory)");
  snprintf(info.driver_name, sizeof info.driver_name, "skeleton");
  snprintf(info.driver_info, sizeof info.driver_info,
           "skeleton " SKELETON_VERSION_TEXT ", built-in kernels run on the host CPU");
  make_uuid(info.uuid);
  info.vendor_id = SKELETON_VENDOR_ID;
  info.device_id = 0; /* A real device: its PCI device id, or the vendor's own number */
  info.driver_version = SKELETON_VERSION;
  info.ir_mask = HAL_IR_BUILTIN;
  info.total_memory = memory;
  info.max_allocation_size = memory / 2;
  info.max_threads_per_block = 1024;
  info.max_block_dim[0] = 1024;
  info.max_block_dim[1] = 1024;
  info.max_block_dim[2] = 64;
  info.max_grid_dim[0] = 2147483647u;
  info.max_grid_dim[1] = 65535;
  info.max_grid_dim[2] = 65535;
  info.max_shared_memory_per_block = 0; /* the built-in kernels use none */
  info.subgroup_size = 1;               /* threads run one at a time */
  info.compute_units = 1;               /* on the one thread that submits */
  info.pointer_alignment = 4;           /* what pointer parameters need (floats) */
  info.is_cpu = 1;
  info.unified_memory = 1;
  info.features = HAL_FEATURE_TIMESTAMPS; /* events measure time: event_elapsed_ms */
  /* |out| arrives zeroed, its struct_size the core's sizeof(hal_device_info): a core built
   * against an older hal.h has a shorter struct. Write no more than it has. */
  info.struct_size = out->struct_size;
  memcpy(out, &info, out->struct_size < sizeof info ? out->struct_size : sizeof info);
  return HAL_SUCCESS;
}

static hal_status device_synchronize(hal_driver_device device) {
  /* A real device: wait for every queue of the device to drain. */
  return take_fault(device);
}

static hal_status mem_alloc(hal_driver_device device, size_t size, hal_driver_allocation* out) {
  void* memory = NULL;
  (void)device;
  /* A real device: allocate |size| bytes of device memory. base is what users see as the
   * hal_deviceptr: the memory's device address, or any unique, nonzero, 256-aligned value;
   * driver_data is whatever finds the memory again (a buffer handle, an offset in a heap). */
  if (posix_memalign(&memory, 256, size) != 0) {
    return fail(HAL_ERROR_OUT_OF_MEMORY,
                "skeleton: no host memory for %zu bytes (posix_memalign failed); free some "
                "allocations",
                size);
  }
  out->base = (hal_deviceptr)(uintptr_t)memory;
  out->size = size;
  out->driver_data = (uint64_t)(uintptr_t)memory;
  return HAL_SUCCESS;
}

static hal_status mem_free(hal_driver_device device, const hal_driver_allocation* allocation) {
  (void)device;
  /* A real device: free once the work issued on the memory has completed. Here it has. */
  free(host_address(allocation, 0));
  return HAL_SUCCESS;
}

/* host_alloc and host_free are optional and left NULL: the core allocates ordinary page-aligned
 * host memory. A real device gives page-locked memory its DMA engine can reach, and copies
 * from and to it are then handed that allocation. */

static hal_status host_pointer(hal_driver_device device, const hal_driver_allocation* allocation,
                               uint64_t offset, void** out) {
  (void)device;
  /* A real device whose memory the host cannot address leaves this entry NULL. */
  *out = host_address(allocation, offset);
  return HAL_SUCCESS;
}

static hal_status stream_create(hal_driver_device device, hal_driver_stream* out) {
  struct hal_driver_stream_s* stream = calloc(1, sizeof *stream);
  if (stream == NULL) return fail(HAL_ERROR_OUT_OF_MEMORY, "skeleton: no host memory for a stream");
  /* A real device: create a hardware queue (or a software queue feeding one). */
  stream->device = device;
  if (g_host->trace_enabled()) stream->trace_row = g_host->trace_stream_row(device);
  *out = stream;
  return HAL_SUCCESS;
}

static void stream_destroy(hal_driver_stream stream) {
  free(stream);
}

static hal_status stream_synchronize(hal_driver_stream stream) {
  /* A real device: wait until the queue's last submission has completed. */
  return take_fault(stream->device);
}

static hal_status stream_query(hal_driver_stream stream) {
  /* A real device: HAL_ERROR_NOT_READY (with no message) while submissions are pending. */
  return take_fault(stream->device);
}

/* The copies and the fill run at once. A real device: here your driver would put a DMA
 * transfer (or a fill command) on the stream's queue. |host| is the host_alloc allocation that
 * holds the host side, which the DMA engine reaches directly, or NULL for any other memory,
 * which the driver stages through memory of its own (copy_htod: the caller may reuse |src| as
 * soon as the call returns). This driver has no host_alloc: |host| is always NULL. */
static hal_status copy_htod(hal_driver_stream stream, const hal_driver_range* dst, const void* src,
                            size_t size, const hal_driver_host_allocation* host) {
  const uint64_t begin = g_host->trace_now_ns();
  (void)host;
  memcpy(host_address(&dst->allocation, dst->offset), src, size);
  trace(stream, HAL_DRIVER_TRACE_COPY_HTOD, NULL, NULL, size, begin);
  return HAL_SUCCESS;
}

static hal_status copy_dtoh(hal_driver_stream stream, void* dst, const hal_driver_range* src,
                            size_t size, const hal_driver_host_allocation* host) {
  const uint64_t begin = g_host->trace_now_ns();
  (void)host;
  memcpy(dst, host_address(&src->allocation, src->offset), size);
  trace(stream, HAL_DRIVER_TRACE_COPY_DTOH, NULL, NULL, size, begin);
  return HAL_SUCCESS;
}

static hal_status copy_dtod(hal_driver_stream stream, const hal_driver_range* dst,
                            const hal_driver_range* src, size_t size) {
  const uint64_t begin = g_host->trace_now_ns();
  /* memmove: overlapping ranges give undefined contents to users, never undefined behaviour. */
  memmove(host_address(&dst->allocation, dst->offset), host_address(&src->allocation, src->offset),
          size);
  trace(stream, HAL_DRIVER_TRACE_COPY_DTOD, NULL, NULL, size, begin);
  return HAL_SUCCESS;
}

static hal_status fill(hal_driver_stream stream, const hal_driver_range* dst, uint32_t pattern,
                       uint32_t pattern_size, size_t bytes) {
  const uint64_t begin = g_host->trace_now_ns();
  unsigned char* p = host_address(&dst->allocation, dst->offset);
  size_t i;
  if (pattern_size == 1) {
    memset(p, (int)(pattern & 0xFF), bytes);
  } else { /* 4: |bytes| is a multiple of 4 and |p| is 4-aligned (the core checked) */
    for (i = 0; i < bytes; i += 4) memcpy(p + i, &pattern, 4);
  }
  trace(stream, HAL_DRIVER_TRACE_FILL, NULL, NULL, bytes, begin);
  return HAL_SUCCESS;
}

static hal_status launch(hal_driver_stream stream, hal_driver_function function,
                         const hal_driver_launch* config) {
  const builtin_kernel* kernel = function->kernel;
  const uint64_t begin = g_host->trace_now_ns();
  kernel_args args;
  kernel_thread t;
  uint32_t n, i;
  memset(&args, 0, sizeof args);
  /* The core checked the arguments against the parameters this driver reflected: args[i] holds
   * 8 bytes for a pointer and 4 for a value, and pointers[i] is the allocation pointer i lies
   * in, with its offset there. Find memory through pointers[i], not the raw address. */
  memcpy(&n, config->args[kernel->count_param], sizeof n);
  for (i = 0; i < config->param_count; ++i) {
    if (kernel->info.params[i].kind == HAL_PARAM_POINTER) {
      const hal_driver_range* range = &config->pointers[i];
      const uint64_t available =
          range->offset < range->allocation.size ? range->allocation.size - range->offset : 0;
      /* The core checked where each pointer starts, not how far the kernel goes from there.
       * A real device's memory protection raises such faults; this one checks first. */
      if ((uint64_t)n * sizeof(float) > available) {
        record_fault(stream->device,
                     "skeleton: %s faulted: parameter %u has %llu bytes from its address to the "
                     "end of its allocation, but n = %u elements need %llu; the kernel did not "
                     "run",
                     kernel->info.name, (unsigned)i, (unsigned long long)available, (unsigned)n,
                     (unsigned long long)n * sizeof(float));
        return HAL_SUCCESS; /* issued; the next synchronize or query reports the fault */
      }
      args.ptr[i] = host_address(&range->allocation, range->offset);
    } else {
      memcpy(&args.u32[i], config->args[i], 4);
      memcpy(&args.f32[i], config->args[i], 4);
    }
  }
  /* A real device: here your driver would write the kernel and its arguments into a command
   * buffer and submit it to the stream's queue. The skeleton runs every thread of every block
   * now, on this thread. */
  for (i = 0; i < 3; ++i) {
    t.grid_dim[i] = config->grid[i];
    t.block_dim[i] = config->block[i];
  }
  for (t.block_idx[2] = 0; t.block_idx[2] < t.grid_dim[2]; ++t.block_idx[2])
    for (t.block_idx[1] = 0; t.block_idx[1] < t.grid_dim[1]; ++t.block_idx[1])
      for (t.block_idx[0] = 0; t.block_idx[0] < t.grid_dim[0]; ++t.block_idx[0])
        for (t.thread_idx[2] = 0; t.thread_idx[2] < t.block_dim[2]; ++t.thread_idx[2])
          for (t.thread_idx[1] = 0; t.thread_idx[1] < t.block_dim[1]; ++t.thread_idx[1])
            for (t.thread_idx[0] = 0; t.thread_idx[0] < t.block_dim[0]; ++t.thread_idx[0])
              kernel->run(&t, &args);
  trace(stream, HAL_DRIVER_TRACE_KERNEL, kernel->info.name, config, 0, begin);
  return HAL_SUCCESS;
}

static hal_status event_create(hal_driver_device device, hal_driver_event* out) {
  struct hal_driver_event_s* event = calloc(1, sizeof *event);
  if (event == NULL) return fail(HAL_ERROR_OUT_OF_MEMORY, "skeleton: no host memory for an event");
  event->device = device;
  *out = event;
  return HAL_SUCCESS;
}

static void event_destroy(hal_driver_event event) {
  free(event);
}

static hal_status event_record(hal_driver_stream stream, hal_driver_event event) {
  (void)stream;
  /* A real device: submit a command that signals the event, with a device timestamp, once the
   * work before it on the queue has completed. Here that work already has. */
  event->recorded_ns = now_ns();
  return HAL_SUCCESS;
}

static hal_status stream_wait(hal_driver_stream stream, hal_driver_event event) {
  (void)stream;
  (void)event;
  /* A real device: make the stream's queue wait for the event (a semaphore, a fence). Here the
   * work the event captured has completed already. */
  return HAL_SUCCESS;
}

static hal_status event_synchronize(hal_driver_event event) {
  /* A real device: wait until the event is signalled. */
  return take_fault(event->device);
}

static hal_status event_query(hal_driver_event event) {
  (void)event;
  /* A real device: HAL_ERROR_NOT_READY (no message) until the event is signalled. */
  return HAL_SUCCESS;
}

static hal_status event_elapsed_ms(hal_driver_event start, hal_driver_event end, float* ms) {
  /* Negative when |end| was recorded first, as the core's users expect. */
  *ms = (float)((double)(int64_t)(end->recorded_ns - start->recorded_ns) / 1e6);
  return HAL_SUCCESS;
}

static hal_status module_load(hal_driver_device device, hal_ir ir, const void* blob, size_t size,
                              const hal_driver_module_options* options, hal_driver_module* out,
                              uint32_t* function_count) {
  /* The core checked that |blob| is "HALK" and at least one more byte (HAL_IR_BUILTIN is the
   * only IR this device lists, so |ir| is that, and |options| holds no specializations). The
   * name is not NUL-terminated: its length is size - 4. A real device: load the kernel's code
   * onto the device here, or look up its entry in the firmware. */
  const char* name = (const char*)blob + 4;
  const size_t length = size - 4;
  char shown[68], names[256] = "";
  size_t k;
  (void)device;
  (void)ir;
  (void)options;
  for (k = 0; k < KERNEL_COUNT; ++k) {
    if (strlen(kKernels[k].info.name) == length &&
        memcmp(kKernels[k].info.name, name, length) == 0) {
      struct hal_driver_module_s* module = malloc(sizeof *module);
      if (module == NULL) {
        return fail(HAL_ERROR_OUT_OF_MEMORY, "skeleton: no host memory for a module");
      }
      module->function.kernel = &kKernels[k];
      *out = module;
      *function_count = 1;
      return HAL_SUCCESS;
    }
  }
  /* The name as the caller gave it, printable and at most 64 bytes, then the names there are. */
  for (k = 0; k < length && k < 64; ++k) {
    shown[k] = name[k] >= 0x20 && name[k] < 0x7F ? name[k] : '?';
  }
  shown[k] = '\0';
  if (length > 64) strcat(shown, "...");
  for (k = 0; k < KERNEL_COUNT; ++k) {
    if (k > 0) strcat(names, ", ");
    strcat(names, kKernels[k].info.name);
  }
  return fail(HAL_ERROR_NOT_FOUND, "skeleton has no built-in kernel named \"%s\"; it has %s", shown,
              names);
}

static hal_status module_function(hal_driver_module module, uint32_t index,
                                  hal_driver_function* function,
                                  const hal_driver_function_info** info) {
  (void)index; /* always 0: module_load said there is one function */
  *function = &module->function;
  *info = &module->function.kernel->info;
  return HAL_SUCCESS;
}

static void module_unload(hal_driver_module module) {
  /* Launches issued with the module have run already. A real device frees the kernel's code
   * once they have completed. */
  free(module);
}

/* ===========================================================================================
 * The table, and the one exported symbol
 * ===========================================================================================*/

static const hal_driver kDriver = {
    .struct_size = sizeof(hal_driver),
    .interface_version = HAL_DRIVER_INTERFACE_VERSION,
    .name = "skeleton", /* the backend's name: selectors "skeleton:0", HAL_BACKENDS=skeleton */
    .backend = HAL_BACKEND_UNKNOWN,
    .error_message = error_message,
    .init = init,
    .device_get = device_get,
    .device_synchronize = device_synchronize,
    .mem_alloc = mem_alloc,
    .mem_free = mem_free,
    .host_alloc = NULL, /* optional */
    .host_free = NULL,  /* optional, given with host_alloc */
    .host_pointer = host_pointer,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_synchronize = stream_synchronize,
    .stream_query = stream_query,
    .copy_htod = copy_htod,
    .copy_dtoh = copy_dtoh,
    .copy_dtod = copy_dtod,
    .fill = fill,
    .launch = launch,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .stream_wait = stream_wait,
    .event_synchronize = event_synchronize,
    .event_query = event_query,
    .event_elapsed_ms = event_elapsed_ms,
    .module_load = module_load,
    .module_function = module_function,
    .module_unload = module_unload,
};

/* A core of an older interface than this table's refuses it with a message naming both
 * versions; a newer core loads it (entries it added count as NULL). */
HAL_DRIVER_EXPORT hal_status hal_driver_query(uint32_t core_interface_version,
                                              const hal_driver** driver) {
  (void)core_interface_version;
  *driver = &kDriver;
  return HAL_SUCCESS;
}
