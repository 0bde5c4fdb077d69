// Tensor-core matmul for fp16 storage: C = alpha * A * B + beta * C, row-major, the parameter list
// of matmul.cu, fp32 accumulation. PTX only (see kernels/README.md): the warp-level matrix
// instructions of sm_80 and later, mma.sync.m16n8k16 (fp16 inputs, fp32 accumulators), ldmatrix
// (shared memory to fragments, .trans for B) and cp.async (global to shared memory without
// registers). Every compute_80 GPU has them.
//
// A block of (BM/WM) x (BN/WN) warps computes a BM x BN tile of C; each warp a WM x WN part of it
// as (WM/16) x (WN/8) mma tiles. K is walked BK (32 or 64) at a time; the A tile (BM x BK) and the
// B tile (BK x BN) of the next STAGES - 1 steps are in flight while the current one is
// multiplied. The stages live in dynamic shared memory, STAGES * (BM + BN) * BK * 2 bytes, which
// every launch passes (the manifest's shared_bytes; above 48 KiB hal opts the kernel in).
//
// Shared-memory layout: rows of 16-byte chunks (8 halves), the chunk index XOR-swizzled so that
// the 8 row addresses of one ldmatrix fall in 8 different bank groups: an A row of 4 chunks keeps
// chunk c at c ^ ((r / 2) % 4), one of 8 chunks at c ^ (r % 8); B row k (BN halves) keeps chunk c
// at c ^ (k % 8).
//
// Any shape works: tiles are zero-filled past M, N and K (cp.async's src-size operand), stores
// are guarded. A block whose tile lies inside C copies whole chunks with no checks (the common
// case, measured to matter: the checked copies cost a third of the speed at 4096^3). cp.async
// needs 16-byte aligned sources, so when lda or ldb is not a multiple of 8 or A or B is not
// 16-byte aligned, the block loads its tiles with ordinary loads instead (same layout, same
// result, slower).
// Block 32 * (BM/WM) * (BN/WN) (1-D); grid (ceil(N/BN), ceil(M/BM), 1).
#include "common.cuh"

// A named namespace, not an anonymous one: the extern shared array below is named after its
// namespace in the PTX, and an anonymous namespace's name is a hash that changes with the
// source's path, which would make the committed PTX differ from every other checkout's build.
namespace hal_matmul_mma {


__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes from global |src| to shared |dst|, of which the first |src_bytes| come from
// |src| and the rest are zero; with src_bytes 0 nothing is read.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most |N| of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
// d += a * b for one 16x8x16 tile (a: 16x16 row-major fragment, b: 16x8 column fragment).
// Registers only, so not volatile: the compiler may interleave it with the next fragments' loads.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Offsets in halves of chunk |c| of A-tile row |r| (BK halves: 4 or 8 chunks) and of B-tile row
// |k|. Eight consecutive rows always cover the eight 16-byte bank groups of 128 bytes.
template <int BK>
__device__ __forceinline__ uint32_t a_offset(uint32_t r, uint32_t c) {
  static_assert(BK == 32 || BK == 64, "rows of 4 or 8 chunks");
  const uint32_t swizzle = BK == 64 ? (r & 7) : ((r >> 1) & 3);
  return r * BK + ((c ^ swizzle) << 3);
}
template <int BN>
__device__ __forceinline__ uint32_t b_offset(uint32_t k, uint32_t c) {
  return k * BN + ((c ^ (k & 7)) << 3);
}

// One 16-byte chunk of a tile: |count| (0 to 8) halves from |src|, zeros after them.
__device__ __forceinline__ void load_chunk(uint16_t* dst, const __half* src, uint32_t count,
                                           bool async) {
  if (async) {
    cp_async_16(shared_address(dst), src, count * 2);
    return;
  }
  const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
#pragma unroll
  for (uint32_t e = 0; e < 8; ++e) dst[e] = e < count ? s[e] : uint16_t{0};
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES>
__device__ __forceinline__ void matmul_mma(const __half* A, const __half* B, __half* C,
                                           uint32_t M, uint32_t N, uint32_t K, uint32_t lda,
                                           uint32_t ldb, uint32_t ldc, float alpha, float beta) {
  constexpr int WARPS_N = BN / WN;
  constexpr int kThreads = 32 * (BM / WM) * WARPS_N;
  constexpr int MT = WM / 16;  // mma tiles per warp along M
  constexpr int NT = WN / 8;   // along N
  constexpr int kBChunks = BN / 8;
  static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "a warp takes whole 16x16 pairs of mma tiles");
  static_assert(kBChunks % 8 == 0, "the B swizzle needs rows of at least 8 chunks");
  static_assert(STAGES >= 2, "a pipeline has at least two stages");

  // STAGES A tiles, then STAGES B tiles.
  extern __shared__ __align__(128) uint16_t shared_tiles[];
  uint16_t(*As)[BM * BK] = reinterpret_cast<uint16_t(*)[BM * BK]>(shared_tiles);
  uint16_t(*Bs)[BK * BN] =
      reinterpret_cast<uint16_t(*)[BK * BN]>(shared_tiles + STAGES * BM * BK);

  const uint32_t tid = threadIdx.x;
  const uint32_t lane = tid % 32;
  const uint32_t warp = tid / 32;
  const uint32_t wm0 = (warp / WARPS_N) * WM;
  const uint32_t wn0 = (warp % WARPS_N) * WN;
  const uint32_t m0 = blockIdx.y * BM;
  const uint32_t n0 = blockIdx.x * BN;
  const bool async = ((lda | ldb) & 7) == 0 &&
                     ((reinterpret_cast<uintptr_t>(A) | reinterpret_cast<uintptr_t>(B)) & 15) == 0;
  // The block's tile lies inside M x N, so only K can cut a chunk short (block-uniform).
  const bool interior = async && m0 + BM <= M && n0 + BN <= N;

  // Each thread copies the same chunks of every tile (rows of A and columns of B fixed, only k
  // moving): their sources at k = 0, rows clamped into A (a chunk past M copies nothing).
  constexpr int kAChunks = BK / 8;  // per row of the A tile
  constexpr int kAIters = BM * kAChunks / kThreads;
  constexpr int kBIters = BK * kBChunks / kThreads;
  static_assert(kAIters * kThreads == BM * kAChunks && kBIters * kThreads == BK * kBChunks,
                "the threads share the tiles' chunks evenly");
  const __half* a_src[kAIters];
  const __half* b_src[kBIters];
#pragma unroll
  for (int it = 0; it < kAIters; ++it) {
    const uint32_t i = tid + it * kThreads;
    a_src[it] = A + size_t(min(m0 + i / kAChunks, M - 1)) * lda + (i % kAChunks) * 8;
  }
#pragma unroll
  for (int it = 0; it < kBIters; ++it) {
    const uint32_t i = tid + it * kThreads;
    b_src[it] = B + size_t(i / kBChunks) * ldb + n0 + (i % kBChunks) * 8;
  }

  auto load_tiles = [&](int stage, uint32_t k0) {
    if (interior && k0 + BK <= K) {  // every chunk whole and aligned: the common case
#pragma unroll
      for (int it = 0; it < kAIters; ++it) {
        const uint32_t i = tid + it * kThreads;
        cp_async_16(shared_address(&As[stage][a_offset<BK>(i / kAChunks, i % kAChunks)]),
                    a_src[it] + k0, 16);
      }
#pragma unroll
      for (int it = 0; it < kBIters; ++it) {
        const uint32_t i = tid + it * kThreads;
        cp_async_16(shared_address(&Bs[stage][b_offset<BN>(i / kBChunks, i % kBChunks)]),
                    b_src[it] + size_t(k0) * ldb, 16);
      }
      return;
    }
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const uint32_t i = tid + it * kThreads;
      const uint32_t r = i / kAChunks, c = i % kAChunks;
      const uint32_t gk = k0 + c * 8;
      const bool inside = m0 + r < M && gk < K;
      load_chunk(&As[stage][a_offset<BK>(r, c)], inside ? a_src[it] + k0 : A,
                 inside ? min(8u, K - gk) : 0u, async);
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const uint32_t i = tid + it * kThreads;
      const uint32_t k = i / kBChunks, c = i % kBChunks;
      const uint32_t gk = k0 + k, gn = n0 + c * 8;
      const bool inside = gk < K && gn < N;
      load_chunk(&Bs[stage][b_offset<BN>(k, c)], inside ? b_src[it] + size_t(k0) * ldb : B,
                 inside ? min(8u, N - gn) : 0u, async);
    }
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  const uint32_t k_tiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tiles(s, s * BK);
    cp_async_commit();  // empty groups keep the count of groups in step with the tiles
  }

  for (uint32_t kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies)...
    __syncthreads();  // ...everyone's, and every warp is done with the stage refilled next
    const uint32_t next = kt + STAGES - 1;
    if (next < k_tiles) load_tiles(next % STAGES, next * BK);
    cp_async_commit();

    const int stage = kt % STAGES;
#pragma unroll
    for (uint32_t kk = 0; kk < BK; kk += 16) {
      uint32_t a[MT][4];
      uint32_t b[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        // Lanes 0-15 address rows 0-15 at k..k+7, lanes 16-31 the same rows at k+8..k+15.
        const uint32_t r = wm0 + i * 16 + lane % 16;
        ldmatrix_x4(a[i], shared_address(&As[stage][a_offset<BK>(r, kk / 8 + lane / 16)]));
      }
#pragma unroll
      for (int j = 0; j < NT; j += 2) {
        // Lanes 0-15 address k rows kk..kk+15 of columns n..n+7, lanes 16-31 of n+8..n+15.
        const uint32_t k = kk + lane % 16;
        uint32_t r[4];
        ldmatrix_x4_trans(r, shared_address(&Bs[stage][b_offset<BN>(k, (wn0 + j * 8) / 8 + lane / 16)]));
        b[j][0] = r[0];
        b[j][1] = r[1];
        b[j + 1][0] = r[2];
        b[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) mma_16816(acc[i][j], a[i], b[j][0], b[j][1]);
    }
  }
  cp_async_wait<0>();

  // Accumulator e of tile (i, j) is row g (+8 for e >= 2), column 2t + e % 2 of the tile,
  // where g = lane / 4 and t = lane % 4.
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const uint32_t row = m0 + wm0 + i * 16 + lane / 4 + (e >= 2 ? 8 : 0);
        const uint32_t col = n0 + wn0 + j * 8 + (lane % 4) * 2 + e % 2;
        if (row < M && col < N) {
          float r = alpha * acc[i][j][e];
          if (beta != 0.0f) r += beta * hal_load(C[size_t(row) * ldc + col]);
          C[size_t(row) * ldc + col] = hal_store<__half>(r);
        }
      }
}

}  // namespace hal_matmul_mma

#define HAL_MATMUL_MMA(name, BM, BN, BK, WM, WN, STAGES)                                       \
  extern "C" __global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN))                       \
      name(const __half* A, const __half* B, __half* C, uint32_t M, uint32_t N, uint32_t K,      \
           uint32_t lda, uint32_t ldb, uint32_t ldc, float alpha, float beta) {                  \
    hal_matmul_mma::matmul_mma<BM, BN, BK, WM, WN, STAGES>(A, B, C, M, N, K, lda, ldb, ldc,      \
                                                           alpha, beta);                         \
  }
// matmul_mma_f16_<BM>x<BN>[_w8][_k64]: the block tile, and where they differ from the family's
// usual 64x64 warp tile and BK of 32: 8 warps of 64x32, BK 64. All have three stages. The 64x64
// warp tiles need about 250 registers, so one block of 8 warps runs per multiprocessor; the
// 64x32 ones about 128, so two. Shared memory: 24 KiB (64x64), 48 KiB (128x128), 144 KiB (k64:
// within the 163 KiB of an A100 and the 227 KiB of an H100).
HAL_MATMUL_MMA(matmul_mma_f16_256x128_k64, 256, 128, 64, 64, 64, 3)
HAL_MATMUL_MMA(matmul_mma_f16_128x256_k64, 128, 256, 64, 64, 64, 3)
HAL_MATMUL_MMA(matmul_mma_f16_128x128, 128, 128, 32, 64, 64, 3)
HAL_MATMUL_MMA(matmul_mma_f16_128x128_w8, 128, 128, 32, 64, 32, 3)
HAL_MATMUL_MMA(matmul_mma_f16_64x64, 64, 64, 32, 32, 32, 3)
