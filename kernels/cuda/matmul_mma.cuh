// The pack's tensor-core matmul for fp16 storage (its instances are in matmul_mma.cu and
// matmul_mma_prefetch.cu): C = alpha * A * B + beta * C, row-major, the parameter list of
// matmul.cu, fp32 accumulation. PTX only (see kernels/README.md): the warp-level matrix
// instructions of sm_80 and later, mma.sync.m16n8k16 (fp16 inputs, fp32 accumulators), ldmatrix
// (shared memory to fragments, .trans for B) and cp.async (global to shared memory without
// registers). Every compute_80 GPU has them.
//
// A block of (BM/WM) x (BN/WN) warps computes a BM x BN tile of C; each warp a WM x WN part of it
// as (WM/16) x (WN/8) mma tiles. K is walked BK (32 or 64) at a time; the A tile (BM x BK) and the
// B tile (BK x BN) of the next STAGES - 1 steps are in flight while the current one is
// multiplied. The stages live in dynamic shared memory, STAGES * (BM + BN) * BK * 2 bytes, which
// every launch passes (the manifest's shared_bytes; above 48 KiB hal opts the kernel in). Two
// mainloops order the waits, copies and fragment loads differently (Mainloop below); the
// manifest's PREFETCH tunable says which one a kernel has.
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
#pragma once
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

// The mainloop: how the copies of the next tiles, the barriers and the fragment loads are placed
// around the mma instructions. Both compute the same result; which is faster depends on the GPU,
// so the tuner measures both.
enum class Mainloop {
  // Per K tile: wait for the tile, barrier, issue the copies of the tile STAGES - 1 ahead, then
  // load fragments and multiply. Simple; the copies' address arithmetic and the first fragment
  // loads of every tile are issued while the tensor cores wait.
  kTileBarrier,
  // Fragments double-buffered in registers across the 16-deep steps and across tiles: the wait
  // and barrier come before the last step of a tile, so the next tile's first fragments load
  // while the last step multiplies, and the copies of the tile STAGES - 1 ahead are spread over
  // the first two steps between mma instructions.
  kPrefetch,
};

template <int BM, int BN, int BK, int WM, int WN, int STAGES, Mainloop LOOP>
__device__ __forceinline__ void matmul_mma(const __half* A, const __half* B, __half* C,
                                           uint32_t M, uint32_t N, uint32_t K, uint32_t lda,
                                           uint32_t ldb, uint32_t ldc, float alpha, float beta) {
  constexpr int WARPS_N = BN / WN;
  constexpr int kThreads = 32 * (BM / WM) * WARPS_N;
  constexpr int MT = WM / 16;  // mma tiles per warp along M
  constexpr int NT = WN / 8;   // along N
  constexpr int KK = BK / 16;  // 16-deep steps per K tile
  constexpr int kAChunks = BK / 8;  // 16-byte chunks per row of the A tile
  constexpr int kBChunks = BN / 8;  // per row of the B tile
  static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "a warp takes whole 16x16 pairs of mma tiles");
  static_assert(kBChunks % 8 == 0, "the B swizzle needs rows of at least 8 chunks");
  static_assert(STAGES >= 2, "a pipeline has at least two stages");

  // Each thread copies the same chunk column of every STRIDE-th row of a tile: row r0 + it *
  // STRIDE. STRIDE is a multiple of 8, so every row a thread copies has the same swizzle and
  // its shared-memory offset is the first one's plus a constant.
  constexpr int kARowStride = kThreads / kAChunks;
  constexpr int kBRowStride = kThreads / kBChunks;
  constexpr int kAIters = BM / kARowStride;
  constexpr int kBIters = BK / kBRowStride;
  static_assert(kThreads % kAChunks == 0 && kARowStride % 8 == 0 && BM % kARowStride == 0,
                "the threads share the A tile's chunks evenly, 8 rows apart");
  static_assert(kThreads % kBChunks == 0 && kBRowStride % 8 == 0 && BK % kBRowStride == 0,
                "the threads share the B tile's chunks evenly, 8 rows apart");

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

  // This thread's chunks: A rows a_r0 + it * kARowStride at chunk a_c; B rows (k) b_k0 + it *
  // kBRowStride at chunk b_c.
  const uint32_t a_r0 = tid / kAChunks, a_c = tid % kAChunks;
  const uint32_t b_k0 = tid / kBChunks, b_c = tid % kBChunks;
  const uint32_t a_dst0 = shared_address(&As[0][a_offset<BK>(a_r0, a_c)]);
  const uint32_t b_dst0 = shared_address(&Bs[0][b_offset<BN>(b_k0, b_c)]);
  const __half* a_src0 = A + size_t(m0 + a_r0) * lda + a_c * 8;  // used only for rows < M
  const __half* b_src0 = B + size_t(b_k0) * ldb + n0 + b_c * 8;

  // The copies of one K tile into |stage|, A's (first) or B's.
  auto load_a = [&](int stage, uint32_t k0) {
    if (interior && k0 + BK <= K) {  // every chunk whole and aligned: the common case
      const uint32_t dst = a_dst0 + stage * (BM * BK * 2);
#pragma unroll
      for (int it = 0; it < kAIters; ++it) {
        cp_async_16(dst + it * (kARowStride * BK * 2), a_src0 + size_t(it) * kARowStride * lda + k0,
                    16);
      }
      return;
    }
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const uint32_t r = a_r0 + it * kARowStride, gk = k0 + a_c * 8;
      const bool inside = m0 + r < M && gk < K;
      load_chunk(&As[stage][a_offset<BK>(r, a_c)],
                 inside ? a_src0 + size_t(it) * kARowStride * lda + k0 : A,
                 inside ? min(8u, K - gk) : 0u, async);
    }
  };
  auto load_b = [&](int stage, uint32_t k0) {
    if (interior && k0 + BK <= K) {
      const uint32_t dst = b_dst0 + stage * (BK * BN * 2);
#pragma unroll
      for (int it = 0; it < kBIters; ++it) {
        cp_async_16(dst + it * (kBRowStride * BN * 2),
                    b_src0 + (size_t(k0) + it * kBRowStride) * ldb, 16);
      }
      return;
    }
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const uint32_t k = b_k0 + it * kBRowStride;
      const uint32_t gk = k0 + k, gn = n0 + b_c * 8;
      const bool inside = gk < K && gn < N;
      load_chunk(&Bs[stage][b_offset<BN>(k, b_c)],
                 inside ? b_src0 + (size_t(k0) + it * kBRowStride) * ldb : B,
                 inside ? min(8u, N - gn) : 0u, async);
    }
  };

  // The fragments of one 16-deep step kk of |stage|.
  auto load_fragments = [&](uint32_t(&a)[MT][4], uint32_t(&b)[NT][2], int stage, uint32_t kk) {
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
      ldmatrix_x4_trans(r,
                        shared_address(&Bs[stage][b_offset<BN>(k, (wn0 + j * 8) / 8 + lane / 16)]));
      b[j][0] = r[0];
      b[j][1] = r[1];
      b[j + 1][0] = r[2];
      b[j + 1][1] = r[3];
    }
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  auto multiply = [&](const uint32_t(&a)[MT][4], const uint32_t(&b)[NT][2]) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j) mma_16816(acc[i][j], a[i], b[j][0], b[j][1]);
  };

  const uint32_t k_tiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      load_a(s, s * BK);
      load_b(s, s * BK);
    }
    cp_async_commit();  // empty groups keep the count of groups in step with the tiles
  }

  if constexpr (LOOP == Mainloop::kTileBarrier) {
    for (uint32_t kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies)...
      __syncthreads();  // ...everyone's, and every warp is done with the stage refilled next
      const uint32_t next = kt + STAGES - 1;
      if (next < k_tiles) {
        load_a(next % STAGES, next * BK);
        load_b(next % STAGES, next * BK);
      }
      cp_async_commit();

      const int stage = kt % STAGES;
#pragma unroll
      for (uint32_t kk = 0; kk < BK; kk += 16) {
        uint32_t a[MT][4];
        uint32_t b[NT][2];
        load_fragments(a, b, stage, kk);
        multiply(a, b);
      }
    }
  } else {
    uint32_t a[2][MT][4];
    uint32_t b[2][NT][2];
    cp_async_wait<STAGES - 2>();  // tile 0 has landed (this thread's copies)...
    __syncthreads();              // ...everyone's
    load_fragments(a[0], b[0], 0, 0);
    int read_stage = 0;             // the stage of tile kt
    int write_stage = STAGES - 1;   // the stage of tile kt + STAGES - 1
    for (uint32_t kt = 0; kt < k_tiles; ++kt) {
      const uint32_t next = kt + STAGES - 1;
#pragma unroll
      for (int kk = 0; kk < KK; ++kk) {
        // The next copies between this tile's mma instructions: A's in the first step, B's in
        // the second, then the group is committed.
        if (kk == 0 && next < k_tiles) load_a(write_stage, next * BK);
        if (kk == 1) {
          if (next < k_tiles) load_b(write_stage, next * BK);
          cp_async_commit();
        }
        if (kk == KK - 1) {
          // Every fragment of tile kt has been loaded (the last step's in the step before).
          cp_async_wait<STAGES - 2>();  // tile kt + 1 has landed (this thread's copies)...
          __syncthreads();  // ...everyone's, and every warp is done with tile kt's stage, which
                            // the next iteration's copies refill
          read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
          write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
        }
        // The fragments of the step after this one: this tile's next step, or the next tile's
        // first (none after the last tile).
        if (kk + 1 < KK) {
          load_fragments(a[(kk + 1) % 2], b[(kk + 1) % 2], read_stage, (kk + 1) * 16);
        } else if (kt + 1 < k_tiles) {
          load_fragments(a[(kk + 1) % 2], b[(kk + 1) % 2], read_stage, 0);
        }
        multiply(a[kk % 2], b[kk % 2]);
      }
    }
    static_assert(KK % 2 == 0, "a tile's first step uses the same fragment buffer in every tile");
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

#define HAL_MATMUL_MMA(name, BM, BN, BK, WM, WN, STAGES, LOOP)                                 \
  extern "C" __global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN))                       \
      name(const __half* A, const __half* B, __half* C, uint32_t M, uint32_t N, uint32_t K,      \
           uint32_t lda, uint32_t ldb, uint32_t ldc, float alpha, float beta) {                  \
    hal_matmul_mma::matmul_mma<BM, BN, BK, WM, WN, STAGES, hal_matmul_mma::Mainloop::LOOP>(      \
        A, B, C, M, N, K, lda, ldb, ldc, alpha, beta);                                           \
  }
