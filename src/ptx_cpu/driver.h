// libhal_ptx_cpu.so: a CUDA driver library (libcuda) whose devices run PTX on the host CPU.
//
// What it is. A program written against the CUDA driver API, hal's CUDA backend first among
// them, loads this library in place of libcuda.so.1 (hal: HAL_CUDA_LIBRARY=/path/to/it) and runs
// unchanged on any Linux machine: device memory is host memory, streams are host threads, and
// kernels are PTX run by the interpreter of src/ptx_vm, which checks every memory access and
// reports a fault as a GPU would (CUDA_ERROR_ILLEGAL_ADDRESS and friends), with a message that
// names the kernel, the PTX line, the thread and the address.
//
// How it is reached. The library exports cuGetProcAddress_v2 (and the CUDA 11.3 cuGetProcAddress)
// and every entry point it implements under its ABI name, as cuda.h spells it after its macros
// (cuMemAlloc_v2, cuCtxSynchronize). entry_points.cpp holds the one table of (name, first CUDA
// version of that ABI, function) that cuGetProcAddress serves; an entry point is either
// implemented for real or absent from the table and from the exports. It reports driver version
// 13000 (CUDA 13.0), and reads PTX up to ISA 9.0, what the CUDA 13.0 toolkit's nvcc writes; for
// the entry points whose signature CUDA 13.0 changed (cuCtxSynchronize, cuCtxGetDevice) it
// serves both variants, by the version asked for.
//
// What it implements (entry_points.cpp lists every function):
//  - initialisation, versions, error names and strings for every CUresult, cuGetProcAddress;
//  - devices and their attributes; primary contexts, the per-thread context stack;
//  - device memory, page-locked host memory, pointer attributes, memory information;
//  - copies and memsets, synchronous and stream-ordered; streams (the legacy NULL stream, the
//    per-thread default stream, blocking and non-blocking streams), host functions, callbacks;
//  - events with timing; modules from PTX, fatbins (also compressed ones) and files; functions,
//    their attributes and parameters; cuLaunchKernel and cuLaunchKernelEx;
//  - the error log of CUDA 12.9 and later (cuLogs*), which carries the reason of every failure
//    and the full text of kernel faults; hal_ptx_cpu_get_stats (ptx_cpu.h) counts executed
//    instructions.
//
// The devices. HAL_PTX_CPU_DEVICES=N (1..16, default 1) presents N identical devices, so that
// multi-device code can be tested on one machine; 0 makes cuInit answer CUDA_ERROR_NO_DEVICE
// and anything else (not a number, above 16) CUDA_ERROR_INVALID_VALUE, with the reason on
// standard error and in the driver log. Each device is "CPU PTX device (hal)", compute capability
// 8.0, warp 32, 1024 threads per block, blocks up to 1024x1024x64, grids up to
// (2^31-1)x65535x65535, 48 KiB of shared memory per block (163 KiB opted in with
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), integrated, as many multiprocessors as the
// interpreter has threads, and half of the machine's RAM as total memory: one budget that all
// devices share, since all of it is the same host memory. Its UUID is fixed per ordinal.
//
// Threads. One interpreter (ptx_vm::Executor) with one thread per hardware thread serves every
// device and stream; each stream has a worker thread of its own that executes its operations in
// order and, for a kernel, takes part in running the blocks. Streams therefore really run
// concurrently with the host and with each other.
//
// Limits, each answered honestly (the entry point is absent, or it returns the stated error):
//  - only PTX runs: a cubin, or a fatbin carrying only machine code, is
//    CUDA_ERROR_NO_BINARY_FOR_GPU with a JIT log that says so; PTX newer than ISA 9.0 is
//    CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
//    PTX for a target above sm_80 (sm_90a, ...) is CUDA_ERROR_INVALID_PTX;
//  - zstd-compressed fatbin entries need libzstd.so.1 at run time (opened when first needed);
//    LZ4-compressed ones are decoded here;
//  - no cuCtxCreate (primary contexts only), no managed memory, no arrays or textures, no graphs,
//    no IPC, no peer access (a kernel sees only its own device's memory, page-locked host memory
//    and its context's module variables), no cuModuleGetGlobal (the interpreter does not name its
//    module variables), no cooperative or cluster launches;
//  - stream priorities are accepted and ignored (CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED
//    is 0); cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM returns the legacy
//    variants, as the CUDA documentation allows for a driver without per-thread ones.
//
// Thread-safety: every entry point may be called from any thread at any time.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hal::ptx_vm {
class Executor;
}

namespace hal::ptx_cpu {

class Context;
class MemoryRegistry;

// The driver version this library reports and the newest CUDA version cuGetProcAddress serves.
inline constexpr int kDriverVersion = 13000;
inline constexpr int kMaxDevices = 16;

// What every device is; see the header comment.
inline constexpr const char* kDeviceName = "CPU PTX device (hal)";
inline constexpr int kComputeMajor = 8;
inline constexpr int kComputeMinor = 0;
inline constexpr uint32_t kSm = 10 * kComputeMajor + kComputeMinor;
inline constexpr uint32_t kMaxPtxVersion = 90;  // PTX ISA 9.0, as CUDA 13.0
inline constexpr int kWarpSize = 32;
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kMaxBlockDim[3] = {1024, 1024, 64};
inline constexpr int kMaxGridDim[3] = {2147483647, 65535, 65535};
inline constexpr int kSharedPerBlock = 48 * 1024;
inline constexpr int kSharedPerBlockOptin = 163 * 1024;
inline constexpr int kSharedPerMultiprocessor = 164 * 1024;
inline constexpr size_t kAllocationAlignment = 256;

// The process-wide state: devices, their primary contexts, the interpreter, the memory registry.
// Created by the first cuInit and never destroyed: worker threads and other libraries' exit
// handlers may still call in while the process exits.
class Driver {
 public:
  // The driver, or nullptr before a successful cuInit.
  static Driver* get() { return instance_.load(std::memory_order_acquire); }

  // cuInit: the first call reads HAL_PTX_CPU_DEVICES and creates the driver; later calls return
  // the first one's result. Returns CUDA_SUCCESS, CUDA_ERROR_NO_DEVICE (HAL_PTX_CPU_DEVICES=0),
  // CUDA_ERROR_INVALID_VALUE (a malformed HAL_PTX_CPU_DEVICES; the reason is logged).
  static CUresult init();

  int device_count() const { return static_cast<int>(contexts_.size()); }
  // The primary context of |ordinal| (checked by the caller). Contexts live as long as the driver.
  Context& context(int ordinal) const { return *contexts_[static_cast<size_t>(ordinal)]; }
  // The context whose handle is |handle|, or nullptr when it is none of the driver's.
  Context* find_context(CUcontext handle) const;

  ptx_vm::Executor& executor() const { return *executor_; }
  unsigned executor_threads() const { return executor_threads_; }
  MemoryRegistry& memory() const { return *memory_; }
  // Bytes of "device memory": the budget every device allocation is charged to.
  uint64_t total_memory() const { return total_memory_; }

  // Blocks until no stream of any context has work left (cuMemFree, cuMemFreeHost: memory that
  // is about to go must not be in use by any queued copy or kernel). Errors are not reported.
  void wait_all_idle() const;

 private:
  Driver() = default;
  static std::atomic<Driver*> instance_;

  std::vector<std::unique_ptr<Context>> contexts_;
  std::unique_ptr<ptx_vm::Executor> executor_;
  unsigned executor_threads_ = 1;
  std::unique_ptr<MemoryRegistry> memory_;
  uint64_t total_memory_ = 0;
};

}  // namespace hal::ptx_cpu
