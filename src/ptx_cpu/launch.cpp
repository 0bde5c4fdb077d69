// Kernel launches: cuLaunchKernel and cuLaunchKernelEx.
//
// A launch is checked as the real driver checks it (CUDA_ERROR_INVALID_VALUE for a grid or block
// beyond the device's or the kernel's limits, a block that differs from .reqntid, shared memory
// beyond the function's limit, missing or conflicting parameters), its parameters are copied
// into a buffer laid out as the kernel declares them (the caller may reuse its memory at once),
// and it is queued on the stream. The stream's worker runs it on the interpreter against a
// snapshot of the memory the kernel may touch; a fault becomes the context's sticky error and
// its report goes to the driver log.
#include "ptx_cpu/context.h"
#include "ptx_cpu/driver.h"
#include "ptx_cpu/entry.h"
#include "ptx_cpu/handles.h"
#include "ptx_cpu/memory.h"
#include "ptx_cpu/memory_map.h"
#include "ptx_cpu/module.h"
#include "ptx_vm/vm.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace hal::ptx_cpu {
namespace {

// The parameter buffer, aligned for any parameter (.align up to 16 in practice).
struct alignas(16) ParamChunk {
  unsigned char bytes[16];
};
using ParamBuffer = std::vector<ParamChunk>;

// More entries than this in |extra| without CU_LAUNCH_PARAM_END: the list is not terminated.
constexpr int kMaxExtraEntries = 64;

CUresult fault_result(ptx_vm::FaultKind kind) {
  switch (kind) {
    case ptx_vm::FaultKind::kNone:
      return CUDA_SUCCESS;
    case ptx_vm::FaultKind::kIllegalAddress:
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    case ptx_vm::FaultKind::kMisalignedAddress:
      return CUDA_ERROR_MISALIGNED_ADDRESS;
    case ptx_vm::FaultKind::kBarrier:
    case ptx_vm::FaultKind::kTrap:
      return CUDA_ERROR_LAUNCH_FAILED;
    case ptx_vm::FaultKind::kIllegalInstruction:
      return CUDA_ERROR_ILLEGAL_INSTRUCTION;
    case ptx_vm::FaultKind::kAssert:
      return CUDA_ERROR_ASSERT;
  }
  return CUDA_ERROR_LAUNCH_FAILED;
}

CUresult check_geometry(const Function& function, const uint32_t grid[3], const uint32_t block[3]) {
  const std::string& name = function.info().name;
  static constexpr char kAxis[3] = {'x', 'y', 'z'};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || grid[i] > static_cast<uint32_t>(kMaxGridDim[i])) {
      return fail(CUDA_ERROR_INVALID_VALUE,
                  fmt::format("'{}': grid {}x{}x{}: {} must be 1 to {}", name, grid[0], grid[1],
                              grid[2], kAxis[i], kMaxGridDim[i]));
    }
    if (block[i] == 0 || block[i] > static_cast<uint32_t>(kMaxBlockDim[i])) {
      return fail(CUDA_ERROR_INVALID_VALUE,
                  fmt::format("'{}': block {}x{}x{}: {} must be 1 to {}", name, block[0], block[1],
                              block[2], kAxis[i], kMaxBlockDim[i]));
    }
  }
  const uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
  const ptx_vm::KernelInfo& info = function.info();
  if (info.reqntid[0] != 0 &&
      (block[0] != info.reqntid[0] || block[1] != std::max(info.reqntid[1], 1u) ||
       block[2] != std::max(info.reqntid[2], 1u))) {
    return fail(CUDA_ERROR_INVALID_VALUE,
                fmt::format("'{}' requires blocks of {}x{}x{} threads (.reqntid), not {}x{}x{}",
                            name, info.reqntid[0], std::max(info.reqntid[1], 1u),
                            std::max(info.reqntid[2], 1u), block[0], block[1], block[2]));
  }
  if (threads > function.max_threads_per_block()) {
    return fail(
        CUDA_ERROR_INVALID_VALUE,
        fmt::format("'{}': a block of {}x{}x{} is {} threads; it may have at most {}{}", name,
                    block[0], block[1], block[2], threads, function.max_threads_per_block(),
                    info.maxntid[0] != 0 ? " (.maxntid)" : ""));
  }
  return CUDA_SUCCESS;
}

CUresult check_shared(const Function& function, uint32_t dynamic) {
  const uint32_t limit = static_cast<uint32_t>(function.max_dynamic_shared.load());
  const uint32_t static_bytes = function.info().static_shared_bytes;
  if (dynamic > limit || uint64_t{static_bytes} + dynamic > kSharedPerBlockOptin) {
    return fail(
        CUDA_ERROR_INVALID_VALUE,
        fmt::format("'{}': {} bytes of dynamic shared memory, above the function's "
                    "limit of {} (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; {} "
                    "static bytes; at most {} per block)",
                    function.info().name, dynamic, limit, static_bytes, kSharedPerBlockOptin));
  }
  return CUDA_SUCCESS;
}

CUresult pack_params(const Function& function, void** params, void** extra, ParamBuffer* out) {
  const ptx_vm::KernelInfo& info = function.info();
  const std::string& name = info.name;
  out->resize((info.param_bytes + sizeof(ParamChunk) - 1) / sizeof(ParamChunk));
  unsigned char* buffer = out->empty() ? nullptr : out->front().bytes;
  if (params != nullptr && extra != nullptr) {
    return fail(CUDA_ERROR_INVALID_VALUE, "kernelParams and extra are both given");
  }
  if (extra != nullptr) {
    const void* pointer = nullptr;
    const size_t* size = nullptr;
    int i = 0;
    for (; i < kMaxExtraEntries && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        pointer = extra[i + 1];
      } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        size = static_cast<const size_t*>(extra[i + 1]);
      } else {
        return fail(CUDA_ERROR_INVALID_VALUE,
                    fmt::format("extra[{}] is not a CU_LAUNCH_PARAM_* key", i));
      }
    }
    if (i >= kMaxExtraEntries) {
      return fail(CUDA_ERROR_INVALID_VALUE, "extra does not end with CU_LAUNCH_PARAM_END");
    }
    if (info.param_bytes == 0) return CUDA_SUCCESS;
    if (pointer == nullptr || size == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE,
                  "extra needs CU_LAUNCH_PARAM_BUFFER_POINTER and CU_LAUNCH_PARAM_BUFFER_SIZE");
    }
    if (*size < info.param_bytes) {
      return fail(CUDA_ERROR_INVALID_VALUE,
                  fmt::format("'{}' takes {} bytes of parameters; the buffer has {}", name,
                              info.param_bytes, *size));
    }
    std::memcpy(buffer, pointer, info.param_bytes);
    return CUDA_SUCCESS;
  }
  if (info.params.empty()) return CUDA_SUCCESS;
  if (params == nullptr) {
    return fail(CUDA_ERROR_INVALID_VALUE,
                fmt::format("'{}' takes {} parameters, and kernelParams and extra are NULL", name,
                            info.params.size()));
  }
  for (size_t i = 0; i < info.params.size(); ++i) {
    const ptx_vm::ParamSlot& slot = info.params[i];
    if (params[i] == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, fmt::format("kernelParams[{}] is NULL", i));
    }
    if (uint64_t{slot.offset} + slot.size > info.param_bytes) {
      return fail(CUDA_ERROR_INVALID_IMAGE,
                  fmt::format("'{}': parameter {} lies outside the parameter buffer", name, i));
    }
    std::memcpy(buffer + slot.offset, params[i], slot.size);
  }
  return CUDA_SUCCESS;
}

CUresult launch(CUfunction handle, const uint32_t grid[3], const uint32_t block[3],
                uint32_t shared_bytes, CUstream stream_handle, void** params, void** extra) {
  if (CUresult result = require_init(); result != CUDA_SUCCESS) return result;
  std::shared_ptr<Function> function = function_handles().find(handle);
  if (function == nullptr) {
    return fail(CUDA_ERROR_INVALID_HANDLE, "not a function of a loaded module");
  }
  Context* context = nullptr;
  if (CUresult result = current_context(&context); result != CUDA_SUCCESS) return result;
  if (&function->context() != context) {
    return fail(
        CUDA_ERROR_INVALID_HANDLE,
        fmt::format("'{}' was loaded in device {}'s context, not the current one "
                    "(device {})",
                    function->info().name, function->context().device(), context->device()));
  }
  std::shared_ptr<Stream> stream;
  if (CUresult result = context->resolve_stream(stream_handle, &stream); result != CUDA_SUCCESS) {
    return result;
  }
  if (CUresult result = check_geometry(*function, grid, block); result != CUDA_SUCCESS) {
    return result;
  }
  if (CUresult result = check_shared(*function, shared_bytes); result != CUDA_SUCCESS) {
    return result;
  }
  auto buffer = std::make_shared<ParamBuffer>();
  if (CUresult result = pack_params(*function, params, extra, buffer.get());
      result != CUDA_SUCCESS) {
    return result;
  }

  ptx_vm::LaunchConfig config;
  for (int i = 0; i < 3; ++i) {
    config.grid[i] = grid[i];
    config.block[i] = block[i];
  }
  config.dynamic_shared_bytes = shared_bytes;
  std::shared_ptr<const MemorySnapshot> memory =
      Driver::get()->memory().snapshot(context->device());
  // The operation holds the program (its code), the snapshot (the memory it may touch, module
  // variables included) and the parameters; not the function or the module.
  std::shared_ptr<const ptx_vm::Program> program = function->program();
  const ptx_vm::Kernel* kernel = &function->kernel();
  context->enqueue(
      *stream, {}, [context, program, kernel, memory, buffer, config](CUresult status) mutable {
        if (status != CUDA_SUCCESS) return;
        config.params = buffer->empty() ? nullptr : buffer->front().bytes;
        config.memory = memory.get();
        ptx_vm::RunStats stats;
        const ptx_vm::Fault fault = Driver::get()->executor().run(*kernel, config, &stats);
        context->add_run(stats.lane_instructions, stats.warp_instructions);
        if (fault.kind == ptx_vm::FaultKind::kNone) return;
        context->record_fault(fault_result(fault.kind),
                              fault.message.empty()
                                  ? fmt::format("kernel '{}' faulted", ptx_vm::info(*kernel).name)
                                  : fault.message);
      });
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace hal::ptx_cpu

using hal::ptx_cpu::entry;
using hal::ptx_cpu::fail;

PTXCPU_ENTRY CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                             unsigned int gridDimY, unsigned int gridDimZ,
                                             unsigned int blockDimX, unsigned int blockDimY,
                                             unsigned int blockDimZ, unsigned int sharedMemBytes,
                                             CUstream hStream, void** kernelParams, void** extra) {
  return entry(__func__, [&] {
    const uint32_t grid[3] = {gridDimX, gridDimY, gridDimZ};
    const uint32_t block[3] = {blockDimX, blockDimY, blockDimZ};
    return hal::ptx_cpu::launch(f, grid, block, sharedMemBytes, hStream, kernelParams, extra);
  });
}

// Attributes: CU_LAUNCH_ATTRIBUTE_PRIORITY is accepted (a hint, as stream priorities);
// COOPERATIVE and CLUSTER_DIMENSION only with their neutral values (false, 1x1x1); any other is
// CUDA_ERROR_NOT_SUPPORTED.
PTXCPU_ENTRY CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f,
                                               void** kernelParams, void** extra) {
  return entry(__func__, [&] {
    if (config == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, "config is NULL");
    if (config->numAttrs > 0 && config->attrs == nullptr) {
      return fail(CUDA_ERROR_INVALID_VALUE, "config->attrs is NULL");
    }
    for (unsigned i = 0; i < config->numAttrs; ++i) {
      const CUlaunchAttribute& attribute = config->attrs[i];
      switch (hal::ptx_cpu::as_int(attribute.id)) {
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
          continue;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
          if (attribute.value.cooperative == 0) continue;
          return fail(CUDA_ERROR_NOT_SUPPORTED, "cooperative launches are not supported");
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
          if (attribute.value.clusterDim.x <= 1 && attribute.value.clusterDim.y <= 1 &&
              attribute.value.clusterDim.z <= 1) {
            continue;
          }
          return fail(CUDA_ERROR_NOT_SUPPORTED,
                      "thread block clusters need compute capability 9.0");
        default:
          return fail(CUDA_ERROR_NOT_SUPPORTED,
                      "launch attribute " + std::to_string(hal::ptx_cpu::as_int(attribute.id)) +
                          " is not supported");
      }
    }
    const uint32_t grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
    const uint32_t block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
    return hal::ptx_cpu::launch(f, grid, block, config->sharedMemBytes, config->hStream,
                                kernelParams, extra);
  });
}
