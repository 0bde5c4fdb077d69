// Matmul: C = alpha * A * B + beta * C, row-major (A is MxK with leading dimension lda, B is KxN
// with ldb, C is MxN with ldc), fp32 accumulation. beta == 0 does not read C. The same algorithms
// as glsl/matmul_naive.comp and glsl/matmul_tiled.comp.
#include "common.cuh"

// One output per thread. Block 16x16; grid (ceil(N/16), ceil(M/16), 1).
template <typename T>
__device__ __forceinline__ void matmul_naive(const T* A, const T* B, T* C, uint32_t M, uint32_t N,
                                             uint32_t K, uint32_t lda, uint32_t ldb, uint32_t ldc,
                                             float alpha, float beta) {
  const uint32_t col = blockIdx.x * 16 + threadIdx.x;
  const uint32_t row = blockIdx.y * 16 + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (uint32_t k = 0; k < K; ++k) acc += hal_load(A[row * lda + k]) * hal_load(B[k * ldb + col]);
  float r = alpha * acc;
  if (beta != 0.0f) r += beta * hal_load(C[row * ldc + col]);
  C[row * ldc + col] = hal_store<T>(r);
}

// A block of 256 threads (16x16) computes a BM x BN tile of C, staging A and B through shared
// memory BK at a time; each thread accumulates a (BM/16) x (BN/16) register tile at rows
// ty + 16*i and columns tx + 16*j of the tile. Block 256 (1-D); grid (ceil(N/BN), ceil(M/BM), 1).
template <typename T, int BM, int BN, int BK>
__device__ __forceinline__ void matmul_tiled(const T* A, const T* B, T* C, uint32_t M, uint32_t N,
                                             uint32_t K, uint32_t lda, uint32_t ldb, uint32_t ldc,
                                             float alpha, float beta) {
  constexpr int TM = BM / 16;
  constexpr int TN = BN / 16;
  __shared__ float As[BK * BM];
  __shared__ float Bs[BK * BN];
  const uint32_t tid = threadIdx.x;
  const uint32_t tx = tid % 16;
  const uint32_t ty = tid / 16;
  const uint32_t m0 = blockIdx.y * BM;
  const uint32_t n0 = blockIdx.x * BN;
  float acc[TM * TN];
#pragma unroll
  for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0f;
  for (uint32_t k0 = 0; k0 < K; k0 += BK) {
    for (uint32_t idx = tid; idx < BM * BK; idx += 256) {
      const uint32_t r = idx / BK, k = idx % BK;
      float v = 0.0f;
      if (m0 + r < M && k0 + k < K) v = hal_load(A[(m0 + r) * lda + k0 + k]);
      As[k * BM + r] = v;
    }
    for (uint32_t idx = tid; idx < BK * BN; idx += 256) {
      const uint32_t k = idx / BN, c = idx % BN;
      float v = 0.0f;
      if (k0 + k < K && n0 + c < N) v = hal_load(B[(k0 + k) * ldb + n0 + c]);
      Bs[k * BN + c] = v;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float av[TM], bv[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) av[i] = As[k * BM + ty + 16 * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) bv[j] = Bs[k * BN + tx + 16 * j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i * TN + j] += av[i] * bv[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const uint32_t row = m0 + ty + 16 * i;
    if (row >= M) break;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const uint32_t col = n0 + tx + 16 * j;
      if (col >= N) break;
      float r = alpha * acc[i * TN + j];
      if (beta != 0.0f) r += beta * hal_load(C[row * ldc + col]);
      C[row * ldc + col] = hal_store<T>(r);
    }
  }
}

// No shared memory or barriers: a block of 64 threads, arranged TX x TY (TY = 64 / TX), computes
// a (TY*TM) x (TX*TN) tile of C; each thread accumulates a TM x TN register tile at rows
// m0 + ty*TM + i and columns n0 + tx + j*TX. Load indices are clamped into the matrices (rows to
// M-1, columns to N-1) and every store is guarded; K has no alignment requirement.
// Block 64 (1-D); grid (ceil(N/(TX*TN)), ceil(M/(TY*TM)), 1).
template <typename T, int TM, int TN, int TX>
__device__ __forceinline__ void matmul_reg(const T* A, const T* B, T* C, uint32_t M, uint32_t N,
                                           uint32_t K, uint32_t lda, uint32_t ldb, uint32_t ldc,
                                           float alpha, float beta) {
  constexpr int TY = 64 / TX;
  static_assert(TX * TY == 64, "TX must divide 64");
  const uint32_t tid = threadIdx.x;
  const uint32_t tx = tid % TX;
  const uint32_t ty = tid / TX;
  const uint32_t m0 = blockIdx.y * (TY * TM) + ty * TM;
  const uint32_t n0 = blockIdx.x * (TX * TN) + tx;
  uint32_t arow[TM], bcol[TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) arow[i] = min(m0 + i, M - 1) * lda;
#pragma unroll
  for (int j = 0; j < TN; ++j) bcol[j] = min(n0 + j * TX, N - 1);
  float acc[TM * TN];
#pragma unroll
  for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0f;
  for (uint32_t k = 0; k < K; ++k) {
    float av[TM], bv[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) av[i] = hal_load(A[arow[i] + k]);
#pragma unroll
    for (int j = 0; j < TN; ++j) bv[j] = hal_load(B[k * ldb + bcol[j]]);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i * TN + j] += av[i] * bv[j];
  }
  hal_store_tile<T, TM, TN>(C, acc, m0, n0, TX, M, N, ldc, alpha, beta);
}

#define HAL_MATMUL_PARAMS(T)                                                                    \
  const T *A, const T *B, T *C, uint32_t M, uint32_t N, uint32_t K, uint32_t lda, uint32_t ldb, \
      uint32_t ldc, float alpha, float beta
#define HAL_MATMUL_ARGS A, B, C, M, N, K, lda, ldb, ldc, alpha, beta

extern "C" __global__ void __launch_bounds__(256) matmul_naive_f32(HAL_MATMUL_PARAMS(float)) {
  matmul_naive<float>(HAL_MATMUL_ARGS);
}
extern "C" __global__ void __launch_bounds__(256) matmul_naive_f16(HAL_MATMUL_PARAMS(__half)) {
  matmul_naive<__half>(HAL_MATMUL_ARGS);
}

// Tile instances: matmul_tiled_<dtype>_<BM>x<BN>; BK is 16 for all of them.
#define HAL_MATMUL_TILED(name, T, BM, BN, BK)                                    \
  extern "C" __global__ void __launch_bounds__(256) name(HAL_MATMUL_PARAMS(T)) { \
    matmul_tiled<T, BM, BN, BK>(HAL_MATMUL_ARGS);                                \
  }
HAL_MATMUL_TILED(matmul_tiled_f32_32x32, float, 32, 32, 16)
HAL_MATMUL_TILED(matmul_tiled_f32_64x64, float, 64, 64, 16)
HAL_MATMUL_TILED(matmul_tiled_f32_128x128, float, 128, 128, 16)
HAL_MATMUL_TILED(matmul_tiled_f16_32x32, __half, 32, 32, 16)
HAL_MATMUL_TILED(matmul_tiled_f16_64x64, __half, 64, 64, 16)
HAL_MATMUL_TILED(matmul_tiled_f16_128x128, __half, 128, 128, 16)

// Register-tiled instances: matmul_reg_<dtype>_<BM>x<BN>, BM = (64/TX)*TM, BN = TX*TN.
#define HAL_MATMUL_REG(name, T, TM, TN, TX)                                     \
  extern "C" __global__ void __launch_bounds__(64) name(HAL_MATMUL_PARAMS(T)) { \
    matmul_reg<T, TM, TN, TX>(HAL_MATMUL_ARGS);                                 \
  }
HAL_MATMUL_REG(matmul_reg_f32_64x64, float, 16, 4, 16)
HAL_MATMUL_REG(matmul_reg_f32_64x256, float, 16, 16, 16)
HAL_MATMUL_REG(matmul_reg_f16_64x64, __half, 16, 4, 16)
HAL_MATMUL_REG(matmul_reg_f16_64x256, __half, 16, 16, 16)
