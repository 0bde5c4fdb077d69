// Subgroup matmul: C = alpha * A * B + beta * C, row-major, fp32 accumulation; beta == 0 does
// not read C. The algorithm of glsl/matmul_sg.comp: register tiles with the loads of A shared
// across a subgroup, here a segment of SG lanes of a warp (__shfl_sync with width SG).
#include "common.cuh"

// A block of 64 threads, arranged SG x (64/SG), computes a (64/SG*TM) x (SG*TN) tile of C; thread
// (tx, ty) accumulates a TM x TN register tile at rows m0 + ty*TM + i and columns n0 + tx + j*SG.
// The SG threads of one ty are one segment of a warp (SG divides 32), lane tx of it; each loads
// rows tx, tx + SG, ... of their TM rows of A and the segment exchanges them with shuffles.
// Block 64 (1-D); grid (ceil(N/BN), ceil(M/BM), 1).
template <typename T, int TM, int TN, int SG>
__device__ __forceinline__ void matmul_sg(const T* A, const T* B, T* C, uint32_t M, uint32_t N,
                                          uint32_t K, uint32_t lda, uint32_t ldb, uint32_t ldc,
                                          float alpha, float beta) {
  static_assert(32 % SG == 0, "a subgroup is a segment of one warp");
  constexpr int TY = 64 / SG;
  constexpr int RA = (TM + SG - 1) / SG;
  const uint32_t tid = threadIdx.x;
  const uint32_t tx = tid % SG;
  const uint32_t ty = tid / SG;
  const uint32_t m0 = blockIdx.y * (TY * TM) + ty * TM;
  const uint32_t n0 = blockIdx.x * (SG * TN) + tx;
  uint32_t lrow[RA], bcol[TN];
#pragma unroll
  for (int r = 0; r < RA; ++r) lrow[r] = min(m0 + r * SG + tx, M - 1) * lda;
#pragma unroll
  for (int j = 0; j < TN; ++j) bcol[j] = min(n0 + j * SG, N - 1);
  float acc[TM * TN];
#pragma unroll
  for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0f;
  for (uint32_t k = 0; k < K; ++k) {
    float lv[RA], bv[TN];
#pragma unroll
    for (int r = 0; r < RA; ++r) lv[r] = hal_load(A[lrow[r] + k]);
#pragma unroll
    for (int j = 0; j < TN; ++j) bv[j] = hal_load(B[k * ldb + bcol[j]]);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const float av = __shfl_sync(0xffffffffu, lv[i / SG], i % SG, SG);
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i * TN + j] += av * bv[j];
    }
  }
  hal_store_tile<T, TM, TN>(C, acc, m0, n0, SG, M, N, ldc, alpha, beta);
}

#define HAL_MATMUL_PARAMS(T)                                                                    \
  const T *A, const T *B, T *C, uint32_t M, uint32_t N, uint32_t K, uint32_t lda, uint32_t ldb, \
      uint32_t ldc, float alpha, float beta
#define HAL_MATMUL_ARGS A, B, C, M, N, K, lda, ldb, ldc, alpha, beta

// Instances: matmul_sg_<dtype>_<BM>x<BN>, BM = (64/SG)*TM, BN = SG*TN.
#define HAL_MATMUL_SG(name, T, TM, TN, SG)                                      \
  extern "C" __global__ void __launch_bounds__(64) name(HAL_MATMUL_PARAMS(T)) { \
    matmul_sg<T, TM, TN, SG>(HAL_MATMUL_ARGS);                                  \
  }
HAL_MATMUL_SG(matmul_sg_f32_128x64, float, 16, 8, 8)
HAL_MATMUL_SG(matmul_sg_f32_256x64, float, 32, 8, 8)
HAL_MATMUL_SG(matmul_sg_f16_128x64, __half, 16, 8, 8)
HAL_MATMUL_SG(matmul_sg_f16_256x64, __half, 32, 8, 8)
