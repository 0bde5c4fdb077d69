// The CPU PTX driver as its tests see it: opened with dlopen and resolved through
// cuGetProcAddress_v2 only, exactly as hal's CUDA backend does.
//
// The library is PTX_CPU_TEST_LIBRARY (a compile definition naming the build's library), or the
// environment variable PTX_CPU_TEST_LIBRARY when set. Every entry point is resolved at CUDA
// 12.9 (the driver's version) unless a test asks for another.
#pragma once

#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#ifndef PTX_CPU_TEST_LIBRARY
#error "PTX_CPU_TEST_LIBRARY must name the driver library under test"
#endif

namespace ptx_cpu_test {

// Every entry point the tests call, as (name, version). Members are named as the functions, so
// cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2) rename them consistently.
#define PTX_CPU_TEST_ENTRY_POINTS(X) \
  X(cuInit)                          \
  X(cuDriverGetVersion)              \
  X(cuGetErrorName)                  \
  X(cuGetErrorString)                \
  X(cuDeviceGet)                     \
  X(cuDeviceGetCount)                \
  X(cuDeviceGetName)                 \
  X(cuDeviceGetAttribute)            \
  X(cuDeviceGetUuid)                 \
  X(cuDeviceTotalMem)                \
  X(cuDeviceGetPCIBusId)             \
  X(cuDeviceGetByPCIBusId)           \
  X(cuDevicePrimaryCtxRetain)        \
  X(cuDevicePrimaryCtxRelease)       \
  X(cuDevicePrimaryCtxGetState)      \
  X(cuDevicePrimaryCtxSetFlags)      \
  X(cuCtxGetCurrent)                 \
  X(cuCtxSetCurrent)                 \
  X(cuCtxPushCurrent)                \
  X(cuCtxPopCurrent)                 \
  X(cuCtxGetDevice)                  \
  X(cuCtxGetFlags)                   \
  X(cuCtxGetStreamPriorityRange)     \
  X(cuCtxSynchronize)                \
  X(cuMemAlloc)                      \
  X(cuMemFree)                       \
  X(cuMemGetInfo)                    \
  X(cuMemAllocHost)                  \
  X(cuMemHostAlloc)                  \
  X(cuMemFreeHost)                   \
  X(cuMemHostGetDevicePointer)       \
  X(cuMemHostGetFlags)               \
  X(cuMemGetAddressRange)            \
  X(cuPointerGetAttribute)           \
  X(cuMemcpy)                        \
  X(cuMemcpyAsync)                   \
  X(cuMemcpyHtoD)                    \
  X(cuMemcpyDtoH)                    \
  X(cuMemcpyDtoD)                    \
  X(cuMemcpyHtoDAsync)               \
  X(cuMemcpyDtoHAsync)               \
  X(cuMemcpyDtoDAsync)               \
  X(cuMemsetD8)                      \
  X(cuMemsetD16)                     \
  X(cuMemsetD32)                     \
  X(cuMemsetD8Async)                 \
  X(cuMemsetD16Async)                \
  X(cuMemsetD32Async)                \
  X(cuStreamCreate)                  \
  X(cuStreamCreateWithPriority)      \
  X(cuStreamDestroy)                 \
  X(cuStreamSynchronize)             \
  X(cuStreamQuery)                   \
  X(cuStreamWaitEvent)               \
  X(cuStreamGetFlags)                \
  X(cuStreamGetPriority)             \
  X(cuStreamGetDevice)               \
  X(cuStreamAddCallback)             \
  X(cuLaunchHostFunc)                \
  X(cuEventCreate)                   \
  X(cuEventDestroy)                  \
  X(cuEventRecord)                   \
  X(cuEventQuery)                    \
  X(cuEventSynchronize)              \
  X(cuEventElapsedTime)              \
  X(cuModuleLoad)                    \
  X(cuModuleLoadData)                \
  X(cuModuleLoadDataEx)              \
  X(cuModuleLoadFatBinary)           \
  X(cuModuleUnload)                  \
  X(cuModuleGetFunction)             \
  X(cuModuleGetFunctionCount)        \
  X(cuModuleEnumerateFunctions)      \
  X(cuFuncGetAttribute)              \
  X(cuFuncSetAttribute)              \
  X(cuFuncGetName)                   \
  X(cuFuncGetParamInfo)              \
  X(cuFuncGetModule)                 \
  X(cuLaunchKernel)                  \
  X(cuLaunchKernelEx)                \
  X(cuLogsRegisterCallback)          \
  X(cuLogsUnregisterCallback)        \
  X(cuLogsCurrent)                   \
  X(cuLogsDumpToFile)                \
  X(cuLogsDumpToMemory)

struct Api {
  void* library = nullptr;
  std::string path;
  decltype(&cuGetProcAddress_v2) get_proc = nullptr;
#define PTX_CPU_TEST_MEMBER(name) decltype(&::name) name = nullptr;
  PTX_CPU_TEST_ENTRY_POINTS(PTX_CPU_TEST_MEMBER)
#undef PTX_CPU_TEST_MEMBER

  // The function |name| resolves to at |version| (nullptr when it does not), with its status.
  void* resolve(const char* name, int version, CUresult* result = nullptr,
                CUdriverProcAddressQueryResult* status = nullptr) const {
    void* function = nullptr;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const CUresult r =
        get_proc(name, &function, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
    if (result != nullptr) *result = r;
    if (status != nullptr) *status = found;
    return r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS ? function : nullptr;
  }

  // The text the driver logged since |*iterator| (which advances); "" when nothing was.
  std::string logs_since(CUlogIterator* iterator) const {
    std::string text(65536, '\0');
    size_t size = text.size();
    if (cuLogsDumpToMemory(iterator, text.data(), &size, 0) != CUDA_SUCCESS) return "";
    text.resize(size);
    return text;
  }
};

inline std::string library_path() {
  const char* override_path = std::getenv("PTX_CPU_TEST_LIBRARY");
  return override_path != nullptr && *override_path != '\0' ? override_path : PTX_CPU_TEST_LIBRARY;
}

// Opens the library once per process and resolves every entry point; fails the calling test on
// any problem. Does not call cuInit.
inline const Api& api() {
  static const Api loaded = [] {
    Api a;
    a.path = library_path();
    a.library = dlopen(a.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (a.library == nullptr) {
      ADD_FAILURE() << "dlopen(" << a.path << "): " << dlerror();
      return a;
    }
    a.get_proc = reinterpret_cast<decltype(a.get_proc)>(dlsym(a.library, "cuGetProcAddress_v2"));
    if (a.get_proc == nullptr) {
      ADD_FAILURE() << a.path << " exports no cuGetProcAddress_v2";
      return a;
    }
#define PTX_CPU_TEST_RESOLVE(name)                                      \
  a.name = reinterpret_cast<decltype(a.name)>(a.resolve(#name, 12090)); \
  if (a.name == nullptr) ADD_FAILURE() << #name " does not resolve at CUDA 12.9";
    PTX_CPU_TEST_ENTRY_POINTS(PTX_CPU_TEST_RESOLVE)
#undef PTX_CPU_TEST_RESOLVE
    return a;
  }();
  return loaded;
}

// The error's name, for assertion messages.
inline std::string name_of(CUresult result) {
  const char* name = nullptr;
  if (api().cuGetErrorName != nullptr && api().cuGetErrorName(result, &name) == CUDA_SUCCESS) {
    return name;
  }
  return "CUresult " + std::to_string(static_cast<int>(result));
}

}  // namespace ptx_cpu_test

namespace ptx_cpu_test {
// Passes when |actual| is |expected|; names both on failure.
inline ::testing::AssertionResult CuIs(const char* /*expected_text*/, const char* call_text,
                                       CUresult expected, CUresult actual) {
  if (expected == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << call_text << " returned " << name_of(actual) << ", expected " << name_of(expected);
}
}  // namespace ptx_cpu_test

// Checks a CUresult, naming both values on failure; messages can be streamed in.
#define EXPECT_CU(expected, call) EXPECT_PRED_FORMAT2(::ptx_cpu_test::CuIs, expected, call)
#define ASSERT_CU(expected, call) ASSERT_PRED_FORMAT2(::ptx_cpu_test::CuIs, expected, call)
#define ASSERT_OK(call) ASSERT_CU(CUDA_SUCCESS, call)
#define EXPECT_OK(call) EXPECT_CU(CUDA_SUCCESS, call)
