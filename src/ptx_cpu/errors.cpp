// cuGetErrorName and cuGetErrorString over the one table of every CUresult that cuda.h defines.
#include "ptx_cpu/errors.h"

#include "ptx_cpu/entry.h"

#include <cstdio>

namespace hal::ptx_cpu {
namespace {

struct ErrorText {
  int result;
  const char* name;
  const char* text;
};

#define PTXCPU_ERROR(name, text) \
  { name, #name, text }
constexpr ErrorText kErrors[] = {
    PTXCPU_ERROR(CUDA_SUCCESS, "no error"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    PTXCPU_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    PTXCPU_ERROR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    PTXCPU_ERROR(CUDA_ERROR_PROFILER_DISABLED, "profiler disabled while using an external tool"),
    PTXCPU_ERROR(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized"),
    PTXCPU_ERROR(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started"),
    PTXCPU_ERROR(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped"),
    PTXCPU_ERROR(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
    PTXCPU_ERROR(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER,
                 "this call needs a newer driver than the one installed"),
    PTXCPU_ERROR(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) busy or unavailable"),
    PTXCPU_ERROR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    PTXCPU_ERROR(CUDA_ERROR_DEVICE_NOT_LICENSED, "device doesn't have valid Grid license"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    PTXCPU_ERROR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
    PTXCPU_ERROR(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
    PTXCPU_ERROR(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed"),
    PTXCPU_ERROR(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped"),
    PTXCPU_ERROR(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
    PTXCPU_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU,
                 "no kernel image is available for execution on "
                 "the device"),
    PTXCPU_ERROR(CUDA_ERROR_ALREADY_ACQUIRED, "resource already acquired"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "resource not mapped as array"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "resource not mapped as pointer"),
    PTXCPU_ERROR(CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error encountered"),
    PTXCPU_ERROR(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit is not supported on this architecture"),
    PTXCPU_ERROR(CUDA_ERROR_CONTEXT_ALREADY_IN_USE,
                 "exclusive-thread device already in use by a "
                 "different thread"),
    PTXCPU_ERROR(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
                 "peer access is not supported between these "
                 "two devices"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid OpenGL or DirectX context"),
    PTXCPU_ERROR(CUDA_ERROR_NVLINK_UNCORRECTABLE,
                 "uncorrectable NVLink error detected during the "
                 "execution"),
    PTXCPU_ERROR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found"),
    PTXCPU_ERROR(CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                 "the provided PTX was compiled with an "
                 "unsupported toolchain"),
    PTXCPU_ERROR(CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation was disabled"),
    PTXCPU_ERROR(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
                 "the provided execution affinity is not "
                 "supported by the device"),
    PTXCPU_ERROR(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC,
                 "the provided PTX contains unsupported call "
                 "to cudaDeviceSynchronize"),
    PTXCPU_ERROR(CUDA_ERROR_CONTAINED,
                 "an exception occurred on the device, contained by the "
                 "driver"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
    PTXCPU_ERROR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    PTXCPU_ERROR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found"),
    PTXCPU_ERROR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed"),
    PTXCPU_ERROR(CUDA_ERROR_OPERATING_SYSTEM,
                 "OS call failed or operation not supported on this "
                 "OS"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    PTXCPU_ERROR(CUDA_ERROR_ILLEGAL_STATE,
                 "the operation cannot be performed in the present "
                 "state"),
    PTXCPU_ERROR(CUDA_ERROR_LOSSY_QUERY, "attempted introspection would be semantically lossy"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_READY, "device not ready"),
    PTXCPU_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    PTXCPU_ERROR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    PTXCPU_ERROR(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
    PTXCPU_ERROR(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
                 "launch uses incompatible texturing "
                 "mode"),
    PTXCPU_ERROR(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
    PTXCPU_ERROR(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
    PTXCPU_ERROR(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
                 "cannot set while device is active in this "
                 "process"),
    PTXCPU_ERROR(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
    PTXCPU_ERROR(CUDA_ERROR_ASSERT, "device-side assert triggered"),
    PTXCPU_ERROR(CUDA_ERROR_TOO_MANY_PEERS, "peer mapping resources exhausted"),
    PTXCPU_ERROR(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                 "part or all of the requested memory "
                 "range is already mapped"),
    PTXCPU_ERROR(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
                 "pointer does not correspond to a "
                 "registered memory region"),
    PTXCPU_ERROR(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error"),
    PTXCPU_ERROR(CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered"),
    PTXCPU_ERROR(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_ADDRESS_SPACE,
                 "operation not supported on global/shared "
                 "address space"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_PC, "invalid program counter"),
    PTXCPU_ERROR(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    PTXCPU_ERROR(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch"),
    PTXCPU_ERROR(CUDA_ERROR_TENSOR_MEMORY_LEAK,
                 "tensor memory was not released before the "
                 "kernel exited"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    PTXCPU_ERROR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    PTXCPU_ERROR(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
    PTXCPU_ERROR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
                 "system has unsupported display driver / cuda "
                 "driver combination"),
    PTXCPU_ERROR(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
                 "forward compatibility was attempted "
                 "on non supported HW"),
    PTXCPU_ERROR(CUDA_ERROR_MPS_CONNECTION_FAILED,
                 "MPS client failed to connect to the MPS "
                 "control daemon or the MPS server"),
    PTXCPU_ERROR(CUDA_ERROR_MPS_RPC_FAILURE,
                 "the remote procedural call between the MPS server "
                 "and the MPS client failed"),
    PTXCPU_ERROR(CUDA_ERROR_MPS_SERVER_NOT_READY,
                 "MPS server is not ready to accept new MPS "
                 "client requests"),
    PTXCPU_ERROR(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED,
                 "the hardware resources required to create "
                 "MPS client have been exhausted"),
    PTXCPU_ERROR(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED,
                 "the hardware resources required to "
                 "support device connections have been "
                 "exhausted"),
    PTXCPU_ERROR(CUDA_ERROR_MPS_CLIENT_TERMINATED,
                 "the MPS client has been terminated by the "
                 "server"),
    PTXCPU_ERROR(CUDA_ERROR_CDP_NOT_SUPPORTED,
                 "the module uses CUDA Dynamic Parallelism, which "
                 "this device does not support"),
    PTXCPU_ERROR(CUDA_ERROR_CDP_VERSION_MISMATCH,
                 "the module uses a CUDA Dynamic Parallelism "
                 "version this driver does not support"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                 "operation not permitted when stream is "
                 "capturing"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                 "operation failed due to a previous error "
                 "during capture"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_MERGE,
                 "operation would result in a merge of separate "
                 "capture sequences"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                 "capture was not ended in the same stream as "
                 "it began"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
                 "dependency created on uncaptured work in "
                 "another stream"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                 "operation would make the legacy stream "
                 "depend on a capturing blocking stream"),
    PTXCPU_ERROR(CUDA_ERROR_CAPTURED_EVENT,
                 "operation not permitted on an event last recorded "
                 "in a capturing stream"),
    PTXCPU_ERROR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
                 "attempt to terminate a thread-local "
                 "capture sequence from another thread"),
    PTXCPU_ERROR(CUDA_ERROR_TIMEOUT, "wait operation timed out"),
    PTXCPU_ERROR(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
                 "the graph update was not performed "
                 "because it included changes which "
                 "violated constraints specific to "
                 "instantiated graph update"),
    PTXCPU_ERROR(CUDA_ERROR_EXTERNAL_DEVICE,
                 "an async error has occurred in an external entity "
                 "outside of CUDA"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_CLUSTER_SIZE,
                 "a kernel launch error has occurred due to "
                 "cluster misconfiguration"),
    PTXCPU_ERROR(CUDA_ERROR_FUNCTION_NOT_LOADED,
                 "the function handle is not loaded when calling "
                 "an API that requires a loaded function"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_RESOURCE_TYPE,
                 "one or more resources passed in are not valid "
                 "resource types for the operation"),
    PTXCPU_ERROR(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                 "one or more resources are "
                 "insufficient or non-applicable for "
                 "the operation"),
    PTXCPU_ERROR(CUDA_ERROR_KEY_ROTATION, "an error happened during the key rotation sequence"),
    PTXCPU_ERROR(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef PTXCPU_ERROR

const ErrorText* find(int result) {
  for (const ErrorText& entry : kErrors) {
    if (entry.result == result) return &entry;
  }
  return nullptr;
}

}  // namespace

const char* error_name(int result) {
  const ErrorText* entry = find(result);
  return entry != nullptr ? entry->name : nullptr;
}

const char* error_string(int result) {
  const ErrorText* entry = find(result);
  return entry != nullptr ? entry->text : nullptr;
}

const char* error_name_or_number(CUresult result) {
  if (const char* name = error_name(as_int(result))) return name;
  thread_local char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "CUresult %d", as_int(result));
  return buffer;
}

}  // namespace hal::ptx_cpu

using hal::ptx_cpu::entry;

// Both need no initialisation, as in the real driver: a program reports cuInit's own failure
// with them. An unknown value is CUDA_ERROR_INVALID_VALUE with *pStr set to NULL.
PTXCPU_ENTRY CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  return entry(__func__, [&] {
    if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = hal::ptx_cpu::error_name(hal::ptx_cpu::as_int(error));
    return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

PTXCPU_ENTRY CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
  return entry(__func__, [&] {
    if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = hal::ptx_cpu::error_string(hal::ptx_cpu::as_int(error));
    return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}
