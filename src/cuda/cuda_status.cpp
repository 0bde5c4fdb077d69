#include "cuda/cuda_status.h"

#include "common/error.h"
#include "cuda/cuda_driver.h"

#include <string>

namespace hal::cuda {
namespace {

constexpr bool kPoisons = true;
constexpr bool kRecoverable = false;

#define HAL_CUDA_ERROR(result, status, poisons, hint) \
  { result, #result, status, poisons, hint }

constexpr const char* kRestart =
    "The CUDA context is unusable after this error: restart the process. Run the kernel under "
    "compute-sanitizer to find the fault";

// The single table of CUresult to hal_status.
constexpr ErrorMapping kErrors[] = {
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_VALUE, HAL_ERROR_INVALID_ARGUMENT, kRecoverable,
                   "The driver rejected an argument that hal had accepted"),
    HAL_CUDA_ERROR(CUDA_ERROR_OUT_OF_MEMORY, HAL_ERROR_OUT_OF_MEMORY, kRecoverable,
                   "Free device memory or use smaller allocations"),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_INITIALIZED, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The CUDA driver is not initialised"),
    HAL_CUDA_ERROR(CUDA_ERROR_DEINITIALIZED, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The CUDA driver is shutting down (the process is exiting)"),
    HAL_CUDA_ERROR(CUDA_ERROR_PROFILER_DISABLED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_PROFILER_NOT_INITIALIZED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_PROFILER_ALREADY_STARTED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_PROFILER_ALREADY_STOPPED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STUB_LIBRARY, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The libcuda that was loaded is the CUDA toolkit's link stub, not the driver: "
                   "remove the toolkit's stubs directory from the library path or set "
                   "HAL_CUDA_LIBRARY to the driver's libcuda.so.1"),
    HAL_CUDA_ERROR(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, HAL_ERROR_NOT_SUPPORTED, kRecoverable,
                   "Update the NVIDIA driver"),
    HAL_CUDA_ERROR(CUDA_ERROR_DEVICE_UNAVAILABLE, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The GPU is busy or in exclusive-process mode (see nvidia-smi -q)"),
    HAL_CUDA_ERROR(CUDA_ERROR_NO_DEVICE, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "No NVIDIA GPU is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES"),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_DEVICE, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_DEVICE_NOT_LICENSED, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The GPU needs a license for this use"),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_IMAGE, HAL_ERROR_INVALID_IR, kRecoverable,
                   "The cubin or fatbin is malformed or built for another CUDA version"),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_CONTEXT, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_MAP_FAILED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_UNMAP_FAILED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_ARRAY_IS_MAPPED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_ALREADY_MAPPED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU, HAL_ERROR_COMPILE_FAILED, kRecoverable,
                   "The binary has no code for this GPU's architecture: rebuild it for this "
                   "compute capability or include PTX"),
    HAL_CUDA_ERROR(CUDA_ERROR_ALREADY_ACQUIRED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_MAPPED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_MAPPED_AS_POINTER, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_ECC_UNCORRECTABLE, HAL_ERROR_DEVICE_LOST, kPoisons,
                   "An uncorrectable ECC error occurred: check the GPU with nvidia-smi"),
    HAL_CUDA_ERROR(CUDA_ERROR_UNSUPPORTED_LIMIT, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_PTX, HAL_ERROR_COMPILE_FAILED, kRecoverable,
                   "The driver's PTX compiler rejected the module; its log is above"),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NVLINK_UNCORRECTABLE, HAL_ERROR_DEVICE_LOST, kPoisons,
                   "An uncorrectable NVLink error occurred"),
    HAL_CUDA_ERROR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, HAL_ERROR_COMPILE_FAILED, kRecoverable,
                   "The driver's PTX compiler library (libnvidia-ptxjitcompiler) is missing: "
                   "reinstall the NVIDIA driver, or load a cubin instead"),
    HAL_CUDA_ERROR(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, HAL_ERROR_COMPILE_FAILED, kRecoverable,
                   "The PTX is newer than this driver understands: update the driver or "
                   "generate PTX with an older CUDA toolkit"),
    HAL_CUDA_ERROR(CUDA_ERROR_JIT_COMPILATION_DISABLED, HAL_ERROR_COMPILE_FAILED, kRecoverable,
                   "PTX compilation is disabled (CUDA_DISABLE_PTX_JIT?): load a cubin instead"),
    HAL_CUDA_ERROR(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, HAL_ERROR_COMPILE_FAILED, kRecoverable,
                   "The module calls cudaDeviceSynchronize from device code, which this "
                   "driver does not support"),
    HAL_CUDA_ERROR(CUDA_ERROR_CONTAINED, HAL_ERROR_DEVICE_LOST, kPoisons,
                   "The GPU contained a hardware error: restart the process"),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_SOURCE, HAL_ERROR_INVALID_IR, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_FILE_NOT_FOUND, HAL_ERROR_NOT_FOUND, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, HAL_ERROR_NOT_FOUND, kRecoverable,
                   ""),
    HAL_CUDA_ERROR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_OPERATING_SYSTEM, HAL_ERROR_INTERNAL, kRecoverable,
                   "An operating system call made by the driver failed"),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_HANDLE, HAL_ERROR_INVALID_HANDLE, kRecoverable,
                   "The driver did not recognise one of its own objects"),
    HAL_CUDA_ERROR(CUDA_ERROR_ILLEGAL_STATE, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_LOSSY_QUERY, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_FOUND, HAL_ERROR_NOT_FOUND, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_READY, HAL_ERROR_NOT_READY, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, HAL_ERROR_LAUNCH_FAILED, kRecoverable,
                   "The kernel needs more registers or resources than this block size allows: "
                   "launch smaller blocks"),
    HAL_CUDA_ERROR(CUDA_ERROR_LAUNCH_TIMEOUT, HAL_ERROR_LAUNCH_FAILED, kPoisons,
                   "The kernel ran longer than the display watchdog allows; restart the process"),
    HAL_CUDA_ERROR(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, HAL_ERROR_LAUNCH_FAILED, kRecoverable,
                   ""),
    HAL_CUDA_ERROR(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_CONTEXT_IS_DESTROYED, HAL_ERROR_DEVICE_LOST, kPoisons,
                   "The CUDA context was destroyed (by another library in this process?)"),
    HAL_CUDA_ERROR(CUDA_ERROR_ASSERT, HAL_ERROR_LAUNCH_FAILED, kPoisons,
                   "A device-side assert failed; restart the process"),
    HAL_CUDA_ERROR(CUDA_ERROR_TOO_MANY_PEERS, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_HARDWARE_STACK_ERROR, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_ILLEGAL_INSTRUCTION, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_MISALIGNED_ADDRESS, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_ADDRESS_SPACE, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_PC, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_LAUNCH_FAILED, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, HAL_ERROR_LAUNCH_FAILED, kRecoverable,
                   "Too many blocks for a cooperative launch"),
    HAL_CUDA_ERROR(CUDA_ERROR_TENSOR_MEMORY_LEAK, HAL_ERROR_LAUNCH_FAILED, kPoisons,
                   "A kernel exited without releasing its tensor memory; restart the process"),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_PERMITTED, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_NOT_SUPPORTED, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_SYSTEM_NOT_READY, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The system is not ready (is nvidia-fabricmanager running?)"),
    HAL_CUDA_ERROR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The user-mode driver and the kernel module differ in version: reinstall "
                   "the NVIDIA driver or reboot"),
    HAL_CUDA_ERROR(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "The CUDA forward-compatibility driver does not support this GPU"),
    HAL_CUDA_ERROR(CUDA_ERROR_MPS_CONNECTION_FAILED, HAL_ERROR_UNAVAILABLE, kRecoverable,
                   "Cannot reach the MPS server"),
    HAL_CUDA_ERROR(CUDA_ERROR_MPS_RPC_FAILURE, HAL_ERROR_UNAVAILABLE, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_MPS_SERVER_NOT_READY, HAL_ERROR_UNAVAILABLE, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, HAL_ERROR_UNAVAILABLE, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, HAL_ERROR_UNAVAILABLE, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_MPS_CLIENT_TERMINATED, HAL_ERROR_DEVICE_LOST, kPoisons,
                   "The MPS server terminated this client"),
    HAL_CUDA_ERROR(CUDA_ERROR_CDP_NOT_SUPPORTED, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_CDP_VERSION_MISMATCH, HAL_ERROR_NOT_SUPPORTED, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_MERGE, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_CAPTURED_EVENT, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_TIMEOUT, HAL_ERROR_TIMEOUT, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_EXTERNAL_DEVICE, HAL_ERROR_LAUNCH_FAILED, kPoisons, kRestart),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_CLUSTER_SIZE, HAL_ERROR_LAUNCH_FAILED, kRecoverable,
                   "The kernel's cluster size does not fit the launch"),
    HAL_CUDA_ERROR(CUDA_ERROR_FUNCTION_NOT_LOADED, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_RESOURCE_TYPE, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, HAL_ERROR_INTERNAL, kRecoverable, ""),
    HAL_CUDA_ERROR(CUDA_ERROR_KEY_ROTATION, HAL_ERROR_DEVICE_LOST, kPoisons,
                   "The GPU's encryption key rotation failed; restart the process"),
    HAL_CUDA_ERROR(CUDA_ERROR_UNKNOWN, HAL_ERROR_INTERNAL, kRecoverable,
                   "The driver reported an unknown error"),
};

#undef HAL_CUDA_ERROR

const ErrorMapping* find(CUresult result) {
  for (const ErrorMapping& entry : kErrors) {
    if (entry.result == result) return &entry;
  }
  return nullptr;
}

// The hint for a line of the table that has none of its own: what its status means to a user.
const char* status_hint(hal_status status) {
  switch (status) {
    case HAL_ERROR_INVALID_ARGUMENT:
      return "The driver rejected an argument that hal had accepted";
    case HAL_ERROR_INVALID_HANDLE:
      return "The driver did not recognise one of its own objects";
    case HAL_ERROR_NOT_FOUND:
      return "The driver could not find what was named";
    case HAL_ERROR_NOT_SUPPORTED:
      return "This GPU or driver does not support the operation";
    case HAL_ERROR_UNAVAILABLE:
      return "The CUDA driver cannot be used right now: check nvidia-smi";
    case HAL_ERROR_INVALID_IR:
      return "The driver could not read the module";
    case HAL_ERROR_COMPILE_FAILED:
      return "The driver could not build the module for this GPU";
    case HAL_ERROR_LAUNCH_FAILED:
      return "The kernel could not be launched or did not complete";
    case HAL_ERROR_DEVICE_LOST:
      return "The GPU is unusable in this process: restart it";
    default:
      return "hal does not expect this result from the driver here: please report it with this "
             "message";
  }
}

}  // namespace

const ErrorMapping* error_table(size_t* count) {
  *count = sizeof(kErrors) / sizeof(kErrors[0]);
  return kErrors;
}

hal_status status_for(CUresult result) {
  if (result == CUDA_SUCCESS) return HAL_SUCCESS;
  const ErrorMapping* entry = find(result);
  return entry != nullptr ? entry->status : HAL_ERROR_INTERNAL;
}

bool poisons_context(CUresult result) {
  const ErrorMapping* entry = find(result);
  return entry != nullptr && entry->poisons_context;
}

const char* error_hint(CUresult result) {
  const ErrorMapping* entry = find(result);
  if (entry == nullptr) return "The driver returned a result hal does not know; update hal";
  return entry->hint[0] != '\0' ? entry->hint : status_hint(entry->status);
}

const char* table_error_name(CUresult result) {
  const ErrorMapping* entry = find(result);
  return entry != nullptr ? entry->name : nullptr;
}

hal_status fail_result(const Driver& driver, CUresult result, std::string_view what,
                       std::string_view detail) {
  std::string message(what);
  message += " failed (";
  message += driver.error_name(result);
  message += ")";
  if (!detail.empty()) {
    message += ". ";
    message += detail;
  }
  // The driver's own account of the failure (a kernel fault names the kernel, the instruction,
  // the thread and the address), unless the caller's detail already carries it (a JIT log).
  const std::string driver_log = driver.take_log();
  if (!driver_log.empty() && detail.find(driver_log) == std::string_view::npos) {
    message += ". Driver log: ";
    message += driver_log;
  }
  const std::string_view hint = error_hint(result);
  if (!hint.empty()) {
    message += ". ";
    message += hint;
  }
  return fail(status_for(result), std::move(message));
}

}  // namespace hal::cuda
