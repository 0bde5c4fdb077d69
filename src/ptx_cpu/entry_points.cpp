// The one table of the driver's entry points, and cuGetProcAddress, which serves it.
//
// A row is (base name, CUDA version, function): the function is the variant of that entry point
// whose ABI CUDA introduced in that version (cudaTypedefs.h's PFN_<name>_v<version>), exported
// under the name cuda.h's macros give it (cuMemAlloc_v2 for cuMemAlloc). A row without a function
// names a newer variant this driver does not implement: asking for it must not hand out an older
// one with another signature. cuGetProcAddress answers with the newest row not newer than the
// version asked for; an entry point absent from the table is not implemented at all.
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"

#include <cstring>
#include <string>

namespace hal::ptx_cpu {
namespace {

struct Row {
  const char* name;
  int version;
  void* function;  // nullptr: a variant this driver does not implement
};

}  // namespace
}  // namespace hal::ptx_cpu

// CUDA 11.3's cuGetProcAddress, without the status argument; cuda.h now names only the
// CUDA 12.0 one (as cuGetProcAddress_v2, through its macro).
#undef cuGetProcAddress
PTXCPU_ENTRY CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                               cuuint64_t flags);

namespace hal::ptx_cpu {
namespace {

#define PTXCPU_ROW(name, version) \
  { #name, version, reinterpret_cast < void*>(&name) }
#define PTXCPU_ROW_FUNCTION(name, version, function) \
  { #name, version, reinterpret_cast < void*>(&function) }
#define PTXCPU_NOT_IMPLEMENTED(name, version) \
  { #name, version, nullptr }

const Row kRows[] = {
    // Initialisation, versions, errors, entry points.
    PTXCPU_ROW(cuInit, 2000),
    PTXCPU_ROW(cuDriverGetVersion, 2020),
    PTXCPU_ROW(cuGetErrorName, 6000),
    PTXCPU_ROW(cuGetErrorString, 6000),
    PTXCPU_ROW_FUNCTION(cuGetProcAddress, 11030, cuGetProcAddress),
    PTXCPU_ROW_FUNCTION(cuGetProcAddress, 12000, cuGetProcAddress_v2),
    // Devices.
    PTXCPU_ROW(cuDeviceGet, 2000),
    PTXCPU_ROW(cuDeviceGetCount, 2000),
    PTXCPU_ROW(cuDeviceGetName, 2000),
    PTXCPU_ROW(cuDeviceGetAttribute, 2000),
    PTXCPU_ROW(cuDeviceGetUuid, 9020),
    PTXCPU_ROW(cuDeviceGetUuid, 11040),
    PTXCPU_ROW(cuDeviceTotalMem, 3020),
    PTXCPU_ROW(cuDeviceGetPCIBusId, 4010),
    PTXCPU_ROW(cuDeviceGetByPCIBusId, 4010),
    // Primary contexts (the CUDA 11.0 variants) and the current context.
    PTXCPU_ROW(cuDevicePrimaryCtxRetain, 7000),
    PTXCPU_ROW(cuDevicePrimaryCtxRelease, 11000),
    PTXCPU_ROW(cuDevicePrimaryCtxGetState, 7000),
    PTXCPU_ROW(cuDevicePrimaryCtxSetFlags, 11000),
    PTXCPU_ROW(cuCtxGetCurrent, 4000),
    PTXCPU_ROW(cuCtxSetCurrent, 4000),
    PTXCPU_ROW(cuCtxPushCurrent, 4000),
    PTXCPU_ROW(cuCtxPopCurrent, 4000),
    PTXCPU_ROW(cuCtxGetDevice, 2000),
    PTXCPU_ROW_FUNCTION(cuCtxGetDevice, 13000, cuCtxGetDevice_v2),
    PTXCPU_ROW(cuCtxGetFlags, 7000),
    PTXCPU_ROW(cuCtxGetStreamPriorityRange, 5050),
    PTXCPU_ROW(cuCtxSynchronize, 2000),
    PTXCPU_ROW_FUNCTION(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
    // Memory.
    PTXCPU_ROW(cuMemAlloc, 3020),
    PTXCPU_ROW(cuMemFree, 3020),
    PTXCPU_ROW(cuMemGetInfo, 3020),
    PTXCPU_ROW(cuMemAllocHost, 3020),
    PTXCPU_ROW(cuMemHostAlloc, 2020),
    PTXCPU_ROW(cuMemFreeHost, 2000),
    PTXCPU_ROW(cuMemHostGetDevicePointer, 3020),
    PTXCPU_ROW(cuMemHostGetFlags, 2030),
    PTXCPU_ROW(cuMemGetAddressRange, 3020),
    PTXCPU_ROW(cuPointerGetAttribute, 4000),
    // Copies and memsets.
    PTXCPU_ROW(cuMemcpy, 4000),
    PTXCPU_ROW(cuMemcpyAsync, 4000),
    PTXCPU_ROW(cuMemcpyHtoD, 3020),
    PTXCPU_ROW(cuMemcpyDtoH, 3020),
    PTXCPU_ROW(cuMemcpyDtoD, 3020),
    PTXCPU_ROW(cuMemcpyHtoDAsync, 3020),
    PTXCPU_ROW(cuMemcpyDtoHAsync, 3020),
    PTXCPU_ROW(cuMemcpyDtoDAsync, 3020),
    PTXCPU_ROW(cuMemsetD8, 3020),
    PTXCPU_ROW(cuMemsetD16, 3020),
    PTXCPU_ROW(cuMemsetD32, 3020),
    PTXCPU_ROW(cuMemsetD8Async, 3020),
    PTXCPU_ROW(cuMemsetD16Async, 3020),
    PTXCPU_ROW(cuMemsetD32Async, 3020),
    // Streams.
    PTXCPU_ROW(cuStreamCreate, 2000),
    PTXCPU_ROW(cuStreamCreateWithPriority, 5050),
    PTXCPU_ROW(cuStreamDestroy, 4000),
    PTXCPU_ROW(cuStreamSynchronize, 2000),
    PTXCPU_ROW(cuStreamQuery, 2000),
    PTXCPU_ROW(cuStreamWaitEvent, 3020),
    PTXCPU_ROW(cuStreamGetFlags, 5050),
    PTXCPU_ROW(cuStreamGetPriority, 5050),
    PTXCPU_ROW(cuStreamGetCtx, 9020),
    PTXCPU_NOT_IMPLEMENTED(cuStreamGetCtx, 12050),  // with a green context: none here
    PTXCPU_ROW(cuStreamGetDevice, 12080),
    PTXCPU_ROW(cuStreamAddCallback, 5000),
    PTXCPU_ROW(cuLaunchHostFunc, 10000),
    // Events.
    PTXCPU_ROW(cuEventCreate, 2000),
    PTXCPU_ROW(cuEventDestroy, 4000),
    PTXCPU_ROW(cuEventRecord, 2000),
    PTXCPU_ROW(cuEventQuery, 2000),
    PTXCPU_ROW(cuEventSynchronize, 2000),
    PTXCPU_ROW(cuEventElapsedTime, 2000),
    PTXCPU_ROW(cuEventElapsedTime, 12080),
    // Modules and functions.
    PTXCPU_ROW(cuModuleLoad, 2000),
    PTXCPU_ROW(cuModuleLoadData, 2000),
    PTXCPU_ROW(cuModuleLoadDataEx, 2010),
    PTXCPU_ROW(cuModuleLoadFatBinary, 2000),
    PTXCPU_ROW(cuModuleUnload, 2000),
    PTXCPU_ROW(cuModuleGetFunction, 2000),
    PTXCPU_ROW(cuModuleGetFunctionCount, 12040),
    PTXCPU_ROW(cuModuleEnumerateFunctions, 12040),
    PTXCPU_ROW(cuFuncGetAttribute, 2020),
    PTXCPU_ROW(cuFuncSetAttribute, 9000),
    PTXCPU_ROW(cuFuncGetName, 12030),
    PTXCPU_ROW(cuFuncGetParamInfo, 12040),
    PTXCPU_ROW(cuFuncGetModule, 11000),
    // Launches.
    PTXCPU_ROW(cuLaunchKernel, 4000),
    PTXCPU_ROW(cuLaunchKernelEx, 11060),
    // The error log.
    PTXCPU_ROW(cuLogsRegisterCallback, 12090),
    PTXCPU_ROW(cuLogsUnregisterCallback, 12090),
    PTXCPU_ROW(cuLogsCurrent, 12090),
    PTXCPU_ROW(cuLogsDumpToFile, 12090),
    PTXCPU_ROW(cuLogsDumpToMemory, 12090),
};

#undef PTXCPU_ROW
#undef PTXCPU_ROW_FUNCTION
#undef PTXCPU_NOT_IMPLEMENTED

// Per-thread default stream variants (the _ptds/_ptsz functions) do not exist here. The CUDA
// documentation lets a driver answer a CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM request
// with the legacy variant then, so both flags are served from the same rows.
constexpr cuuint64_t kKnownFlags =
    CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

CUresult get_proc_address(const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) {
    return fail(CUDA_ERROR_INVALID_VALUE, "symbol or pfn is NULL");
  }
  *pfn = nullptr;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if ((flags & ~kKnownFlags) != 0) {
    return fail(CUDA_ERROR_INVALID_VALUE, "unknown flags " + std::to_string(flags));
  }
  if (version > kDriverVersion) {
    return fail(CUDA_ERROR_INVALID_VALUE, "CUDA version " + std::to_string(version) +
                                              " is newer than this driver's (" +
                                              std::to_string(kDriverVersion) + ")");
  }
  const Row* best = nullptr;
  bool known = false;
  for (const Row& row : kRows) {
    if (std::strcmp(row.name, symbol) != 0) continue;
    known = true;
    if (row.version <= version && (best == nullptr || row.version > best->version)) best = &row;
  }
  // Not logged: probing for entry points is how programs learn what a driver has.
  if (best == nullptr || best->function == nullptr) {
    if (status != nullptr && known && best == nullptr) {
      *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    }
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = best->function;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace hal::ptx_cpu

// Needs no cuInit: it is how a program finds cuInit.
PTXCPU_ENTRY CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                                  cuuint64_t flags,
                                                  CUdriverProcAddressQueryResult* symbolStatus) {
  return hal::ptx_cpu::entry(__func__, [&] {
    return hal::ptx_cpu::get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                               cuuint64_t flags) {
  return hal::ptx_cpu::entry(__func__, [&] {
    return hal::ptx_cpu::get_proc_address(symbol, pfn, cudaVersion, flags, nullptr);
  });
}
