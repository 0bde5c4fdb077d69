// Smoke kernels: fill, copy, vector add, saxpy. Every one walks the vector with a grid-stride
// loop, so any grid works; the pack launches them with blocks of 256.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) fill_f32(float* Y, uint32_t n, float value) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    Y[i] = value;
}

extern "C" __global__ void __launch_bounds__(256) copy_f32(const float* X, float* Y, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    Y[i] = X[i];
}

extern "C" __global__ void __launch_bounds__(256)
    vector_add_f32(const float* A, const float* B, float* C, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    C[i] = A[i] + B[i];
}

extern "C" __global__ void __launch_bounds__(256)
    saxpy(const float* X, float* Y, uint32_t n, float alpha) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    Y[i] = alpha * X[i] + Y[i];
}
