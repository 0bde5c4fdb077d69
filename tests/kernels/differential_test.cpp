// Every kernel of the pack on three runs with the same inputs: its SPIR-V on the first Vulkan
// device, its PTX on the first CUDA device (the CPU PTX device where there is no GPU), and its PTX
// on the Vulkan device again, which translates it to SPIR-V. The results must agree with each
// other within the sum of their error bounds, and each with the double-precision CPU reference.
// A Vulkan device without 32-lane warps refuses warp-level PTX, and every Vulkan device the
// tensor-core PTX (HAL_ERROR_NOT_SUPPORTED, saying so); such a kernel is compared on the other
// two runs, and a separate test holds the set of kernels whose PTX
// translates to exactly what the pack says, so a kernel that starts to be refused fails there.
// Where either device is missing, the tests skip saying which.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
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

// Whether |device| takes PTX (a Vulkan device with what translated modules need).
bool takes_ptx(hal_device device) {
  hal_device_info info{};
  info.struct_size = sizeof info;
  return hal_device_get_info(device, &info) == HAL_SUCCESS && (info.ir_mask & HAL_IR_PTX) != 0;
}

// The pack's PTX modules loaded on a Vulkan device, each once: a module holds several kernels
// (every matmul of matmul.ptx), and each load translates and compiles all of them, which on
// lavapipe takes seconds. The device refuses a kernel at hal_module_get_function, or the whole
// module at load when none of its kernels translates; a module's refusal is kept as the answer
// for each of its kernels.
class PtxTranslations {
 public:
  PtxTranslations() = default;
  PtxTranslations(const PtxTranslations&) = delete;
  PtxTranslations& operator=(const PtxTranslations&) = delete;
  ~PtxTranslations() {
    for (auto& [data, m] : modules_) {
      if (m.module != nullptr) {
        EXPECT_EQ(hal_module_unload(m.module), HAL_SUCCESS);
      }
    }
  }
  // Gives |*kernel| the function of pack kernel |name| from its PTX on |device| (the Kernel does
  // not own the module) and returns HAL_SUCCESS; or returns the status the device refused the
  // module or the kernel with (HAL_ERROR_NOT_SUPPORTED from hal_module_get_function), and its
  // hal_last_error() in |*refusal|.
  hal_status get(hal_device device, const std::string& name, Kernel* kernel, std::string* refusal) {
    const hal_kernel_blob* blob = hal_kernels_find(name.c_str(), HAL_IR_PTX);
    EXPECT_NE(blob, nullptr) << "the kernel pack has no PTX of " << name;
    if (blob == nullptr) return HAL_ERROR_NOT_FOUND;
    auto [it, fresh] = modules_.try_emplace(blob->data);
    Module& m = it->second;
    if (fresh) {
      hal_module_options options{};
      options.struct_size = sizeof options;
      options.ir = HAL_IR_PTX;
      m.status = hal_module_load(device, blob->data, blob->size, &options, &m.module);
      if (m.status != HAL_SUCCESS) m.refusal = hal_last_error();
    }
    if (m.status != HAL_SUCCESS) {
      *refusal = m.refusal;
      return m.status;
    }
    const hal_status s = hal_module_get_function(m.module, blob->entry_point, &kernel->function);
    if (s == HAL_ERROR_NOT_SUPPORTED) {
      *refusal = hal_last_error();
      return s;
    }
    EXPECT_EQ(s, HAL_SUCCESS) << name << ": " << last_error(s);
    kernel->info = blob->kernel;
    return s;
  }

 private:
  struct Module {
    hal_status status = HAL_SUCCESS;
    std::string refusal;
    hal_module module = nullptr;
  };
  std::map<const void*, Module> modules_;  // by the blob's bytes, which kernels of a file share
};

class Differential : public ::testing::TestWithParam<std::string> {
 protected:
  // The translations live for the suite: ctest runs it in one process (KernelsPtxOnCpuPtx).
  static void SetUpTestSuite() { translations_ = new PtxTranslations; }
  static void TearDownTestSuite() {
    delete translations_;
    translations_ = nullptr;
  }

  void SetUp() override {
    std::string why;
    hal_device_info info{};
    info.struct_size = sizeof info;
    if (hal_device_find("vulkan:0", &vulkan_device_) != HAL_SUCCESS) {
      GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
    }
    if (hal_device_find("cuda:0", &cuda_device_) != HAL_SUCCESS) {
      GTEST_SKIP() << "no CUDA device (set HAL_CUDA_LIBRARY to the CPU PTX driver): "
                   << hal_last_error();
    }
    for (auto [d, ir] :
         {std::pair{vulkan_device_, HAL_IR_SPIRV}, std::pair{cuda_device_, HAL_IR_PTX}}) {
      ASSERT_EQ(hal_device_get_info(d, &info), HAL_SUCCESS);
      if (!supports(info, ir, GetParam(), &why)) GTEST_SKIP() << info.name << ": " << why;
    }
    // The translated run needs what the SPIR-V run needs (the kernel's features, checked above)
    // and a device that takes PTX; without one the other two runs are still compared.
    translate_ = takes_ptx(vulkan_device_);
    if (!translate_) std::printf("[ note     ] vulkan:0 does not take PTX: no translated run\n");
  }

  // Runs |c| with the loaded kernel |k| on |device| and returns each output buffer.
  static std::vector<std::vector<float>> run(hal_device device, const Kernel& k, const Case& c) {
    hal_stream stream = nullptr;
    EXPECT_EQ(hal_stream_create(device, &stream), HAL_SUCCESS) << hal_last_error();
    std::vector<std::vector<float>> out;
    if (stream == nullptr) return out;
    {
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

  static PtxTranslations* translations_;
  hal_device vulkan_device_ = nullptr;
  hal_device cuda_device_ = nullptr;
  bool translate_ = false;  // vulkan:0 takes PTX
};

PtxTranslations* Differential::translations_ = nullptr;

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

// One run's outputs and what it was, for the messages.
struct Outputs {
  std::string what;  // "SPIR-V on vulkan:0"
  std::vector<std::vector<float>> out;
};

TEST_P(Differential, SameInputsSameResults) {
  const Case c = make_case(GetParam());
  std::vector<Outputs> runs;
  for (auto [device, ir, what] : {std::tuple{vulkan_device_, HAL_IR_SPIRV, "SPIR-V on vulkan:0"},
                                  std::tuple{cuda_device_, HAL_IR_PTX, "PTX on cuda:0"}}) {
    Kernel k;
    ASSERT_NO_FATAL_FAILURE(k.load(device, c.kernel, ir));
    runs.push_back({what, run(device, k, c)});
    if (HasFatalFailure()) return;
  }
  if (translate_) {
    Kernel k;
    std::string refusal;
    const hal_status s = translations_->get(vulkan_device_, c.kernel, &k, &refusal);
    if (s == HAL_SUCCESS) {
      runs.push_back({"PTX on vulkan:0", run(vulkan_device_, k, c)});
      if (HasFatalFailure()) return;
    } else {
      // The one refusal allowed, and it must say why; which kernels may be refused at all is
      // PackPtxOnVulkan's to check.
      EXPECT_EQ(s, HAL_ERROR_NOT_SUPPORTED)
          << c.kernel << ": " << hal_status_string(s) << ": " << refusal;
      EXPECT_TRUE(refusal.find("warp-level") != std::string::npos ||
                  refusal.find("matrix instruction") != std::string::npos)
          << c.kernel << ": the refusal does not say the PTX is warp-level: " << refusal;
      std::printf("[ refused  ] %s (PTX on vulkan:0): %s\n", c.kernel.c_str(), refusal.c_str());
    }
  }
  for (const Outputs& r : runs) ASSERT_EQ(r.out.size(), c.outputs.size()) << r.what;
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    for (const Outputs& r : runs) {
      expect_close(r.out[o], c.want[o], c.kernel + " (" + r.what + ") against the reference");
    }
    // Each is within its bound of the exact value, so any two are within twice it of each other.
    for (size_t x = 0; x < runs.size(); ++x) {
      for (size_t y = x + 1; y < runs.size(); ++y) {
        const std::vector<float>& a = runs[x].out[o];
        const std::vector<float>& b = runs[y].out[o];
        size_t differ = 0, first = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          const double u = a[i], v = b[i];
          const bool same = (std::isinf(u) && u == v) || std::fabs(u - v) <= 2 * c.want[o].bound[i];
          if (!same && differ++ == 0) first = i;
        }
        EXPECT_EQ(differ, 0u) << c.kernel << ": " << differ << " elements differ between "
                              << runs[x].what << " and " << runs[y].what
                              << " beyond their bounds; first at " << first << ": " << a[first]
                              << " and " << b[first];
      }
    }
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

// Which of the pack's kernels (those in both IRs) a Vulkan device runs from their PTX: every one
// but those the manifest says need subgroup operations (HAL_FEATURE_SUBGROUP_BALLOT), whose PTX
// is warp-level. Those run on a device with 32-lane warps, but for the tensor-core ones (matrix
// instructions do not translate yet); on any other device (lavapipe) every one is refused as
// warp-level. A kernel the device cannot run at all (a feature it lacks) is in neither set.
// Loading every kernel's PTX also checks that each refusal is HAL_ERROR_NOT_SUPPORTED and says
// why.
TEST(PackPtxOnVulkan, EveryKernelTranslatesButWarpLevelOnesWithoutWarps) {
  hal_device device = nullptr;
  if (hal_device_find("vulkan:0", &device) != HAL_SUCCESS) {
    GTEST_SKIP() << "no Vulkan device: " << hal_last_error();
  }
  hal_device_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(hal_device_get_info(device, &info), HAL_SUCCESS);
  if ((info.ir_mask & HAL_IR_PTX) == 0) {
    GTEST_SKIP() << info.name << " does not take PTX (it lacks bufferDeviceAddress or shaderInt64)";
  }
  PtxTranslations translations;
  std::vector<std::string> want_translated, translated;
  std::vector<std::string> warp_translated, refused_for_warps, refused_as_matrix;
  for (const std::string& name : all_kernels()) {
    std::string why;
    if (!supports(info, HAL_IR_PTX, name, &why)) {
      std::printf("[ note     ] %s: %s\n", name.c_str(), why.c_str());
      continue;
    }
    const bool warp_level =
        (hal_kernels_info(name.c_str())->required_features & HAL_FEATURE_SUBGROUP_BALLOT) != 0;
    if (!warp_level) want_translated.push_back(name);
    Kernel k;
    std::string refusal;
    const hal_status s = translations.get(device, name, &k, &refusal);
    if (s == HAL_SUCCESS) {
      (warp_level ? warp_translated : translated).push_back(name);
      continue;
    }
    EXPECT_TRUE(warp_level) << name << " is refused: " << refusal;
    EXPECT_EQ(s, HAL_ERROR_NOT_SUPPORTED)
        << name << ": " << hal_status_string(s) << ": " << refusal;
    if (refusal.find("warp-level PTX, which runs only with 32-lane warps") != std::string::npos) {
      refused_for_warps.push_back(name);
    } else if (refusal.find("matrix instruction") != std::string::npos) {
      refused_as_matrix.push_back(name);
    } else {
      ADD_FAILURE() << name << ": the refusal does not say the PTX is warp-level: " << refusal;
    }
  }
  EXPECT_FALSE(want_translated.empty()) << "no kernel of the pack to translate on " << info.name;
  EXPECT_EQ(translated, want_translated) << "the kernels whose PTX " << info.name << " runs";
  // A device has 32-lane warps or it does not: with them, no kernel is refused for lack of
  // them; without them, every warp-level kernel is.
  if (!refused_for_warps.empty()) {
    EXPECT_TRUE(warp_translated.empty() && refused_as_matrix.empty())
        << info.name << " both runs and refuses warp-level PTX";
  }
}

}  // namespace
}  // namespace kernel_test
