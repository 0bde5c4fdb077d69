// The CUDA test double: host-memory implementations of the driver entry points hal's CUDA
// backend uses, handed out through cuGetProcAddress_v2. See cuda_test_double.h.
#include "cuda_test_double.h"

#include <cuda.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Stream;

struct Event {
  bool recorded = false;
  bool complete = false;
  double time_ms = 0;
  Stream* stream = nullptr;
};

struct Stream {
  std::deque<std::function<void()>> pending;
};

struct FunctionConfig {
  std::vector<size_t> param_sizes;
  bool sizes_known = false;
  int max_threads = 1024;
  int static_shared = 0;
};

struct Module;

struct Function {
  std::string name;
  Module* module = nullptr;
  int max_dynamic_shared = -1;  // -1: never set
};

struct Module {
  bool binary = false;
  std::vector<std::unique_ptr<Function>> functions;
};

struct Context {
  int device = 0;
};

struct State {
  std::vector<cuda_test_double_device> devices;
  std::vector<std::unique_ptr<Context>> contexts;
  int driver_version = 12040;
  std::map<std::string, std::deque<int>> fail_next;
  std::map<std::string, int> fail_always;
  std::set<std::string> hidden;
  std::map<std::string, int> requested_versions;
  std::map<std::string, int> calls;
  std::map<std::string, int> delays_us;
  std::string jit_error_log;
  std::map<std::string, FunctionConfig> functions;
  std::vector<std::string> binary_functions;
  std::vector<cuda_test_double_launch> launches;
  std::vector<unsigned char> last_module;
  std::map<std::string, int> max_dynamic_shared;
  std::map<CUdeviceptr, size_t> allocations;
  size_t allocated = 0;
  std::map<uintptr_t, size_t> host_allocations;
  std::set<Stream*> streams;
  std::set<Event*> events;
  std::set<Module*> modules;
  double clock_ms = 0;
};

std::recursive_mutex g_mutex;
State* g_state = nullptr;
thread_local Context* t_current = nullptr;

void set_defaults(State& state) {
  cuda_test_double_device device{};
  std::strncpy(device.name, "CUDA Test Double", sizeof(device.name) - 1);
  device.cc_major = 8;
  device.cc_minor = 0;
  device.total_memory = size_t{1} << 30;
  device.shared_per_block = 48 * 1024;
  device.shared_per_block_optin = 160 * 1024;
  device.multiprocessors = 4;
  state.devices = {device};
  state.contexts.clear();
  state.contexts.push_back(std::make_unique<Context>());
}

State& state() {
  if (g_state == nullptr) {
    g_state = new State();
    set_defaults(*g_state);
  }
  return *g_state;
}

// Counts the call and answers an injected failure, if any.
CUresult enter(const char* name) {
  State& s = state();
  ++s.calls[name];
  auto always = s.fail_always.find(name);
  if (always != s.fail_always.end()) return static_cast<CUresult>(always->second);
  auto next = s.fail_next.find(name);
  if (next != s.fail_next.end() && !next->second.empty()) {
    const int result = next->second.front();
    next->second.pop_front();
    return static_cast<CUresult>(result);
  }
  return CUDA_SUCCESS;
}

// Sleeps for the delay set for |name|, without holding the lock, so other threads run on.
void delay(const char* name) {
  int microseconds = 0;
  {
    std::lock_guard<std::recursive_mutex> lock(g_mutex);
    const auto& delays = state().delays_us;
    if (auto it = delays.find(name); it != delays.end()) microseconds = it->second;
  }
  if (microseconds > 0) std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
}

#define DOUBLE_ENTER(name)                                         \
  delay(name);                                                     \
  std::lock_guard<std::recursive_mutex> lock(g_mutex);             \
  if (CUresult injected = enter(name); injected != CUDA_SUCCESS) { \
    return injected;                                               \
  }

#define DOUBLE_NEED_CONTEXT() \
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT

void run(Stream* stream) {
  while (!stream->pending.empty()) {
    auto work = std::move(stream->pending.front());
    stream->pending.pop_front();
    work();
  }
}

void run_all() {
  for (Stream* stream : state().streams) run(stream);
}

bool device_range(CUdeviceptr pointer, size_t size) {
  State& s = state();
  auto it = s.allocations.upper_bound(pointer);
  if (it == s.allocations.begin()) return false;
  --it;
  return pointer >= it->first && pointer - it->first <= it->second &&
         size <= it->second - (pointer - it->first);
}

bool host_pinned(const void* pointer) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  State& s = state();
  auto it = s.host_allocations.upper_bound(address);
  if (it == s.host_allocations.begin()) return false;
  --it;
  return address - it->first < it->second;
}

Stream* as_stream(CUstream stream) {
  return reinterpret_cast<Stream*>(stream);
}
Event* as_event(CUevent event) {
  return reinterpret_cast<Event*>(event);
}

// ===========================================================================================
// Entry points
// ===========================================================================================

struct ErrorName {
  CUresult result;
  const char* name;
  const char* text;
};
constexpr ErrorName kErrorNames[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
};

CUresult d_GetErrorName(CUresult result, const char** name) {
  for (const ErrorName& entry : kErrorNames) {
    if (entry.result == result) {
      *name = entry.name;
      return CUDA_SUCCESS;
    }
  }
  *name = nullptr;
  return CUDA_ERROR_INVALID_VALUE;  // as the driver does for values it does not know
}

CUresult d_GetErrorString(CUresult result, const char** text) {
  for (const ErrorName& entry : kErrorNames) {
    if (entry.result == result) {
      *text = entry.text;
      return CUDA_SUCCESS;
    }
  }
  *text = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult d_Init(unsigned int flags) {
  DOUBLE_ENTER("cuInit");
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return state().devices.empty() ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

CUresult d_DriverGetVersion(int* version) {
  DOUBLE_ENTER("cuDriverGetVersion");
  *version = state().driver_version;
  return CUDA_SUCCESS;
}

CUresult d_DeviceGetCount(int* count) {
  DOUBLE_ENTER("cuDeviceGetCount");
  *count = static_cast<int>(state().devices.size());
  return CUDA_SUCCESS;
}

CUresult d_DeviceGet(CUdevice* device, int ordinal) {
  DOUBLE_ENTER("cuDeviceGet");
  if (ordinal < 0 || ordinal >= static_cast<int>(state().devices.size())) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *device = ordinal;
  return CUDA_SUCCESS;
}

const cuda_test_double_device* find_device(CUdevice device) {
  if (device < 0 || device >= static_cast<int>(state().devices.size())) return nullptr;
  return &state().devices[static_cast<size_t>(device)];
}

CUresult d_DeviceGetName(char* name, int length, CUdevice device) {
  DOUBLE_ENTER("cuDeviceGetName");
  const cuda_test_double_device* config = find_device(device);
  if (config == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (length <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::strncpy(name, config->name, static_cast<size_t>(length) - 1);
  name[length - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult d_DeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  DOUBLE_ENTER("cuDeviceGetAttribute");
  const cuda_test_double_device* config = find_device(device);
  if (config == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
      *value = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      *value = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      *value = 64;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      *value = 2147483647;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      *value = 65535;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      *value = 65535;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *value = config->shared_per_block;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = config->shared_per_block_optin;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *value = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = config->multiprocessors;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = config->cc_major;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = config->cc_minor;
      break;
    default:
      *value = 0;
      break;
  }
  return CUDA_SUCCESS;
}

CUresult d_DeviceGetUuid(CUuuid* uuid, CUdevice device) {
  DOUBLE_ENTER("cuDeviceGetUuid");
  if (find_device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0xd0 + device + i);
  return CUDA_SUCCESS;
}

CUresult d_DeviceTotalMem(size_t* bytes, CUdevice device) {
  DOUBLE_ENTER("cuDeviceTotalMem");
  const cuda_test_double_device* config = find_device(device);
  if (config == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = config->total_memory;
  return CUDA_SUCCESS;
}

CUresult d_DevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  DOUBLE_ENTER("cuDevicePrimaryCtxRetain");
  if (find_device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  State& s = state();
  while (s.contexts.size() <= static_cast<size_t>(device)) {
    s.contexts.push_back(std::make_unique<Context>());
  }
  s.contexts[static_cast<size_t>(device)]->device = device;
  *context = reinterpret_cast<CUcontext>(s.contexts[static_cast<size_t>(device)].get());
  return CUDA_SUCCESS;
}

CUresult d_DevicePrimaryCtxRelease(CUdevice device) {
  DOUBLE_ENTER("cuDevicePrimaryCtxRelease");
  return find_device(device) == nullptr ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult d_CtxGetCurrent(CUcontext* context) {
  DOUBLE_ENTER("cuCtxGetCurrent");
  *context = reinterpret_cast<CUcontext>(t_current);
  return CUDA_SUCCESS;
}

CUresult d_CtxSetCurrent(CUcontext context) {
  DOUBLE_ENTER("cuCtxSetCurrent");
  t_current = reinterpret_cast<Context*>(context);
  return CUDA_SUCCESS;
}

CUresult d_CtxSynchronize() {
  DOUBLE_ENTER("cuCtxSynchronize");
  DOUBLE_NEED_CONTEXT();
  run_all();
  return CUDA_SUCCESS;
}

CUresult d_MemAlloc(CUdeviceptr* pointer, size_t size) {
  DOUBLE_ENTER("cuMemAlloc");
  DOUBLE_NEED_CONTEXT();
  State& s = state();
  const size_t total = s.devices[static_cast<size_t>(t_current->device)].total_memory;
  if (size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (size > total || s.allocated > total - size) return CUDA_ERROR_OUT_OF_MEMORY;
  void* memory = std::aligned_alloc(256, (size + 255) / 256 * 256);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  s.allocations[*pointer] = size;
  s.allocated += size;
  return CUDA_SUCCESS;
}

CUresult d_MemFree(CUdeviceptr pointer) {
  DOUBLE_ENTER("cuMemFree");
  DOUBLE_NEED_CONTEXT();
  State& s = state();
  auto it = s.allocations.find(pointer);
  if (it == s.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  run_all();  // cuMemFree waits for the device
  s.allocated -= it->second;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void*>(pointer));
  return CUDA_SUCCESS;
}

CUresult d_MemHostAlloc(void** host, size_t size, unsigned int) {
  DOUBLE_ENTER("cuMemHostAlloc");
  DOUBLE_NEED_CONTEXT();
  void* memory = std::malloc(size);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  state().host_allocations[reinterpret_cast<uintptr_t>(memory)] = size;
  *host = memory;
  return CUDA_SUCCESS;
}

CUresult d_MemFreeHost(void* host) {
  DOUBLE_ENTER("cuMemFreeHost");
  DOUBLE_NEED_CONTEXT();
  if (state().host_allocations.erase(reinterpret_cast<uintptr_t>(host)) == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::free(host);
  return CUDA_SUCCESS;
}

CUresult d_PointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr pointer) {
  DOUBLE_ENTER("cuPointerGetAttribute");
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_INVALID_VALUE;
  CUmemorytype type;
  if (host_pinned(reinterpret_cast<const void*>(pointer))) {
    type = CU_MEMORYTYPE_HOST;
  } else if (device_range(pointer, 1)) {
    type = CU_MEMORYTYPE_DEVICE;
  } else {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::memcpy(data, &type, sizeof(type));
  return CUDA_SUCCESS;
}

CUresult d_MemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t size, CUstream stream) {
  DOUBLE_ENTER("cuMemcpyHtoDAsync");
  DOUBLE_NEED_CONTEXT();
  if (!device_range(dst, size) || stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (host_pinned(src)) {
    // Page-locked source: read when the copy runs, as a DMA would.
    as_stream(stream)->pending.push_back(
        [=] { std::memcpy(reinterpret_cast<void*>(dst), src, size); });
  } else {
    // Pageable source: staged before the call returns.
    auto staged = std::make_shared<std::vector<unsigned char>>(
        static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + size);
    as_stream(stream)->pending.push_back(
        [=] { std::memcpy(reinterpret_cast<void*>(dst), staged->data(), size); });
  }
  return CUDA_SUCCESS;
}

CUresult d_MemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t size, CUstream stream) {
  DOUBLE_ENTER("cuMemcpyDtoHAsync");
  DOUBLE_NEED_CONTEXT();
  if (!device_range(src, size) || stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
  as_stream(stream)->pending.push_back(
      [=] { std::memcpy(dst, reinterpret_cast<const void*>(src), size); });
  return CUDA_SUCCESS;
}

CUresult d_MemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
  DOUBLE_ENTER("cuMemcpyDtoDAsync");
  DOUBLE_NEED_CONTEXT();
  if (!device_range(src, size) || !device_range(dst, size) || stream == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  as_stream(stream)->pending.push_back([=] {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), size);
  });
  return CUDA_SUCCESS;
}

CUresult d_MemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  DOUBLE_ENTER("cuMemsetD8Async");
  DOUBLE_NEED_CONTEXT();
  if (!device_range(dst, count) || stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
  as_stream(stream)->pending.push_back(
      [=] { std::memset(reinterpret_cast<void*>(dst), value, count); });
  return CUDA_SUCCESS;
}

CUresult d_MemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
  DOUBLE_ENTER("cuMemsetD32Async");
  DOUBLE_NEED_CONTEXT();
  if (dst % 4 != 0 || !device_range(dst, count * 4) || stream == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  as_stream(stream)->pending.push_back([=] {
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(reinterpret_cast<unsigned char*>(dst) + 4 * i, &value, 4);
    }
  });
  return CUDA_SUCCESS;
}

CUresult d_StreamCreate(CUstream* stream, unsigned int flags) {
  DOUBLE_ENTER("cuStreamCreate");
  DOUBLE_NEED_CONTEXT();
  if (flags != CU_STREAM_NON_BLOCKING && flags != CU_STREAM_DEFAULT) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Stream* created = new Stream();
  state().streams.insert(created);
  *stream = reinterpret_cast<CUstream>(created);
  return CUDA_SUCCESS;
}

CUresult d_StreamDestroy(CUstream stream) {
  DOUBLE_ENTER("cuStreamDestroy");
  DOUBLE_NEED_CONTEXT();
  Stream* target = as_stream(stream);
  if (state().streams.erase(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  run(target);
  for (Event* event : state().events) {
    if (event->stream == target) event->stream = nullptr;
  }
  delete target;
  return CUDA_SUCCESS;
}

CUresult d_StreamSynchronize(CUstream stream) {
  DOUBLE_ENTER("cuStreamSynchronize");
  DOUBLE_NEED_CONTEXT();
  if (state().streams.count(as_stream(stream)) == 0) return CUDA_ERROR_INVALID_HANDLE;
  run(as_stream(stream));
  return CUDA_SUCCESS;
}

CUresult d_StreamQuery(CUstream stream) {
  DOUBLE_ENTER("cuStreamQuery");
  DOUBLE_NEED_CONTEXT();
  Stream* target = as_stream(stream);
  if (state().streams.count(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (target->pending.empty()) return CUDA_SUCCESS;
  run(target);  // it completes "in the background" after this answer
  return CUDA_ERROR_NOT_READY;
}

CUresult d_StreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  DOUBLE_ENTER("cuStreamWaitEvent");
  DOUBLE_NEED_CONTEXT();
  if (state().streams.count(as_stream(stream)) == 0 || state().events.count(as_event(event)) == 0 ||
      flags != 0) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  // Simplification: the recorded work completes before the waiting stream goes on.
  if (Stream* source = as_event(event)->stream; source != nullptr) run(source);
  return CUDA_SUCCESS;
}

CUresult d_EventCreate(CUevent* event, unsigned int flags) {
  DOUBLE_ENTER("cuEventCreate");
  DOUBLE_NEED_CONTEXT();
  if (flags != CU_EVENT_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  Event* created = new Event();
  state().events.insert(created);
  *event = reinterpret_cast<CUevent>(created);
  return CUDA_SUCCESS;
}

CUresult d_EventDestroy(CUevent event) {
  DOUBLE_ENTER("cuEventDestroy");
  DOUBLE_NEED_CONTEXT();
  if (state().events.erase(as_event(event)) == 0) return CUDA_ERROR_INVALID_HANDLE;
  // Work already queued may still complete it; keep that work harmless.
  Event* target = as_event(event);
  if (target->stream != nullptr && !target->complete) run(target->stream);
  delete target;
  return CUDA_SUCCESS;
}

CUresult d_EventRecord(CUevent event, CUstream stream) {
  DOUBLE_ENTER("cuEventRecord");
  DOUBLE_NEED_CONTEXT();
  Event* target = as_event(event);
  if (state().events.count(target) == 0 || state().streams.count(as_stream(stream)) == 0) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  target->recorded = true;
  target->complete = false;
  target->stream = as_stream(stream);
  as_stream(stream)->pending.push_back([target] {
    State& s = state();
    s.clock_ms += 0.5;
    target->time_ms = s.clock_ms;
    target->complete = true;
  });
  return CUDA_SUCCESS;
}

CUresult d_EventSynchronize(CUevent event) {
  DOUBLE_ENTER("cuEventSynchronize");
  DOUBLE_NEED_CONTEXT();
  Event* target = as_event(event);
  if (state().events.count(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (target->stream != nullptr) run(target->stream);
  return CUDA_SUCCESS;
}

CUresult d_EventQuery(CUevent event) {
  DOUBLE_ENTER("cuEventQuery");
  DOUBLE_NEED_CONTEXT();
  Event* target = as_event(event);
  if (state().events.count(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (!target->recorded || target->complete) return CUDA_SUCCESS;
  if (target->stream != nullptr) run(target->stream);
  return CUDA_ERROR_NOT_READY;
}

CUresult d_EventElapsedTime(float* ms, CUevent start, CUevent end) {
  DOUBLE_ENTER("cuEventElapsedTime");
  DOUBLE_NEED_CONTEXT();
  Event* first = as_event(start);
  Event* last = as_event(end);
  if (state().events.count(first) == 0 || state().events.count(last) == 0) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (!first->recorded || !last->recorded) return CUDA_ERROR_INVALID_HANDLE;
  if (!first->complete || !last->complete) return CUDA_ERROR_NOT_READY;
  *ms = static_cast<float>(last->time_ms - first->time_ms);
  return CUDA_SUCCESS;
}

// The length of a module image: PTX up to its NUL (bounded), binaries by their headers.
size_t image_length(const unsigned char* image) {
  if (std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    uint64_t shoff = 0;
    uint16_t shentsize = 0;
    uint16_t shnum = 0;
    std::memcpy(&shoff, image + 0x28, 8);
    std::memcpy(&shentsize, image + 0x3a, 2);
    std::memcpy(&shnum, image + 0x3c, 2);
    return static_cast<size_t>(shoff + uint64_t{shentsize} * shnum);
  }
  uint32_t magic = 0;
  std::memcpy(&magic, image, 4);
  if (magic == 0xBA55ED50u) {
    uint16_t header = 0;
    uint64_t body = 0;
    std::memcpy(&header, image + 6, 2);
    std::memcpy(&body, image + 8, 8);
    return static_cast<size_t>(header + body);
  }
  return std::strlen(reinterpret_cast<const char*>(image));
}

CUresult d_ModuleLoadDataEx(CUmodule* module, const void* image, unsigned int count,
                            CUjit_option* options, void** values) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  State& s = state();
  const CUresult injected = enter("cuModuleLoadDataEx");
  if (injected != CUDA_SUCCESS) {
    char* log = nullptr;
    size_t capacity = 0;
    for (unsigned int i = 0; i < count; ++i) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER) log = static_cast<char*>(values[i]);
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
        capacity = reinterpret_cast<uintptr_t>(values[i]);
      }
    }
    if (log != nullptr && capacity > 0) {
      const size_t length = std::min(s.jit_error_log.size(), capacity - 1);
      std::memcpy(log, s.jit_error_log.data(), length);
      log[length] = '\0';
    }
    return injected;
  }
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  const auto* bytes = static_cast<const unsigned char*>(image);
  const size_t length = image_length(bytes);
  s.last_module.assign(bytes, bytes + length);
  Module* created = new Module();
  created->binary = bytes[0] == 0x7f || bytes[0] == 0x50;
  if (created->binary) {
    for (const std::string& name : s.binary_functions) {
      auto function = std::make_unique<Function>();
      function->name = name;
      function->module = created;
      created->functions.push_back(std::move(function));
    }
  }
  s.modules.insert(created);
  *module = reinterpret_cast<CUmodule>(created);
  return CUDA_SUCCESS;
}

CUresult d_ModuleUnload(CUmodule module) {
  DOUBLE_ENTER("cuModuleUnload");
  DOUBLE_NEED_CONTEXT();
  Module* target = reinterpret_cast<Module*>(module);
  if (state().modules.erase(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  delete target;
  return CUDA_SUCCESS;
}

CUresult d_ModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  DOUBLE_ENTER("cuModuleGetFunction");
  DOUBLE_NEED_CONTEXT();
  Module* target = reinterpret_cast<Module*>(module);
  if (state().modules.count(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  for (auto& existing : target->functions) {
    if (existing->name == name) {
      *function = reinterpret_cast<CUfunction>(existing.get());
      return CUDA_SUCCESS;
    }
  }
  if (target->binary) return CUDA_ERROR_NOT_FOUND;
  auto created = std::make_unique<Function>();
  created->name = name;
  created->module = target;
  *function = reinterpret_cast<CUfunction>(created.get());
  target->functions.push_back(std::move(created));
  return CUDA_SUCCESS;
}

CUresult d_ModuleGetFunctionCount(unsigned int* count, CUmodule module) {
  DOUBLE_ENTER("cuModuleGetFunctionCount");
  DOUBLE_NEED_CONTEXT();
  Module* target = reinterpret_cast<Module*>(module);
  if (state().modules.count(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  *count = static_cast<unsigned int>(target->functions.size());
  return CUDA_SUCCESS;
}

CUresult d_ModuleEnumerateFunctions(CUfunction* functions, unsigned int count, CUmodule module) {
  DOUBLE_ENTER("cuModuleEnumerateFunctions");
  DOUBLE_NEED_CONTEXT();
  Module* target = reinterpret_cast<Module*>(module);
  if (state().modules.count(target) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (count < target->functions.size()) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < target->functions.size(); ++i) {
    functions[i] = reinterpret_cast<CUfunction>(target->functions[i].get());
  }
  return CUDA_SUCCESS;
}

CUresult d_FuncGetName(const char** name, CUfunction function) {
  DOUBLE_ENTER("cuFuncGetName");
  *name = reinterpret_cast<Function*>(function)->name.c_str();
  return CUDA_SUCCESS;
}

size_t param_offset(const std::vector<size_t>& sizes, size_t index) {
  size_t offset = 0;
  for (size_t i = 0; i <= index; ++i) {
    const size_t align = sizes[i] >= 8 ? 8 : sizes[i] >= 4 ? 4 : sizes[i] >= 2 ? 2 : 1;
    offset = (offset + align - 1) / align * align;
    if (i < index) offset += sizes[i];
  }
  return offset;
}

CUresult d_FuncGetParamInfo(CUfunction function, size_t index, size_t* offset, size_t* size) {
  DOUBLE_ENTER("cuFuncGetParamInfo");
  DOUBLE_NEED_CONTEXT();
  auto it = state().functions.find(reinterpret_cast<Function*>(function)->name);
  if (it == state().functions.end() || index >= it->second.param_sizes.size()) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *offset = param_offset(it->second.param_sizes, index);
  *size = it->second.param_sizes[index];
  return CUDA_SUCCESS;
}

CUresult d_FuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function) {
  DOUBLE_ENTER("cuFuncGetAttribute");
  DOUBLE_NEED_CONTEXT();
  Function* target = reinterpret_cast<Function*>(function);
  FunctionConfig config;
  if (auto it = state().functions.find(target->name); it != state().functions.end()) {
    config = it->second;
  }
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = config.max_threads;
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *value = config.static_shared;
      break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *value = target->max_dynamic_shared >= 0 ? target->max_dynamic_shared
                                               : 48 * 1024 - config.static_shared;
      break;
    default:
      *value = 0;
      break;
  }
  return CUDA_SUCCESS;
}

CUresult d_FuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  DOUBLE_ENTER("cuFuncSetAttribute");
  DOUBLE_NEED_CONTEXT();
  Function* target = reinterpret_cast<Function*>(function);
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const cuda_test_double_device& device =
      state().devices[static_cast<size_t>(t_current != nullptr ? t_current->device : 0)];
  if (value < 0 || value > device.shared_per_block_optin) return CUDA_ERROR_INVALID_VALUE;
  target->max_dynamic_shared = value;
  state().max_dynamic_shared[target->name] = value;
  return CUDA_SUCCESS;
}

CUresult d_LaunchKernel(CUfunction function, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        CUstream stream, void** params, void** extra) {
  DOUBLE_ENTER("cuLaunchKernel");
  DOUBLE_NEED_CONTEXT();
  State& s = state();
  Function* target = reinterpret_cast<Function*>(function);
  if (state().streams.count(as_stream(stream)) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Without the attribute a block gets 48 KiB of shared memory, static included.
  int static_shared = 0;
  if (auto known = s.functions.find(target->name); known != s.functions.end()) {
    static_shared = known->second.static_shared;
  }
  const int allowed =
      target->max_dynamic_shared >= 0 ? target->max_dynamic_shared : 48 * 1024 - static_shared;
  if (shared > static_cast<unsigned int>(allowed)) return CUDA_ERROR_INVALID_VALUE;
  cuda_test_double_launch launch{};
  std::strncpy(launch.function, target->name.c_str(), sizeof(launch.function) - 1);
  const unsigned int grid[3] = {gx, gy, gz};
  const unsigned int block[3] = {bx, by, bz};
  for (int i = 0; i < 3; ++i) {
    launch.grid[i] = grid[i];
    launch.block[i] = block[i];
  }
  launch.shared_bytes = shared;
  launch.param_count = -1;
  auto it = s.functions.find(target->name);
  if (it != s.functions.end() && it->second.sizes_known) {
    const std::vector<size_t>& sizes = it->second.param_sizes;
    launch.param_count = static_cast<int>(sizes.size());
    if (!sizes.empty() && params == nullptr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizes.size() && i < CUDA_TEST_DOUBLE_MAX_PARAMS; ++i) {
      const size_t offset = param_offset(sizes, i);
      if (offset + sizes[i] > CUDA_TEST_DOUBLE_MAX_PARAM_BYTES) return CUDA_ERROR_INVALID_VALUE;
      launch.param_offsets[i] = offset;
      launch.param_sizes[i] = sizes[i];
      std::memcpy(launch.param_bytes + offset, params[i], sizes[i]);  // read at the call
    }
  }
  s.launches.push_back(launch);
  as_stream(stream)->pending.push_back([] {});
  return CUDA_SUCCESS;
}

struct EntryPoint {
  const char* name;
  int minimum_version;
  void* function;
};

#define DOUBLE_ENTRY(name, version, function) \
  { name, version, reinterpret_cast<void*>(&function) }
const EntryPoint kEntryPoints[] = {
    DOUBLE_ENTRY("cuGetErrorName", 6000, d_GetErrorName),
    DOUBLE_ENTRY("cuGetErrorString", 6000, d_GetErrorString),
    DOUBLE_ENTRY("cuInit", 2000, d_Init),
    DOUBLE_ENTRY("cuDriverGetVersion", 2020, d_DriverGetVersion),
    DOUBLE_ENTRY("cuDeviceGetCount", 2000, d_DeviceGetCount),
    DOUBLE_ENTRY("cuDeviceGet", 2000, d_DeviceGet),
    DOUBLE_ENTRY("cuDeviceGetName", 2000, d_DeviceGetName),
    DOUBLE_ENTRY("cuDeviceGetAttribute", 2000, d_DeviceGetAttribute),
    DOUBLE_ENTRY("cuDeviceGetUuid", 11040, d_DeviceGetUuid),
    DOUBLE_ENTRY("cuDeviceTotalMem", 3020, d_DeviceTotalMem),
    DOUBLE_ENTRY("cuDevicePrimaryCtxRetain", 7000, d_DevicePrimaryCtxRetain),
    DOUBLE_ENTRY("cuDevicePrimaryCtxRelease", 11000, d_DevicePrimaryCtxRelease),
    DOUBLE_ENTRY("cuCtxGetCurrent", 4000, d_CtxGetCurrent),
    DOUBLE_ENTRY("cuCtxSetCurrent", 4000, d_CtxSetCurrent),
    DOUBLE_ENTRY("cuCtxSynchronize", 2000, d_CtxSynchronize),
    DOUBLE_ENTRY("cuMemAlloc", 3020, d_MemAlloc),
    DOUBLE_ENTRY("cuMemFree", 3020, d_MemFree),
    DOUBLE_ENTRY("cuMemHostAlloc", 2020, d_MemHostAlloc),
    DOUBLE_ENTRY("cuMemFreeHost", 2000, d_MemFreeHost),
    DOUBLE_ENTRY("cuPointerGetAttribute", 4000, d_PointerGetAttribute),
    DOUBLE_ENTRY("cuMemcpyHtoDAsync", 3020, d_MemcpyHtoDAsync),
    DOUBLE_ENTRY("cuMemcpyDtoHAsync", 3020, d_MemcpyDtoHAsync),
    DOUBLE_ENTRY("cuMemcpyDtoDAsync", 3020, d_MemcpyDtoDAsync),
    DOUBLE_ENTRY("cuMemsetD8Async", 3020, d_MemsetD8Async),
    DOUBLE_ENTRY("cuMemsetD32Async", 3020, d_MemsetD32Async),
    DOUBLE_ENTRY("cuStreamCreate", 2000, d_StreamCreate),
    DOUBLE_ENTRY("cuStreamDestroy", 4000, d_StreamDestroy),
    DOUBLE_ENTRY("cuStreamSynchronize", 2000, d_StreamSynchronize),
    DOUBLE_ENTRY("cuStreamQuery", 2000, d_StreamQuery),
    DOUBLE_ENTRY("cuStreamWaitEvent", 3020, d_StreamWaitEvent),
    DOUBLE_ENTRY("cuEventCreate", 2000, d_EventCreate),
    DOUBLE_ENTRY("cuEventDestroy", 4000, d_EventDestroy),
    DOUBLE_ENTRY("cuEventRecord", 2000, d_EventRecord),
    DOUBLE_ENTRY("cuEventSynchronize", 2000, d_EventSynchronize),
    DOUBLE_ENTRY("cuEventQuery", 2000, d_EventQuery),
    DOUBLE_ENTRY("cuEventElapsedTime", 2000, d_EventElapsedTime),
    DOUBLE_ENTRY("cuModuleLoadDataEx", 2010, d_ModuleLoadDataEx),
    DOUBLE_ENTRY("cuModuleUnload", 2000, d_ModuleUnload),
    DOUBLE_ENTRY("cuModuleGetFunction", 2000, d_ModuleGetFunction),
    DOUBLE_ENTRY("cuModuleGetFunctionCount", 12040, d_ModuleGetFunctionCount),
    DOUBLE_ENTRY("cuModuleEnumerateFunctions", 12040, d_ModuleEnumerateFunctions),
    DOUBLE_ENTRY("cuFuncGetName", 12030, d_FuncGetName),
    DOUBLE_ENTRY("cuFuncGetParamInfo", 12040, d_FuncGetParamInfo),
    DOUBLE_ENTRY("cuFuncGetAttribute", 2020, d_FuncGetAttribute),
    DOUBLE_ENTRY("cuFuncSetAttribute", 9000, d_FuncSetAttribute),
    DOUBLE_ENTRY("cuLaunchKernel", 4000, d_LaunchKernel),
};
#undef DOUBLE_ENTRY

}  // namespace

// ===========================================================================================
// Exports
// ===========================================================================================

extern "C" {

CUDA_TEST_DOUBLE_API CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                                  cuuint64_t,
                                                  CUdriverProcAddressQueryResult* status) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  State& s = state();
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  s.requested_versions[symbol] = version;
  *pfn = nullptr;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (s.hidden.count(symbol) != 0) return CUDA_ERROR_NOT_FOUND;
  for (const EntryPoint& entry : kEntryPoints) {
    if (std::strcmp(entry.name, symbol) != 0) continue;
    if (version < entry.minimum_version) {
      if (status != nullptr) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = entry.function;
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

void cuda_test_double_reset(void) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  // Streams, events and modules the backend still holds stay valid objects.
  State& s = state();
  s.fail_next.clear();
  s.fail_always.clear();
  s.hidden.clear();
  s.requested_versions.clear();
  s.calls.clear();
  s.delays_us.clear();
  s.jit_error_log.clear();
  s.functions.clear();
  s.binary_functions.clear();
  s.launches.clear();
  s.last_module.clear();
  s.max_dynamic_shared.clear();
  s.driver_version = 12040;
  set_defaults(s);
}

void cuda_test_double_set_devices(const cuda_test_double_device* devices, int count) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().devices.assign(devices, devices + count);
}

void cuda_test_double_set_driver_version(int version) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().driver_version = version;
}

void cuda_test_double_fail_next(const char* entry_point, int result) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().fail_next[entry_point].push_back(result);
}

void cuda_test_double_fail_always(const char* entry_point, int result) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().fail_always[entry_point] = result;
}

void cuda_test_double_delay(const char* entry_point, int microseconds) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().delays_us[entry_point] = microseconds;
}

void cuda_test_double_hide_entry_point(const char* entry_point) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().hidden.insert(entry_point);
}

int cuda_test_double_requested_version(const char* entry_point) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  auto it = state().requested_versions.find(entry_point);
  return it == state().requested_versions.end() ? 0 : it->second;
}

int cuda_test_double_call_count(const char* entry_point) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  auto it = state().calls.find(entry_point);
  return it == state().calls.end() ? 0 : it->second;
}

void cuda_test_double_set_jit_error_log(const char* text) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().jit_error_log = text;
}

void cuda_test_double_set_function(const char* function, const size_t* param_sizes, int param_count,
                                   int max_threads, int static_shared_bytes) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  FunctionConfig& config = state().functions[function];
  config.param_sizes.assign(param_sizes, param_sizes + param_count);
  config.sizes_known = true;
  config.max_threads = max_threads;
  config.static_shared = static_shared_bytes;
}

void cuda_test_double_set_binary_functions(const char* const* names, int count) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  state().binary_functions.assign(names, names + count);
}

int cuda_test_double_launch_count(void) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  return static_cast<int>(state().launches.size());
}

int cuda_test_double_get_launch(int index, cuda_test_double_launch* out) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  if (index < 0 || index >= static_cast<int>(state().launches.size())) return 0;
  *out = state().launches[static_cast<size_t>(index)];
  return 1;
}

size_t cuda_test_double_last_module(void* buffer, size_t capacity) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  const std::vector<unsigned char>& bytes = state().last_module;
  std::memcpy(buffer, bytes.data(), std::min(capacity, bytes.size()));
  return bytes.size();
}

int cuda_test_double_max_dynamic_shared(const char* function) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  auto it = state().max_dynamic_shared.find(function);
  return it == state().max_dynamic_shared.end() ? -1 : it->second;
}

int cuda_test_double_live_allocations(void) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  return static_cast<int>(state().allocations.size());
}

int cuda_test_double_live_host_allocations(void) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  return static_cast<int>(state().host_allocations.size());
}

int cuda_test_double_live_objects(void) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  const State& s = state();
  return static_cast<int>(s.streams.size() + s.events.size() + s.modules.size());
}

}  // extern "C"
