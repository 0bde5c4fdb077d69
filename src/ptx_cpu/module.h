// A loaded module (CUmodule) and its functions (CUfunction).
//
// A module owns its interpreter program. Launches do not hold the module: each holds the
// program (shared ownership), and so does every memory snapshot that includes the program's
// variables, so cuModuleUnload returns at once and the code and data go when the last launch
// that can use them has completed.
//
// Ownership: modules and functions are shared by the handle tables; a Function keeps its module
// alive. Thread-safety: immutable after load except the atomics, which any thread may change.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ptx_vm/vm.h"

namespace hal::ptx_cpu {

class Context;
class Function;

class Module {
 public:
  Module(Context& context, std::shared_ptr<const ptx_vm::Program> program, uint32_t ptx_version)
      : context_(context), program_(std::move(program)), ptx_version_(ptx_version) {}

  Context& context() const { return context_; }
  const std::shared_ptr<const ptx_vm::Program>& program() const { return program_; }
  // .version as 10 * major + minor.
  uint32_t ptx_version() const { return ptx_version_; }

  // The entry points, in the program's order; filled once after construction.
  std::vector<std::shared_ptr<Function>> functions;

 private:
  Context& context_;
  const std::shared_ptr<const ptx_vm::Program> program_;
  const uint32_t ptx_version_;
};

class Function {
 public:
  Function(const std::shared_ptr<Module>& module, const ptx_vm::Kernel& kernel);

  // The module, or nullptr once it is unloaded (a launch issued before may still run).
  std::shared_ptr<Module> module_shared() const { return module_.lock(); }
  Context& context() const { return context_; }
  const std::shared_ptr<const ptx_vm::Program>& program() const { return program_; }
  const ptx_vm::Kernel& kernel() const { return kernel_; }
  const ptx_vm::KernelInfo& info() const { return info_; }
  uint32_t ptx_version() const { return ptx_version_; }
  // What a block may use: the kernel's .reqntid/.maxntid, else the device's limit.
  uint32_t max_threads_per_block() const;

  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: 48 KiB minus the static shared memory until
  // raised (up to 163 KiB minus it).
  std::atomic<int> max_dynamic_shared{0};
  // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: a hint, kept to be read back.
  std::atomic<int> carveout{-1};

 private:
  std::weak_ptr<Module> module_;
  Context& context_;
  const std::shared_ptr<const ptx_vm::Program> program_;
  const ptx_vm::Kernel& kernel_;
  const ptx_vm::KernelInfo& info_;
  const uint32_t ptx_version_;
};

// Loads a module image (PTX, fatbin, fatbin wrapper; see image.h) in |context|, registers the
// module, its functions and its variables. |error_log| and |info_log| receive the JIT logs.
// Returns CUDA_SUCCESS, CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_PTX,
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_OUT_OF_MEMORY, or
// CUDA_ERROR_INVALID_VALUE for an image that cannot be read; failures are logged.
CUresult load_module(Context& context, const void* image, std::string* error_log,
                     std::string* info_log, std::shared_ptr<Module>* out);

// Takes |module| out of the handle tables and the memory registry (what launches hold lives on).
void unload_module(const std::shared_ptr<Module>& module);

}  // namespace hal::ptx_cpu
