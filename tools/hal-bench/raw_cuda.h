// RawCuda: the baselines on CUDA devices, through libcuda and libcublas opened at run time (no
// CUDA library is linked, so hal-bench runs on machines without them and says why it skips).
//  - launches: cuLaunchKernel of the pack's PTX on one stream, then cuStreamSynchronize;
//  - matmul: cublasSgemm on the same stream.
// It uses the device's primary context, as hal's CUDA backend does.
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
  ~RawCuda();
  RawCuda(const RawCuda&) = delete;
  RawCuda& operator=(const RawCuda&) = delete;

  // Loads |ptx| and finds |entry|, a kernel taking (X, Y, n, alpha) as saxpy does, with two
  // buffers of |buffer_bytes|.
  bool prepare_saxpy(const void* ptx, size_t size, const char* entry, uint64_t buffer_bytes,
                     std::string* why);
  // |n| launches of |gx| blocks of 256 threads, then one stream synchronize.
  bool run_batched(uint32_t n, uint32_t gx, uint32_t elements);

  // Loads libcublas and allocates an M×K, K×N and M×N fp32 problem; false with |why| when
  // cuBLAS is unavailable.
  bool prepare_sgemm(uint32_t m, uint32_t n, uint32_t k, std::string* why);
  // One row-major C = A·B through cublasSgemm, then a stream synchronize.
  bool run_sgemm();

 private:
  RawCuda() = default;
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace bench
