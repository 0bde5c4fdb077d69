// Row softmax, row sum and attention (fused and three-kernel, head_dim 64 and 128, fp32 and fp16
// storage, with and without the causal mask) against the double-precision CPU reference.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_test_util.h"

namespace kernel_test {
namespace {

using ref::Storage;

struct Matrix {
  uint32_t rows, cols;
};
const Matrix kMatrices[] = {{1, 1}, {17, 17}, {64, 64}, {255, 255}, {3, 1000}};

Storage storage_of(const std::string& dtype) {
  return dtype == "f16" ? Storage::kF16 : Storage::kF32;
}

using RowParam = std::tuple<hal_ir, std::string>;

class Rows : public IrTestBase<RowParam> {
 protected:
  hal_ir ir() const override { return std::get<0>(GetParam()); }
  std::string dtype() const { return std::get<1>(GetParam()); }
};

TEST_P(Rows, Softmax) {
  const std::string name = "softmax_rows_" + dtype();
  if (const std::string why = missing(name); !why.empty()) GTEST_SKIP() << why;
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device_, name, ir()));
  const Storage storage = storage_of(dtype());
  const float inf = std::numeric_limits<float>::infinity();
  for (const Matrix& m : kMatrices) {
    const std::string what = name + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols);
    SCOPED_TRACE(what);
    // Rows offset by +100 would overflow exp without the max subtraction; row 2 has masked
    // (-inf) entries and the last row of a tall matrix is entirely masked.
    std::vector<float> x =
        ref::random_uniform(size_t{m.rows} * m.cols, m.rows * 7 + m.cols, -8.0f, 8.0f);
    for (uint32_t r = 0; r < m.rows; ++r) {
      for (uint32_t c = 0; c < m.cols; ++c) {
        float& v = x[size_t{r} * m.cols + c];
        if (r % 3 == 1) v += 100.0f;
        if (r == 2 && c % 3 == 0) v = -inf;
        if (m.rows >= 17 && r == m.rows - 1) v = -inf;
      }
    }
    if (storage == Storage::kF16) ref::round_to_half(&x);
    Buffer dx(device_, stream_, x.size(), storage), dy(device_, stream_, x.size(), storage);
    dx.upload(x);
    uint32_t rows = m.rows, cols = m.cols;
    // Fewer workgroups than rows: each takes several rows in turn.
    ASSERT_NO_FATAL_FAILURE(
        k.launch(stream_, (rows + 1) / 2, 1, 1, {&dx.ptr, &dy.ptr, &rows, &cols}));
    const ref::Result want = ref::softmax_rows(x, rows, cols, storage);
    expect_close(dy.download(), want, what);
    // In place: X and Y the same buffer.
    ASSERT_NO_FATAL_FAILURE(k.launch(stream_, rows, 1, 1, {&dx.ptr, &dx.ptr, &rows, &cols}));
    expect_close(dx.download(), want, what + " in place");
  }
}

TEST_P(Rows, Sum) {
  const std::string name = "row_sum_" + dtype();
  if (const std::string why = missing(name); !why.empty()) GTEST_SKIP() << why;
  Kernel k;
  ASSERT_NO_FATAL_FAILURE(k.load(device_, name, ir()));
  const Storage storage = storage_of(dtype());
  for (const Matrix& m : kMatrices) {
    const std::string what = name + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols);
    SCOPED_TRACE(what);
    std::vector<float> x = ref::random_uniform(size_t{m.rows} * m.cols, m.rows + m.cols);
    if (storage == Storage::kF16) ref::round_to_half(&x);
    Buffer dx(device_, stream_, x.size(), storage), dy(device_, stream_, m.rows, storage);
    dx.upload(x);
    uint32_t rows = m.rows, cols = m.cols;
    ASSERT_NO_FATAL_FAILURE(
        k.launch(stream_, (rows + 1) / 2, 1, 1, {&dx.ptr, &dy.ptr, &rows, &cols}));
    expect_close(dy.download(), ref::row_sum(x, rows, cols, storage), what);
  }
}

std::string row_name(const ::testing::TestParamInfo<RowParam>& info) {
  return std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(KernelsSpirv, Rows,
                         ::testing::Combine(::testing::Values(HAL_IR_SPIRV),
                                            ::testing::Values(std::string("f32"),
                                                              std::string("f16"))),
                         row_name);
INSTANTIATE_TEST_SUITE_P(KernelsPtx, Rows,
                         ::testing::Combine(::testing::Values(HAL_IR_PTX),
                                            ::testing::Values(std::string("f32"),
                                                              std::string("f16"))),
                         row_name);

// ---- Attention ---------------------------------------------------------------------------------

struct AttentionShape {
  uint32_t batch_heads, seq_q, seq_kv;
};
// Sizes 1, 17, 64 and 255 (square), decode-like (few queries, more keys), and more queries than
// keys (with the causal mask the first rows see no key at all and must be 0).
const AttentionShape kShapes[] = {{1, 1, 1},     {2, 17, 17}, {1, 64, 64},
                                  {1, 255, 255}, {3, 5, 33},  {2, 40, 17}};

struct Variant {
  std::string family;  // "attention_fused" or "attention_reg" (one launch); "" for three kernels
  std::string dtype;
  uint32_t dim;
  bool fused() const { return !family.empty(); }
  std::string label() const {
    return (fused() ? family.substr(std::string("attention_").size()) : "three_kernel") + "_" +
           dtype + "_d" + std::to_string(dim);
  }
};
void PrintTo(const Variant& v, std::ostream* os) {
  *os << v.label();
}
using AttentionParam = std::tuple<hal_ir, Variant>;

class Attention : public IrTestBase<AttentionParam> {
 protected:
  hal_ir ir() const override { return std::get<0>(GetParam()); }
  const Variant& variant() const { return std::get<1>(GetParam()); }
};

TEST_P(Attention, Shapes) {
  const Variant& v = variant();
  const Storage storage = storage_of(v.dtype);
  Kernel fused, scores, softmax, pv;
  if (v.fused()) {
    const std::string name = v.family + "_" + v.dtype + "_d" + std::to_string(v.dim);
    if (const std::string why = missing(name); !why.empty()) GTEST_SKIP() << why;
    ASSERT_NO_FATAL_FAILURE(fused.load(device_, name, ir()));
  } else {
    if (const std::string why = missing("attention_scores_" + v.dtype); !why.empty()) {
      GTEST_SKIP() << why;
    }
    ASSERT_NO_FATAL_FAILURE(scores.load(device_, "attention_scores_" + v.dtype, ir()));
    ASSERT_NO_FATAL_FAILURE(softmax.load(device_, "softmax_rows_f32", ir()));
    ASSERT_NO_FATAL_FAILURE(pv.load(device_, "attention_pv_" + v.dtype, ir()));
  }
  for (const AttentionShape& s : kShapes) {
    for (uint32_t causal : {0u, 1u}) {
      const std::string what = v.label() + " bh=" + std::to_string(s.batch_heads) +
                               " seq_q=" + std::to_string(s.seq_q) +
                               " seq_kv=" + std::to_string(s.seq_kv) +
                               " d=" + std::to_string(v.dim) + (causal ? " causal" : "");
      SCOPED_TRACE(what);
      uint32_t bh = s.batch_heads, sq = s.seq_q, skv = s.seq_kv, dim = v.dim, c = causal;
      float scale = 1.0f / std::sqrt(static_cast<float>(dim));
      const uint32_t seed = bh * 1000 + sq * 10 + skv + dim;
      std::vector<float> q = ref::random_uniform(size_t{bh} * sq * dim, seed, -2.0f, 2.0f);
      std::vector<float> k = ref::random_uniform(size_t{bh} * skv * dim, seed + 1);
      std::vector<float> val = ref::random_uniform(size_t{bh} * skv * dim, seed + 2);
      if (storage == Storage::kF16) {
        ref::round_to_half(&q);
        ref::round_to_half(&k);
        ref::round_to_half(&val);
      }
      Buffer dq(device_, stream_, q.size(), storage), dk(device_, stream_, k.size(), storage),
          dv(device_, stream_, val.size(), storage), dout(device_, stream_, q.size(), storage);
      dq.upload(q);
      dk.upload(k);
      dv.upload(val);
      const ref::Result want = ref::attention(q, k, val, bh, sq, skv, dim, scale, c != 0, storage);
      if (v.fused()) {
        // A block takes 16 query rows (attention_fused) or WG x RQ (attention_reg).
        uint32_t rows_per_block = 16;
        for (uint32_t t = 0; t < fused.info->tunable_count; ++t) {
          if (std::string(fused.info->tunables[t].name) == "RQ") {
            rows_per_block = fused.info->block[0] * fused.info->tunables[t].value;
          }
        }
        ASSERT_NO_FATAL_FAILURE(
            fused.launch(stream_, (sq + rows_per_block - 1) / rows_per_block, bh, 1,
                         {&dq.ptr, &dk.ptr, &dv.ptr, &dout.ptr, &bh, &sq, &skv, &scale, &c}));
      } else {
        const size_t n = size_t{bh} * sq * skv;
        Buffer ds(device_, stream_, n, Storage::kF32), dp(device_, stream_, n, Storage::kF32);
        uint32_t rows = bh * sq, cols = skv;
        ASSERT_NO_FATAL_FAILURE(
            scores.launch(stream_, (skv + 15) / 16, (sq + 15) / 16, bh,
                          {&dq.ptr, &dk.ptr, &ds.ptr, &bh, &sq, &skv, &dim, &scale, &c}));
        ASSERT_NO_FATAL_FAILURE(
            softmax.launch(stream_, rows, 1, 1, {&ds.ptr, &dp.ptr, &rows, &cols}));
        ASSERT_NO_FATAL_FAILURE(pv.launch(stream_, (dim + 15) / 16, (sq + 15) / 16, bh,
                                          {&dp.ptr, &dv.ptr, &dout.ptr, &bh, &sq, &skv, &dim}));
        expect_close(ds.download(), ref::attention_scores(q, k, bh, sq, skv, dim, scale, c != 0),
                     what + " (scores)");
      }
      expect_close(dout.download(), want, what);
    }
  }
}

std::string attention_name(const ::testing::TestParamInfo<AttentionParam>& info) {
  return std::get<1>(info.param).label();
}

const Variant kVariants[] = {{"attention_fused", "f32", 64},
                             {"attention_fused", "f32", 128},
                             {"attention_fused", "f16", 64},
                             {"attention_fused", "f16", 128},
                             {"attention_reg", "f32", 64},
                             {"attention_reg", "f32", 128},
                             {"attention_reg", "f16", 64},
                             {"attention_reg", "f16", 128},
                             {"", "f32", 64},
                             {"", "f32", 128},
                             {"", "f16", 64},
                             {"", "f16", 128}};

INSTANTIATE_TEST_SUITE_P(KernelsSpirv, Attention,
                         ::testing::Combine(::testing::Values(HAL_IR_SPIRV),
                                            ::testing::ValuesIn(kVariants)),
                         attention_name);
INSTANTIATE_TEST_SUITE_P(KernelsPtx, Attention,
                         ::testing::Combine(::testing::Values(HAL_IR_PTX),
                                            ::testing::ValuesIn(kVariants)),
                         attention_name);

}  // namespace
}  // namespace kernel_test
