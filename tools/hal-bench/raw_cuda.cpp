#include "raw_cuda.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "ptx_cpu/ptx_cpu.h"

#if HAL_BENCH_HAVE_CUDA_H
#include <cuda.h>
#endif

namespace bench {

namespace {

#if HAL_BENCH_HAVE_CUDA_H
// The driver's own types where cuda.h was found: a call through a pointer whose type differs
// from the entry point's, even only in an enum or a struct pointer, is undefined behaviour, and
// UBSan reports it when the driver is instrumented too (the CPU PTX driver in sanitizer builds).
#else
// Without cuda.h: the few driver types used here, as the driver's stable C ABI lays them out.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
#endif
using cublasHandle_t = void*;
constexpr int kCublasOpN = 0;
// cublasGemmEx's enumerations (cudaDataType_t, cublasComputeType_t, cublasGemmAlgo_t), stable
// in cuBLAS's C ABI since CUDA 11.
constexpr int kCudaR16F = 2;
constexpr int kCublasCompute32F = 68;
constexpr int kCublasGemmDefault = -1;
// The kind of stream hal's CUDA backend creates: one that does not order itself with the legacy
// default stream (that ordering is work hal's launches do not pay for).
constexpr unsigned kStreamNonBlocking = 1;

template <typename F>
bool resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

}  // namespace

struct RawCuda::State {
  void* libcuda = nullptr;
  void* libcublas = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned int, size_t) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
  decltype(&hal_ptx_cpu_get_stats) get_ptx_cpu_stats = nullptr;
  int (*cublasCreate)(cublasHandle_t*) = nullptr;
  int (*cublasDestroy)(cublasHandle_t) = nullptr;
  int (*cublasSetStream)(cublasHandle_t, CUstream) = nullptr;
  int (*cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float*, const float*, int,
                     const float*, int, const float*, float*, int) = nullptr;
  int (*cublasGemmEx)(cublasHandle_t, int, int, int, int, int, const void*, const void*, int, int,
                      const void*, int, int, const void*, void*, int, int, int, int) = nullptr;

  std::string library_name;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  cublasHandle_t cublas = nullptr;
  std::vector<CUdeviceptr> allocations;
  CUdeviceptr x = 0, y = 0;
  CUdeviceptr a = 0, b = 0, c = 0;
  uint32_t m = 0, n = 0, k = 0;
  bool f16 = false;
};

std::unique_ptr<RawCuda> RawCuda::open(int ordinal, std::string* why) {
  // The names hal's CUDA backend tries, in its order: what HAL_CUDA_LIBRARY names, else the
  // system's driver. The same path returns the same loaded library, so the baseline shares the
  // driver's state (devices, primary contexts) with hal instead of measuring another driver.
  const char* override_path = std::getenv("HAL_CUDA_LIBRARY");
  std::vector<std::string> names;
  if (override_path != nullptr && *override_path != '\0') {
    names = {override_path};
  } else {
    names = {"libcuda.so.1", "libcuda.so"};
  }
  void* lib = nullptr;
  std::string opened;
  for (const std::string& name : names) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      opened = name;
      break;
    }
  }
  if (lib == nullptr) {
    *why = names.size() == 1 ? "the CUDA driver library named by HAL_CUDA_LIBRARY (" + names[0] +
                                   ") could not be opened"
                             : "libcuda.so.1 (the NVIDIA driver) could not be opened";
    return nullptr;
  }
  std::unique_ptr<RawCuda> raw(new RawCuda());
  raw->s_ = std::make_unique<State>();
  State& s = *raw->s_;
  s.libcuda = lib;
  s.library_name = opened.substr(opened.find_last_of('/') + 1);
  // Optional: only libhal_ptx_cpu.so has it.
  resolve(lib, "hal_ptx_cpu_get_stats", &s.get_ptx_cpu_stats);
  const bool ok =
      resolve(lib, "cuInit", &s.cuInit) && resolve(lib, "cuDeviceGet", &s.cuDeviceGet) &&
      resolve(lib, "cuDevicePrimaryCtxRetain", &s.cuDevicePrimaryCtxRetain) &&
      resolve(lib, "cuDevicePrimaryCtxRelease_v2", &s.cuDevicePrimaryCtxRelease) &&
      resolve(lib, "cuCtxSetCurrent", &s.cuCtxSetCurrent) &&
      resolve(lib, "cuStreamCreate", &s.cuStreamCreate) &&
      resolve(lib, "cuStreamDestroy_v2", &s.cuStreamDestroy) &&
      resolve(lib, "cuStreamSynchronize", &s.cuStreamSynchronize) &&
      resolve(lib, "cuModuleLoadData", &s.cuModuleLoadData) &&
      resolve(lib, "cuModuleUnload", &s.cuModuleUnload) &&
      resolve(lib, "cuModuleGetFunction", &s.cuModuleGetFunction) &&
      resolve(lib, "cuMemAlloc_v2", &s.cuMemAlloc) && resolve(lib, "cuMemFree_v2", &s.cuMemFree) &&
      resolve(lib, "cuMemsetD32_v2", &s.cuMemsetD32) &&
      resolve(lib, "cuCtxSynchronize", &s.cuCtxSynchronize) &&
      resolve(lib, "cuLaunchKernel", &s.cuLaunchKernel);
  if (!ok) {
    *why = s.library_name + " lacks a driver entry point the baseline needs";
    return nullptr;
  }
  if (s.cuInit(0) != 0 || s.cuDeviceGet(&s.device, ordinal) != 0 ||
      s.cuDevicePrimaryCtxRetain(&s.context, s.device) != 0 || s.cuCtxSetCurrent(s.context) != 0 ||
      s.cuStreamCreate(&s.stream, kStreamNonBlocking) != 0) {
    s.context = nullptr;
    *why = "CUDA device " + std::to_string(ordinal) + " could not be opened";
    return nullptr;
  }
  return raw;
}

const std::string& RawCuda::library_name() const {
  return s_->library_name;
}

bool RawCuda::has_ptx_cpu_counts() const {
  return s_->get_ptx_cpu_stats != nullptr;
}

bool RawCuda::ptx_cpu_counts(PtxCpuCounts* out) const {
  if (s_->get_ptx_cpu_stats == nullptr) return false;
  hal_ptx_cpu_stats stats{};
  stats.struct_size = sizeof stats;
  if (s_->get_ptx_cpu_stats(s_->context, &stats) != 0) return false;
  out->lane_instructions = stats.lane_instructions;
  out->warp_instructions = stats.warp_instructions;
  out->kernels = stats.kernels;
  return true;
}

RawCuda::~RawCuda() {
  if (!s_) return;
  State& s = *s_;
  if (s.context != nullptr) {
    s.cuCtxSetCurrent(s.context);
    if (s.stream != nullptr) s.cuStreamSynchronize(s.stream);
    if (s.cublas != nullptr) s.cublasDestroy(s.cublas);
    for (CUdeviceptr p : s.allocations) s.cuMemFree(p);
    if (s.module != nullptr) s.cuModuleUnload(s.module);
    if (s.stream != nullptr) s.cuStreamDestroy(s.stream);
    s.cuDevicePrimaryCtxRelease(s.device);
  }
  if (s.libcublas != nullptr) dlclose(s.libcublas);
  // libcuda stays loaded: hal's backend holds its own reference and the driver dislikes unloads.
}

bool RawCuda::prepare_saxpy(const void* ptx, size_t /*size*/, const char* entry,
                            uint64_t buffer_bytes, std::string* why) {
  State& s = *s_;
  s.cuCtxSetCurrent(s.context);
  if (s.cuModuleLoadData(&s.module, ptx) != 0 ||
      s.cuModuleGetFunction(&s.function, s.module, entry) != 0) {
    *why = std::string("cuModuleLoadData/cuModuleGetFunction failed for ") + entry;
    return false;
  }
  if (s.cuMemAlloc(&s.x, buffer_bytes) != 0 || s.cuMemAlloc(&s.y, buffer_bytes) != 0) {
    *why = "cuMemAlloc failed";
    return false;
  }
  s.allocations.push_back(s.x);
  s.allocations.push_back(s.y);
  // Zeros, as hal-bench gives hal's buffers: whatever a fresh allocation holds could be
  // denormals or NaNs, which cost more on a device that computes with the host's FPU.
  if (s.cuMemsetD32(s.x, 0, buffer_bytes / 4) != 0 ||
      s.cuMemsetD32(s.y, 0, buffer_bytes / 4) != 0 || s.cuCtxSynchronize() != 0) {
    *why = "cuMemsetD32 failed";
    return false;
  }
  return true;
}

bool RawCuda::run_batched(uint32_t n, uint32_t gx, uint32_t elements, double* launch_us) {
  State& s = *s_;
  s.cuCtxSetCurrent(s.context);
  float alpha = 1.0f;
  void* args[] = {&s.x, &s.y, &elements, &alpha};
  const auto t0 = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < n; ++i) {
    if (s.cuLaunchKernel(s.function, gx, 1, 1, 256, 1, 1, 0, s.stream, args, nullptr) != 0) {
      return false;
    }
  }
  if (launch_us != nullptr) {
    *launch_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  return s.cuStreamSynchronize(s.stream) == 0;
}

bool RawCuda::prepare_gemm(uint32_t m, uint32_t n, uint32_t k, bool f16, std::string* why) {
  State& s = *s_;
  if (s.libcublas == nullptr) {
    for (const char* name : {"libcublas.so", "libcublas.so.13", "libcublas.so.12",
                             "libcublas.so.11", "/usr/local/cuda/lib64/libcublas.so"}) {
      s.libcublas = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (s.libcublas != nullptr) break;
    }
    if (s.libcublas == nullptr) {
      *why =
          "libcublas could not be opened (install the CUDA toolkit's cuBLAS, or put it on "
          "LD_LIBRARY_PATH)";
      return false;
    }
    if (!resolve(s.libcublas, "cublasCreate_v2", &s.cublasCreate) ||
        !resolve(s.libcublas, "cublasDestroy_v2", &s.cublasDestroy) ||
        !resolve(s.libcublas, "cublasSetStream_v2", &s.cublasSetStream) ||
        !resolve(s.libcublas, "cublasSgemm_v2", &s.cublasSgemm) ||
        !resolve(s.libcublas, "cublasGemmEx", &s.cublasGemmEx)) {
      dlclose(s.libcublas);
      s.libcublas = nullptr;
      *why = "libcublas lacks cublasSgemm_v2, cublasGemmEx or their companions";
      return false;
    }
    s.cuCtxSetCurrent(s.context);
    if (s.cublasCreate(&s.cublas) != 0 || s.cublasSetStream(s.cublas, s.stream) != 0) {
      *why = "cublasCreate failed";
      return false;
    }
  }
  s.cuCtxSetCurrent(s.context);
  const size_t element = f16 ? 2 : 4;
  const size_t a_bytes = size_t{m} * k * element, b_bytes = size_t{k} * n * element;
  if (s.cuMemAlloc(&s.a, a_bytes) != 0 || s.cuMemAlloc(&s.b, b_bytes) != 0 ||
      s.cuMemAlloc(&s.c, size_t{m} * n * element) != 0) {
    *why = "cuMemAlloc failed for the gemm operands";
    return false;
  }
  s.allocations.insert(s.allocations.end(), {s.a, s.b, s.c});
  // Ones (two fp16 ones per word for fp16): the values hal-bench gives hal's kernels, so both
  // sides multiply the same data. Sizes are multiples of 4 bytes for fp32, and of 2 elements
  // for the fp16 sizes hal-bench uses; an odd fp16 count leaves its last element unset.
  const unsigned one = f16 ? 0x3C003C00u : 0x3F800000u;
  if (s.cuMemsetD32(s.a, one, a_bytes / 4) != 0 || s.cuMemsetD32(s.b, one, b_bytes / 4) != 0 ||
      s.cuCtxSynchronize() != 0) {
    *why = "cuMemsetD32 failed for the gemm operands";
    return false;
  }
  s.m = m;
  s.n = n;
  s.k = k;
  s.f16 = f16;
  return true;
}

bool RawCuda::run_gemm() {
  State& s = *s_;
  s.cuCtxSetCurrent(s.context);
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands and M with N.
  const int n = static_cast<int>(s.n), m = static_cast<int>(s.m), k = static_cast<int>(s.k);
  int status = 0;
  if (s.f16) {
    status = s.cublasGemmEx(
        s.cublas, kCublasOpN, kCublasOpN, n, m, k, &alpha, reinterpret_cast<const void*>(s.b),
        kCudaR16F, n, reinterpret_cast<const void*>(s.a), kCudaR16F, k, &beta,
        reinterpret_cast<void*>(s.c), kCudaR16F, n, kCublasCompute32F, kCublasGemmDefault);
  } else {
    status = s.cublasSgemm(
        s.cublas, kCublasOpN, kCublasOpN, n, m, k, &alpha, reinterpret_cast<const float*>(s.b), n,
        reinterpret_cast<const float*>(s.a), k, &beta, reinterpret_cast<float*>(s.c), n);
  }
  return status == 0 && s.cuStreamSynchronize(s.stream) == 0;
}

}  // namespace bench
