#include "cuda/cuda_device.h"

#include "cuda/cuda_module.h"
#include "cuda/cuda_stream.h"

#include "common/error.h"
#include "common/log.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "ptx_cpu/ptx_cpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace hal {

std::unique_ptr<Backend> create_cuda_backend() {
  return std::make_unique<cuda::CudaBackend>();
}

namespace cuda {

hal_status CudaBackend::init(std::vector<std::unique_ptr<Device>>* devices) {
  std::shared_ptr<const Driver> driver;
  if (hal_status status = Driver::open(&driver); status != HAL_SUCCESS) return status;
  const DriverApi& api = driver->api();
  int count = 0;
  if (CUresult result = api.cuDeviceGetCount(&count); result != CUDA_SUCCESS) {
    return failf(HAL_ERROR_UNAVAILABLE, "cuDeviceGetCount failed ({}). {}",
                 driver->error_name(result), error_hint(result));
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice handle = 0;
    if (CUresult result = api.cuDeviceGet(&handle, ordinal); result != CUDA_SUCCESS) {
      log()->warn("cuda: skipping device {}: cuDeviceGet failed ({})", ordinal,
                  driver->error_name(result));
      continue;
    }
    auto device = std::make_unique<CudaDevice>(driver, handle, ordinal);
    if (device->query() != HAL_SUCCESS) {
      log()->warn("cuda: skipping device {}: {}", ordinal, pending_error());
      clear_pending_error();
      continue;
    }
    devices->push_back(std::move(device));
  }
  return HAL_SUCCESS;
}

CudaDevice::CudaDevice(std::shared_ptr<const Driver> driver, CUdevice device, int ordinal)
    : driver_(std::move(driver)), device_(device), ordinal_(ordinal) {}

CudaDevice::~CudaDevice() {
  // Errors are ignored: at process exit the driver may already be shutting down.
  if (context_.load() != nullptr) api().cuDevicePrimaryCtxRelease(device_);
}

hal_status CudaDevice::attribute(CUdevice_attribute attribute, const char* name, int* value) {
  *value = 0;
  const CUresult result = api().cuDeviceGetAttribute(value, attribute, device_);
  if (result != CUDA_SUCCESS) {
    return fail_result(*driver_, result, fmt::format("cuDeviceGetAttribute({})", name));
  }
  return HAL_SUCCESS;
}

hal_status CudaDevice::query() {
  const DriverApi& cu = api();
  hal_device_info out{};
  out.struct_size = sizeof(out);
  out.backend = HAL_BACKEND_CUDA;
  out.vendor_id = 0x10de;
  out.device_id = 0;  // the driver API exposes no PCI product id
  out.driver_version = static_cast<uint32_t>(driver_->version());
  out.ir_mask = HAL_IR_PTX | HAL_IR_CUBIN | HAL_IR_FATBIN;
  out.pointer_alignment = 1;  // CUDA accepts any address; kernels state their own needs
  out.is_cpu = 0;

  char name[256] = {};
  if (CUresult r = cu.cuDeviceGetName(name, sizeof(name) - 1, device_); r != CUDA_SUCCESS) {
    return fail_result(*driver_, r, "cuDeviceGetName");
  }
  std::memcpy(out.name, name, sizeof(out.name) - 1);
  // NVIDIA's driver under its own name; any other libcuda-compatible library (HAL_CUDA_LIBRARY:
  // the CPU PTX driver, a test double) by its file name, so reports say which one ran.
  const std::string& library = driver_->library();
  const bool nvidia = library == "libcuda.so.1" || library == "libcuda.so";
  const std::string driver_info =
      fmt::format("CUDA {}.{}", driver_->version() / 1000, driver_->version() % 1000 / 10);
  const std::string driver_name =
      nvidia ? "NVIDIA " + driver_info
             : fmt::format("{} ({})", library.substr(library.find_last_of('/') + 1), driver_info);
  std::memcpy(out.driver_name, driver_name.c_str(),
              std::min(driver_name.size(), sizeof(out.driver_name) - 1));
  std::memcpy(out.driver_info, driver_info.c_str(),
              std::min(driver_info.size(), sizeof(out.driver_info) - 1));
  out.api_version = static_cast<uint32_t>(driver_->version());

  CUuuid uuid{};
  if (CUresult r = cu.cuDeviceGetUuid(&uuid, device_); r != CUDA_SUCCESS) {
    return fail_result(*driver_, r, "cuDeviceGetUuid");
  }
  static_assert(sizeof(uuid.bytes) == sizeof(out.uuid));
  std::memcpy(out.uuid, uuid.bytes, sizeof(out.uuid));
  // hal's CPU PTX driver (src/ptx_cpu) marks its devices' UUIDs: the driver API has no device
  // type, and a CPU device must say so (tools size their work by it, default selection puts GPUs
  // first). It is no NVIDIA device either.
  constexpr char kCpuPtx[] = HAL_PTX_CPU_UUID_PREFIX;
  if (std::memcmp(uuid.bytes, kCpuPtx, sizeof(kCpuPtx) - 1) == 0) {
    out.is_cpu = 1;
    out.vendor_id = 0;
  }

  size_t total = 0;
  if (CUresult r = cu.cuDeviceTotalMem(&total, device_); r != CUDA_SUCCESS) {
    return fail_result(*driver_, r, "cuDeviceTotalMem");
  }
  out.total_memory = total;
  out.max_allocation_size = total;

  struct Attribute {
    CUdevice_attribute attribute;
    const char* name;
    int value;
  };
  Attribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "MAX_BLOCK_DIM_X", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "MAX_BLOCK_DIM_Y", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "MAX_BLOCK_DIM_Z", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "MAX_GRID_DIM_X", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "MAX_GRID_DIM_Y", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "MAX_GRID_DIM_Z", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "MAX_SHARED_MEMORY_PER_BLOCK", 0},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
       0},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE", 0},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", 0},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", 0},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", 0},
      {CU_DEVICE_ATTRIBUTE_INTEGRATED, "INTEGRATED", 0},
  };
  for (Attribute& entry : attributes) {
    if (hal_status status = attribute(entry.attribute, entry.name, &entry.value);
        status != HAL_SUCCESS) {
      return status;
    }
  }
  const auto at = [&](size_t index) {
    return static_cast<uint32_t>(std::max(attributes[index].value, 0));
  };
  out.max_threads_per_block = at(0);
  for (int i = 0; i < 3; ++i) {
    out.max_block_dim[i] = at(1 + i);
    out.max_grid_dim[i] = at(4 + i);
  }
  default_shared_bytes_ = at(7);
  optin_shared_bytes_ = std::max(at(7), at(8));
  out.max_shared_memory_per_block = optin_shared_bytes_;
  out.subgroup_size = at(9);
  out.compute_units = at(10);
  out.compute_capability_major = at(11);
  out.compute_capability_minor = at(12);
  out.unified_memory = at(13) != 0 ? 1 : 0;

  const uint32_t cc = out.compute_capability_major * 10 + out.compute_capability_minor;
  // Every CUDA GPU has warp vote, shuffle and ballot; reductions are shuffle trees.
  uint64_t features = HAL_FEATURE_STORAGE_16BIT | HAL_FEATURE_STORAGE_8BIT |
                      HAL_FEATURE_BUFFER_DEVICE_ADDRESS | HAL_FEATURE_TIMESTAMPS |
                      HAL_FEATURE_SUBGROUP_VOTE | HAL_FEATURE_SUBGROUP_ARITHMETIC |
                      HAL_FEATURE_SUBGROUP_BALLOT | HAL_FEATURE_SUBGROUP_SHUFFLE;
  if (cc >= 53) features |= HAL_FEATURE_FLOAT16;
  if (cc >= 61) features |= HAL_FEATURE_INT8;
  if (cc >= 70) features |= HAL_FEATURE_COOPERATIVE_MATRIX;  // tensor cores through mma/wmma
  out.features = features;

  info = out;
  return HAL_SUCCESS;
}

hal_status CudaDevice::enter() {
  CUcontext context = context_.load();
  if (context == nullptr) {
    std::lock_guard<std::mutex> lock(context_mutex_);
    context = context_.load();
    if (context == nullptr) {
      const CUresult result = api().cuDevicePrimaryCtxRetain(&context, device_);
      if (result != CUDA_SUCCESS) return check(result, "cuDevicePrimaryCtxRetain");
      context_.store(context);
    }
  }
  CUcontext current = nullptr;
  if (CUresult result = api().cuCtxGetCurrent(&current); result != CUDA_SUCCESS) {
    return check(result, "cuCtxGetCurrent");
  }
  if (current != context) {
    if (CUresult result = api().cuCtxSetCurrent(context); result != CUDA_SUCCESS) {
      return check(result, "cuCtxSetCurrent");
    }
  }
  return HAL_SUCCESS;
}

hal_status CudaDevice::check(CUresult result, std::string_view what, std::string_view detail) {
  if (result == CUDA_SUCCESS) return HAL_SUCCESS;
  const hal_status status = fail_result(*driver_, result, what, detail);
  // The context is unusable from now on, though this call reports the fault itself (such as
  // HAL_ERROR_LAUNCH_FAILED): the core records the loss and refuses every later call.
  if (poisons_context(result)) report_lost(pending_error());
  return status;
}

hal_status CudaDevice::synchronize() {
  if (hal_status status = enter(); status != HAL_SUCCESS) return status;
  return check(api().cuCtxSynchronize(), "cuCtxSynchronize");
}

// ===========================================================================================
// Memory, streams and events
// ===========================================================================================

hal_status CudaDevice::mem_alloc(size_t size, Allocation* out) {
  if (hal_status status = enter(); status != HAL_SUCCESS) return status;
  CUdeviceptr pointer = 0;
  if (hal_status status =
          check(api().cuMemAlloc(&pointer, size), fmt::format("cuMemAlloc of {} bytes", size));
      status != HAL_SUCCESS) {
    return status;
  }
  out->base = pointer;
  out->size = size;
  out->backend_data = 0;
  return HAL_SUCCESS;
}

hal_status CudaDevice::mem_free(const Allocation& alloc) {
  if (lost()) return HAL_SUCCESS;  // the memory went with the context
  if (hal_status status = enter(); status != HAL_SUCCESS) return status;
  // hal promises that work already issued completes first. cuMemFree does not promise to wait
  // for kernels still using the memory on other streams; wait for the device explicitly (cheap
  // when it is idle) so the memory is never unmapped under a running kernel.
  if (hal_status status = check(api().cuCtxSynchronize(), "cuCtxSynchronize before cuMemFree");
      status != HAL_SUCCESS) {
    return status;
  }
  return check(api().cuMemFree(alloc.base), "cuMemFree");
}

hal_status CudaDevice::host_alloc(size_t size, HostAllocation* out) {
  if (hal_status status = enter(); status != HAL_SUCCESS) return status;
  void* host = nullptr;
  if (hal_status status = check(api().cuMemHostAlloc(&host, size, CU_MEMHOSTALLOC_PORTABLE),
                                fmt::format("cuMemHostAlloc of {} bytes", size));
      status != HAL_SUCCESS) {
    return status;
  }
  out->base = host;
  return HAL_SUCCESS;
}

hal_status CudaDevice::host_free(const HostAllocation& allocation) {
  void* host = allocation.base;
  if (lost()) {
    api().cuMemFreeHost(host);  // may fail with the sticky error; nothing else can be done
    return HAL_SUCCESS;
  }
  if (hal_status status = enter(); status != HAL_SUCCESS) return status;
  // Work that reads or writes the memory completes first.
  if (hal_status status = check(api().cuCtxSynchronize(), "cuCtxSynchronize before cuMemFreeHost");
      status != HAL_SUCCESS) {
    api().cuMemFreeHost(host);
    return status;
  }
  return check(api().cuMemFreeHost(host), "cuMemFreeHost");
}

bool CudaDevice::read_in_place(const void* host, const HostAllocation* allocation) {
  if (allocation != nullptr) return true;  // from host_alloc: page-locked
  const uintptr_t begin = reinterpret_cast<uintptr_t>(host);
  if (api().cuPointerGetAttribute == nullptr) return false;
  // One question, about the first byte: registered ranges are registered whole. Memory the driver
  // does not know makes it answer CUDA_ERROR_INVALID_VALUE, which is not a failure here. Any
  // memory type it does know (host, device, managed) is read by the copy itself, later.
  CUmemorytype type = static_cast<CUmemorytype>(0);
  return api().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     static_cast<CUdeviceptr>(begin)) == CUDA_SUCCESS;
}

hal_status CudaDevice::create_stream(std::unique_ptr<Stream>* out) {
  if (hal_status status = enter(); status != HAL_SUCCESS) return status;
  CUstream stream = nullptr;
  if (hal_status status =
          check(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      status != HAL_SUCCESS) {
    return status;
  }
  *out = std::make_unique<CudaStream>(*this, stream);
  return HAL_SUCCESS;
}

hal_status CudaDevice::create_event(std::unique_ptr<Event>* out) {
  if (hal_status status = enter(); status != HAL_SUCCESS) return status;
  CUevent event = nullptr;
  if (hal_status status = check(api().cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
      status != HAL_SUCCESS) {
    return status;
  }
  *out = std::make_unique<CudaEvent>(*this, event);
  return HAL_SUCCESS;
}

hal_status CudaDevice::load_module(hal_ir ir, const uint8_t* blob, size_t size,
                                   const ModuleOptions& options, std::unique_ptr<Module>* out) {
  return load_cuda_module(*this, ir, blob, size, options, out);
}

}  // namespace cuda
}  // namespace hal
