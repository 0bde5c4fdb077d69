// A CUDA C++ kernel for the CPU PTX driver's tests: nvcc 13 compiles it to PTX ISA 9.0, which a
// CUDA 12.9 driver (this one) refuses; the tests check that the fatbin's zstd-compressed PTX is
// found and the refusal says why.
extern "C" __global__ void vector_add(float* out, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
