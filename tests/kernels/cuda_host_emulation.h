// Just enough of CUDA to run the kernel pack's CUDA sources as host C++, for testing their logic
// on machines without a GPU: one host thread per CUDA thread, blocks one after another,
// __syncthreads as a std::barrier, __shared__ as function-static storage (shared by the threads
// of the one block that runs at a time), __half through the reference's fp16 conversions.
//
// This checks the algorithms and indexing of kernels/cuda/*.cu, not the PTX nvcc makes of them
// (ptxas checks that it assembles; a CUDA device runs it in the PTX tests).
#pragma once

#define HAL_KERNELS_HOST_EMULATION 1

#include <hal_kernels/reference.h>
#include <math.h>

#include <barrier>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct HalEmuDim3 {
  uint32_t x = 1, y = 1, z = 1;
};

namespace hal_emu {
inline thread_local HalEmuDim3 thread_idx;
inline thread_local HalEmuDim3 block_idx;
inline HalEmuDim3 block_dim;
inline HalEmuDim3 grid_dim;
inline std::barrier<>* block_barrier = nullptr;
}  // namespace hal_emu

#define threadIdx hal_emu::thread_idx
#define blockIdx hal_emu::block_idx
#define blockDim hal_emu::block_dim
#define gridDim hal_emu::grid_dim

inline void __syncthreads() {
  hal_emu::block_barrier->arrive_and_wait();
}

struct __half {
  uint16_t bits;
};
inline float __half2float(__half h) {
  return hal_kernels::ref::half_to_float(h.bits);
}
inline __half __float2half_rn(float f) {
  return __half{hal_kernels::ref::float_to_half(f)};
}
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}
template <typename T>
inline T min(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
inline T max(T a, T b) {
  return a < b ? b : a;
}

namespace hal_emu {

// Runs |kernel| (a callable taking no arguments, calling the kernel with its arguments) over
// |grid| blocks of |block| threads.
template <typename Kernel>
void launch(HalEmuDim3 grid, HalEmuDim3 block, const Kernel& kernel) {
  grid_dim = grid;
  block_dim = block;
  const uint32_t threads = block.x * block.y * block.z;
  for (uint32_t bz = 0; bz < grid.z; ++bz) {
    for (uint32_t by = 0; by < grid.y; ++by) {
      for (uint32_t bx = 0; bx < grid.x; ++bx) {
        std::barrier<> barrier(threads);
        block_barrier = &barrier;
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (uint32_t t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            thread_idx = HalEmuDim3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            block_idx = HalEmuDim3{bx, by, bz};
            kernel();
            barrier.arrive_and_drop();  // a thread that has returned no longer holds others up
          });
        }
        for (std::thread& thread : pool) thread.join();
        block_barrier = nullptr;
      }
    }
  }
}

}  // namespace hal_emu
