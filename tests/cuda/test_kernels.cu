// Kernels compiled to PTX with nvcc at build time, so the PTX parser is tested on the real
// compiler's output. Each covers a parameter form: pointers, a 64-bit count, a struct by value,
// narrow scalars, a template instance and a launch bound.
#include <cstddef>

extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned long long n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

struct Pair {
  int a;
  double b;
};

__global__ void scale(float* __restrict__ out, const float* in, size_t n, Pair p, char c, short s,
                      double d) {
  size_t i = threadIdx.x;
  if (i < n) out[i] = in[i] * p.b + p.a + c + s + d;
}

template <typename T>
__global__ void fill(T* out, T value, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = value;
}
template __global__ void fill<float>(float*, float, int);

__global__ void __launch_bounds__(128) bounded(int* out) {
  extern __shared__ int shared[];
  shared[threadIdx.x] = 1;
  __syncthreads();
  out[threadIdx.x] = shared[0];
}
