// Area Perf (only with --perf): copy bandwidth each way, launch rate, matmul and attention
// GFLOP/s, each the median of timed repetitions, beside the device's theoretical peak where it
// can be derived (docs/CONFORMANCE.md says how). Matmul and attention run what the kernel pack's
// plans choose (kernels/tune/plan.h): the device's tuned choice where hal-tune has run, else the
// default; each figure's detail says which.
#include <hal_kernels/reference.h>

#include "plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

namespace ref = hal_kernels::ref;

// Product data that hal's properties do not carry: boost clock and memory bandwidth, by a
// substring of the device name.
struct Product {
  const char* name;
  double boost_mhz;
  double memory_gbs;
};
const Product kProducts[] = {
    {"H200", 1980, 4800},           {"H100 80GB HBM3", 1980, 3350},
    {"H100 PCIe", 1755, 2000},      {"A100-SXM4-80GB", 1410, 2039},
    {"A100-SXM4-40GB", 1410, 1555}, {"A100-PCIE-40GB", 1410, 1555},
    {"A100 80GB PCIe", 1410, 1935}, {"L40S", 2520, 864},
    {"RTX 4090", 2520, 1008},
};

// A planned kernel, loaded; unloaded when it goes.
struct Planned {
  hal_kernels::tune::LaunchPlan plan;
  hal_module module = nullptr;
  hal_function function = nullptr;
  ~Planned() {
    if (module != nullptr) hal_module_unload(module);
  }
  // "<kernel> (<variant>, tuned)" or "... default)".
  std::string what() const {
    return plan.kernel + " (" + plan.label + (plan.tuned ? ", tuned" : ", default") + ")";
  }
  hal_status launch(hal_stream stream, std::vector<void*> args) const {
    hal_launch_config config{};
    for (int d = 0; d < 3; ++d) {
      config.grid[d] = plan.grid[d];
      config.block[d] = plan.block[d];
    }
    config.shared_bytes = plan.shared_bytes;
    return hal_launch(stream, function, &config, args.data());
  }
};

const Product* product(const hal_device_info& info) {
  for (const Product& p : kProducts) {
    if (std::strstr(info.name, p.name) != nullptr) return &p;
  }
  return nullptr;
}

// FP32 lanes per streaming multiprocessor by compute capability, 0 when unknown.
uint32_t fp32_lanes_per_sm(const hal_device_info& info) {
  const uint32_t cc = info.compute_capability_major * 10 + info.compute_capability_minor;
  if (cc == 80) return 64;
  if (cc >= 86 && cc < 100) return 128;
  if (cc >= 100) return 128;
  if (cc >= 70) return 64;
  return 0;
}

struct Peak {
  double value = -1;
  std::string source;
};

Peak fp32_peak(const hal_device_info& info) {
  if (info.is_cpu)
    return {-1, "n/a on a CPU device: hal's properties give no clock or vector width"};
  const Product* p = product(info);
  const uint32_t lanes = fp32_lanes_per_sm(info);
  if (info.backend != HAL_BACKEND_CUDA || p == nullptr || lanes == 0 || info.compute_units == 0) {
    return {-1, "n/a: the clock of this device is not known to hal-cts"};
  }
  Peak peak;
  peak.value = 2.0 * info.compute_units * lanes * p->boost_mhz * 1e6 / 1e9;
  peak.source = "GFLOP/s fp32 = 2 x " + std::to_string(info.compute_units) + " SMs x " +
                std::to_string(lanes) + " lanes x " + std::to_string(int(p->boost_mhz)) +
                " MHz boost (" + p->name + ")";
  return peak;
}

Peak memory_peak(const hal_device_info& info) {
  if (info.is_cpu) return {-1, "n/a on a CPU device: hal's properties give no memory bandwidth"};
  const Product* p = product(info);
  if (p == nullptr) return {-1, "n/a: the memory bandwidth of this device is not known to hal-cts"};
  return {p->memory_gbs, std::string("GB/s memory bandwidth of the ") + p->name};
}

class Perf : public DeviceTest {
 protected:
  bool gpu() const { return !info().is_cpu; }
  uint32_t reps() const { return options().quick ? 3 : 10; }
  // Times |run| (which issues work on stream_) |reps| times and returns the median in ms: device
  // time from events where the device has timestamps, else host time around a synchronize.
  double median_ms(uint32_t reps, const std::function<void()>& run) {
    const bool events = (info().features & HAL_FEATURE_TIMESTAMPS) != 0;
    hal_event start = nullptr, end = nullptr;
    if (events) {
      EXPECT_EQ(hal_event_create(device(), &start), HAL_SUCCESS);
      EXPECT_EQ(hal_event_create(device(), &end), HAL_SUCCESS);
    }
    std::vector<double> times;
    for (uint32_t i = 0; i < reps; ++i) {
      CTS_EXPECT_OK(hal_stream_synchronize(stream_));
      const double host_start = now_ms();
      if (events) CTS_EXPECT_OK(hal_event_record(start, stream_));
      run();
      if (events) CTS_EXPECT_OK(hal_event_record(end, stream_));
      CTS_EXPECT_OK(hal_stream_synchronize(stream_));
      float ms = 0;
      if (events && hal_event_elapsed_ms(start, end, &ms) == HAL_SUCCESS && ms > 0) {
        times.push_back(ms);
      } else {
        times.push_back(now_ms() - host_start);
      }
    }
    if (events) {
      hal_event_destroy(start);
      hal_event_destroy(end);
    }
    return median(times);
  }
  void record(const std::string& name, double value, const std::string& unit, uint32_t reps,
              const Peak& peak, const std::string& detail) {
    Figure f;
    f.device = GetParam()->label;
    f.name = name;
    f.value = value;
    f.unit = unit;
    f.repetitions = reps;
    f.peak = peak.value;
    f.peak_source = peak.source;
    f.detail = detail;
    record_figure(f);
    RecordProperty(name, std::to_string(value) + " " + unit);
  }
};

TEST_P(Perf, CopyBandwidth) {
  const size_t bytes =
      options().quick ? (size_t{8} << 20) : (gpu() ? (size_t{256} << 20) : (size_t{64} << 20));
  void* host = nullptr;
  CTS_ASSERT_OK(hal_host_alloc(device(), bytes, &host));
  std::memset(host, 1, bytes);
  Buffer a(device(), bytes), b(device(), bytes);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error() << b.error();
  const uint32_t n = reps();
  const double gb = static_cast<double>(bytes) / 1e9;
  const std::string detail = std::to_string(bytes >> 20) + " MiB, pinned host memory";
  const Peak none = {-1, "n/a: the host link's bandwidth is not among hal's properties"};
  const double htod =
      median_ms(n, [&] { CTS_EXPECT_OK(hal_memcpy_htod(stream_, a.ptr, host, bytes)); });
  const double dtoh =
      median_ms(n, [&] { CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, host, a.ptr, bytes)); });
  const double dtod =
      median_ms(n, [&] { CTS_EXPECT_OK(hal_memcpy_dtod(stream_, b.ptr, a.ptr, bytes)); });
  ASSERT_GT(htod, 0);
  record("copy_htod_bandwidth", gb / (htod / 1e3), "GB/s", n, none, detail);
  record("copy_dtoh_bandwidth", gb / (dtoh / 1e3), "GB/s", n, none, detail);
  record("copy_dtod_bandwidth", 2 * gb / (dtod / 1e3), "GB/s", n, memory_peak(info()),
         std::to_string(bytes >> 20) + " MiB, bytes read plus written");
  CTS_EXPECT_OK(hal_host_free(device(), host));
}

TEST_P(Perf, LaunchRate) {
  Kernel fill;
  CTS_LOAD_OR_SKIP(fill, "fill_f32");
  Buffer y(device(), 256);
  ASSERT_TRUE(y.ok()) << y.error();
  uint32_t count = 1;
  float value = 1.0f;
  const uint32_t launches = options().quick ? 200 : 2000;
  const uint32_t n = options().quick ? 3 : 7;
  std::vector<double> rates;
  for (uint32_t r = 0; r < n + 1; ++r) {  // the first round warms up
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    const double t0 = now_ms();
    for (uint32_t i = 0; i < launches; ++i) {
      ASSERT_NO_FATAL_FAILURE(fill.launch(stream_, 1, 1, 1, {&y.ptr, &count, &value}));
    }
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    if (r > 0) rates.push_back(launches / ((now_ms() - t0) / 1e3));
  }
  record("launch_rate", median(rates), "launches/s", n,
         {-1, "n/a: launch overhead has no theoretical peak"},
         std::to_string(launches) + " launches of a one-block kernel, then one synchronize");
}

TEST_P(Perf, Matmul) {
  uint32_t size = gpu() ? (options().quick ? 1024 : 4096) : (options().quick ? 128 : 256);
  Planned k;
  std::string why;
  if (!hal_kernels::tune::plan_matmul(device(), "matmul_f32", {size, size, size}, &k.plan, &why)) {
    GTEST_SKIP() << "no matmul plan for this device: " << why;
  }
  CTS_ASSERT_OK(hal_kernels::tune::load_plan(device(), k.plan, &k.module, &k.function));
  uint32_t m = size, n = size, kk = size, ld = size;
  float alpha = 1.0f, beta = 0.0f;
  const size_t elems = size_t{size} * size;
  Buffer a(device(), elems * 4), b(device(), elems * 4), c(device(), elems * 4);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.error() << b.error() << c.error();
  const std::vector<float> host = ref::random_uniform(elems, 3);
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, a.ptr, host.data(), elems * 4));
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, b.ptr, host.data(), elems * 4));
  const auto run = [&] {
    CTS_EXPECT_OK(
        k.launch(stream_, {&a.ptr, &b.ptr, &c.ptr, &m, &n, &kk, &ld, &ld, &ld, &alpha, &beta}));
  };
  run();  // builds the pipeline
  const uint32_t reps = options().quick ? 3 : 5;
  const double ms = median_ms(reps, run);
  ASSERT_GT(ms, 0);
  const double gflops = 2.0 * size * size * size / (ms * 1e6);
  record("matmul_f32_gflops", gflops, "GFLOP/s", reps, fp32_peak(info()),
         k.what() + " " + std::to_string(size) + "^3");
}

TEST_P(Perf, Attention) {
  uint32_t bh = gpu() ? (options().quick ? 8 : 32) : 1;
  uint32_t seq = gpu() ? (options().quick ? 512 : 2048) : (options().quick ? 64 : 128);
  uint32_t causal = 0;
  const uint32_t dim = 64;
  Planned k;
  std::string why;
  if (!hal_kernels::tune::plan_attention(device(), "attention_f32", {bh, seq, seq, dim, false},
                                         &k.plan, &why)) {
    GTEST_SKIP() << "no attention plan for this device: " << why;
  }
  CTS_ASSERT_OK(hal_kernels::tune::load_plan(device(), k.plan, &k.module, &k.function));
  float scale = 0.125f;
  const size_t elems = size_t{bh} * seq * dim;
  Buffer q(device(), elems * 4), kb(device(), elems * 4), v(device(), elems * 4),
      o(device(), elems * 4);
  ASSERT_TRUE(q.ok() && kb.ok() && v.ok() && o.ok())
      << q.error() << kb.error() << v.error() << o.error();
  const std::vector<float> host = ref::random_uniform(elems, 5);
  for (hal_deviceptr p : {q.ptr, kb.ptr, v.ptr}) {
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, p, host.data(), elems * 4));
  }
  const auto run = [&] {
    CTS_EXPECT_OK(
        k.launch(stream_, {&q.ptr, &kb.ptr, &v.ptr, &o.ptr, &bh, &seq, &seq, &scale, &causal}));
  };
  run();
  const uint32_t reps = options().quick ? 3 : 5;
  const double ms = median_ms(reps, run);
  ASSERT_GT(ms, 0);
  const double flops = 4.0 * bh * seq * seq * dim;  // Q K^T and P V
  record("attention_fused_f32_gflops", flops / (ms * 1e6), "GFLOP/s", reps, fp32_peak(info()),
         k.what() + " bh=" + std::to_string(bh) + " seq=" + std::to_string(seq) + " d=64");
}

INSTANTIATE_TEST_SUITE_P(, Perf, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
