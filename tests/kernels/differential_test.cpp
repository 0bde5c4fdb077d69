// Every kernel of the pack on two devices with the same inputs: its SPIR-V on the first Vulkan
// device and its PTX on the first CUDA device (the CPU PTX device where there is no GPU). The
// two results must agree with each other within the sum of their error bounds, and each with the
// double-precision CPU reference. Where either device is missing, the tests skip saying which.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kernel_test {
namespace {

using ref::Storage;

// The inputs and outputs of one run: buffers are filled from |inputs| (by parameter index) and
// |outputs| name the parameters read back after the launch.
struct Case {
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};
  std::vector<std::vector<float>> buffers;  // one per pointer parameter, in order
  std::vector<uint32_t> sizes;              // elements of each buffer
  std::vector<uint32_t> values;             // the value parameters' bits, in order
  std::vector<size_t> outputs;              // which buffers to compare
  std::vector<ref::Result> want;            // the reference of each output
};

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

class Differential : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    hal_device_info info{};
    info.struct_size = sizeof info;
    if (hal_device_find("vulkan:0", &spirv_device_) != HAL_SUCCESS) {
      GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
    }
    if (hal_device_find("cuda:0", &ptx_device_) != HAL_SUCCESS) {
      GTEST_SKIP() << "no CUDA device (set HAL_CUDA_LIBRARY to the CPU PTX driver): "
                   << hal_last_error();
    }
    for (auto [d, ir] :
         {std::pair{spirv_device_, HAL_IR_SPIRV}, std::pair{ptx_device_, HAL_IR_PTX}}) {
      ASSERT_EQ(hal_device_get_info(d, &info), HAL_SUCCESS);
      if (!supports(info, ir, GetParam(), &why)) GTEST_SKIP() << info.name << ": " << why;
    }
  }

  // Runs |c| on |device| in |ir| and returns each output buffer.
  std::vector<std::vector<float>> run(hal_device device, hal_ir ir, const Case& c) {
    hal_stream stream = nullptr;
    EXPECT_EQ(hal_stream_create(device, &stream), HAL_SUCCESS) << hal_last_error();
    std::vector<std::vector<float>> out;
    if (stream == nullptr) return out;
    {
      Kernel k;
      k.load(device, c.kernel, ir);
      if (::testing::Test::HasFatalFailure()) return out;
      const Storage storage = std::string(k.info->dtype) == "f16" ? Storage::kF16 : Storage::kF32;
      std::vector<std::unique_ptr<Buffer>> buffers;
      std::vector<hal_deviceptr> pointers;
      for (size_t i = 0; i < c.buffers.size(); ++i) {
        // Scores and probabilities between attention's kernels are always fp32.
        const bool f32_only = c.kernel.find("attention_scores") == 0 && i == 2;
        const bool f32_input = c.kernel.find("attention_pv") == 0 && i == 0;
        buffers.push_back(std::make_unique<Buffer>(
            device, stream, c.sizes[i], f32_only || f32_input ? Storage::kF32 : storage));
        buffers.back()->upload(c.buffers[i]);
        pointers.push_back(buffers.back()->ptr);
      }
      std::vector<uint32_t> values = c.values;
      std::vector<void*> args;
      for (hal_deviceptr& p : pointers) args.push_back(&p);
      for (uint32_t& v : values) args.push_back(&v);
      k.launch(stream, c.grid[0], c.grid[1], c.grid[2], args);
      for (size_t o : c.outputs) out.push_back(buffers[o]->download());
    }
    EXPECT_EQ(hal_stream_destroy(stream), HAL_SUCCESS);
    return out;
  }

  hal_device spirv_device_ = nullptr;
  hal_device ptx_device_ = nullptr;
};

// The case for kernel |name|: shapes that are not multiples of the tiles, fp16 inputs rounded.
Case make_case(const std::string& name) {
  const hal_kernel_info* info = hal_kernels_info(name.c_str());
  const Storage storage = std::string(info->dtype) == "f16" ? Storage::kF16 : Storage::kF32;
  const std::string family = info->family;
  const auto round = [&](std::vector<float> v) {
    if (storage == Storage::kF16) ref::round_to_half(&v);
    return v;
  };
  Case c;
  c.kernel = name;
  if (family == "fill" || family == "copy" || family == "vector_add" || family == "saxpy") {
    const uint32_t n = 3000;
    std::vector<float> x = ref::random_uniform(n, 1), y = ref::random_uniform(n, 2);
    c.grid[0] = 4;  // fewer blocks than elements: the grid-stride loop runs
    ref::Result exact;
    if (family == "fill") {
      c.buffers = {std::vector<float>(n, 0.0f)};
      c.sizes = {n};
      c.values = {n, f32_bits(2.5f)};
      exact.value.assign(n, 2.5);
    } else if (family == "copy") {
      c.buffers = {x, std::vector<float>(n, 0.0f)};
      c.sizes = {n, n};
      c.values = {n};
      exact.value.assign(x.begin(), x.end());
    } else if (family == "vector_add") {
      c.buffers = {x, y, std::vector<float>(n, 0.0f)};
      c.sizes = {n, n, n};
      c.values = {n};
      for (uint32_t i = 0; i < n; ++i) exact.value.push_back(double{x[i]} + y[i]);
    } else {
      c.buffers = {x, y};
      c.sizes = {n, n};
      c.values = {n, f32_bits(-0.75f)};
      for (uint32_t i = 0; i < n; ++i) exact.value.push_back(-0.75 * x[i] + y[i]);
    }
    for (double v : exact.value) exact.bound.push_back(2 * ref::kUnitF32 * std::fabs(v) + 1e-7);
    c.outputs = {c.buffers.size() - 1};
    c.want = {exact};
    return c;
  }
  if (family.rfind("matmul", 0) == 0) {
    uint32_t m = 70, n = 33, k = 129;
    const std::vector<float> a = round(ref::random_uniform(size_t{m} * k, 3));
    const std::vector<float> b = round(ref::random_uniform(size_t{k} * n, 4));
    const std::vector<float> c0 = round(ref::random_uniform(size_t{m} * n, 5));
    // The block's tile of C: BM x BN for shared-memory tiles; (threads / TX * TM) x (TX * TN)
    // for register tiles.
    uint32_t bm = 16, bn = 16, tm = 0, tn = 0, tx = 0;
    for (uint32_t i = 0; i < info->tunable_count; ++i) {
      const std::string t = info->tunables[i].name;
      const uint32_t v = info->tunables[i].value;
      if (t == "BM") bm = v;
      if (t == "BN") bn = v;
      if (t == "TM") tm = v;
      if (t == "TN") tn = v;
      if (t == "TX") tx = v;
    }
    if (tm != 0 && tn != 0 && tx != 0) {
      bm = info->block[0] / tx * tm;
      bn = tx * tn;
    }
    c.grid[0] = (n + bn - 1) / bn;
    c.grid[1] = (m + bm - 1) / bm;
    c.buffers = {a, b, c0};
    c.sizes = {m * k, k * n, m * n};
    c.values = {m, n, k, k, n, n, f32_bits(0.5f), f32_bits(0.25f)};
    c.outputs = {2};
    c.want = {ref::matmul(a, b, c0, m, n, k, k, n, n, 0.5f, 0.25f, storage)};
    return c;
  }
  if (family.rfind("softmax_rows", 0) == 0 || family.rfind("row_sum", 0) == 0) {
    const uint32_t rows = 17, cols = 300;
    std::vector<float> x = round(ref::random_uniform(size_t{rows} * cols, 6, -6.0f, 6.0f));
    const bool softmax = family.rfind("softmax", 0) == 0;
    c.grid[0] = softmax ? (rows + 1) / 2 : rows;
    c.buffers = {x, std::vector<float>(softmax ? rows * cols : rows, 0.0f)};
    c.sizes = {rows * cols, softmax ? rows * cols : rows};
    c.values = {rows, cols};
    c.outputs = {1};
    c.want = {softmax ? ref::softmax_rows(x, rows, cols, storage)
                      : ref::row_sum(x, rows, cols, storage)};
    return c;
  }
  // Attention: Q [bh, sq, d], K and V [bh, skv, d].
  const uint32_t bh = 2, sq = 17, skv = 33;
  const uint32_t d = name.find("d128") != std::string::npos ? 128 : 64;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::vector<float> q = round(ref::random_uniform(size_t{bh} * sq * d, 7, -2.0f, 2.0f));
  const std::vector<float> kk = round(ref::random_uniform(size_t{bh} * skv * d, 8));
  const std::vector<float> v = round(ref::random_uniform(size_t{bh} * skv * d, 9));
  const uint32_t causal = 1;
  if (family.rfind("attention_scores", 0) == 0) {
    c.grid[0] = (skv + 15) / 16;
    c.grid[1] = (sq + 15) / 16;
    c.grid[2] = bh;
    c.buffers = {q, kk, std::vector<float>(size_t{bh} * sq * skv, 0.0f)};
    c.sizes = {bh * sq * d, bh * skv * d, bh * sq * skv};
    c.values = {bh, sq, skv, d, f32_bits(scale), causal};
    c.outputs = {2};
    c.want = {ref::attention_scores(q, kk, bh, sq, skv, d, scale, true)};
    // Hidden scores are -inf on both devices; the comparison below needs finite values.
    return c;
  }
  if (family.rfind("attention_pv", 0) == 0) {
    // P: a row-stochastic matrix (fp32), as the softmax between the kernels gives.
    std::vector<float> p = ref::random_uniform(size_t{bh} * sq * skv, 10, 0.0f, 1.0f);
    for (uint32_t r = 0; r < bh * sq; ++r) {
      double sum = 0;
      for (uint32_t j = 0; j < skv; ++j) sum += p[size_t{r} * skv + j];
      for (uint32_t j = 0; j < skv; ++j) p[size_t{r} * skv + j] /= static_cast<float>(sum);
    }
    c.grid[0] = (d + 15) / 16;
    c.grid[1] = (sq + 15) / 16;
    c.grid[2] = bh;
    c.buffers = {p, v, std::vector<float>(size_t{bh} * sq * d, 0.0f)};
    c.sizes = {bh * sq * skv, bh * skv * d, bh * sq * d};
    c.values = {bh, sq, skv, d};
    c.outputs = {2};
    // P V with fp32 P: the matmul reference per head.
    ref::Result want;
    for (uint32_t h = 0; h < bh; ++h) {
      const std::vector<float> ph(p.begin() + size_t{h} * sq * skv,
                                  p.begin() + size_t{h + 1} * sq * skv);
      const std::vector<float> vh(v.begin() + size_t{h} * skv * d,
                                  v.begin() + size_t{h + 1} * skv * d);
      const ref::Result r = ref::matmul(ph, vh, {}, sq, d, skv, skv, d, d, 1.0f, 0.0f, storage);
      want.value.insert(want.value.end(), r.value.begin(), r.value.end());
      want.bound.insert(want.bound.end(), r.bound.begin(), r.bound.end());
    }
    c.want = {want};
    return c;
  }
  // Fused attention.
  c.grid[0] = (sq + 15) / 16;
  c.grid[1] = bh;
  c.buffers = {q, kk, v, std::vector<float>(size_t{bh} * sq * d, 0.0f)};
  c.sizes = {bh * sq * d, bh * skv * d, bh * skv * d, bh * sq * d};
  c.values = {bh, sq, skv, f32_bits(scale), causal};
  c.outputs = {3};
  c.want = {ref::attention(q, kk, v, bh, sq, skv, d, scale, true, storage)};
  return c;
}

TEST_P(Differential, SameInputsSameResults) {
  const Case c = make_case(GetParam());
  const auto spirv = run(spirv_device_, HAL_IR_SPIRV, c);
  if (HasFatalFailure()) return;
  const auto ptx = run(ptx_device_, HAL_IR_PTX, c);
  if (HasFatalFailure()) return;
  ASSERT_EQ(spirv.size(), c.outputs.size());
  ASSERT_EQ(ptx.size(), c.outputs.size());
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    expect_close(spirv[o], c.want[o], c.kernel + " (SPIR-V) against the reference");
    expect_close(ptx[o], c.want[o], c.kernel + " (PTX) against the reference");
    // Each is within its bound of the exact value, so they are within twice it of each other.
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < spirv[o].size(); ++i) {
      const double a = spirv[o][i], b = ptx[o][i];
      const bool same = (std::isinf(a) && a == b) || std::fabs(a - b) <= 2 * c.want[o].bound[i];
      if (!same && differ++ == 0) first = i;
    }
    EXPECT_EQ(differ, 0u) << c.kernel << ": " << differ << " elements differ between the devices "
                          << "beyond their bounds; first at " << first << ": SPIR-V "
                          << spirv[o][first] << ", PTX " << ptx[o][first];
  }
}

std::vector<std::string> all_kernels() {
  std::vector<std::string> names;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    // Only kernels in both IRs: the PTX-only tensor-core matmul has its own tests.
    const char* name = hal_kernels_get(i)->name;
    if (hal_kernels_find(name, HAL_IR_SPIRV) != nullptr) names.push_back(name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Pack, Differential, ::testing::ValuesIn(all_kernels()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kernel_test
