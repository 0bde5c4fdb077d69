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
