// The CUDA driver library, opened at run time, and the table of its entry points.
//
// hal never links libcuda: a machine without the NVIDIA driver must still load libhal and use
// its other backends. Driver::open() dlopens the library, resolves cuGetProcAddress_v2 (present
// in every CUDA 12.0 and later driver) with dlsym, and then resolves every other entry point
// through cuGetProcAddress with the CUDA version pinned on its line of the table below. Pinning
// the version pins the ABI: a newer driver that adds a changed variant of a function (as
// cuCtxSynchronize gained a context argument in CUDA 13.0) still hands back the variant whose
// signature is written here.
//
// Where the library is looked for, in order:
//   HAL_CUDA_LIBRARY=/path   if set and not empty, that file only (a test double, a driver in
//                            an unusual place); no fallback, so a typo is reported, not hidden;
//   libcuda.so.1             the name the NVIDIA driver installs;
//   libcuda.so               the development symlink, where only that exists.
//
// Ownership and lifetime: a Driver is shared (std::shared_ptr) by the backend and every object
// made from it. The library is never dlclosed once cuInit has been called: the driver keeps
// process-wide state and exit handlers that must outlive hal's own static destructors.
//
// Thread-safety: the table is written once in open() and only read afterwards.
#pragma once

#include <hal/hal.h>

#include <cuda.h>

#include <memory>
#include <mutex>
#include <string>

namespace hal::cuda {

enum class Need { kRequired, kOptional };

// The single table of driver entry points: X(name, pinned CUDA version, need, parameter list).
// The version is the one whose signature the parameter list spells (see cudaTypedefs.h's
// PFN_<name>_v<version>), raised to 12000 where that is the same signature, because a driver
// may drop variants older than the ones it exports under the base name. A required entry
// missing from the driver makes the whole backend unavailable; an optional one is left null and
// its feature falls back (each use says how).
//
// Note: cuda.h #defines some base names to versioned ones (cuMemAlloc to cuMemAlloc_v2). The
// struct member is spelled the same way at its declaration and at every use, so the macro only
// renames it consistently; the name handed to cuGetProcAddress is the stringised base name,
// which the preprocessor does not expand.
#define HAL_CUDA_DRIVER_ENTRY_POINTS(X)                                                  \
  X(cuGetErrorName, 12000, kRequired, (CUresult, const char**))                          \
  X(cuGetErrorString, 12000, kRequired, (CUresult, const char**))                        \
  X(cuInit, 12000, kRequired, (unsigned int))                                            \
  X(cuDriverGetVersion, 12000, kRequired, (int*))                                        \
  X(cuDeviceGetCount, 12000, kRequired, (int*))                                          \
  X(cuDeviceGet, 12000, kRequired, (CUdevice*, int))                                     \
  X(cuDeviceGetName, 12000, kRequired, (char*, int, CUdevice))                           \
  X(cuDeviceGetAttribute, 12000, kRequired, (int*, CUdevice_attribute, CUdevice))        \
  X(cuDeviceGetUuid, 12000, kRequired, (CUuuid*, CUdevice))                              \
  X(cuDeviceTotalMem, 12000, kRequired, (size_t*, CUdevice))                             \
  X(cuDevicePrimaryCtxRetain, 12000, kRequired, (CUcontext*, CUdevice))                  \
  X(cuDevicePrimaryCtxRelease, 12000, kRequired, (CUdevice))                             \
  X(cuCtxGetCurrent, 12000, kRequired, (CUcontext*))                                     \
  X(cuCtxSetCurrent, 12000, kRequired, (CUcontext))                                      \
  X(cuCtxSynchronize, 12000, kRequired, ())                                              \
  X(cuMemAlloc, 12000, kRequired, (CUdeviceptr*, size_t))                                \
  X(cuMemFree, 12000, kRequired, (CUdeviceptr))                                          \
  X(cuMemHostAlloc, 12000, kRequired, (void**, size_t, unsigned int))                    \
  X(cuMemFreeHost, 12000, kRequired, (void*))                                            \
  X(cuMemcpyHtoDAsync, 12000, kRequired, (CUdeviceptr, const void*, size_t, CUstream))   \
  X(cuMemcpyDtoHAsync, 12000, kRequired, (void*, CUdeviceptr, size_t, CUstream))         \
  X(cuMemcpyDtoDAsync, 12000, kRequired, (CUdeviceptr, CUdeviceptr, size_t, CUstream))   \
  X(cuMemsetD8Async, 12000, kRequired, (CUdeviceptr, unsigned char, size_t, CUstream))   \
  X(cuMemsetD32Async, 12000, kRequired, (CUdeviceptr, unsigned int, size_t, CUstream))   \
  X(cuStreamCreate, 12000, kRequired, (CUstream*, unsigned int))                         \
  X(cuStreamDestroy, 12000, kRequired, (CUstream))                                       \
  X(cuStreamSynchronize, 12000, kRequired, (CUstream))                                   \
  X(cuStreamQuery, 12000, kRequired, (CUstream))                                         \
  X(cuStreamWaitEvent, 12000, kRequired, (CUstream, CUevent, unsigned int))              \
  X(cuEventCreate, 12000, kRequired, (CUevent*, unsigned int))                           \
  X(cuEventDestroy, 12000, kRequired, (CUevent))                                         \
  X(cuEventRecord, 12000, kRequired, (CUevent, CUstream))                                \
  X(cuEventSynchronize, 12000, kRequired, (CUevent))                                     \
  X(cuEventQuery, 12000, kRequired, (CUevent))                                           \
  X(cuEventElapsedTime, 12000, kRequired, (float*, CUevent, CUevent))                    \
  X(cuModuleLoadDataEx, 12000, kRequired,                                                \
    (CUmodule*, const void*, unsigned int, CUjit_option*, void**))                       \
  X(cuModuleUnload, 12000, kRequired, (CUmodule))                                        \
  X(cuModuleGetFunction, 12000, kRequired, (CUfunction*, CUmodule, const char*))         \
  X(cuFuncGetAttribute, 12000, kRequired, (int*, CUfunction_attribute, CUfunction))      \
  X(cuFuncSetAttribute, 12000, kRequired, (CUfunction, CUfunction_attribute, int))       \
  X(cuLaunchKernel, 12000, kRequired,                                                    \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,   \
     unsigned int, unsigned int, CUstream, void**, void**))                              \
  X(cuPointerGetAttribute, 12000, kOptional, (void*, CUpointer_attribute, CUdeviceptr))  \
  X(cuModuleGetFunctionCount, 12040, kOptional, (unsigned int*, CUmodule))               \
  X(cuModuleEnumerateFunctions, 12040, kOptional, (CUfunction*, unsigned int, CUmodule)) \
  X(cuFuncGetName, 12030, kOptional, (const char**, CUfunction))                         \
  X(cuFuncGetParamInfo, 12040, kOptional, (CUfunction, size_t, size_t*, size_t*))        \
  X(cuLogsCurrent, 12090, kOptional, (CUlogIterator*, unsigned int))                     \
  X(cuLogsDumpToMemory, 12090, kOptional, (CUlogIterator*, char*, size_t*, unsigned int))

// The resolved entry points, one member per line of the table, named as the function.
struct DriverApi {
#define HAL_CUDA_DECLARE_ENTRY(name, version, need, params) \
  CUresult(CUDAAPI* name) params = nullptr;
  HAL_CUDA_DRIVER_ENTRY_POINTS(HAL_CUDA_DECLARE_ENTRY)
#undef HAL_CUDA_DECLARE_ENTRY
};

// One line of the table, for tests and diagnostics.
struct EntryPointInfo {
  const char* name;
  int version;
  Need need;
};
// Every line of the table, in order; |count| receives the number of lines.
const EntryPointInfo* entry_points(size_t* count);

class Driver {
 public:
  // Opens the library, resolves the table and calls cuInit(0). On failure returns
  // hal::fail(HAL_ERROR_UNAVAILABLE, reason) with every name tried, the dlerror text, the missing
  // symbol, or cuInit's error name, and what to install or set.
  static hal_status open(std::shared_ptr<const Driver>* out);

  const DriverApi& api() const { return api_; }
  // The file that was opened, as given to dlopen.
  const std::string& library() const { return library_; }
  // cuDriverGetVersion: 1000 * major + 10 * minor.
  int version() const { return version_; }

  // cuGetErrorName of |result|, or "CUresult <n>" when the driver does not know it. Never null.
  std::string error_name(CUresult result) const;

  // What the driver wrote to its error log (CUDA 12.9's cuLogs API) since the last call, one
  // line per message, or "" when the driver has no log or wrote nothing. A kernel fault's
  // details (which kernel, where, which address) arrive this way. Thread-safe; the messages of
  // concurrent failures may land in either caller's text.
  std::string take_log() const;

 private:
  Driver() = default;
  DriverApi api_;
  std::string library_;
  int version_ = 0;
  mutable std::mutex log_mutex_;
  mutable CUlogIterator log_iterator_ = 0;
  bool has_log_ = false;
};

}  // namespace hal::cuda
