// The CUDA sources of the kernel pack run as host C++ (cuda_host_emulation.h) against the CPU
// reference, so their indexing and algorithms are tested on machines without a CUDA device. The
// PTX made from them is checked by ptxas here and run by the KernelsPtx tests on a CUDA device.
#include "cuda_host_emulation.h"
// clang-format off: the emulation must come first
#include "attention.cu"
#include "matmul.cu"
#include "smoke.cu"
// clang-format on

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kernel_test {
namespace {

using ref::Storage;

template <typename T>
std::vector<T> to_storage(const std::vector<float>& values);
template <>
std::vector<float> to_storage<float>(const std::vector<float>& values) {
  return values;
}
template <>
std::vector<__half> to_storage<__half>(const std::vector<float>& values) {
  std::vector<__half> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = __float2half_rn(values[i]);
  return out;
}
float widen(float v) {
  return v;
}
float widen(__half v) {
  return __half2float(v);
}
template <typename T>
std::vector<float> to_float(const std::vector<T>& values) {
  std::vector<float> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = widen(values[i]);
  return out;
}
template <typename T>
constexpr Storage storage_of() {
  return sizeof(T) == 2 ? Storage::kF16 : Storage::kF32;
}

TEST(KernelsCudaHost, Smoke) {
  for (uint32_t n : {1u, 17u, 255u, 1000u}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const uint32_t grid = n > 300 ? 2 : 1;  // fewer threads than elements: grid-stride loop
    const std::vector<float> x = ref::random_uniform(n, 1), y0 = ref::random_uniform(n, 2);
    std::vector<float> y(n + 1, -1.0f);
    hal_emu::launch({grid}, {256}, [&] { fill_f32(y.data(), n, 2.5f); });
    EXPECT_EQ(std::count(y.begin(), y.end() - 1, 2.5f), static_cast<long>(n));
    EXPECT_EQ(y.back(), -1.0f);
    hal_emu::launch({grid}, {256}, [&] { copy_f32(x.data(), y.data(), n); });
    EXPECT_EQ(std::vector<float>(y.begin(), y.end() - 1), x);
    std::vector<float> c(n);
    hal_emu::launch({grid}, {256}, [&] { vector_add_f32(x.data(), y0.data(), c.data(), n); });
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], x[i] + y0[i]);
    std::vector<float> s = y0;
    hal_emu::launch({grid}, {256}, [&] { saxpy(x.data(), s.data(), n, -1.5f); });
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_NEAR(s[i], -1.5 * x[i] + y0[i], 4 * ref::kUnitF32 * (1.5 + 1.0));
    }
  }
}

struct MatmulShape {
  uint32_t m, n, k, pad;
  float alpha, beta;
};
const MatmulShape kMatmulShapes[] = {{1, 1, 1, 0, 1.0f, 0.0f},
                                     {17, 17, 17, 0, 1.0f, 0.0f},
                                     {64, 64, 64, 0, 1.0f, 0.0f},
                                     {33, 70, 129, 3, 0.75f, -0.5f},
                                     {1, 255, 17, 1, 1.0f, 1.0f}};

// |kernel| is one of the extern "C" matmul kernels; bm x bn its tile (16 x 16 for naive), |block|
// its threads.
template <typename T, typename Kernel>
void check_matmul(const char* name, Kernel kernel, uint32_t bm, uint32_t bn, HalEmuDim3 block) {
  for (const MatmulShape& s : kMatmulShapes) {
    const std::string what = std::string(name) + " (host) M=" + std::to_string(s.m) +
                             " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
    SCOPED_TRACE(what);
    const uint32_t lda = s.k + s.pad, ldb = s.n + s.pad, ldc = s.n + s.pad;
    std::vector<float> a = ref::random_uniform(size_t{s.m} * lda, 1);
    std::vector<float> b = ref::random_uniform(size_t{s.k} * ldb, 2);
    std::vector<float> c = ref::random_uniform(size_t{s.m} * ldc, 3);
    if (storage_of<T>() == Storage::kF16) {
      ref::round_to_half(&a);
      ref::round_to_half(&b);
      ref::round_to_half(&c);
    }
    const std::vector<T> da = to_storage<T>(a), db = to_storage<T>(b);
    std::vector<T> dc = to_storage<T>(c);
    const HalEmuDim3 grid{(s.n + bn - 1) / bn, (s.m + bm - 1) / bm, 1};
    hal_emu::launch(grid, block, [&] {
      kernel(da.data(), db.data(), dc.data(), s.m, s.n, s.k, lda, ldb, ldc, s.alpha, s.beta);
    });
    const std::vector<float> out = to_float(dc);
    std::vector<float> got(size_t{s.m} * s.n);
    for (uint32_t i = 0; i < s.m; ++i) {
      for (uint32_t j = 0; j < s.n; ++j) got[size_t{i} * s.n + j] = out[size_t{i} * ldc + j];
    }
    expect_close(
        got, ref::matmul(a, b, c, s.m, s.n, s.k, lda, ldb, ldc, s.alpha, s.beta, storage_of<T>()),
        what);
  }
}

TEST(KernelsCudaHost, Matmul) {
  const HalEmuDim3 naive{16, 16, 1}, tiled{256, 1, 1}, reg{64, 1, 1};
  check_matmul<float>("matmul_naive_f32", matmul_naive_f32, 16, 16, naive);
  check_matmul<__half>("matmul_naive_f16", matmul_naive_f16, 16, 16, naive);
  check_matmul<float>("matmul_tiled_f32_32x32", matmul_tiled_f32_32x32, 32, 32, tiled);
  check_matmul<float>("matmul_tiled_f32_64x64", matmul_tiled_f32_64x64, 64, 64, tiled);
  check_matmul<float>("matmul_tiled_f32_128x128", matmul_tiled_f32_128x128, 128, 128, tiled);
  check_matmul<__half>("matmul_tiled_f16_32x32", matmul_tiled_f16_32x32, 32, 32, tiled);
  check_matmul<__half>("matmul_tiled_f16_64x64", matmul_tiled_f16_64x64, 64, 64, tiled);
  check_matmul<__half>("matmul_tiled_f16_128x128", matmul_tiled_f16_128x128, 128, 128, tiled);
  check_matmul<float>("matmul_reg_f32_64x64", matmul_reg_f32_64x64, 64, 64, reg);
  check_matmul<float>("matmul_reg_f32_64x256", matmul_reg_f32_64x256, 64, 256, reg);
  check_matmul<__half>("matmul_reg_f16_64x64", matmul_reg_f16_64x64, 64, 64, reg);
  check_matmul<__half>("matmul_reg_f16_64x256", matmul_reg_f16_64x256, 64, 256, reg);
}

template <typename T, typename Softmax, typename Sum>
void check_rows(const char* dtype, Softmax softmax, Sum sum) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& dims : {std::pair<uint32_t, uint32_t>{1, 1}, {17, 17}, {3, 300}}) {
    // Plain variables, not a structured binding: the lambdas below capture them, which clang
    // before 16 refuses for bindings.
    const uint32_t rows = dims.first;
    const uint32_t cols = dims.second;
    std::string shape = " ";
    shape += std::to_string(rows);
    shape += 'x';
    shape += std::to_string(cols);
    SCOPED_TRACE(shape);
    std::vector<float> x = ref::random_uniform(size_t{rows} * cols, rows + cols, -8.0f, 8.0f);
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) {
        float& v = x[size_t{r} * cols + c];
        if (r % 3 == 1) v += 100.0f;
        if (r == 2 && c % 3 == 0) v = -inf;
        if (rows >= 17 && r == rows - 1) v = -inf;
      }
    }
    if (storage_of<T>() == Storage::kF16) ref::round_to_half(&x);
    const std::vector<T> dx = to_storage<T>(x);
    std::vector<T> dy(x.size());
    hal_emu::launch({(rows + 1) / 2}, {128}, [&] { softmax(dx.data(), dy.data(), rows, cols); });
    expect_close(to_float(dy), ref::softmax_rows(x, rows, cols, storage_of<T>()),
                 std::string("softmax_rows_") + dtype + " (host)" + shape);
    // Row sums of finite data.
    std::vector<float> f = ref::random_uniform(size_t{rows} * cols, rows * cols);
    if (storage_of<T>() == Storage::kF16) ref::round_to_half(&f);
    const std::vector<T> df = to_storage<T>(f);
    std::vector<T> ds(rows);
    hal_emu::launch({(rows + 1) / 2}, {128}, [&] { sum(df.data(), ds.data(), rows, cols); });
    expect_close(to_float(ds), ref::row_sum(f, rows, cols, storage_of<T>()),
                 std::string("row_sum_") + dtype + " (host)" + shape);
  }
}

TEST(KernelsCudaHost, Rows) {
  check_rows<float>("f32", softmax_rows_f32, row_sum_f32);
  check_rows<__half>("f16", softmax_rows_f16, row_sum_f16);
}

struct AttentionShape {
  uint32_t bh, seq_q, seq_kv;
};
const AttentionShape kAttentionShapes[] = {{1, 1, 1}, {2, 17, 17}, {3, 5, 33}, {2, 40, 17}};

// |reg| is attention_reg at that dim, instantiated with |reg_rows| query rows per block of
// |reg_block| threads.
template <typename T, typename Fused, typename Reg, typename Scores, typename Pv>
void check_attention(const std::string& label, uint32_t dim, Fused fused, Reg reg,
                     uint32_t reg_rows, uint32_t reg_block, Scores scores, Pv pv) {
  for (const AttentionShape& s : kAttentionShapes) {
    for (uint32_t causal : {0u, 1u}) {
      const std::string what = label + " (host) bh=" + std::to_string(s.bh) +
                               " seq_q=" + std::to_string(s.seq_q) +
                               " seq_kv=" + std::to_string(s.seq_kv) + (causal ? " causal" : "");
      SCOPED_TRACE(what);
      const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
      std::vector<float> q = ref::random_uniform(size_t{s.bh} * s.seq_q * dim, 1, -2.0f, 2.0f);
      std::vector<float> k = ref::random_uniform(size_t{s.bh} * s.seq_kv * dim, 2);
      std::vector<float> v = ref::random_uniform(size_t{s.bh} * s.seq_kv * dim, 3);
      if (storage_of<T>() == Storage::kF16) {
        ref::round_to_half(&q);
        ref::round_to_half(&k);
        ref::round_to_half(&v);
      }
      const std::vector<T> dq = to_storage<T>(q), dk = to_storage<T>(k), dv = to_storage<T>(v);
      const ref::Result want = ref::attention(q, k, v, s.bh, s.seq_q, s.seq_kv, dim, scale,
                                              causal != 0, storage_of<T>());
      std::vector<T> out(q.size());
      hal_emu::launch({(s.seq_q + 15) / 16, s.bh, 1}, {128}, [&] {
        fused(dq.data(), dk.data(), dv.data(), out.data(), s.bh, s.seq_q, s.seq_kv, scale, causal);
      });
      expect_close(to_float(out), want, "fused " + what);

      std::vector<T> out_reg(q.size());
      hal_emu::launch({(s.seq_q + reg_rows - 1) / reg_rows, s.bh, 1}, {reg_block}, [&] {
        reg(dq.data(), dk.data(), dv.data(), out_reg.data(), s.bh, s.seq_q, s.seq_kv, scale,
            causal);
      });
      expect_close(to_float(out_reg), want, "reg " + what);

      std::vector<float> sc(size_t{s.bh} * s.seq_q * s.seq_kv), p(sc.size());
      std::vector<T> out3(q.size());
      hal_emu::launch({(s.seq_kv + 15) / 16, (s.seq_q + 15) / 16, s.bh}, {16, 16, 1}, [&] {
        scores(dq.data(), dk.data(), sc.data(), s.bh, s.seq_q, s.seq_kv, dim, scale, causal);
      });
      const uint32_t rows = s.bh * s.seq_q;
      // Few blocks, each taking rows in turn (host threads are expensive).
      hal_emu::launch({std::min(rows, 4u)}, {128},
                      [&] { softmax_rows_f32(sc.data(), p.data(), rows, s.seq_kv); });
      hal_emu::launch({(dim + 15) / 16, (s.seq_q + 15) / 16, s.bh}, {16, 16, 1},
                      [&] { pv(p.data(), dv.data(), out3.data(), s.bh, s.seq_q, s.seq_kv, dim); });
      expect_close(sc, ref::attention_scores(q, k, s.bh, s.seq_q, s.seq_kv, dim, scale, causal),
                   "scores " + what);
      expect_close(to_float(out3), want, "three-kernel " + what);
    }
  }
}

TEST(KernelsCudaHost, AttentionF32) {
  check_attention<float>("f32 d64", 64, attention_fused_f32_d64, attention_reg_f32_d64, 4 * 16, 16,
                         attention_scores_f32, attention_pv_f32);
  check_attention<float>("f32 d128", 128, attention_fused_f32_d128, attention_reg_f32_d128, 2 * 16,
                         16, attention_scores_f32, attention_pv_f32);
}

TEST(KernelsCudaHost, AttentionF16) {
  check_attention<__half>("f16 d64", 64, attention_fused_f16_d64, attention_reg_f16_d64, 4 * 16, 16,
                          attention_scores_f16, attention_pv_f16);
  check_attention<__half>("f16 d128", 128, attention_fused_f16_d128, attention_reg_f16_d128, 2 * 16,
                          16, attention_scores_f16, attention_pv_f16);
}

}  // namespace
}  // namespace kernel_test
