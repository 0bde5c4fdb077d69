// Devices: cuDeviceGet, cuDeviceGetCount, cuDeviceGetName, cuDeviceGetAttribute,
// cuDeviceGetUuid, cuDeviceTotalMem, cuDeviceGetPCIBusId, cuDeviceGetByPCIBusId.
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/ptx_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace hal::ptx_cpu {
namespace {

// Devices sit on made-up PCI buses 0xc0, 0xc1, ... of domain 0.
constexpr int kPciBusBase = 0xc0;

int l2_cache_bytes() {
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 && l2 < (1l << 30) ? static_cast<int>(l2) : 0;
}

// Every attribute cuda.h defines has an answer; features this device lacks are 0.
bool attribute_value(int attribute, CUdevice device, int* value) {
  const Driver& driver = *Driver::get();
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = kMaxThreadsPerBlock;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      *value = kMaxBlockDim[attribute - CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X];
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      *value = kMaxGridDim[attribute - CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X];
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *value = kSharedPerBlock;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = kSharedPerBlockOptin;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      *value = kSharedPerMultiprocessor;
      return true;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
      *value = 64 * 1024;
      return true;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *value = kWarpSize;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
      *value = 2147483647;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      *value = 65536;
      return true;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *value = 1000000;  // kHz; nominal: the interpreter has no fixed clock
      return true;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *value = 64;
      return true;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT:
      *value = 512;
      return true;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:
      *value = 32;
      return true;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = static_cast<int>(driver.executor_threads());
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      *value = 2048;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
      *value = 32;
      return true;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = kComputeMajor;
      return true;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = kComputeMinor;
      return true;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      *value = l2_cache_bytes();
      return true;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      *value = kPciBusBase + device;
      return true;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO:
      *value = 2;
      return true;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
      *value = 1;
      return true;
    case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT:
      *value = 1;
      return true;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID:
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
      *value = -1;
      return true;
    // What this device does: it is host memory seen through one address space, with
    // concurrently running streams and kernels.
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
      *value = 1;
      return true;
    default:
      break;
  }
  // Everything else that cuda.h defines is a feature this device does not have (textures,
  // surfaces, managed memory, IPC, clusters, ...), an id that does not apply, or a mode that is
  // off: 0.
  if (attribute >= CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK &&
      attribute < CU_DEVICE_ATTRIBUTE_MAX) {
    *value = 0;
    return true;
  }
  return false;
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::Driver;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;

PTXCPU_ENTRY CUresult CUDAAPI cuDeviceGetCount(int* count) {
  return entry(__func__, [&] {
    if (count == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "count is NULL");
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    *count = Driver::get()->device_count();
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  return entry(__func__, [&] {
    if (device == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "device is NULL");
    if (CUresult result = hal::ptx_cpu::check_device(ordinal); result != CUDA_SUCCESS) {
      return result;
    }
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  return entry(__func__, [&] {
    if (name == nullptr || len <= 0) {
      return fail(CUDA_ERROR_INVALID_VALUE, "name is NULL or len is not positive");
    }
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    const size_t length = std::strlen(hal::ptx_cpu::kDeviceName);
    const size_t copied = std::min(length, static_cast<size_t>(len) - 1);
    std::memcpy(name, hal::ptx_cpu::kDeviceName, copied);
    name[copied] = '\0';
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib,
                                                   CUdevice dev) {
  return entry(__func__, [&] {
    if (pi == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pi is NULL");
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    const int attribute = hal::ptx_cpu::as_int(attrib);
    if (!hal::ptx_cpu::attribute_value(attribute, dev, pi)) {
      return fail(CUDA_ERROR_INVALID_VALUE, "no device attribute " + std::to_string(attribute));
    }
    return CUDA_SUCCESS;
  });
}

// "hal-ptx-cpu-" followed by the ordinal: the same for the same ordinal in every process.
PTXCPU_ENTRY CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return entry(__func__, [&] {
    if (uuid == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "uuid is NULL");
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    static constexpr char kPrefix[] = HAL_PTX_CPU_UUID_PREFIX;
    std::memset(uuid->bytes, 0, sizeof(uuid->bytes));
    std::memcpy(uuid->bytes, kPrefix, sizeof(kPrefix) - 1);
    uuid->bytes[15] = static_cast<char>(dev);
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  return entry(__func__, [&] {
    if (bytes == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "bytes is NULL");
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    *bytes = static_cast<size_t>(Driver::get()->total_memory());
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  return entry(__func__, [&] {
    if (pciBusId == nullptr || len <= 0) {
      return fail(CUDA_ERROR_INVALID_VALUE, "pciBusId is NULL or len is not positive");
    }
    if (CUresult result = hal::ptx_cpu::check_device(dev); result != CUDA_SUCCESS) return result;
    std::snprintf(pciBusId, static_cast<size_t>(len), "0000:%02x:00.0",
                  hal::ptx_cpu::kPciBusBase + dev);
    return CUDA_SUCCESS;
  });
}

// Accepts "domain:bus:device.function" and "bus:device.function", in hexadecimal.
PTXCPU_ENTRY CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  return entry(__func__, [&] {
    if (dev == nullptr || pciBusId == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, "dev or pciBusId is NULL");
    }
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    char tail = 0;
    const bool full =
        std::sscanf(pciBusId, "%x:%x:%x.%x%c", &domain, &bus, &slot, &function, &tail) == 4;
    if (!full) {
      domain = 0;
      if (std::sscanf(pciBusId, "%x:%x.%x%c", &bus, &slot, &function, &tail) != 3) {
        return fail(
            CUDA_ERROR_INVALID_VALUE,
            std::string("'") + pciBusId + "' is not a PCI bus id ([domain:]bus:device.function)");
      }
    }
    const int ordinal = static_cast<int>(bus) - hal::ptx_cpu::kPciBusBase;
    if (domain != 0 || slot != 0 || function != 0 || ordinal < 0 ||
        ordinal >= Driver::get()->device_count()) {
      return fail(CUDA_ERROR_INVALID_DEVICE, std::string("no device at PCI bus id ") + pciBusId);
    }
    *dev = ordinal;
    return CUDA_SUCCESS;
  });
}
