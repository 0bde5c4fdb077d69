// RawCuda: the baselines on CUDA devices, through libcuda and libcublas opened at run time (no
// CUDA library is linked, so hal-bench runs on machines without them and says why it skips).
//  - launches: cuLaunchKernel of the pack's PTX on one stream, then cuStreamSynchronize;
//  - matmul: cublasSgemm (fp32) or cublasGemmEx (fp16) on the same stream;
//  - on the CPU PTX device (libhal_ptx_cpu.so), its instruction counters.
// It opens the driver library hal's CUDA backend opens (HAL_CUDA_LIBRARY when set, else the
// system's libcuda), so a baseline runs on the very driver that hal ran on, and uses the
// device's primary context, as the backend does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bench {

class RawCuda {
 public:
  // Opens CUDA device |ordinal|. nullptr with |why| when libcuda or the device is unavailable.
  static std::unique_ptr<RawCuda> open(int ordinal, std::string* why);
  // The driver library's file name, as opened ("libcuda.so.1", "libhal_ptx_cpu.so").
  const std::string& library_name() const;
  ~RawCuda();
  RawCuda(const RawCuda&) = delete;
  RawCuda& operator=(const RawCuda&) = delete;

  // Loads |ptx| and finds |entry|, a kernel taking (X, Y, n, alpha) as saxpy does, with two
  // buffers of |buffer_bytes|.
  bool prepare_saxpy(const void* ptx, size_t size, const char* entry, uint64_t buffer_bytes,
                     std::string* why);
  // |n| launches of |gx| blocks of 256 threads, then one stream synchronize. With |launch_us|,
  // the microseconds the n cuLaunchKernel calls took to return (the synchronize not included).
  bool run_batched(uint32_t n, uint32_t gx, uint32_t elements, double* launch_us = nullptr);

  // Loads libcublas and allocates an M×K, K×N and M×N problem, A and B all ones as hal-bench
  // gives the pack's kernels: fp32 (cublasSgemm), or with |f16| fp16 storage with fp32
  // accumulation (cublasGemmEx, which uses the tensor cores), the pack's f16 kernels' contract.
  // False with |why| when cuBLAS is unavailable.
  bool prepare_gemm(uint32_t m, uint32_t n, uint32_t k, bool f16, std::string* why);
  // One row-major C = A·B of the prepared problem, then a stream synchronize.
  bool run_gemm();

  // Work done on the CPU PTX device (hal_ptx_cpu_get_stats of ptx_cpu.h, for the primary
  // context): totals since the context was first retained. Only kernels that have completed
  // are counted, so read after a synchronize.
  struct PtxCpuCounts {
    uint64_t lane_instructions = 0;
    uint64_t warp_instructions = 0;
    uint64_t kernels = 0;
  };
  // Whether the driver library exports the counters (libhal_ptx_cpu.so does, NVIDIA's not).
  bool has_ptx_cpu_counts() const;
  bool ptx_cpu_counts(PtxCpuCounts* out) const;

 private:
  RawCuda() = default;
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace bench
