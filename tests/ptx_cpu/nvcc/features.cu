// CUDA features as nvcc compiles them, for the CPU PTX device: warp shuffles, votes and
// reductions (also per 16-lane tile), shared and global atomics of every width, libdevice math,
// half, bfloat16 and integer SIMD intrinsics, wmma, cp.async through cuda_pipeline.h, the
// libcu++ memory model, local arrays, struct parameters, device printf and assert. Each kernel is
// checked against a host reference by python/tests/test_cuda_features.py.
//
// features.ptx beside it is nvcc's output, committed so that no test needs nvcc:
//   nvcc -O3 -ptx -arch=compute_80 -o features.ptx features.cu
#include <assert.h>
#include <cstdio>
#include <stdint.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>
#include <cuda_pipeline.h>

extern "C" __global__ void block_reduce(const float* x, float* out, unsigned n) {
  __shared__ float partial[32];
  float v = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) atomicAdd(out, v);
  }
}

extern "C" __global__ void histogram(const uint8_t* x, unsigned* hist, unsigned n) {
  __shared__ unsigned local[256];
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[x[i]], 1u);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) if (local[i]) atomicAdd(&hist[i], local[i]);
}

extern "C" __global__ void transpose(const float* in, float* out, unsigned rows, unsigned cols) {
  __shared__ float tile[32][33];
  unsigned x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void warp_scan(const int* in, int* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  unsigned lane = threadIdx.x & 31;
  for (int o = 1; o < 32; o <<= 1) {
    int t = __shfl_up_sync(0xffffffff, v, o);
    if (lane >= o) v += t;
  }
  if (i < n) out[i] = v;
}

extern "C" __global__ void bits(const unsigned* in, unsigned* out, unsigned long long* out64, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = in[i], b = in[(i * 7 + 3) % n] | 1;
  unsigned long long a64 = ((unsigned long long)a << 32) | b;
  out[i * 12 + 0] = __popc(a);
  out[i * 12 + 1] = __clz(a);
  out[i * 12 + 2] = __brev(a);
  out[i * 12 + 3] = __ffs(a);
  out[i * 12 + 4] = __byte_perm(a, b, 0x5140);
  out[i * 12 + 5] = __funnelshift_l(a, b, i & 31);
  out[i * 12 + 6] = __umulhi(a, b);
  out[i * 12 + 7] = a / b;
  out[i * 12 + 8] = a % b;
  out[i * 12 + 9] = __sad(a, b, 5u);
  out[i * 12 + 10] = (unsigned)((int)a / (int)(b | 0x100)) ;
  out[i * 12 + 11] = __popcll(a64);
  out64[i * 3 + 0] = a64 / (b + 12345ull);
  out64[i * 3 + 1] = a64 % (b + 12345ull);
  out64[i * 3 + 2] = __umul64hi(a64, a64 + 977);
}

extern "C" __global__ void mathf(const float* x, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[i * 10 + 0] = expf(v);
  out[i * 10 + 1] = logf(fabsf(v) + 1e-3f);
  out[i * 10 + 2] = sinf(v * 1000.0f);
  out[i * 10 + 3] = cosf(v);
  out[i * 10 + 4] = tanhf(v);
  out[i * 10 + 5] = powf(fabsf(v), 1.7f);
  out[i * 10 + 6] = erff(v);
  out[i * 10 + 7] = v / (x[(i + 1) % n] + 3.0f);
  out[i * 10 + 8] = sqrtf(fabsf(v));
  out[i * 10 + 9] = rsqrtf(fabsf(v) + 1.0f);
}

extern "C" __global__ void mathd(const double* x, double* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  out[i * 6 + 0] = exp(v);
  out[i * 6 + 1] = log(fabs(v) + 1e-3);
  out[i * 6 + 2] = sin(v * 100.0);
  out[i * 6 + 3] = sqrt(fabs(v));
  out[i * 6 + 4] = v / (x[(i + 1) % n] + 3.0);
  out[i * 6 + 5] = pow(fabs(v), 0.3);
}

extern "C" __global__ void halves(const __half2* a, const __half2* b, __half2* out, float* f, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i], y = b[i];
  out[i * 3 + 0] = __hadd2(x, y);
  out[i * 3 + 1] = __hmul2(x, y);
  out[i * 3 + 2] = __hfma2(x, y, x);
  float2 g = __half22float2(x);
  f[i] = g.x * g.y + __half2float(__hmax(__low2half(y), __high2half(y)));
}

extern "C" __global__ void votes(const int* in, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  unsigned ballot = __ballot_sync(0xffffffff, v > 0);
  int any = __any_sync(0xffffffff, v > 100);
  int all = __all_sync(0xffffffff, v > -1000);
  unsigned match = __match_any_sync(0xffffffff, v & 3);
  unsigned red = __reduce_add_sync(0xffffffff, (unsigned)(v & 255));
  unsigned mx = __reduce_max_sync(0xffffffff, (unsigned)(v & 255));
  if (i < n) {
    out[i * 6 + 0] = ballot; out[i * 6 + 1] = any; out[i * 6 + 2] = all;
    out[i * 6 + 3] = match; out[i * 6 + 4] = red; out[i * 6 + 5] = mx;
  }
}

__device__ float atomic_max_float(float* addr, float v) {
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(a, assumed, __float_as_int(v));
  } while (assumed != old);
  return __int_as_float(old);
}

extern "C" __global__ void atomics(const float* x, float* fmax, double* dsum, unsigned long long* u64, unsigned* ctr, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomic_max_float(fmax, x[i]);
  atomicAdd(dsum, (double)x[i]);
  atomicAdd(u64, 1ull << 33);
  atomicInc(ctr, 9u);
  atomicMin((int*)(ctr + 1), (int)(x[i] * 1000));
  atomicOr(ctr + 2, 1u << (i & 31));
}

struct Params { float scale; int offset; double bias; short s[3]; };

extern "C" __global__ void local_array(const int* idx, const float* x, float* out, Params p, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float arr[24];
  for (int k = 0; k < 24; ++k) arr[k] = x[(i + k) % n] * p.scale + k;
  float acc = 0;
  for (int k = 0; k < 8; ++k) acc += arr[(idx[(i + k) % n] + p.offset) % 24];
  out[i] = acc + (float)p.bias + p.s[0] + p.s[1] * 2 + p.s[2] * 3;
}

extern "C" __global__ void grid3d(unsigned* out) {
  unsigned bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  unsigned nt = blockDim.x * blockDim.y * blockDim.z;
  out[bid * nt + tid] = bid * 1000 + tid;
  __threadfence();
  __syncwarp();
}

extern "C" __global__ void dyn_shared(const double* x, double* out, unsigned n) {
  extern __shared__ double buf[];
  unsigned t = threadIdx.x;
  buf[t] = t < n ? x[t] : 0.0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[0] = buf[0];
}
namespace cg = cooperative_groups;
using namespace nvcuda;

// 16x16x16 fp16 wmma, one warp per 16x16 tile of C (row-major A, col-major B)
extern "C" __global__ void wmma16(const half* A, const half* B, float* C, int M, int N, int K) {
  int wm = blockIdx.y, wn = blockIdx.x;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + wm * 16 * K + k, K);
    wmma::load_matrix_sync(b, B + wn * 16 * K + k, K);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + wm * 16 * N + wn * 16, c, N, wmma::mem_row_major);
}

extern "C" __global__ void tiles(const int* in, int* out, unsigned n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> t = cg::tiled_partition<16>(block);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int s = cg::reduce(t, v, cg::plus<int>());
  int first = t.shfl(v, 3);
  int up = t.shfl_up(v, 1);
  if (i < n) { out[i * 3] = s; out[i * 3 + 1] = first; out[i * 3 + 2] = up; }
}

extern "C" __global__ void memory_model(int* flag, int* data, unsigned long long* t) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  if (threadIdx.x == 0) { data[blockIdx.x] = blockIdx.x * 7; }
  __syncthreads();
  if (threadIdx.x == 0) f.fetch_add(1, cuda::memory_order_acq_rel);
  int seen = f.load(cuda::memory_order_acquire);
  if (threadIdx.x == 0 && blockIdx.x == 0) { t[0] = clock64() >= 0; t[1] = seen >= 1; }
  __nanosleep(10);
}

extern "C" __global__ void vec_ldg(const float4* __restrict__ a, float4* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = __ldg(&a[i]);
  float4 w = a[(i + 1) % n];
  out[i] = make_float4(v.x + w.w, v.y * 2, v.z - w.x, v.w);
}

extern "C" __global__ void dp4a_bf16(const int* a, const int* b, int* out, const __nv_bfloat162* x, __nv_bfloat162* y, float* f, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = __dp4a(a[i], b[i], 7);
  __nv_bfloat162 p = x[i];
  y[i] = __hmul2(p, __float2bfloat162_rn(1.5f));
  f[i] = __bfloat162float(p.x) + __bfloat162float(p.y);
}

extern "C" __global__ void half_atomics(const half2* x, half2* acc, float* facc, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(acc, x[i]);
  atomicAdd(facc, __low2float(x[i]));
}

extern "C" __global__ void asserting(const int* x, int* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  assert(x[i] >= 0);
  out[i] = x[i] * 2;
}

extern "C" __global__ void pipeline_copy(const float* in, float* out, unsigned n) {
  __shared__ float buf[256];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __pipeline_memcpy_async(&buf[threadIdx.x], &in[i], sizeof(float));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n) out[i] = buf[blockDim.x - 1 - threadIdx.x] + 1.0f;
}

extern "C" __global__ void fns_bfe(const unsigned* x, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = x[i];
  out[i * 3] = __fns(v, 0, 3);
  out[i * 3 + 1] = (v >> (i & 15)) & ((1u << ((i & 7) + 1)) - 1);
  out[i * 3 + 2] = __vabsdiffu4(v, x[(i + 1) % n]);
}

extern "C" __global__ void jump(const int* x, int* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = x[i], r;
  switch (v & 15) {
    case 0: r = v * 3; break; case 1: r = v + 7; break; case 2: r = v ^ 0x55; break;
    case 3: r = v - 100; break; case 4: r = v << 2; break; case 5: r = v >> 1; break;
    case 6: r = ~v; break; case 7: r = v * v; break; case 8: r = v / 3; break;
    case 9: r = v % 5; break; case 10: r = -v; break; case 11: r = v | 0x100; break;
    default: r = 42;
  }
  out[i] = r;
}

extern "C" __global__ void hmath(const __half2* a, __half2* out, __nv_bfloat16* bacc, float* f, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i];
  out[i * 4 + 0] = __hmax2(x, __habs2(x));
  out[i * 4 + 1] = h2sqrt(__habs2(x));
  out[i * 4 + 2] = h2exp(__hmul2(x, __float2half2_rn(0.1f)));
  out[i * 4 + 3] = __hneg2(x);
  atomicAdd(bacc, __float2bfloat16(1.0f));
  f[i * 4 + 0] = __fdividef(__low2float(x), 3.0f);
  f[i * 4 + 1] = __saturatef(__high2float(x));
  f[i * 4 + 2] = __frcp_rn(__low2float(x) + 10.0f);
  f[i * 4 + 3] = __fsqrt_rd(fabsf(__high2float(x)));
}

extern "C" __global__ void wide(const unsigned long long* x, unsigned long long* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long v = x[i];
  unsigned __int128 p = (unsigned __int128)v * (v | 1);
  out[i * 6 + 0] = (unsigned long long)(p >> 64);
  out[i * 6 + 1] = (unsigned long long)p;
  out[i * 6 + 2] = __brevll(v);
  out[i * 6 + 3] = __clzll(v);
  out[i * 6 + 4] = __ffsll(v);
  out[i * 6 + 5] = v / 7 + v % 1000003;
}

extern "C" __global__ void simd(const unsigned* x, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = x[i], b = x[(i + 1) % n];
  out[i * 6 + 0] = __vadd4(a, b);
  out[i * 6 + 1] = __vsub2(a, b);
  out[i * 6 + 2] = __vabsdiffu4(a, b);
  out[i * 6 + 3] = __vcmpgeu4(a, b);
  out[i * 6 + 4] = __vmaxu2(a, b);
  out[i * 6 + 5] = __vavgu4(a, b);
}

extern "C" __global__ void specials(unsigned* out) {
  unsigned lt;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  unsigned t = threadIdx.x;
  out[t * 3 + 0] = lt;
  out[t * 3 + 1] = __activemask();
  out[t * 3 + 2] = __shfl_sync(0xffffffff, (double)t * 1.5, 3) == 4.5 ? 1 : 0;
  __syncwarp(0xffffffff);
}

extern "C" __global__ void say(int v) {
  if (threadIdx.x == 0) printf("hello %d\n", v);
}