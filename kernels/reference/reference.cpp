// CPU references with double accumulation, and the per-element bounds of the tolerance policy
// (kernels/README.md). Each bound is a worst-case estimate for a kernel that accumulates in fp32
// in any order (with or without fused multiply-add), doubled as a safety margin, plus the
// rounding of the stored result.
#include <hal_kernels/reference.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hal_kernels::ref {
namespace {

constexpr double kU = kUnitF32;
constexpr double kSafety = 2.0;
const double kNegInf = -std::numeric_limits<double>::infinity();

// Relative error of a device exp(x) for x <= 0, including the rounding of the x it was given
// (x = s - m computed in fp32): Vulkan allows 3 + 2|x| ulp for exp, CUDA's expf is within 2.
double exp_error(double x) {
  return (3.0 + 3.0 * std::fabs(x)) * kU;
}

bool visible(bool causal, uint32_t i, uint32_t j, uint32_t seq_q, uint32_t seq_kv) {
  return !causal ||
         static_cast<int64_t>(j) <= static_cast<int64_t>(i) + int64_t{seq_kv} - int64_t{seq_q};
}

}  // namespace

Result matmul(const std::vector<float>& A, const std::vector<float>& B,
              const std::vector<float>& C0, uint32_t M, uint32_t N, uint32_t K, uint32_t lda,
              uint32_t ldb, uint32_t ldc, float alpha, float beta, Storage storage) {
  Result r;
  r.value.resize(size_t{M} * N);
  r.bound.resize(size_t{M} * N);
  const double us = store_unit(storage);
  for (uint32_t i = 0; i < M; ++i) {
    for (uint32_t j = 0; j < N; ++j) {
      double acc = 0, mag = 0;
      for (uint32_t k = 0; k < K; ++k) {
        const double p = double{A[size_t{i} * lda + k]} * double{B[size_t{k} * ldb + j]};
        acc += p;
        mag += std::fabs(p);
      }
      double value = double{alpha} * acc;
      double err = (K + 2.0) * kU * std::fabs(alpha) * mag;
      if (beta != 0.0f) {
        const double c = double{beta} * double{C0[size_t{i} * ldc + j]};
        value += c;
        err += 2.0 * kU * (std::fabs(c) + std::fabs(value));
      }
      r.value[size_t{i} * N + j] = value;
      r.bound[size_t{i} * N + j] = kSafety * err + us * std::fabs(value) + store_floor(storage);
    }
  }
  return r;
}

Result softmax_rows(const std::vector<float>& X, uint32_t rows, uint32_t cols, Storage storage) {
  Result r;
  r.value.assign(size_t{rows} * cols, 0.0);
  r.bound.assign(size_t{rows} * cols, 0.0);
  const double us = store_unit(storage);
  for (uint32_t row = 0; row < rows; ++row) {
    const float* x = &X[size_t{row} * cols];
    double m = kNegInf;
    for (uint32_t c = 0; c < cols; ++c) m = std::max(m, double{x[c]});
    double* y = &r.value[size_t{row} * cols];
    double* b = &r.bound[size_t{row} * cols];
    if (m == kNegInf) {
      for (uint32_t c = 0; c < cols; ++c) b[c] = store_floor(storage);
      continue;
    }
    double sum = 0, max_e = 0;
    for (uint32_t c = 0; c < cols; ++c) {
      if (double{x[c]} == kNegInf) continue;
      sum += std::exp(double{x[c]} - m);
      max_e = std::max(max_e, exp_error(double{x[c]} - m));
    }
    for (uint32_t c = 0; c < cols; ++c) {
      if (double{x[c]} == kNegInf) {
        b[c] = store_floor(storage);
        continue;
      }
      y[c] = std::exp(double{x[c]} - m) / sum;
      // This element's exp, the sum's (at most the worst exp error plus cols roundings), the
      // division and the product.
      const double rel = exp_error(double{x[c]} - m) + max_e + (cols + 3.0) * kU;
      b[c] = kSafety * rel * y[c] + us * y[c] + store_floor(storage);
    }
  }
  return r;
}

Result row_sum(const std::vector<float>& X, uint32_t rows, uint32_t cols, Storage storage) {
  Result r;
  r.value.resize(rows);
  r.bound.resize(rows);
  for (uint32_t row = 0; row < rows; ++row) {
    double sum = 0, mag = 0;
    for (uint32_t c = 0; c < cols; ++c) {
      sum += X[size_t{row} * cols + c];
      mag += std::fabs(double{X[size_t{row} * cols + c]});
    }
    r.value[row] = sum;
    r.bound[row] = kSafety * (cols + 2.0) * kU * mag + store_unit(storage) * std::fabs(sum) +
                   store_floor(storage);
  }
  return r;
}

Result attention_scores(const std::vector<float>& Q, const std::vector<float>& K,
                        uint32_t batch_heads, uint32_t seq_q, uint32_t seq_kv, uint32_t head_dim,
                        float scale, bool causal) {
  Result r;
  const size_t n = size_t{batch_heads} * seq_q * seq_kv;
  r.value.assign(n, kNegInf);
  r.bound.assign(n, 0.0);
  for (uint32_t h = 0; h < batch_heads; ++h) {
    for (uint32_t i = 0; i < seq_q; ++i) {
      const float* q = &Q[(size_t{h} * seq_q + i) * head_dim];
      for (uint32_t j = 0; j < seq_kv; ++j) {
        const size_t at = (size_t{h} * seq_q + i) * seq_kv + j;
        if (!visible(causal, i, j, seq_q, seq_kv)) continue;
        const float* k = &K[(size_t{h} * seq_kv + j) * head_dim];
        double dot = 0, mag = 0;
        for (uint32_t d = 0; d < head_dim; ++d) {
          dot += double{q[d]} * double{k[d]};
          mag += std::fabs(double{q[d]} * double{k[d]});
        }
        r.value[at] = dot * scale;
        r.bound[at] = kSafety * (head_dim + 3.0) * kU * std::fabs(double{scale}) * mag +
                      store_floor(Storage::kF32);
      }
    }
  }
  return r;
}

Result attention(const std::vector<float>& Q, const std::vector<float>& K,
                 const std::vector<float>& V, uint32_t batch_heads, uint32_t seq_q, uint32_t seq_kv,
                 uint32_t head_dim, float scale, bool causal, Storage storage) {
  const Result s = attention_scores(Q, K, batch_heads, seq_q, seq_kv, head_dim, scale, causal);
  Result r;
  const size_t n = size_t{batch_heads} * seq_q * head_dim;
  r.value.assign(n, 0.0);
  r.bound.assign(n, store_floor(storage));
  const double us = store_unit(storage);
  const double blocks = std::ceil(seq_kv / 16.0);
  std::vector<double> w(seq_kv);
  for (uint32_t h = 0; h < batch_heads; ++h) {
    for (uint32_t i = 0; i < seq_q; ++i) {
      const size_t row = (size_t{h} * seq_q + i) * seq_kv;
      double m = kNegInf;
      for (uint32_t j = 0; j < seq_kv; ++j) m = std::max(m, s.value[row + j]);
      if (m == kNegInf) continue;  // no visible key: the output row is 0
      // E: the worst relative error of one unnormalised weight exp(s - m): the score's own
      // error, the error of the maximum it is measured from, and the exp.
      double sum = 0, max_score_err = 0, max_e = 0;
      for (uint32_t j = 0; j < seq_kv; ++j) {
        const double sj = s.value[row + j];
        if (sj == kNegInf) continue;
        sum += std::exp(sj - m);
        max_score_err = std::max(max_score_err, s.bound[row + j]);
        max_e = std::max(max_e, exp_error(sj - m));
      }
      const double e = 2.0 * max_score_err + max_e;
      // Relative error of a normalised weight times V, summed: twice E (the weight and the
      // sum of weights), the sum over seq_kv terms, the online softmax's rescaling once per
      // 16 keys, the P*V accumulation, the final division.
      const double rel = 2.0 * e + (2.0 * seq_kv + 3.0 * blocks + 8.0) * kU;
      for (uint32_t j = 0; j < seq_kv; ++j) {
        const double sj = s.value[row + j];
        w[j] = sj == kNegInf ? 0.0 : std::exp(sj - m) / sum;
      }
      for (uint32_t d = 0; d < head_dim; ++d) {
        double acc = 0, mag = 0;
        for (uint32_t j = 0; j < seq_kv; ++j) {
          const double v = V[(size_t{h} * seq_kv + j) * head_dim + d];
          acc += w[j] * v;
          mag += w[j] * std::fabs(v);
        }
        const size_t at = (size_t{h} * seq_q + i) * head_dim + d;
        r.value[at] = acc;
        r.bound[at] = kSafety * rel * mag + us * std::fabs(acc) + store_floor(storage);
      }
    }
  }
  return r;
}

}  // namespace hal_kernels::ref
