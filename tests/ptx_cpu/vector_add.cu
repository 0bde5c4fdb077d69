// A CUDA C++ kernel for the CPU PTX driver's tests: nvcc 13 compiles it into a fatbin with its
// own PTX (ISA 9.0, zstd-compressed) and machine code; the driver must find, decompress and run
// the PTX.
extern "C" __global__ void vector_add(float* out, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
