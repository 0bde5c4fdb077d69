// PTX on a Vulkan device: the pack's PTX, which hal translates to SPIR-V at hal_module_load,
// against the same kernels' hand-written SPIR-V on the same device, and against the CPU PTX
// device interpreting the same PTX. It runs on a Vulkan device whose ir_mask has HAL_IR_PTX.
// For each workload (the tiled matmul in f32 and f16 and the register-tiled one in f32; the
// fused attention and the three-kernel attention in f32) one timing loop takes the translated
// PTX, the SPIR-V twin and, where present, the PTX on the CPU PTX device in turn, the order
// rotated run by run, and two figures come from it:
//  - ptx_vulkan_vs_spirv_<workload>: GFLOP/s of the translated PTX against the SPIR-V's on this
//    device: what translation costs at run time against GLSL compiled by glslang;
//  - ptx_vulkan_vs_cpu_ptx_<workload>: GFLOP/s of the translated PTX against the CPU PTX
//    device's interpreter on the same PTX (on a Vulkan CPU device only, where both run on the
//    same cores; the CPU PTX device is there when HAL_CUDA_LIBRARY names libhal_ptx_cpu.so).
// Every side gets the same seeded inputs and its last result is checked against the pack's CPU
// reference: a wrong result is reported as an error, with the figure.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "pack_workload.h"
#include "side_device.h"

namespace bench {

namespace {

// What the issue asks of translated PTX against its SPIR-V twin.
constexpr double kSpirvRatioGoal = 0.8;

std::vector<Workload> workloads(bool quick) {
  const uint32_t size = quick ? 64 : 256;
  const uint32_t batch_heads = quick ? 1 : 2, seq = quick ? 64 : 256;
  return {Workload::matmul("matmul_tiled_f32_64x64", size),
          Workload::matmul("matmul_tiled_f16_64x64", size),
          Workload::matmul("matmul_reg_f32_64x64", size),
          Workload::attention_fused("attention_fused_f32_d64", batch_heads, seq),
          Workload::attention_split("f32", batch_heads, seq, 64)};
}

bool supports_all(const PackModules& modules, const Workload& w) {
  for (const std::string& kernel : w.kernels()) {
    if (!modules.supported(kernel)) return false;
  }
  return true;
}

}  // namespace

void bench_ptx_vulkan(Context& ctx) {
  const std::vector<Workload> list = workloads(ctx.options.quick);
  bool wanted = false;
  for (const Workload& w : list) {
    wanted = wanted || ctx.wants("ptx_vulkan_vs_spirv_" + w.label) ||
             ctx.wants("ptx_vulkan_vs_cpu_ptx_" + w.label);
  }
  if (!wanted) return;
  // Other devices pass silently (the family is not theirs), unless --filter names it.
  const bool named = ctx.options.filter.find("ptx_vulkan") != std::string::npos;
  if (!ctx.is_vulkan() || (ctx.info.ir_mask & HAL_IR_PTX) == 0) {
    if (named) {
      ctx.report->note("ptx_vulkan: skipped: the device is not a Vulkan device that takes PTX");
    }
    return;
  }
  // The interpreter is compared only on the same cores.
  std::unique_ptr<SideDevice> interpreter;
  std::string interpreter_missing =
      "this device is not a CPU: the comparison with the CPU PTX device's interpreter is only "
      "meaningful on the same cores";
  if (ctx.info.is_cpu) {
    interpreter = std::make_unique<SideDevice>(
        ctx, "cuda",
        [](const hal_device_info& info) { return info.is_cpu && (info.ir_mask & HAL_IR_PTX) != 0; },
        HAL_IR_PTX, "CPU PTX device",
        "set HAL_CUDA_LIBRARY to libhal_ptx_cpu.so to compare with its interpreter");
    interpreter_missing = interpreter->missing();
    if (!interpreter->available()) interpreter.reset();
  }
  if (!interpreter) ctx.report->note("ptx_vulkan: no CPU PTX baseline: " + interpreter_missing);
  PackModules ptx_modules(ctx, HAL_IR_PTX), spirv_modules(ctx, HAL_IR_SPIRV);
  std::unique_ptr<PackModules> interpreter_modules;
  if (interpreter) {
    interpreter_modules = std::make_unique<PackModules>(interpreter->ctx(), HAL_IR_PTX);
  }
  const uint32_t reps = ctx.reps(7, 1);

  for (const Workload& w : list) {
    const std::string spirv_name = "ptx_vulkan_vs_spirv_" + w.label;
    const std::string interpreter_name = "ptx_vulkan_vs_cpu_ptx_" + w.label;
    const bool want_spirv = ctx.wants(spirv_name);
    const bool want_interpreter = ctx.wants(interpreter_name);
    if (!want_spirv && !want_interpreter) continue;
    if (!supports_all(ptx_modules, w)) {
      ctx.report->note("ptx_vulkan: " + w.label + " skipped: the device lacks a feature it needs");
      continue;
    }
    // A kernel the translator refuses, or one that fails to run, is this workload's error; the
    // others still run.
    try {
      const WorkloadData data(w);
      const Instance ptx(ptx_modules, w, data);
      std::unique_ptr<Instance> spirv, interpreted;
      std::string spirv_missing, interpreted_missing = interpreter_missing;
      if (want_spirv) {
        if (supports_all(spirv_modules, w)) {
          spirv = std::make_unique<Instance>(spirv_modules, w, data);
        } else {
          spirv_missing = "the pack's SPIR-V of " + w.label + " needs a feature the device lacks";
        }
      }
      if (want_interpreter && interpreter_modules) {
        if (supports_all(*interpreter_modules, w)) {
          interpreted = std::make_unique<Instance>(*interpreter_modules, w, data);
        } else {
          interpreted_missing = interpreter->describe() + " lacks a feature " + w.label + " needs";
        }
      }

      // One loop, the contestants' order rotated run by run; the first untimed run also builds
      // the pipelines.
      std::vector<std::function<void()>> runs = {[&] { ptx.run(); }};
      const size_t spirv_at = runs.size();
      if (spirv) runs.emplace_back([&] { spirv->run(); });
      const size_t interpreted_at = runs.size();
      if (interpreted) runs.emplace_back([&] { interpreted->run(); });
      std::vector<std::vector<double>> us;
      time_rotated(1, reps, runs, &us);

      // A figure of a wrong result is no figure: each side's last run is checked.
      std::string wrong;
      const std::vector<std::pair<const Instance*, std::string>> sides = {
          {&ptx, "the translated PTX on this device"},
          {spirv.get(), "the SPIR-V on this device"},
          {interpreted.get(),
           interpreter ? "the PTX on " + interpreter->describe() : std::string()}};
      for (const auto& [instance, who] : sides) {
        if (instance == nullptr) continue;
        if (const std::string why = instance->check(data); !why.empty()) {
          wrong += (wrong.empty() ? "" : "; ") + who + " computed a wrong result: " + why;
        }
      }
      if (!wrong.empty()) ctx.report->error("ptx_vulkan: " + w.label + ": " + wrong);

      const double flop = w.flop();
      auto rate = [flop](double t) { return t > 0 ? flop / (t * 1e3) : 0.0; };
      Figure base;
      base.family = "ptx_vulkan";
      base.what = std::string("GFLOP/s (") + w.flop_text() + " per run) of the pack's PTX " +
                  (w.kind == Workload::Kind::kAttentionSplit ? "kernels, launched in turn"
                                                             : "kernel, launched once") +
                  " and synchronized, translated to SPIR-V by hal on this device";
      base.unit = "GFLOP/s";
      base.higher_is_better = true;
      base.params = w.params();
      base.value = Stats::of(us[0]).map(rate);
      if (!wrong.empty()) base.note = "WRONG RESULT: " + wrong;

      if (want_spirv) {
        Figure f = base;
        f.name = spirv_name;
        f.has_baseline = spirv != nullptr;
        f.baseline_missing = spirv_missing;
        if (spirv) {
          f.baseline_name =
              "the same kernels' hand-written SPIR-V (GLSL) through hal on the same device, "
              "same launches, in turn with the PTX run by run";
          f.baseline = Stats::of(us[spirv_at]).map(rate);
        }
        f.target = {true, false, kSpirvRatioGoal,
                    "translated PTX at least 0.8x its hand-written SPIR-V twin"};
        if (f.note.empty()) {
          f.note =
              "Both sides are compiled by the same driver, so the ratio is the translated code's "
              "against glslang's. On lavapipe (Mesa 22.3) kernels whose inner loop loads from "
              "global memory run about 3 times slower translated, most likely because the PTX "
              "addresses each load through a 64-bit device address, which llvmpipe loads lane "
              "by lane, where the GLSL's storage-buffer index lets a load that is the same in "
              "every lane be one load. Kernels that stage their data through shared memory run "
              "at par (docs/PERFORMANCE.md, PTX on Vulkan devices).";
        }
        ctx.report->add(std::move(f));
      }
      if (want_interpreter) {
        Figure f = base;
        f.name = interpreter_name;
        f.has_baseline = interpreted != nullptr;
        f.baseline_missing = interpreted_missing;
        if (interpreted) {
          f.params.emplace_back("cpu_ptx_device", interpreter->ctx().info.name);
          f.baseline_name = "the same PTX through hal on " + interpreter->describe() +
                            " (its interpreter), same launches, in turn with the translated "
                            "PTX run by run";
          f.baseline = Stats::of(us[interpreted_at]).map(rate);
          if (f.note.empty()) {
            f.note =
                "The same PTX on the same cores, compiled to native code by the driver after "
                "translation against interpreted instruction by instruction.";
          }
        }
        ctx.report->add(std::move(f));
      }
    } catch (const HalError& e) {
      ctx.report->error("ptx_vulkan: " + w.label + ": " + e.what());
      hal_stream_synchronize(ctx.stream);
    }
  }
}

}  // namespace bench
