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
// Both sides get the same seeded inputs, and each side's last result is checked against the
// pack's CPU reference: a figure of a wrong result is reported as an error.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "pack_workload.h"
#include "raw_cuda.h"
#include "side_device.h"

namespace bench {

namespace {

// The goal for the interpreter on the 2-core build machine.
constexpr double kLaneRateGoal = 100.0;  // M lane-instructions per second

std::vector<Workload> workloads(bool quick) {
  const uint32_t size = quick ? 64 : 256;
  return {Workload::matmul("matmul_tiled_f32_64x64", size),
          Workload::matmul("matmul_tiled_f16_64x64", size),
          Workload::attention_fused("attention_fused_f32_d64", quick ? 1 : 2, quick ? 64 : 256)};
}

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
  const SideDevice vulkan(
      ctx, "vulkan",
      [](const hal_device_info& info) { return info.is_cpu && (info.ir_mask & HAL_IR_SPIRV) != 0; },
      HAL_IR_SPIRV, "Vulkan CPU device (lavapipe)",
      "the comparison is only meaningful on the same cores");
  if (!vulkan.available()) ctx.report->note("cpu_ptx: no Vulkan baseline: " + vulkan.missing());
  PackModules ptx_modules(ctx, HAL_IR_PTX);
  std::unique_ptr<PackModules> spirv_modules;
  if (vulkan.available()) spirv_modules = std::make_unique<PackModules>(vulkan.ctx(), HAL_IR_SPIRV);
  const uint32_t reps = ctx.reps(7, 1);

  for (const Workload& w : list) {
    const std::string rate_name = "cpu_ptx_lane_rate_" + w.label;
    const std::string versus_name = "cpu_ptx_vs_vulkan_" + w.label;
    if (!ctx.wants(rate_name) && !ctx.wants(versus_name)) continue;
    if (!ptx_modules.supported(w.kernel)) {
      ctx.report->note("cpu_ptx: " + w.label + " skipped: the device lacks a feature it needs");
      continue;
    }
    const WorkloadData data(w);
    const Instance ptx(ptx_modules, w, data);
    std::string baseline_missing = vulkan.missing();
    std::unique_ptr<Instance> spirv;
    if (spirv_modules) {
      if (spirv_modules->supported(w.kernel)) {
        spirv = std::make_unique<Instance>(*spirv_modules, w, data);
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
    // A figure of a wrong result is no figure: each side's last run is checked.
    std::string wrong;
    if (const std::string ptx_wrong = ptx.check(data); !ptx_wrong.empty()) {
      wrong = "the PTX on the CPU PTX device computed a wrong result: " + ptx_wrong;
    } else if (spirv) {
      if (const std::string spirv_wrong = spirv->check(data); !spirv_wrong.empty()) {
        wrong = "the SPIR-V on " + vulkan.describe() + " computed a wrong result: " + spirv_wrong;
      }
    }
    if (!wrong.empty()) ctx.report->error("cpu_ptx: " + w.label + ": " + wrong);

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
      f.params = w.params();
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
      if (!wrong.empty()) f.note = "WRONG RESULT: " + wrong;
      ctx.report->add(std::move(f));
    }

    if (ctx.wants(versus_name)) {
      const double flop = w.flop();
      auto rate = [flop](double t) { return t > 0 ? flop / (t * 1e3) : 0.0; };
      Figure f;
      f.family = "cpu_ptx";
      f.name = versus_name;
      f.what = std::string("GFLOP/s (") + w.flop_text() +
               " per run) of one launch of the PTX on the CPU PTX device followed by a "
               "synchronize";
      f.unit = "GFLOP/s";
      f.higher_is_better = true;
      f.params = w.params();
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
      if (!wrong.empty()) f.note = "WRONG RESULT: " + wrong;
      ctx.report->add(std::move(f));
    }
  }
}

}  // namespace bench
