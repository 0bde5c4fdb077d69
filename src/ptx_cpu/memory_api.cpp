// Memory: device and page-locked host allocations, memory information, pointer queries.
// See memory.h for what device memory is here.
#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/memory.h"

#include <fmt/format.h>

#include <string>

namespace hal::ptx_cpu {
namespace {

constexpr unsigned kHostAllocFlags =
    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;

CUresult host_alloc(void** pp, size_t size, unsigned flags) {
  if (pp == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pp is NULL");
  if ((flags & ~kHostAllocFlags) != 0) {
    return fail(CUDA_ERROR_INVALID_VALUE, "unknown flags " + std::to_string(flags));
  }
  Context* context = nullptr;
  if (CUresult result = current_context(&context); result != CUDA_SUCCESS) return result;
  if (size == 0) return fail(CUDA_ERROR_INVALID_VALUE, "bytesize is 0");
  if (Driver::get()->memory().allocate_host(*context, size, flags, pp) != CUDA_SUCCESS) {
    return fail(CUDA_ERROR_OUT_OF_MEMORY,
                fmt::format("the host cannot provide {} bytes of page-locked memory", size));
  }
  return CUDA_SUCCESS;
}

// Frees an allocation of |kind| whose base is |address| once no queued work can use it. In a
// faulted context the memory is freed all the same and the sticky error returned.
CUresult free_allocation(uint64_t address, RegionKind kind, const char* what) {
  Context* context = nullptr;
  if (CUresult result = current_context(&context, /*ignore_sticky=*/true); result != CUDA_SUCCESS) {
    return result;
  }
  MemoryRegistry& memory = Driver::get()->memory();
  Region region;
  if (!memory.find(address, 1, &region) || region.begin != address || region.kind != kind) {
    return fail(CUDA_ERROR_INVALID_VALUE, fmt::format("{:#x} is not the base of a live {}: {}",
                                                      address, what, memory.describe(address, 1)));
  }
  // Any context's streams may hold copies or kernels that use it (device pointers are valid
  // across contexts for copies, page-locked memory for kernels too).
  Driver::get()->wait_all_idle();
  if (!memory.free(address, kind)) {
    return fail(CUDA_ERROR_INVALID_VALUE, fmt::format("{:#x} was freed meanwhile", address));
  }
  return context->sticky_error();
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::Context;
using hal::ptx_cpu::Driver;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;
using hal::ptx_cpu::Region;
using hal::ptx_cpu::RegionKind;

// 256-byte aligned, uninitialised. A size beyond what is left of the budget is
// CUDA_ERROR_OUT_OF_MEMORY before anything is allocated.
PTXCPU_ENTRY CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
  return entry(__func__, [&] {
    if (dptr == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "dptr is NULL");
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context); result != CUDA_SUCCESS) {
      return result;
    }
    if (bytesize == 0) return fail(CUDA_ERROR_INVALID_VALUE, "bytesize is 0");
    hal::ptx_cpu::MemoryRegistry& memory = Driver::get()->memory();
    if (memory.allocate_device(*context, bytesize, dptr) != CUDA_SUCCESS) {
      return fail(CUDA_ERROR_OUT_OF_MEMORY,
                  fmt::format("{} bytes requested; {} of the devices' {} bytes are in use",
                              bytesize, memory.used(), memory.budget()));
    }
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  return entry(__func__, [&] {
    return hal::ptx_cpu::free_allocation(dptr, RegionKind::kDevice, "device allocation");
  });
}

// Free is what the shared budget has left; both count every device's allocations.
PTXCPU_ENTRY CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
  return entry(__func__, [&] {
    if (free == nullptr || total == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, "free or total is NULL");
    }
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context); result != CUDA_SUCCESS) {
      return result;
    }
    const hal::ptx_cpu::MemoryRegistry& memory = Driver::get()->memory();
    *total = static_cast<size_t>(memory.budget());
    *free = static_cast<size_t>(memory.budget() - memory.used());
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return entry(__func__, [&] { return hal::ptx_cpu::host_alloc(pp, bytesize, Flags); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemAllocHost(void** pp, size_t bytesize) {
  return entry(__func__, [&] { return hal::ptx_cpu::host_alloc(pp, bytesize, 0); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemFreeHost(void* p) {
  return entry(__func__, [&] {
    return hal::ptx_cpu::free_allocation(reinterpret_cast<uint64_t>(p), RegionKind::kHost,
                                         "page-locked host allocation");
  });
}

// Page-locked memory is addressed by kernels at its host address.
PTXCPU_ENTRY CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr* pdptr, void* p,
                                                        unsigned int Flags) {
  return entry(__func__, [&] {
    if (pdptr == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pdptr is NULL");
    if (Flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "Flags must be 0");
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context); result != CUDA_SUCCESS) {
      return result;
    }
    Region region;
    if (!Driver::get()->memory().find(reinterpret_cast<uint64_t>(p), 1, &region) ||
        region.kind != RegionKind::kHost) {
      return fail(CUDA_ERROR_INVALID_VALUE, "not page-locked memory from cuMemHostAlloc");
    }
    *pdptr = reinterpret_cast<CUdeviceptr>(p);
    return CUDA_SUCCESS;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  return entry(__func__, [&] {
    if (pFlags == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "pFlags is NULL");
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context); result != CUDA_SUCCESS) {
      return result;
    }
    Region region;
    if (!Driver::get()->memory().find(reinterpret_cast<uint64_t>(p), 1, &region) ||
        region.kind != RegionKind::kHost) {
      return fail(CUDA_ERROR_INVALID_VALUE, "not page-locked memory from cuMemHostAlloc");
    }
    *pFlags = region.host_flags;
    return CUDA_SUCCESS;
  });
}

// Either output may be NULL. An address in no allocation is CUDA_ERROR_NOT_FOUND.
PTXCPU_ENTRY CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr* pbase, size_t* psize,
                                                   CUdeviceptr dptr) {
  return entry(__func__, [&] {
    Context* context = nullptr;
    if (CUresult result = hal::ptx_cpu::current_context(&context); result != CUDA_SUCCESS) {
      return result;
    }
    Region region;
    if (!Driver::get()->memory().find(dptr, 1, &region)) {
      return fail(CUDA_ERROR_NOT_FOUND, fmt::format("{:#x} is in no allocation: {}", dptr,
                                                    Driver::get()->memory().describe(dptr, 1)));
    }
    if (pbase != nullptr) *pbase = region.begin;
    if (psize != nullptr) *psize = region.size;
    return CUDA_SUCCESS;
  });
}

// Answers CONTEXT, MEMORY_TYPE, DEVICE_POINTER, HOST_POINTER (page-locked memory only),
// BUFFER_ID, IS_MANAGED (always false), DEVICE_ORDINAL, RANGE_START_ADDR, RANGE_SIZE and MAPPED
// (always true); other attributes, and addresses in no allocation, are CUDA_ERROR_INVALID_VALUE.
PTXCPU_ENTRY CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute,
                                                    CUdeviceptr ptr) {
  return entry(__func__, [&] {
    if (data == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "data is NULL");
    if (CUresult result = hal::ptx_cpu::require_init(); result != CUDA_SUCCESS) return result;
    Region region;
    if (!Driver::get()->memory().find(ptr, 1, &region)) {
      // Not logged: asking whether an address is the driver's is a normal question.
      return CUDA_ERROR_INVALID_VALUE;
    }
    const bool host = region.kind == RegionKind::kHost;
    switch (hal::ptx_cpu::as_int(attribute)) {
      case CU_POINTER_ATTRIBUTE_CONTEXT:
        *static_cast<CUcontext*>(data) = const_cast<Context*>(region.owner)->handle();
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *static_cast<unsigned int*>(data) = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *static_cast<CUdeviceptr*>(data) = ptr;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!host) {
          return fail(CUDA_ERROR_INVALID_VALUE, "device memory has no host pointer");
        }
        *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *static_cast<unsigned long long*>(data) = region.begin;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *static_cast<bool*>(data) = false;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_MAPPED:
        *static_cast<bool*>(data) = true;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *static_cast<int*>(data) = region.device;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *static_cast<CUdeviceptr*>(data) = region.begin;
        return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *static_cast<size_t*>(data) = region.size;
        return CUDA_SUCCESS;
      default:
        return fail(CUDA_ERROR_INVALID_VALUE, "pointer attribute " +
                                                  std::to_string(hal::ptx_cpu::as_int(attribute)) +
                                                  " is not supported");
    }
  });
}
