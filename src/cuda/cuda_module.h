// CUDA modules and functions: PTX, cubin and fatbin through cuModuleLoadDataEx.
//
// Before the driver sees a blob:
//  - PTX is parsed (ptx/reader.h) for its header and entry signatures. A .target newer than the
//    device (or an arch-specific sm_XYa for another architecture) is HAL_ERROR_NOT_SUPPORTED,
//    .address_size 32 too; malformed PTX is HAL_ERROR_INVALID_IR.
//  - a cubin must be a 64-bit little-endian ELF for EM_CUDA whose section and program headers,
//    and the sections they describe, lie inside the blob; a fatbin's header must describe no
//    more bytes than given. cuModuleLoadDataEx takes no length, so without these checks a
//    crafted blob could make the driver read past its end.
//  - the bytes are copied into an 8-byte aligned buffer with zero padding: the PTX hal receives
//    is not NUL-terminated, and the blob itself may be unaligned.
// The JIT's error and info logs are captured; a failure's text carries the error log, and
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION names the PTX .version and the driver's CUDA version.
//
// Functions: for PTX, every .entry the parser found, with its parameters. For cubin and fatbin,
// every function cuModuleEnumerateFunctions lists (CUDA 12.4 drivers), named by cuFuncGetName,
// with parameters from cuFuncGetParamInfo when the driver has it (else params_known = false).
// A driver without enumeration (before CUDA 12.4) still loads cubins: their kernels are read
// from the ELF symbol table (global functions marked STO_CUDA_ENTRY), with params_known = false.
// It cannot list a fatbin's functions, so a fatbin is then HAL_ERROR_NOT_SUPPORTED: the runtime
// needs the list of functions at load time.
//
// Lifetime: a module unloads with cuModuleUnload after cuCtxSynchronize, so launches already
// issued complete first.
#pragma once

#include "common/backend.h"
#include "cuda/cuda_device.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace hal::cuda {

class CudaFunction final : public Function {
 public:
  CUfunction handle = nullptr;
  // The dynamic shared memory a launch may use without raising the function's attribute;
  // only ever grows. Read without the lock on the hot path; raised (attribute first, then this
  // value) only under |shared_mutex|, so concurrent launches on several streams never lower the
  // attribute below a size another launch already relies on.
  std::atomic<uint32_t> dynamic_shared_limit{0};
  std::mutex shared_mutex;
};

class CudaModule final : public Module {
 public:
  CudaModule(CudaDevice& device, CUmodule module) : device_(device), module_(module) {}
  ~CudaModule() override;

  CUmodule handle() const { return module_; }

 private:
  CudaDevice& device_;
  CUmodule module_;
};

// CudaDevice::load_module: checks |blob| as described above, loads it and lists its functions.
hal_status load_cuda_module(CudaDevice& device, hal_ir ir, const uint8_t* blob, size_t size,
                            const ModuleOptions& options, std::unique_ptr<Module>* out);

// Checks a cubin or fatbin's structure as described above; HAL_ERROR_INVALID_IR when it fails.
hal_status check_binary(hal_ir ir, const uint8_t* blob, size_t size);

// The kernel names in a cubin's symbol table, after check_binary's checks; HAL_ERROR_INVALID_IR
// when the cubin is malformed.
hal_status cubin_entries(const uint8_t* blob, size_t size, std::vector<std::string>* names);

}  // namespace hal::cuda
