// Area Numerics: every kernel of the pack, in every dtype, in the device's IR, against the CPU
// reference with the pack's tolerance policy (kernels/README.md). Shapes include 1, sizes that
// are not multiples of the tiles, and padded leading dimensions; --quick keeps them small.
#include <hal_kernels/reference.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

namespace ref = hal_kernels::ref;
using ref::Storage;

// A device buffer of fp32 or fp16 elements.
class Data {
 public:
  Data(hal_device device, hal_stream stream, size_t count, Storage storage)
      : buffer_(device, std::max<size_t>(count, 1) * (storage == Storage::kF16 ? 2 : 4)),
        stream_(stream),
        count_(count),
        storage_(storage) {
    ptr = buffer_.ptr;
    EXPECT_TRUE(buffer_.ok()) << describe(buffer_.status());
  }
  void upload(const std::vector<float>& values) {
    if (storage_ == Storage::kF16) {
      const std::vector<uint16_t> h = ref::to_half(values);
      CTS_EXPECT_OK(hal_memcpy_htod(stream_, ptr, h.data(), h.size() * 2));
    } else {
      CTS_EXPECT_OK(hal_memcpy_htod(stream_, ptr, values.data(), values.size() * 4));
    }
  }
  std::vector<float> download() {
    std::vector<float> out(count_);
    if (storage_ == Storage::kF16) {
      std::vector<uint16_t> h(count_);
      CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, h.data(), ptr, h.size() * 2));
      CTS_EXPECT_OK(hal_stream_synchronize(stream_));
      out = ref::from_half(h);
    } else {
      CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, out.data(), ptr, out.size() * 4));
      CTS_EXPECT_OK(hal_stream_synchronize(stream_));
    }
    return out;
  }
  hal_deviceptr ptr = 0;

 private:
  Buffer buffer_;
  hal_stream stream_;
  size_t count_;
  Storage storage_;
};

Storage storage_of(const std::string& dtype) {
  return dtype == "f16" ? Storage::kF16 : Storage::kF32;
}

void expect_close(const std::vector<float>& got, const ref::Result& want, const std::string& what) {
  const ref::Check check = ref::compare(got, want);
  EXPECT_TRUE(check.ok()) << what << ": " << check.summary();
}

uint32_t tunable(const hal_kernel_info& info, const char* name, uint32_t fallback) {
  for (uint32_t i = 0; i < info.tunable_count; ++i) {
    if (std::string(info.tunables[i].name) == name) return info.tunables[i].value;
  }
  return fallback;
}

class Numerics : public DeviceTest {
 protected:
  // Loads |name| in the device's IR; false with |skip_reason_| set when it cannot run here, or
  // after a fatal failure.
  bool load(Kernel* k, const std::string& name) {
    load_pack_kernel(k, name, &skip_reason_);
    return !::testing::Test::HasFatalFailure() && skip_reason_.empty();
  }
  void matmul(const std::string& name);
  void softmax(const std::string& dtype);
  void row_sum(const std::string& dtype);
  // |fused_family|: "attention_fused" or "attention_reg" (one launch), or "" for the
  // three-kernel version.
  void attention(const std::string& dtype, const std::string& fused_family, uint32_t dim);
  std::string skip_reason_;
};

// ---- Smoke kernels ----------------------------------------------------------------------------

// Each smoke kernel in a test of its own: a device that lacks one skips only that one's test,
// and a wrong one fails its own test whatever else the device provides. The sizes run past one
// workgroup and into the grid-stride loop (the grid is capped at 64 blocks).
std::vector<uint32_t> smoke_sizes() {
  std::vector<uint32_t> sizes = {1, 17, 255, 4099};
  if (!options().quick) sizes.push_back(1000003);
  return sizes;
}
uint32_t smoke_grid(uint32_t n) {
  return std::min<uint32_t>((n + 255) / 256, 64);
}

TEST_P(Numerics, SmokeFill) {
  Kernel fill;
  CTS_LOAD_OR_SKIP(fill, "fill_f32");
  for (uint32_t n : smoke_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Data dz(device(), stream_, n + 1, Storage::kF32);
    std::vector<float> z(n + 1, -7.0f);
    dz.upload(z);
    uint32_t count = n;
    float value = 3.25f;
    // Exact, and not one element past n.
    ASSERT_NO_FATAL_FAILURE(fill.launch(stream_, smoke_grid(n), 1, 1, {&dz.ptr, &count, &value}));
    std::vector<float> got = dz.download();
    EXPECT_EQ(std::count(got.begin(), got.end() - 1, value), static_cast<long>(n)) << "fill_f32";
    EXPECT_EQ(got[n], -7.0f) << "fill_f32 wrote the element past n";
  }
}

TEST_P(Numerics, SmokeCopy) {
  Kernel copy;
  CTS_LOAD_OR_SKIP(copy, "copy_f32");
  for (uint32_t n : smoke_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<float> x = ref::random_uniform(n, n);
    Data dx(device(), stream_, n, Storage::kF32), dz(device(), stream_, n, Storage::kF32);
    dx.upload(x);
    uint32_t count = n;
    // Exact.
    ASSERT_NO_FATAL_FAILURE(copy.launch(stream_, smoke_grid(n), 1, 1, {&dx.ptr, &dz.ptr, &count}));
    EXPECT_EQ(dz.download(), x) << "copy_f32";
  }
}

TEST_P(Numerics, SmokeVectorAdd) {
  Kernel add;
  CTS_LOAD_OR_SKIP(add, "vector_add_f32");
  for (uint32_t n : smoke_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<float> x = ref::random_uniform(n, n), y = ref::random_uniform(n, n + 1);
    Data dx(device(), stream_, n, Storage::kF32), dy(device(), stream_, n, Storage::kF32),
        dz(device(), stream_, n, Storage::kF32);
    dx.upload(x);
    dy.upload(y);
    uint32_t count = n;
    ASSERT_NO_FATAL_FAILURE(
        add.launch(stream_, smoke_grid(n), 1, 1, {&dx.ptr, &dy.ptr, &dz.ptr, &count}));
    // One rounding.
    ref::Result sum;
    for (uint32_t i = 0; i < n; ++i) {
      sum.value.push_back(double{x[i]} + y[i]);
      sum.bound.push_back(ref::kUnitF32 * std::fabs(sum.value.back()));
    }
    expect_close(dz.download(), sum, "vector_add_f32");
  }
}

TEST_P(Numerics, SmokeSaxpy) {
  Kernel saxpy;
  CTS_LOAD_OR_SKIP(saxpy, "saxpy");
  for (uint32_t n : smoke_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<float> x = ref::random_uniform(n, n), y = ref::random_uniform(n, n + 1);
    Data dx(device(), stream_, n, Storage::kF32), dy(device(), stream_, n + 1, Storage::kF32);
    dx.upload(x);
    std::vector<float> y1 = y;
    y1.push_back(-7.0f);
    dy.upload(y1);
    uint32_t count = n;
    float alpha = 0.75f;
    ASSERT_NO_FATAL_FAILURE(
        saxpy.launch(stream_, smoke_grid(n), 1, 1, {&dx.ptr, &dy.ptr, &count, &alpha}));
    // At most two roundings; y[n] untouched.
    ref::Result ax;
    for (uint32_t i = 0; i < n; ++i) {
      ax.value.push_back(double{alpha} * x[i] + y[i]);
      ax.bound.push_back(2 * ref::kUnitF32 * (std::fabs(double{alpha} * x[i]) + std::fabs(y[i])));
    }
    ax.value.push_back(-7.0);
    ax.bound.push_back(0.0);
    expect_close(dy.download(), ax, "saxpy (and the element past n untouched)");
  }
}

// ---- Matmul -----------------------------------------------------------------------------------

struct MatmulShape {
  uint32_t M, N, K, pad;
  float alpha, beta;
};

void Numerics::matmul(const std::string& name) {
  Kernel k;
  if (!load(&k, name)) {
    if (::testing::Test::HasFatalFailure()) return;
    GTEST_SKIP() << skip_reason_;
  }
  const Storage storage = storage_of(k.info->dtype);
  const std::string family = k.info->family;
  // The tile of C one workgroup computes.
  uint32_t bm = 0, bn = 0;
  ASSERT_TRUE(hal_kernels_matmul_tile(k.info, nullptr, &bm, &bn)) << name << " has no block tile";
  std::vector<MatmulShape> shapes = {
      {1, 1, 1, 0, 1.0f, 0.0f}, {17, 33, 9, 3, 1.0f, 0.0f}, {64, 64, 64, 0, 0.5f, 0.25f}};
  if (!options().quick) {
    shapes.push_back({255, 130, 97, 5, 1.0f, 0.0f});
    shapes.push_back({100, 300, 64, 0, -1.5f, 0.5f});
    shapes.push_back({129, 129, 257, 1, 1.0f, 1.0f});
    // Leading dimensions that are multiples of 8 (the tensor-core kernels copy 16-byte chunks
    // asynchronously then), K and N ending in half a chunk, more tiles of K than stages.
    shapes.push_back({72, 132, 100, 4, 1.0f, 0.5f});
  }
  if (family.rfind("matmul_mma", 0) == 0) {
    // The path GPUs take at real sizes: blocks whose whole tile lies inside C copy unchecked
    // 16-byte chunks; K ends mid-tile after more tiles than pipeline stages.
    shapes.push_back({256, 256, 328, 0, 1.0f, 0.5f});
  }
  for (const MatmulShape& s : shapes) {
    const std::string what = name + " M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) +
                             " K=" + std::to_string(s.K) + " pad=" + std::to_string(s.pad);
    SCOPED_TRACE(what);
    uint32_t m = s.M, n = s.N, kk = s.K, lda = s.K + s.pad, ldb = s.N + s.pad, ldc = s.N + s.pad;
    float alpha = s.alpha, beta = s.beta;
    std::vector<float> a = ref::random_uniform(size_t{m} * lda, m + kk);
    std::vector<float> b = ref::random_uniform(size_t{kk} * ldb, n + kk);
    std::vector<float> c = ref::random_uniform(size_t{m} * ldc, m + n);
    if (storage == Storage::kF16) {
      ref::round_to_half(&a);
      ref::round_to_half(&b);
      ref::round_to_half(&c);
    }
    Data da(device(), stream_, a.size(), storage), db(device(), stream_, b.size(), storage),
        dc(device(), stream_, c.size(), storage);
    da.upload(a);
    db.upload(b);
    dc.upload(c);
    ASSERT_NO_FATAL_FAILURE(
        k.launch(stream_, (n + bn - 1) / bn, (m + bm - 1) / bm, 1,
                 {&da.ptr, &db.ptr, &dc.ptr, &m, &n, &kk, &lda, &ldb, &ldc, &alpha, &beta}));
    const std::vector<float> got = dc.download();
    // The reference takes dense operands; the padding columns of C must be untouched.
    std::vector<float> ad(size_t{m} * kk), bd(size_t{kk} * n), cd(size_t{m} * n), gd(cd.size());
    size_t untouched = 0, padding = 0;
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t j = 0; j < kk; ++j) ad[size_t{i} * kk + j] = a[size_t{i} * lda + j];
      for (uint32_t j = 0; j < ldc; ++j) {
        if (j < n) {
          cd[size_t{i} * n + j] = c[size_t{i} * ldc + j];
          gd[size_t{i} * n + j] = got[size_t{i} * ldc + j];
        } else {
          ++padding;
          untouched += got[size_t{i} * ldc + j] == c[size_t{i} * ldc + j];
        }
      }
    }
    for (uint32_t i = 0; i < kk; ++i) {
      for (uint32_t j = 0; j < n; ++j) bd[size_t{i} * n + j] = b[size_t{i} * ldb + j];
    }
    EXPECT_EQ(untouched, padding) << "the kernel wrote into C's padding";
    expect_close(gd, ref::matmul(ad, bd, cd, m, n, kk, kk, n, n, alpha, beta, storage), what);
  }
}

TEST_P(Numerics, MatmulNaiveF32) {
  matmul("matmul_naive_f32");
}
TEST_P(Numerics, MatmulNaiveF16) {
  matmul("matmul_naive_f16");
}
TEST_P(Numerics, MatmulTiledF32_32x32) {
  matmul("matmul_tiled_f32_32x32");
}
TEST_P(Numerics, MatmulTiledF32_64x64) {
  matmul("matmul_tiled_f32_64x64");
}
TEST_P(Numerics, MatmulTiledF32_128x128) {
  matmul("matmul_tiled_f32_128x128");
}
TEST_P(Numerics, MatmulTiledF16_32x32) {
  matmul("matmul_tiled_f16_32x32");
}
TEST_P(Numerics, MatmulTiledF16_64x64) {
  matmul("matmul_tiled_f16_64x64");
}
TEST_P(Numerics, MatmulTiledF16_128x128) {
  matmul("matmul_tiled_f16_128x128");
}
TEST_P(Numerics, MatmulRegF32_64x64) {
  matmul("matmul_reg_f32_64x64");
}
TEST_P(Numerics, MatmulRegF32_64x256) {
  matmul("matmul_reg_f32_64x256");
}
TEST_P(Numerics, MatmulRegF16_64x64) {
  matmul("matmul_reg_f16_64x64");
}
TEST_P(Numerics, MatmulRegF16_64x256) {
  matmul("matmul_reg_f16_64x256");
}
// Subgroup-shared loads (skipped, with the reason, on a device without subgroup ballot).
TEST_P(Numerics, MatmulSgF32_128x64) {
  matmul("matmul_sg_f32_128x64");
}
TEST_P(Numerics, MatmulSgF32_256x64) {
  matmul("matmul_sg_f32_256x64");
}
TEST_P(Numerics, MatmulSgF16_128x64) {
  matmul("matmul_sg_f16_128x64");
}
TEST_P(Numerics, MatmulSgF16_256x64) {
  matmul("matmul_sg_f16_256x64");
}
// Tensor cores (PTX only: skipped, with the reason, on a device that takes SPIR-V).
TEST_P(Numerics, MatmulMmaF16_256x128K64) {
  matmul("matmul_mma_f16_256x128_k64");
}
TEST_P(Numerics, MatmulMmaF16_128x256K64) {
  matmul("matmul_mma_f16_128x256_k64");
}
TEST_P(Numerics, MatmulMmaF16_128x128) {
  matmul("matmul_mma_f16_128x128");
}
TEST_P(Numerics, MatmulMmaF16_128x128W8) {
  matmul("matmul_mma_f16_128x128_w8");
}
TEST_P(Numerics, MatmulMmaF16_64x64) {
  matmul("matmul_mma_f16_64x64");
}
TEST_P(Numerics, MatmulMmaF16_256x128K64Prefetch) {
  matmul("matmul_mma_f16_256x128_k64_prefetch");
}
TEST_P(Numerics, MatmulMmaF16_128x256K64Prefetch) {
  matmul("matmul_mma_f16_128x256_k64_prefetch");
}
TEST_P(Numerics, MatmulMmaF16_128x128Prefetch) {
  matmul("matmul_mma_f16_128x128_prefetch");
}

// ---- Rows -------------------------------------------------------------------------------------

struct Matrix {
  uint32_t rows, cols;
};
std::vector<Matrix> matrices() {
  std::vector<Matrix> m = {{1, 1}, {17, 17}, {3, 1000}};
  if (!options().quick) {
    m.push_back({64, 64});
    m.push_back({255, 255});
  }
  return m;
}

void Numerics::softmax(const std::string& dtype) {
  const std::string name = "softmax_rows_" + dtype;
  Kernel k;
  if (!load(&k, name)) {
    if (::testing::Test::HasFatalFailure()) return;
    GTEST_SKIP() << skip_reason_;
  }
  const Storage storage = storage_of(dtype);
  const float inf = std::numeric_limits<float>::infinity();
  for (const Matrix& mx : matrices()) {
    const std::string what = name + " " + std::to_string(mx.rows) + "x" + std::to_string(mx.cols);
    SCOPED_TRACE(what);
    // Rows shifted by +100 overflow exp without the max subtraction; masked (-inf) entries, and
    // a row entirely masked.
    std::vector<float> x =
        ref::random_uniform(size_t{mx.rows} * mx.cols, mx.rows * 7 + mx.cols, -8.0f, 8.0f);
    for (uint32_t r = 0; r < mx.rows; ++r) {
      for (uint32_t c = 0; c < mx.cols; ++c) {
        float& v = x[size_t{r} * mx.cols + c];
        if (r % 3 == 1) v += 100.0f;
        if (r == 2 && c % 3 == 0) v = -inf;
        if (mx.rows >= 17 && r == mx.rows - 1) v = -inf;
      }
    }
    if (storage == Storage::kF16) ref::round_to_half(&x);
    Data dx(device(), stream_, x.size(), storage), dy(device(), stream_, x.size(), storage);
    dx.upload(x);
    uint32_t rows = mx.rows, cols = mx.cols;
    ASSERT_NO_FATAL_FAILURE(
        k.launch(stream_, (rows + 1) / 2, 1, 1, {&dx.ptr, &dy.ptr, &rows, &cols}));
    expect_close(dy.download(), ref::softmax_rows(x, rows, cols, storage), what);
  }
}

void Numerics::row_sum(const std::string& dtype) {
  const std::string name = "row_sum_" + dtype;
  Kernel k;
  if (!load(&k, name)) {
    if (::testing::Test::HasFatalFailure()) return;
    GTEST_SKIP() << skip_reason_;
  }
  const Storage storage = storage_of(dtype);
  for (const Matrix& mx : matrices()) {
    const std::string what = name + " " + std::to_string(mx.rows) + "x" + std::to_string(mx.cols);
    SCOPED_TRACE(what);
    std::vector<float> x = ref::random_uniform(size_t{mx.rows} * mx.cols, mx.rows + mx.cols);
    if (storage == Storage::kF16) ref::round_to_half(&x);
    Data dx(device(), stream_, x.size(), storage), dy(device(), stream_, mx.rows, storage);
    dx.upload(x);
    uint32_t rows = mx.rows, cols = mx.cols;
    ASSERT_NO_FATAL_FAILURE(k.launch(stream_, rows, 1, 1, {&dx.ptr, &dy.ptr, &rows, &cols}));
    expect_close(dy.download(), ref::row_sum(x, rows, cols, storage), what);
  }
}

TEST_P(Numerics, SoftmaxRowsF32) {
  softmax("f32");
}
TEST_P(Numerics, SoftmaxRowsF16) {
  softmax("f16");
}
TEST_P(Numerics, RowSumF32) {
  row_sum("f32");
}
TEST_P(Numerics, RowSumF16) {
  row_sum("f16");
}

// ---- Attention --------------------------------------------------------------------------------

struct AttentionShape {
  uint32_t batch_heads, seq_q, seq_kv;
};

void Numerics::attention(const std::string& dtype, const std::string& fused_family, uint32_t dim) {
  const Storage storage = storage_of(dtype);
  Kernel fk, scores, soft, pv;
  const bool fused = !fused_family.empty();
  const std::string fused_name = fused_family + "_" + dtype + "_d" + std::to_string(dim);
  for (const auto& [kernel, name] :
       fused ? std::vector<std::pair<Kernel*, std::string>>{{&fk, fused_name}}
             : std::vector<std::pair<Kernel*, std::string>>{{&scores, "attention_scores_" + dtype},
                                                            {&soft, "softmax_rows_f32"},
                                                            {&pv, "attention_pv_" + dtype}}) {
    if (!load(kernel, name)) {
      if (::testing::Test::HasFatalFailure()) return;
      GTEST_SKIP() << skip_reason_;
    }
  }
  std::vector<AttentionShape> shapes = {{1, 1, 1}, {2, 17, 17}, {1, 5, 33}};
  if (!options().quick) {
    shapes.push_back({1, 64, 64});
    shapes.push_back({2, 40, 17});
    shapes.push_back({1, 130, 255});
  }
  for (const AttentionShape& s : shapes) {
    for (uint32_t causal : {0u, 1u}) {
      const std::string what = std::string(fused ? fused_name : "attention three-kernel " + dtype) +
                               " bh=" + std::to_string(s.batch_heads) +
                               " seq_q=" + std::to_string(s.seq_q) +
                               " seq_kv=" + std::to_string(s.seq_kv) + " d=" + std::to_string(dim) +
                               (causal ? " causal" : "");
      SCOPED_TRACE(what);
      uint32_t bh = s.batch_heads, sq = s.seq_q, skv = s.seq_kv, d = dim, c = causal;
      float scale = 1.0f / std::sqrt(static_cast<float>(dim));
      const uint32_t seed = bh * 1000 + sq * 10 + skv + dim;
      std::vector<float> q = ref::random_uniform(size_t{bh} * sq * dim, seed, -2.0f, 2.0f);
      std::vector<float> kk = ref::random_uniform(size_t{bh} * skv * dim, seed + 1);
      std::vector<float> v = ref::random_uniform(size_t{bh} * skv * dim, seed + 2);
      if (storage == Storage::kF16) {
        ref::round_to_half(&q);
        ref::round_to_half(&kk);
        ref::round_to_half(&v);
      }
      Data dq(device(), stream_, q.size(), storage), dk(device(), stream_, kk.size(), storage),
          dv(device(), stream_, v.size(), storage), dout(device(), stream_, q.size(), storage);
      dq.upload(q);
      dk.upload(kk);
      dv.upload(v);
      if (fused) {
        // A block takes 16 query rows (attention_fused) or WG x RQ (attention_reg).
        const uint32_t rq = tunable(*fk.info, "RQ", 0);
        const uint32_t rows_per_block = rq != 0 ? fk.info->block[0] * rq : 16;
        ASSERT_NO_FATAL_FAILURE(
            fk.launch(stream_, (sq + rows_per_block - 1) / rows_per_block, bh, 1,
                      {&dq.ptr, &dk.ptr, &dv.ptr, &dout.ptr, &bh, &sq, &skv, &scale, &c}));
      } else {
        const size_t n = size_t{bh} * sq * skv;
        Data ds(device(), stream_, n, Storage::kF32), dp(device(), stream_, n, Storage::kF32);
        uint32_t rows = bh * sq, cols = skv;
        ASSERT_NO_FATAL_FAILURE(
            scores.launch(stream_, (skv + 15) / 16, (sq + 15) / 16, bh,
                          {&dq.ptr, &dk.ptr, &ds.ptr, &bh, &sq, &skv, &d, &scale, &c}));
        ASSERT_NO_FATAL_FAILURE(soft.launch(stream_, rows, 1, 1, {&ds.ptr, &dp.ptr, &rows, &cols}));
        ASSERT_NO_FATAL_FAILURE(pv.launch(stream_, (d + 15) / 16, (sq + 15) / 16, bh,
                                          {&dp.ptr, &dv.ptr, &dout.ptr, &bh, &sq, &skv, &d}));
        expect_close(ds.download(), ref::attention_scores(q, kk, bh, sq, skv, d, scale, c != 0),
                     what + " (scores)");
      }
      expect_close(dout.download(),
                   ref::attention(q, kk, v, bh, sq, skv, dim, scale, c != 0, storage), what);
    }
  }
}

TEST_P(Numerics, AttentionThreeKernelF32) {
  attention("f32", "", 64);
}
TEST_P(Numerics, AttentionThreeKernelF16) {
  attention("f16", "", 64);
}
TEST_P(Numerics, AttentionFusedF32D64) {
  attention("f32", "attention_fused", 64);
}
TEST_P(Numerics, AttentionFusedF32D128) {
  attention("f32", "attention_fused", 128);
}
TEST_P(Numerics, AttentionFusedF16D64) {
  attention("f16", "attention_fused", 64);
}
TEST_P(Numerics, AttentionFusedF16D128) {
  attention("f16", "attention_fused", 128);
}
TEST_P(Numerics, AttentionRegF32D64) {
  attention("f32", "attention_reg", 64);
}
TEST_P(Numerics, AttentionRegF32D128) {
  attention("f32", "attention_reg", 128);
}
TEST_P(Numerics, AttentionRegF16D64) {
  attention("f16", "attention_reg", 64);
}
TEST_P(Numerics, AttentionRegF16D128) {
  attention("f16", "attention_reg", 128);
}

INSTANTIATE_TEST_SUITE_P(, Numerics, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
