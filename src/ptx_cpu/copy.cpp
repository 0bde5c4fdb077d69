// Copies and memsets, synchronous and stream-ordered.
//
// Semantics, as CUDA's for the same calls:
//  - device ranges must lie inside one live allocation (device memory of any device, page-locked
//    host memory or module variables), else CUDA_ERROR_INVALID_VALUE naming the nearest one;
//  - an asynchronous copy from pageable host memory takes its copy of the source before it
//    returns; from page-locked memory it reads the source when it runs;
//  - an asynchronous copy to pageable host memory returns only once the copy has completed;
//  - the synchronous forms run on the legacy stream and return once they have completed;
//  - a size or count of 0 does nothing and succeeds.
// A copy or memset that would run at once on its stream and that the caller waits for (or a copy
// whose pageable source it reads first) runs on the calling thread (Context::run_inline).
#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/memory.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace hal::ptx_cpu {
namespace {

// What a side of a copy may be.
enum class Side {
  kDevice,  // must be inside one allocation
  kHost,    // any host memory; page-locked memory is read or written when the copy runs
  kAny,     // cuMemcpy: inside an allocation (then wholly), or pageable host memory
};

struct Resolved {
  bool stable = false;  // registered memory: may be used after the call returns
};

CUresult resolve(uint64_t address, size_t size, Side side, const char* which, Resolved* out) {
  const MemoryRegistry& memory = Driver::get()->memory();
  Region region;
  switch (side) {
    case Side::kDevice:
      if (!memory.find(address, size, &region)) {
        return fail(CUDA_ERROR_INVALID_VALUE,
                    fmt::format("the {} range [{:#x}, {:#x}) is not inside one allocation: {}",
                                which, address, address + size, memory.describe(address, size)));
      }
      out->stable = true;
      return CUDA_SUCCESS;
    case Side::kHost:
      if (address == 0) return fail(CUDA_ERROR_INVALID_VALUE, fmt::format("{} is NULL", which));
      out->stable = memory.find(address, size, &region);
      return CUDA_SUCCESS;
    case Side::kAny:
      if (address == 0) return fail(CUDA_ERROR_INVALID_VALUE, fmt::format("{} is NULL", which));
      if (memory.find(address, 1, &region)) {
        if (!memory.find(address, size, &region)) {
          return fail(CUDA_ERROR_INVALID_VALUE,
                      fmt::format("the {} range [{:#x}, {:#x}) {}", which, address, address + size,
                                  memory.describe(address, size)));
        }
        out->stable = true;
      }
      return CUDA_SUCCESS;
  }
  return CUDA_ERROR_UNKNOWN;
}

// The context and stream an operation is issued on: |handle| for the asynchronous forms, the
// legacy stream for the synchronous ones.
CUresult issue(CUstream handle, Context** context, std::shared_ptr<Stream>* stream) {
  if (CUresult result = current_context(context); result != CUDA_SUCCESS) return result;
  return (*context)->resolve_stream(handle, stream);
}

CUresult copy(uint64_t dst, Side dst_side, uint64_t src, Side src_side, size_t size,
              CUstream handle, bool async) {
  Context* context = nullptr;
  std::shared_ptr<Stream> stream;
  if (CUresult result = issue(async ? handle : nullptr, &context, &stream);
      result != CUDA_SUCCESS) {
    return result;
  }
  if (size == 0) return CUDA_SUCCESS;
  Resolved to;
  Resolved from;
  if (CUresult result = resolve(dst, size, dst_side, "destination", &to); result != CUDA_SUCCESS) {
    return result;
  }
  if (CUresult result = resolve(src, size, src_side, "source", &from); result != CUDA_SUCCESS) {
    return result;
  }
  const bool wait = !async || !to.stable;
  const auto direct = [dst, src, size](CUresult status) {
    if (status == CUDA_SUCCESS) {
      std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), size);
    }
  };
  // A copy the caller waits for, or whose pageable source it must read before returning, costs
  // the caller a full pass over the data anyway: on an idle stream it makes that pass itself,
  // straight into the destination, without a hand-off to the worker or a staging copy.
  if ((wait || !from.stable) && context->run_inline(*stream, direct)) {
    return wait ? context->sticky_error() : CUDA_SUCCESS;
  }
  Work work;
  if (!wait && !from.stable) {
    // The caller may reuse pageable memory as soon as this returns: copy it now, into a buffer
    // the copy then overwrites entirely (so it is not zeroed first).
    std::shared_ptr<unsigned char[]> staging(new unsigned char[size]);
    std::memcpy(staging.get(), reinterpret_cast<const void*>(src), size);
    work = [dst, staging, size](CUresult status) {
      if (status == CUDA_SUCCESS) std::memcpy(reinterpret_cast<void*>(dst), staging.get(), size);
    };
  } else {
    work = direct;
  }
  const uint64_t sequence = context->enqueue(*stream, {}, std::move(work));
  if (!wait) return CUDA_SUCCESS;
  stream->wait(sequence);
  return context->sticky_error();
}

template <typename T>
CUresult fill(CUdeviceptr dst, T value, size_t count, CUstream handle, bool async) {
  Context* context = nullptr;
  std::shared_ptr<Stream> stream;
  if (CUresult result = issue(async ? handle : nullptr, &context, &stream);
      result != CUDA_SUCCESS) {
    return result;
  }
  if (count == 0) return CUDA_SUCCESS;
  if (dst % sizeof(T) != 0) {
    return fail(
        CUDA_ERROR_INVALID_VALUE,
        fmt::format("dstDevice {:#x} is not aligned to the {}-byte elements", dst, sizeof(T)));
  }
  if (count > SIZE_MAX / sizeof(T)) return fail(CUDA_ERROR_INVALID_VALUE, "N is too large");
  Resolved to;
  if (CUresult result = resolve(dst, count * sizeof(T), Side::kDevice, "destination", &to);
      result != CUDA_SUCCESS) {
    return result;
  }
  const auto work = [dst, value, count](CUresult status) {
    if (status != CUDA_SUCCESS) return;
    if constexpr (sizeof(T) == 1) {
      std::memset(reinterpret_cast<void*>(dst), value, count);
    } else {
      T* out = reinterpret_cast<T*>(dst);
      for (size_t i = 0; i < count; ++i) out[i] = value;
    }
  };
  if (!async && context->run_inline(*stream, work)) return context->sticky_error();
  const uint64_t sequence = context->enqueue(*stream, {}, work);
  if (async) return CUDA_SUCCESS;
  stream->wait(sequence);
  return context->sticky_error();
}

uint64_t address(const void* pointer) {
  return reinterpret_cast<uint64_t>(pointer);
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::address;
using hal::ptx_cpu::copy;
using hal::ptx_cpu::entry;
using hal::ptx_cpu::fill;
using hal::ptx_cpu::Side;

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void* srcHost,
                                           size_t ByteCount) {
  return entry(__func__, [&] {
    return copy(dstDevice, Side::kDevice, address(srcHost), Side::kHost, ByteCount, nullptr, false);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpyDtoH(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return entry(__func__, [&] {
    return copy(address(dstHost), Side::kHost, srcDevice, Side::kDevice, ByteCount, nullptr, false);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                           size_t ByteCount) {
  return entry(__func__, [&] {
    return copy(dstDevice, Side::kDevice, srcDevice, Side::kDevice, ByteCount, nullptr, false);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return entry(__func__,
               [&] { return copy(dst, Side::kAny, src, Side::kAny, ByteCount, nullptr, false); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void* srcHost,
                                                size_t ByteCount, CUstream hStream) {
  return entry(__func__, [&] {
    return copy(dstDevice, Side::kDevice, address(srcHost), Side::kHost, ByteCount, hStream, true);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpyDtoHAsync(void* dstHost, CUdeviceptr srcDevice,
                                                size_t ByteCount, CUstream hStream) {
  return entry(__func__, [&] {
    return copy(address(dstHost), Side::kHost, srcDevice, Side::kDevice, ByteCount, hStream, true);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                size_t ByteCount, CUstream hStream) {
  return entry(__func__, [&] {
    return copy(dstDevice, Side::kDevice, srcDevice, Side::kDevice, ByteCount, hStream, true);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                            CUstream hStream) {
  return entry(__func__,
               [&] { return copy(dst, Side::kAny, src, Side::kAny, ByteCount, hStream, true); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return entry(__func__, [&] { return fill(dstDevice, uc, N, nullptr, false); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return entry(__func__, [&] { return fill(dstDevice, us, N, nullptr, false); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return entry(__func__, [&] { return fill(dstDevice, ui, N, nullptr, false); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                              CUstream hStream) {
  return entry(__func__, [&] { return fill(dstDevice, uc, N, hStream, true); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
                                               CUstream hStream) {
  return entry(__func__, [&] { return fill(dstDevice, us, N, hStream, true); });
}

PTXCPU_ENTRY CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                               CUstream hStream) {
  return entry(__func__, [&] { return fill(dstDevice, ui, N, hStream, true); });
}
