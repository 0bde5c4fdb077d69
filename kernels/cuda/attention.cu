// Attention and its building blocks: row softmax, row sum, scores, P*V, and the fused kernel with
// an online softmax. The same algorithms, shapes and launch geometry as the GLSL kernels of the
// same names (see glsl/*.comp for the contracts).
#include "common.cuh"

// ---- Row softmax and row sum: one block of 128 threads per row, rows beyond the grid in turn.

template <typename T>
__device__ __forceinline__ void softmax_rows(const T* X, T* Y, uint32_t rows, uint32_t cols) {
  __shared__ float red[128];
  const uint32_t tid = threadIdx.x;
  for (uint32_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const uint32_t base = row * cols;
    float m = HAL_NEG_INF;
    for (uint32_t c = tid; c < cols; c += 128) m = fmaxf(m, hal_load(X[base + c]));
    red[tid] = m;
    __syncthreads();
    for (uint32_t s = 64; s > 0; s >>= 1) {
      if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
      __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    if (m != HAL_NEG_INF) {
      for (uint32_t c = tid; c < cols; c += 128) {
        const float v = hal_load(X[base + c]);
        if (v != HAL_NEG_INF) sum += expf(v - m);
      }
    }
    red[tid] = sum;
    __syncthreads();
    for (uint32_t s = 64; s > 0; s >>= 1) {
      if (tid < s) red[tid] += red[tid + s];
      __syncthreads();
    }
    sum = red[0];
    __syncthreads();
    const float inv = m != HAL_NEG_INF ? 1.0f / sum : 0.0f;
    for (uint32_t c = tid; c < cols; c += 128) {
      const float v = hal_load(X[base + c]);
      Y[base + c] = hal_store<T>(v != HAL_NEG_INF ? expf(v - m) * inv : 0.0f);
    }
  }
}

template <typename T>
__device__ __forceinline__ void row_sum(const T* X, T* Y, uint32_t rows, uint32_t cols) {
  __shared__ float red[128];
  const uint32_t tid = threadIdx.x;
  for (uint32_t row = blockIdx.x; row < rows; row += gridDim.x) {
    float sum = 0.0f;
    for (uint32_t c = tid; c < cols; c += 128) sum += hal_load(X[row * cols + c]);
    red[tid] = sum;
    __syncthreads();
    for (uint32_t s = 64; s > 0; s >>= 1) {
      if (tid < s) red[tid] += red[tid + s];
      __syncthreads();
    }
    if (tid == 0) Y[row] = hal_store<T>(red[0]);
    __syncthreads();
  }
}

extern "C" __global__ void __launch_bounds__(128)
    softmax_rows_f32(const float* X, float* Y, uint32_t rows, uint32_t cols) {
  softmax_rows<float>(X, Y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(128)
    softmax_rows_f16(const __half* X, __half* Y, uint32_t rows, uint32_t cols) {
  softmax_rows<__half>(X, Y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(128)
    row_sum_f32(const float* X, float* Y, uint32_t rows, uint32_t cols) {
  row_sum<float>(X, Y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(128)
    row_sum_f16(const __half* X, __half* Y, uint32_t rows, uint32_t cols) {
  row_sum<__half>(X, Y, rows, cols);
}

// ---- Three-kernel attention: scores (fp32, -inf where masked), softmax_rows_f32, then P*V.
// Block 16x16; grid (ceil(seq_kv/16), ceil(seq_q/16), batch_heads) for the scores and
// (ceil(head_dim/16), ceil(seq_q/16), batch_heads) for P*V.

template <typename T>
__device__ __forceinline__ void attention_scores(const T* Q, const T* K, float* S,
                                                 uint32_t batch_heads, uint32_t seq_q,
                                                 uint32_t seq_kv, uint32_t head_dim, float scale,
                                                 uint32_t causal) {
  const uint32_t j = blockIdx.x * 16 + threadIdx.x;
  const uint32_t i = blockIdx.y * 16 + threadIdx.y;
  const uint32_t h = blockIdx.z;
  if (i >= seq_q || j >= seq_kv || h >= batch_heads) return;
  float v = HAL_NEG_INF;
  if (causal == 0 || (int)j <= (int)i + (int)seq_kv - (int)seq_q) {
    const uint32_t qb = (h * seq_q + i) * head_dim;
    const uint32_t kb = (h * seq_kv + j) * head_dim;
    float acc = 0.0f;
    for (uint32_t d = 0; d < head_dim; ++d) acc += hal_load(Q[qb + d]) * hal_load(K[kb + d]);
    v = acc * scale;
  }
  S[(h * seq_q + i) * seq_kv + j] = v;
}

template <typename T>
__device__ __forceinline__ void attention_pv(const float* P, const T* V, T* O,
                                             uint32_t batch_heads, uint32_t seq_q,
                                             uint32_t seq_kv, uint32_t head_dim) {
  const uint32_t d = blockIdx.x * 16 + threadIdx.x;
  const uint32_t i = blockIdx.y * 16 + threadIdx.y;
  const uint32_t h = blockIdx.z;
  if (i >= seq_q || d >= head_dim || h >= batch_heads) return;
  const uint32_t pb = (h * seq_q + i) * seq_kv;
  const uint32_t vb = h * seq_kv * head_dim + d;
  float acc = 0.0f;
  for (uint32_t j = 0; j < seq_kv; ++j) acc += P[pb + j] * hal_load(V[vb + j * head_dim]);
  O[(h * seq_q + i) * head_dim + d] = hal_store<T>(acc);
}

#define HAL_SCORES_PARAMS(T)                                                              \
  const T *Q, const T *K, float *S, uint32_t batch_heads, uint32_t seq_q, uint32_t seq_kv, \
      uint32_t head_dim, float scale, uint32_t causal
#define HAL_SCORES_ARGS Q, K, S, batch_heads, seq_q, seq_kv, head_dim, scale, causal
#define HAL_PV_PARAMS(T)                                                                  \
  const float *P, const T *V, T *O, uint32_t batch_heads, uint32_t seq_q, uint32_t seq_kv, \
      uint32_t head_dim
#define HAL_PV_ARGS P, V, O, batch_heads, seq_q, seq_kv, head_dim

extern "C" __global__ void __launch_bounds__(256)
    attention_scores_f32(HAL_SCORES_PARAMS(float)) {
  attention_scores<float>(HAL_SCORES_ARGS);
}
extern "C" __global__ void __launch_bounds__(256)
    attention_scores_f16(HAL_SCORES_PARAMS(__half)) {
  attention_scores<__half>(HAL_SCORES_ARGS);
}
extern "C" __global__ void __launch_bounds__(256) attention_pv_f32(HAL_PV_PARAMS(float)) {
  attention_pv<float>(HAL_PV_ARGS);
}
extern "C" __global__ void __launch_bounds__(256) attention_pv_f16(HAL_PV_PARAMS(__half)) {
  attention_pv<__half>(HAL_PV_ARGS);
}

// ---- Fused attention with an online softmax. A block of 128 threads takes 16 query rows (8
// threads per row, each owning D/8 output columns lane + 8*c) and walks the keys 16 at a time
// through shared memory. Block 128; grid (ceil(seq_q/16), batch_heads, 1).

template <typename T, int D>
__device__ __forceinline__ void attention_fused(const T* Q, const T* K, const T* V, T* O,
                                                uint32_t batch_heads, uint32_t seq_q,
                                                uint32_t seq_kv, float scale, uint32_t causal) {
  constexpr int DP = D + 1;
  constexpr int DL = D / 8;
  __shared__ float Qs[16 * DP];
  __shared__ float Ks[16 * DP];
  __shared__ float Vs[16 * D];
  __shared__ float Ss[16 * 16];
  const uint32_t tid = threadIdx.x;
  const uint32_t r = tid / 8;
  const uint32_t lane = tid % 8;
  const uint32_t q0 = blockIdx.x * 16;
  const uint32_t h = blockIdx.y;
  if (h >= batch_heads) return;
  const uint32_t i = q0 + r;
  const int offset = (int)seq_kv - (int)seq_q;
  for (uint32_t idx = tid; idx < 16 * D; idx += 128) {
    const uint32_t rr = idx / D, d = idx % D;
    float val = 0.0f;
    if (q0 + rr < seq_q) val = hal_load(Q[(h * seq_q + q0 + rr) * D + d]);
    Qs[rr * DP + d] = val;
  }
  uint32_t kv_end = seq_kv;
  if (causal != 0) {
    const int last = (int)min(q0 + 15, seq_q - 1) + offset + 1;
    kv_end = (uint32_t)max(0, min(last, (int)seq_kv));
  }
  float m = HAL_NEG_INF;
  float l = 0.0f;
  float acc[DL];
#pragma unroll
  for (int c = 0; c < DL; ++c) acc[c] = 0.0f;
  for (uint32_t kv0 = 0; kv0 < kv_end; kv0 += 16) {
    for (uint32_t idx = tid; idx < 16 * D; idx += 128) {
      const uint32_t j = idx / D, d = idx % D;
      float kval = 0.0f, vval = 0.0f;
      if (kv0 + j < seq_kv) {
        const uint32_t g = (h * seq_kv + kv0 + j) * D + d;
        kval = hal_load(K[g]);
        vval = hal_load(V[g]);
      }
      Ks[j * DP + d] = kval;
      Vs[j * D + d] = vval;
    }
    __syncthreads();
#pragma unroll
    for (int jj = 0; jj < 2; ++jj) {
      const uint32_t j = lane + 8 * jj;
      const uint32_t key = kv0 + j;
      float sc = HAL_NEG_INF;
      if (key < seq_kv && (causal == 0 || (int)key <= (int)i + offset)) {
        float dot = 0.0f;
#pragma unroll 16
        for (int d = 0; d < D; ++d) dot += Qs[r * DP + d] * Ks[j * DP + d];
        sc = dot * scale;
      }
      Ss[r * 16 + j] = sc;
    }
    __syncthreads();
    float mb = HAL_NEG_INF;
#pragma unroll
    for (int j = 0; j < 16; ++j) mb = fmaxf(mb, Ss[r * 16 + j]);
    const float m_new = fmaxf(m, mb);
    if (m_new != HAL_NEG_INF) {
      const float corr = m != HAL_NEG_INF ? expf(m - m_new) : 0.0f;
      l *= corr;
#pragma unroll
      for (int c = 0; c < DL; ++c) acc[c] *= corr;
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        const float sc = Ss[r * 16 + j];
        const float pj = sc != HAL_NEG_INF ? expf(sc - m_new) : 0.0f;
        l += pj;
#pragma unroll
        for (int c = 0; c < DL; ++c) acc[c] += pj * Vs[j * D + lane + 8 * c];
      }
      m = m_new;
    }
    __syncthreads();
  }
  if (i < seq_q) {
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int c = 0; c < DL; ++c) O[(h * seq_q + i) * D + lane + 8 * c] = hal_store<T>(acc[c] * inv);
  }
}

#define HAL_FUSED(name, T, D)                                                                  \
  extern "C" __global__ void __launch_bounds__(128)                                            \
      name(const T* Q, const T* K, const T* V, T* O, uint32_t batch_heads, uint32_t seq_q,     \
           uint32_t seq_kv, float scale, uint32_t causal) {                                    \
    attention_fused<T, D>(Q, K, V, O, batch_heads, seq_q, seq_kv, scale, causal);              \
  }
HAL_FUSED(attention_fused_f32_d64, float, 64)
HAL_FUSED(attention_fused_f32_d128, float, 128)
HAL_FUSED(attention_fused_f16_d64, __half, 64)
HAL_FUSED(attention_fused_f16_d128, __half, 128)

// ---- Fused attention in registers: no shared memory, no barrier. Each of WG threads owns RQ
// query rows (i0 + WG * r) and their D outputs, and walks the keys BKV at a time: an RQ x BKV
// tile of scores, one online-softmax step per row, then the tile times BKV rows of V.
// Block WG; grid (ceil(seq_q / (WG * RQ)), batch_heads, 1).

template <typename T, int D, int RQ, int BKV, int WG>
__device__ __forceinline__ void attention_reg(const T* Q, const T* K, const T* V, T* O,
                                              uint32_t batch_heads, uint32_t seq_q,
                                              uint32_t seq_kv, float scale, uint32_t causal) {
  const uint32_t h = blockIdx.y;
  if (h >= batch_heads) return;
  const uint32_t i0 = blockIdx.x * (WG * RQ) + threadIdx.x;
  const int offset = (int)seq_kv - (int)seq_q;
  uint32_t qrow[RQ];
#pragma unroll
  for (int r = 0; r < RQ; ++r) qrow[r] = (h * seq_q + min(i0 + WG * r, seq_q - 1)) * D;
  uint32_t kv_end = seq_kv;
  if (causal != 0) {
    const int last = (int)min(blockIdx.x * (WG * RQ) + WG * RQ - 1, seq_q - 1) + offset + 1;
    kv_end = (uint32_t)max(0, min(last, (int)seq_kv));
  }
  const uint32_t kbase = h * seq_kv * D;
  float m[RQ], l[RQ], acc[RQ * D];
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    m[r] = HAL_NEG_INF;
    l[r] = 0.0f;
  }
#pragma unroll
  for (int c = 0; c < RQ * D; ++c) acc[c] = 0.0f;
  for (uint32_t kv0 = 0; kv0 < kv_end; kv0 += BKV) {
    float s[RQ * BKV];
#pragma unroll
    for (int c = 0; c < RQ * BKV; ++c) s[c] = 0.0f;
#pragma unroll 4
    for (int d = 0; d < D; ++d) {
      float qv[RQ];
#pragma unroll
      for (int r = 0; r < RQ; ++r) qv[r] = hal_load(Q[qrow[r] + d]);
#pragma unroll
      for (int j = 0; j < BKV; ++j) {
        const float kv = hal_load(K[kbase + min(kv0 + j, seq_kv - 1) * D + d]);
#pragma unroll
        for (int r = 0; r < RQ; ++r) s[r * BKV + j] += qv[r] * kv;
      }
    }
#pragma unroll
    for (int r = 0; r < RQ; ++r) {
      const int row = (int)(i0 + WG * r);
      float mb = HAL_NEG_INF;
#pragma unroll
      for (int j = 0; j < BKV; ++j) {
        const uint32_t key = kv0 + j;
        const bool visible = key < seq_kv && (causal == 0 || (int)key <= row + offset);
        s[r * BKV + j] = visible ? s[r * BKV + j] * scale : HAL_NEG_INF;
        mb = fmaxf(mb, s[r * BKV + j]);
      }
      const float m_new = fmaxf(m[r], mb);
      const float corr = m_new == HAL_NEG_INF ? 1.0f : expf(m[r] - m_new);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < BKV; ++j) {
        const float pj = s[r * BKV + j] == HAL_NEG_INF ? 0.0f : expf(s[r * BKV + j] - m_new);
        s[r * BKV + j] = pj;
        sum += pj;
      }
      l[r] = l[r] * corr + sum;
      m[r] = m_new;
#pragma unroll
      for (int c = 0; c < D; ++c) acc[r * D + c] *= corr;
    }
    // The loop over the keys stays a loop, as in the GLSL: the unrolled body does not grow
    // with BKV.
#pragma unroll 1
    for (int j = 0; j < BKV; ++j) {
      float pr[RQ];
#pragma unroll
      for (int r = 0; r < RQ; ++r) pr[r] = s[r * BKV + j];
      const uint32_t vrow = kbase + min(kv0 + j, seq_kv - 1) * D;
#pragma unroll
      for (int c = 0; c < D; ++c) {
        const float vv = hal_load(V[vrow + c]);
#pragma unroll
        for (int r = 0; r < RQ; ++r) acc[r * D + c] += pr[r] * vv;
      }
    }
  }
#pragma unroll
  for (int r = 0; r < RQ; ++r) {
    const uint32_t row = i0 + WG * r;
    if (row < seq_q) {
      const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
#pragma unroll
      for (int c = 0; c < D; ++c) O[(h * seq_q + row) * D + c] = hal_store<T>(acc[r * D + c] * inv);
    }
  }
}

#define HAL_ATTENTION_REG(name, T, D, RQ, BKV, WG)                                            \
  extern "C" __global__ void __launch_bounds__(WG)                                            \
      name(const T* Q, const T* K, const T* V, T* O, uint32_t batch_heads, uint32_t seq_q,    \
           uint32_t seq_kv, float scale, uint32_t causal) {                                   \
    attention_reg<T, D, RQ, BKV, WG>(Q, K, V, O, batch_heads, seq_q, seq_kv, scale, causal);  \
  }
HAL_ATTENTION_REG(attention_reg_f32_d64, float, 64, 4, 8, 16)
HAL_ATTENTION_REG(attention_reg_f32_d128, float, 128, 2, 8, 16)
HAL_ATTENTION_REG(attention_reg_f16_d64, __half, 64, 4, 8, 16)
HAL_ATTENTION_REG(attention_reg_f16_d128, __half, 128, 2, 8, 16)
