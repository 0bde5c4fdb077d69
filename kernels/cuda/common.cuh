// Shared by the CUDA kernels of the pack: storage element types (fp32, or fp16 storage with
// fp32 arithmetic) and their conversions.
#pragma once
// The tests also compile these sources as host C++ (tests/kernels/cuda_host_emulation.h
// provides __half, threadIdx and the rest); nvcc never defines HAL_KERNELS_HOST_EMULATION.
#ifndef HAL_KERNELS_HOST_EMULATION
#include <cuda_fp16.h>
#endif
#include <stdint.h>

__device__ __forceinline__ float hal_load(float x) { return x; }
__device__ __forceinline__ float hal_load(__half x) { return __half2float(x); }
template <typename T>
__device__ __forceinline__ T hal_store(float x);
template <>
__device__ __forceinline__ float hal_store<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half hal_store<__half>(float x) { return __float2half_rn(x); }

#define HAL_NEG_INF __int_as_float(0xff800000)

// Stores a TM x TN register tile of C = alpha * acc + beta * C (beta == 0 does not read C): row
// m0 + i, column n0 + j * col_stride holds acc[i * TN + j]; elements outside M x N are skipped.
template <typename T, int TM, int TN>
__device__ __forceinline__ void hal_store_tile(T* C, const float* acc, uint32_t m0, uint32_t n0,
                                               uint32_t col_stride, uint32_t M, uint32_t N,
                                               uint32_t ldc, float alpha, float beta) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const uint32_t row = m0 + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const uint32_t col = n0 + j * col_stride;
      if (row < M && col < N) {
        float r = alpha * acc[i * TN + j];
        if (beta != 0.0f) r += beta * hal_load(C[row * ldc + col]);
        C[row * ldc + col] = hal_store<T>(r);
      }
    }
  }
}
