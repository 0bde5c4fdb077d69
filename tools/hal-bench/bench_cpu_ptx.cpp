// The CPU PTX device (libhal_ptx_cpu.so: a CUDA driver that interprets PTX on the host CPU).
// It runs only there: on a CUDA device with is_cpu whose driver library exports
// hal_ptx_cpu_get_stats. For each workload (the pack's tiled matmul in f32 and f16, the fused
// attention in f32) one timing loop alternates the kernel's PTX on this device with the same
// kernel's SPIR-V on a Vulkan CPU device (lavapipe) opened through hal in the same process, run
// by run, and two figures come from it:
//  - cpu_ptx_lane_rate_<workload>: the interpreter's throughput, lane-instructions per second
//    (the driver's counters read before and after each run, which ends with a synchronize, over
//    the run's time), with an absolute target and no baseline (nothing else counts them);
//  - cpu_ptx_vs_vulkan_<workload>: GFLOP/s of the PTX run against the SPIR-V run's: an
//    interpreter against LLVM-compiled code on the same cores.
// Inputs are constant: the time does not depend on the values (the conformance suite checks
// the results on both devices).
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "raw_cuda.h"

namespace bench {

namespace {

// The goal for the interpreter on the 2-core build machine.
constexpr double kLaneRateGoal = 100.0;  // M lane-instructions per second

struct Workload {
  std::string kernel;  // the pack's name, the same in both IRs
  std::string label;   // the figures' suffix
  bool attention = false;
  uint32_t size = 0;  // matmul: M = N = K
  uint32_t batch_heads = 0, seq = 0, head_dim = 0;

  double flop() const {
    if (attention) return 4.0 * batch_heads * seq * seq * head_dim;
    return 2.0 * size * size * size;
  }
  std::vector<std::pair<std::string, std::string>> params(const char* dtype) const {
    if (attention) {
      return {{"kernel", kernel},
              {"dtype", dtype},
              {"batch_heads", std::to_string(batch_heads)},
              {"seq_q", std::to_string(seq)},
              {"seq_kv", std::to_string(seq)},
              {"head_dim", std::to_string(head_dim)},
              {"causal", "0"}};
    }
    return {{"kernel", kernel}, {"dtype", dtype}, {"size", std::to_string(size)}};
  }
};

std::vector<Workload> workloads(bool quick) {
  const uint32_t size = quick ? 64 : 256;
  std::vector<Workload> list;
  for (const char* kernel : {"matmul_tiled_f32_64x64", "matmul_tiled_f16_64x64"}) {
    Workload w;
    w.kernel = kernel;
    w.label = w.kernel + "_" + std::to_string(size);
    w.size = size;
    list.push_back(w);
  }
  Workload a;
  a.kernel = "attention_fused_f32_d64";
  a.attention = true;
  a.batch_heads = quick ? 1 : 2;
  a.seq = quick ? 64 : 256;
  a.head_dim = 64;
  a.label = a.kernel + "_bh" + std::to_string(a.batch_heads) + "_s" + std::to_string(a.seq);
  list.push_back(a);
  return list;
}

// One workload loaded on one device: the kernel, its buffers and arguments; run() is one
// launch followed by a synchronize.
class Instance {
 public:
  Instance(const Context& ctx, const Workload& w) : ctx_(ctx), kernel_(ctx, w.kernel) {
    const bool f16 = std::string(kernel_.info->dtype) == "f16";
    if (w.attention) {
      const size_t bytes = size_t{w.batch_heads} * w.seq * w.head_dim * (f16 ? 2 : 4);
      for (int i = 0; i < 4; ++i) buffers_.push_back(std::make_unique<DeviceBuffer>(ctx, bytes));
      const uint32_t small = f16 ? 0x2E662E66u : 0x3DCCCCCDu;  // about 0.1
      for (int i = 0; i < 3; ++i) {
        BENCH_CHECK(hal_memset_d32(ctx.stream, buffers_[i]->ptr, small, bytes / 4));
      }
      u_ = {w.batch_heads, w.seq, w.seq, 0};
      f_ = {1.0f / std::sqrt(static_cast<float>(w.head_dim)), 0};
      args_ = {&buffers_[0]->ptr,
               &buffers_[1]->ptr,
               &buffers_[2]->ptr,
               &buffers_[3]->ptr,
               &u_[0],
               &u_[1],
               &u_[2],
               &f_[0],
               &u_[3]};
      grid_ = {(w.seq + 15) / 16, w.batch_heads};
    } else {
      const size_t bytes = size_t{w.size} * w.size * (f16 ? 2 : 4);
      for (int i = 0; i < 3; ++i) buffers_.push_back(std::make_unique<DeviceBuffer>(ctx, bytes));
      const uint32_t one = f16 ? 0x3C003C00u : 0x3F800000u;
      for (int i = 0; i < 2; ++i) {
        BENCH_CHECK(hal_memset_d32(ctx.stream, buffers_[i]->ptr, one, bytes / 4));
      }
      u_ = {w.size, w.size, w.size, w.size, w.size, w.size};  // m n k lda ldb ldc
      f_ = {1.0f, 0.0f};                                      // alpha beta
      args_ = {&buffers_[0]->ptr,
               &buffers_[1]->ptr,
               &buffers_[2]->ptr,
               &u_[0],
               &u_[1],
               &u_[2],
               &u_[3],
               &u_[4],
               &u_[5],
               &f_[0],
               &f_[1]};
      const uint32_t bm = kernel_tunable(*kernel_.info, "BM", 64);
      const uint32_t bn = kernel_tunable(*kernel_.info, "BN", 64);
      grid_ = {(w.size + bn - 1) / bn, (w.size + bm - 1) / bm};
    }
    BENCH_CHECK(hal_stream_synchronize(ctx.stream));
  }

  void run() const {
    kernel_.launch(ctx_.stream, grid_[0], grid_[1], 1, args_);
    BENCH_CHECK(hal_stream_synchronize(ctx_.stream));
  }

 private:
  const Context& ctx_;
  Kernel kernel_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
  // The arguments point into these: their size is fixed once args_ is built.
  std::vector<uint32_t> u_;
  std::vector<float> f_;
  std::vector<void*> args_;
  std::vector<uint32_t> grid_;
};

// The baseline device: the first Vulkan device that is a CPU, so that both sides run on the
// same cores. Owns the device's stream.
class VulkanCpu {
 public:
  explicit VulkanCpu(const Context& ctx) {
    ctx_.options = ctx.options;
    ctx_.report = ctx.report;
    ctx_.ir = HAL_IR_SPIRV;
    std::string seen;
    for (uint32_t index = 0;; ++index) {
      const std::string selector = "vulkan:" + std::to_string(index);
      hal_device device = nullptr;
      if (hal_device_find(selector.c_str(), &device) != HAL_SUCCESS) {
        missing_ = index == 0 ? std::string("no Vulkan device: ") + hal_last_error()
                              : "no Vulkan CPU device (lavapipe) among " + seen +
                                    ": the comparison is only meaningful on the same cores";
        return;
      }
      hal_device_info info{};
      info.struct_size = sizeof info;
      BENCH_CHECK(hal_device_get_info(device, &info));
      if (info.is_cpu && (info.ir_mask & HAL_IR_SPIRV) != 0) {
        ctx_.device = device;
        ctx_.info = info;
        selector_ = selector;
        BENCH_CHECK(hal_stream_create(device, &ctx_.stream));
        return;
      }
      seen += (seen.empty() ? "" : ", ") + selector + " (" + info.name + ")";
    }
  }
  ~VulkanCpu() {
    if (ctx_.stream != nullptr) hal_stream_destroy(ctx_.stream);
  }
  VulkanCpu(const VulkanCpu&) = delete;
  VulkanCpu& operator=(const VulkanCpu&) = delete;

  bool available() const { return ctx_.device != nullptr; }
  const std::string& missing() const { return missing_; }
  const Context& ctx() const { return ctx_; }
  std::string describe() const { return selector_ + " (" + ctx_.info.name + ")"; }

 private:
  Context ctx_;
  std::string selector_;
  std::string missing_;
};

}  // namespace

void bench_cpu_ptx(Context& ctx) {
  const std::vector<Workload> list = workloads(ctx.options.quick);
  bool wanted = false;
  for (const Workload& w : list) {
    wanted = wanted || ctx.wants("cpu_ptx_lane_rate_" + w.label) ||
             ctx.wants("cpu_ptx_vs_vulkan_" + w.label);
  }
  if (!wanted) return;
  // Other devices pass silently (the family is not theirs), unless --filter names it.
  const bool named = ctx.options.filter.find("cpu_ptx") != std::string::npos;
  if (!ctx.is_cuda() || !ctx.info.is_cpu) {
    if (named) ctx.report->note("cpu_ptx: skipped: the device is not the CPU PTX device");
    return;
  }
  std::string why;
  const std::unique_ptr<RawCuda> driver =
      RawCuda::open(static_cast<int>(ctx.info.backend_index), &why);
  if (!driver || !driver->has_ptx_cpu_counts()) {
    // A CPU CUDA device from another driver library: no counters to read.
    ctx.report->note(
        "cpu_ptx: skipped: " +
        (driver ? driver->library_name() + " does not export hal_ptx_cpu_get_stats" : why));
    return;
  }
  const VulkanCpu vulkan(ctx);
  if (!vulkan.available()) ctx.report->note("cpu_ptx: no Vulkan baseline: " + vulkan.missing());
  const uint32_t reps = ctx.reps(7, 1);

  for (const Workload& w : list) {
    const std::string rate_name = "cpu_ptx_lane_rate_" + w.label;
    const std::string versus_name = "cpu_ptx_vs_vulkan_" + w.label;
    if (!ctx.wants(rate_name) && !ctx.wants(versus_name)) continue;
    if (!Kernel::supported(ctx, w.kernel)) {
      ctx.report->note("cpu_ptx: " + w.label + " skipped: the device lacks a feature it needs");
      continue;
    }
    const Instance ptx(ctx, w);
    std::string baseline_missing = vulkan.missing();
    std::unique_ptr<Instance> spirv;
    if (vulkan.available()) {
      if (Kernel::supported(vulkan.ctx(), w.kernel)) {
        spirv = std::make_unique<Instance>(vulkan.ctx(), w);
      } else {
        baseline_missing = vulkan.describe() + " lacks a feature " + w.kernel + " needs";
      }
    }

    // The counters are read around each run, after its synchronize: every sample has its own
    // count (the warm-up's too, dropped below).
    std::vector<RawCuda::PtxCpuCounts> counts;
    auto run_ptx = [&] {
      RawCuda::PtxCpuCounts before, after;
      if (!driver->ptx_cpu_counts(&before)) throw HalError("hal_ptx_cpu_get_stats failed");
      ptx.run();
      if (!driver->ptx_cpu_counts(&after)) throw HalError("hal_ptx_cpu_get_stats failed");
      counts.push_back({after.lane_instructions - before.lane_instructions,
                        after.warp_instructions - before.warp_instructions,
                        after.kernels - before.kernels});
    };
    std::vector<double> ptx_us, spirv_us;
    if (spirv) {
      time_interleaved(
          1, reps, run_ptx, [&] { spirv->run(); }, &ptx_us, &spirv_us);
    } else {
      ptx_us = time_runs(1, reps, run_ptx);
    }
    counts.erase(counts.begin(), counts.end() - static_cast<long>(ptx_us.size()));
    const char* dtype = hal_kernels_info(w.kernel.c_str())->dtype;

    if (ctx.wants(rate_name)) {
      std::vector<double> rates;
      for (size_t i = 0; i < ptx_us.size(); ++i) {
        rates.push_back(ptx_us[i] > 0 ? counts[i].lane_instructions / ptx_us[i] : 0.0);
      }
      const RawCuda::PtxCpuCounts& c = counts.back();
      Figure f;
      f.family = "cpu_ptx";
      f.name = rate_name;
      f.what =
          "millions of lane-instructions per second (an instruction times the lanes that "
          "executed it) of one launch followed by a synchronize on the CPU PTX device, from "
          "hal_ptx_cpu_get_stats before and after";
      f.unit = "M lane-instr/s";
      f.higher_is_better = true;
      f.params = w.params(dtype);
      f.params.emplace_back("lane_instructions", std::to_string(c.lane_instructions));
      f.params.emplace_back("warp_instructions", std::to_string(c.warp_instructions));
      char lanes[32];
      std::snprintf(lanes, sizeof lanes, "%.2f",
                    c.warp_instructions > 0
                        ? static_cast<double>(c.lane_instructions) / c.warp_instructions
                        : 0.0);
      f.params.emplace_back("lanes_per_warp_instruction", lanes);
      f.params.emplace_back("worker_threads", std::to_string(ctx.info.compute_units));
      f.value = Stats::of(rates);
      f.baseline_missing =
          "none applies: only the CPU PTX driver counts lane-instructions; the target is on "
          "the rate itself";
      f.target = {true, false, kLaneRateGoal,
                  "at least 100 M lane-instructions/s on the 2-core build machine", true};
      f.note =
          "The interpreter's throughput: below the goal the fix is in src/ptx_vm (the "
          "executor's per-instruction dispatch), not in hal.";
      ctx.report->add(std::move(f));
    }

    if (ctx.wants(versus_name)) {
      const double flop = w.flop();
      auto rate = [flop](double t) { return t > 0 ? flop / (t * 1e3) : 0.0; };
      Figure f;
      f.family = "cpu_ptx";
      f.name = versus_name;
      f.what = std::string("GFLOP/s (") +
               (w.attention ? "4·batch_heads·seq_q·seq_kv·head_dim" : "2·M·N·K") +
               " per run) of one launch of the PTX on the CPU PTX device followed by a "
               "synchronize";
      f.unit = "GFLOP/s";
      f.higher_is_better = true;
      f.params = w.params(dtype);
      if (vulkan.available()) f.params.emplace_back("vulkan_device", vulkan.ctx().info.name);
      f.value = Stats::of(ptx_us).map(rate);
      f.has_baseline = spirv != nullptr;
      f.baseline_missing = baseline_missing;
      if (spirv) {
        f.baseline_name = "the same kernel's SPIR-V through hal on " + vulkan.describe() +
                          ", one launch + synchronize, alternating with the PTX run by run";
        f.baseline = Stats::of(spirv_us).map(rate);
        f.note =
            "An interpreter executing PTX instruction by instruction against lavapipe's "
            "LLVM-compiled, vectorised SPIR-V on the same cores: the ratio is the price of "
            "interpretation, not of hal.";
      }
      ctx.report->add(std::move(f));
    }
  }
}

}  // namespace bench
