// PTX on a Vulkan device against the pack's best SPIR-V for the same problem, where no SPIR-V
// twin of the PTX exists: the pack's tensor-core matmuls (mma.sync and ldmatrix, PTX only) and
// Triton's kernels in the tree (tests/ptx_cpu/triton, compiled by the pinned triton for sm_80,
// embedded at build time). It runs on a Vulkan device whose ir_mask has HAL_IR_PTX:
//  - ptx_vulkan_mma_vs_spirv_<kernel>_<size>: GFLOP/s of a matmul_mma instance translated by hal
//    against the fastest of the pack's SPIR-V f16 matmuls (tiled, register-tiled, subgroup) on
//    the same f16 problem;
//  - ptx_vulkan_triton_softmax_vs_spirv: GB/s of Triton's row softmax (rows of 128) against the
//    pack's softmax_rows_f32;
//  - ptx_vulkan_triton_matmul_vs_spirv: GFLOP/s of Triton's f16 matmul (f32 C) against the
//    fastest of the pack's SPIR-V f16 matmuls;
//  - ptx_vulkan_triton_attention_vs_spirv: GFLOP/s of Triton's flash attention (two pipeline
//    stages, f16 Q, K, V, f32 O, head dim 64) against the pack's fused f16 d64 attention.
// With an NVIDIA GPU beside the device (tools/gpu-check.sh), each Triton figure has a twin,
// ptx_vulkan_triton_<kernel>_vs_cuda: the same PTX through CUDA on that GPU is its baseline.
// Each figure's contestants run in one loop, in turn, the order rotated run by run; the
// baseline is the candidate with the best median, named in the figure. Every contestant's last
// result is checked against the pack's CPU reference: a wrong one is reported as an error.
#include <hal_kernels/reference.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "pack_workload.h"
#include "side_device.h"
#include "triton_ptx.h"

namespace bench {

namespace ref = hal_kernels::ref;

namespace {

// One side of a comparison: what it is, one run (launch and synchronize), and its last result
// checked (empty when right).
struct Contestant {
  std::string name;
  std::function<void()> run;
  std::function<std::string()> check;
};

// Downloads |count| f32 values.
std::vector<float> download(const Context& ctx, hal_deviceptr p, size_t count) {
  std::vector<float> out(count);
  BENCH_CHECK(hal_memcpy_dtoh(ctx.stream, out.data(), p, count * 4));
  BENCH_CHECK(hal_stream_synchronize(ctx.stream));
  return out;
}

std::string verdict(const std::vector<float>& out, const ref::Result& reference) {
  const ref::Check c = ref::compare(out, reference);
  return c.ok() ? std::string() : c.summary();
}

// One of Triton's kernels on one problem: the kernel's PTX, its grid, its inputs (f32 values,
// stored as f16 where |f16_inputs|), its f32 output, and its arguments in order.
struct TritonProblem {
  const TritonPtx* ptx = nullptr;
  uint32_t grid[2] = {1, 1};
  std::vector<std::vector<float>> inputs;
  bool f16_inputs = false;
  size_t output_count = 0;
  struct Arg {
    enum Kind { kInput, kOutput, kU32, kF32 } kind;
    uint32_t input = 0;  // kInput: which
    uint32_t u32 = 0;
    float f32 = 0;
  };
  std::vector<Arg> args;
  ref::Result reference;
};

// A TritonProblem on one device, launched as Triton's launcher launches it: block
// 32 * num_warps = 128, the metadata's dynamic shared memory, and the two hidden scratch
// pointers null (their sizes are 0).
class TritonRun {
 public:
  TritonRun(const Context& ctx, const TritonProblem& problem) : ctx_(ctx), problem_(problem) {
    BENCH_CHECK(
        hal_module_load(ctx.device, problem.ptx->text, problem.ptx->size, nullptr, &module_));
    BENCH_CHECK(hal_module_get_function(module_, problem.ptx->entry, &function_));
    for (const std::vector<float>& input : problem.inputs) {
      inputs_.push_back(upload(ctx, input, problem.f16_inputs));
    }
    output_ = std::make_unique<DeviceBuffer>(ctx, problem.output_count * 4);
    values_.resize(problem.args.size());
    for (size_t i = 0; i < problem.args.size(); ++i) {
      const TritonProblem::Arg& a = problem.args[i];
      switch (a.kind) {
        case TritonProblem::Arg::kInput:
          args_.push_back(&inputs_[a.input]->ptr);
          break;
        case TritonProblem::Arg::kOutput:
          args_.push_back(&output_->ptr);
          break;
        case TritonProblem::Arg::kU32:
          values_[i].u32 = a.u32;
          args_.push_back(&values_[i].u32);
          break;
        case TritonProblem::Arg::kF32:
          values_[i].f32 = a.f32;
          args_.push_back(&values_[i].f32);
          break;
      }
    }
    args_.push_back(&null_);
    args_.push_back(&null_);
  }
  ~TritonRun() {
    if (module_ != nullptr) hal_module_unload(module_);
  }
  TritonRun(const TritonRun&) = delete;
  TritonRun& operator=(const TritonRun&) = delete;

  void run() {
    const hal_launch_config config{
        {problem_.grid[0], problem_.grid[1], 1}, {128, 1, 1}, problem_.ptx->shared_bytes};
    BENCH_CHECK(hal_launch(ctx_.stream, function_, &config, args_.data()));
    BENCH_CHECK(hal_stream_synchronize(ctx_.stream));
  }
  std::string check() const {
    return verdict(download(ctx_, output_->ptr, problem_.output_count), problem_.reference);
  }
  Contestant contestant(const std::string& name) {
    return {name, [this] { run(); }, [this] { return check(); }};
  }

 private:
  static std::unique_ptr<DeviceBuffer> upload(const Context& ctx, const std::vector<float>& values,
                                              bool f16) {
    auto buffer = std::make_unique<DeviceBuffer>(ctx, values.size() * (f16 ? 2 : 4));
    if (f16) {
      const std::vector<uint16_t> half = ref::to_half(values);
      BENCH_CHECK(hal_memcpy_htod(ctx.stream, buffer->ptr, half.data(), half.size() * 2));
    } else {
      BENCH_CHECK(hal_memcpy_htod(ctx.stream, buffer->ptr, values.data(), values.size() * 4));
    }
    return buffer;
  }

  const Context& ctx_;
  const TritonProblem& problem_;
  hal_module module_ = nullptr;
  hal_function function_ = nullptr;
  std::vector<std::unique_ptr<DeviceBuffer>> inputs_;
  std::unique_ptr<DeviceBuffer> output_;
  union Value {
    uint32_t u32;
    float f32;
  };
  std::vector<Value> values_;
  std::vector<void*> args_;
  hal_deviceptr null_ = 0;
};

// Times |translated| and every candidate in one rotated loop and reports the figure against
// the fastest candidate: the pack's SPIR-V kernels, or (|pack| false) the same PTX on another
// device. |rate| turns microseconds into the figure's unit.
void compare(Context& ctx, Figure figure, const Contestant& translated,
             const std::vector<Contestant>& candidates, const std::function<double(double)>& rate,
             uint32_t reps, bool pack = true) {
  std::vector<std::function<void()>> runs = {translated.run};
  for (const Contestant& c : candidates) runs.push_back(c.run);
  std::vector<std::vector<double>> us;
  time_rotated(1, reps, runs, &us);
  std::string wrong;
  auto judge = [&](const Contestant& c) {
    if (const std::string why = c.check(); !why.empty()) {
      wrong += (wrong.empty() ? "" : "; ") + c.name + " computed a wrong result: " + why;
    }
  };
  judge(translated);
  for (const Contestant& c : candidates) judge(c);
  if (!wrong.empty()) ctx.report->error("ptx_vulkan: " + figure.name + ": " + wrong);
  figure.family = "ptx_vulkan";
  figure.value = Stats::of(us[0]).map(rate);
  if (!wrong.empty()) figure.note = "WRONG RESULT: " + wrong;
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (Stats::of(us[i + 1]).median < Stats::of(us[best + 1]).median) best = i;
  }
  figure.has_baseline = !candidates.empty();
  if (!pack && !candidates.empty()) {
    figure.baseline_name = "the same PTX through hal on " + candidates[0].name +
                           ", in turn with the translated PTX run by run";
    figure.baseline = Stats::of(us[1]).map(rate);
    ctx.report->add(std::move(figure));
    return;
  }
  if (candidates.empty()) {
    figure.baseline_missing = "the device runs none of the pack's SPIR-V kernels for this problem";
  } else {
    std::string others;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (i != best) others += (others.empty() ? "" : ", ") + candidates[i].name;
    }
    figure.baseline_name = "the pack's SPIR-V " + candidates[best].name +
                           " through hal on the same device, the fastest of " +
                           std::to_string(candidates.size()) + " candidates" +
                           (others.empty() ? "" : " (also timed: " + others + ")") +
                           ", in turn with the PTX run by run";
    figure.baseline = Stats::of(us[best + 1]).map(rate);
  }
  figure.params.emplace_back("baseline_kernel", candidates.empty() ? "" : candidates[best].name);
  ctx.report->add(std::move(figure));
}

// The pack's kernels named by |names| that the device runs in SPIR-V, each an Instance of the
// workload |make(name)| on |data|.
std::vector<Contestant> pack_candidates(const Context& ctx, PackModules& spirv,
                                        const std::vector<std::string>& names,
                                        const std::function<Workload(const std::string&)>& make,
                                        const WorkloadData& data,
                                        std::vector<std::unique_ptr<Instance>>* keep) {
  std::vector<Contestant> out;
  for (const std::string& name : names) {
    if (!spirv.supported(name)) continue;
    const hal_kernel_info* info = hal_kernels_info(name.c_str());
    if (info == nullptr || info->shared_bytes > ctx.info.max_shared_memory_per_block) continue;
    keep->push_back(std::make_unique<Instance>(spirv, make(name), data));
    const Instance* instance = keep->back().get();
    out.push_back({name, [instance] { instance->run(); },
                   [instance, &data] { return instance->check(data); }});
  }
  return out;
}

// Triton's softmax_rows was compiled with BLOCK 128: rows of up to 128 columns.
constexpr uint32_t kSoftmaxCols = 128;

const std::vector<std::string> kSpirvMatmulsF16 = {
    "matmul_tiled_f16_32x32", "matmul_tiled_f16_64x64", "matmul_tiled_f16_128x128",
    "matmul_reg_f16_64x64",   "matmul_reg_f16_64x256",  "matmul_sg_f16_128x64",
    "matmul_sg_f16_256x64"};

const std::vector<std::string> kMmaMatmuls = {"matmul_mma_f16_64x64",
                                              "matmul_mma_f16_128x128",
                                              "matmul_mma_f16_128x128_w8",
                                              "matmul_mma_f16_128x128_prefetch",
                                              "matmul_mma_f16_256x128_k64",
                                              "matmul_mma_f16_128x256_k64",
                                              "matmul_mma_f16_256x128_k64_prefetch",
                                              "matmul_mma_f16_128x256_k64_prefetch"};

// Runs |body|, reporting a failed hal call as the figure's error; the family goes on.
void guarded(Context& ctx, const std::string& name, const std::function<void()>& body) {
  try {
    body();
  } catch (const HalError& e) {
    ctx.report->error("ptx_vulkan: " + name + ": " + e.what());
    hal_stream_synchronize(ctx.stream);
  }
}

}  // namespace

void bench_ptx_vulkan_rivals(Context& ctx) {
  const uint32_t size = ctx.options.quick ? 64 : 256;
  std::vector<std::string> mma_names;
  for (const std::string& k : kMmaMatmuls) {
    mma_names.push_back("ptx_vulkan_mma_vs_spirv_" + k + "_" + std::to_string(size));
  }
  const std::string softmax_name = "ptx_vulkan_triton_softmax";
  const std::string matmul_name = "ptx_vulkan_triton_matmul";
  const std::string attention_name = "ptx_vulkan_triton_attention";
  bool wanted = false;
  for (const std::string& n : {softmax_name, matmul_name, attention_name}) {
    wanted = wanted || ctx.wants(n + "_vs_spirv") || ctx.wants(n + "_vs_cuda");
  }
  for (const std::string& n : mma_names) wanted = wanted || ctx.wants(n);
  if (!wanted) return;
  // Other devices pass silently (the family is not theirs), unless --filter names it.
  if (!ctx.is_vulkan() || (ctx.info.ir_mask & HAL_IR_PTX) == 0) {
    if (ctx.options.filter.find("ptx_vulkan") != std::string::npos) {
      ctx.report->note(
          "ptx_vulkan: tensor-core and Triton figures skipped: the device is not a Vulkan "
          "device that takes PTX");
    }
    return;
  }
  PackModules ptx_modules(ctx, HAL_IR_PTX), spirv_modules(ctx, HAL_IR_SPIRV);
  const uint32_t reps = ctx.reps(7, 1);
  auto gflops = [](double flop) {
    return [flop](double us) { return us > 0 ? flop / (us * 1e3) : 0.0; };
  };

  // ---- the pack's tensor-core matmuls -------------------------------------------------------
  const Workload f16_matmul = Workload::matmul("matmul_tiled_f16_64x64", size);
  std::unique_ptr<WorkloadData> matmul_data;
  for (size_t i = 0; i < kMmaMatmuls.size(); ++i) {
    const std::string& kernel = kMmaMatmuls[i];
    if (!ctx.wants(mma_names[i])) continue;
    const hal_kernel_info* info = hal_kernels_info(kernel.c_str());
    if (info == nullptr || !ptx_modules.supported(kernel)) {
      ctx.report->note("ptx_vulkan: " + kernel + " skipped: the device lacks a feature it needs");
      continue;
    }
    if (info->shared_bytes > ctx.info.max_shared_memory_per_block) {
      ctx.report->note("ptx_vulkan: " + kernel + " skipped: it needs " +
                       std::to_string(info->shared_bytes) + " bytes of shared memory per block, " +
                       "the device has " + std::to_string(ctx.info.max_shared_memory_per_block));
      continue;
    }
    guarded(ctx, mma_names[i], [&] {
      if (!matmul_data) matmul_data = std::make_unique<WorkloadData>(f16_matmul);
      const Workload w = Workload::matmul(kernel, size);
      const Instance translated(ptx_modules, w, *matmul_data);
      std::vector<std::unique_ptr<Instance>> keep;
      const std::vector<Contestant> candidates = pack_candidates(
          ctx, spirv_modules, kSpirvMatmulsF16,
          [&](const std::string& k) { return Workload::matmul(k, size); }, *matmul_data, &keep);
      Figure f;
      f.name = mma_names[i];
      f.what =
          "GFLOP/s (2·M·N·K per run) of the pack's tensor-core matmul (mma.sync, ldmatrix) "
          "in PTX, translated to SPIR-V by hal on this device, launched once and "
          "synchronized";
      f.unit = "GFLOP/s";
      f.higher_is_better = true;
      f.params = w.params();
      f.note =
          "Where the device has no 32-lane subgroups (lavapipe), each mma reads its operands "
          "through workgroup memory with a barrier per source register, which the SPIR-V "
          "kernels do not pay; on a GPU with 32-lane subgroups they are shuffles "
          "(docs/PERFORMANCE.md, PTX on Vulkan devices).";
      compare(ctx, f,
              {kernel, [&] { translated.run(); }, [&] { return translated.check(*matmul_data); }},
              candidates, gflops(w.flop()), reps);
    });
  }

  // ---- Triton's kernels ----------------------------------------------------------------------
  struct TritonFigure {
    std::string name, what, unit, note;
    std::vector<std::pair<std::string, std::string>> params;
    std::function<double(double)> rate;
    std::function<TritonProblem()> problem;
    std::function<std::vector<Contestant>(const TritonProblem&,
                                          std::vector<std::unique_ptr<Instance>>*,
                                          std::unique_ptr<WorkloadData>*)>
        candidates;
  };
  std::vector<TritonFigure> triton;
  {
    const uint32_t rows = ctx.options.quick ? 64 : 2048, cols = kSoftmaxCols;
    TritonFigure f;
    f.name = softmax_name;
    f.what =
        "GB/s (rows·128·4 bytes read and written per run) of Triton's row softmax (sm_80 "
        "PTX: warp shuffles and shared memory), translated to SPIR-V by hal on this device, "
        "launched once and synchronized";
    f.unit = "GB/s";
    f.params = {{"rows", std::to_string(rows)}, {"cols", std::to_string(cols)}};
    const double bytes = 2.0 * rows * cols * 4;
    f.rate = [bytes](double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; };
    f.problem = [rows] {
      TritonProblem p;
      p.ptx = &triton_softmax_rows();
      p.grid[0] = rows;
      p.inputs = {ref::random_uniform(size_t{rows} * kSoftmaxCols, 7, -4.0f, 4.0f)};
      p.output_count = size_t{rows} * kSoftmaxCols;
      using A = TritonProblem::Arg;
      p.args = {{A::kOutput},
                {A::kInput, 0},
                {A::kU32, 0, kSoftmaxCols},
                {A::kU32, 0, kSoftmaxCols},
                {A::kU32, 0, kSoftmaxCols}};
      p.reference = ref::softmax_rows(p.inputs[0], rows, kSoftmaxCols, ref::Storage::kF32);
      return p;
    };
    f.candidates = [&ctx, rows](const TritonProblem& p, std::vector<std::unique_ptr<Instance>>*,
                                std::unique_ptr<WorkloadData>*) {
      std::vector<Contestant> out;
      if (!Kernel::supported(ctx, "softmax_rows_f32")) return out;
      // Kept alive by the lambdas that share it.
      struct Pack {
        Kernel kernel;
        DeviceBuffer in, out;
        uint32_t rows, cols;
        Pack(const Context& c, size_t count)
            : kernel(c, "softmax_rows_f32"), in(c, count * 4), out(c, count * 4) {}
      };
      auto pack = std::make_shared<Pack>(ctx, p.output_count);
      pack->rows = rows;
      pack->cols = kSoftmaxCols;
      BENCH_CHECK(
          hal_memcpy_htod(ctx.stream, pack->in.ptr, p.inputs[0].data(), p.inputs[0].size() * 4));
      out.push_back({"softmax_rows_f32",
                     [&ctx, pack] {
                       pack->kernel.launch(
                           ctx.stream, std::min(pack->rows, ctx.info.max_grid_dim[0]), 1, 1,
                           {&pack->in.ptr, &pack->out.ptr, &pack->rows, &pack->cols});
                       BENCH_CHECK(hal_stream_synchronize(ctx.stream));
                     },
                     [&ctx, pack, &p] {
                       return verdict(download(ctx, pack->out.ptr, p.output_count), p.reference);
                     }});
      return out;
    };
    triton.push_back(f);
  }
  {
    TritonFigure f;
    f.name = matmul_name;
    f.what =
        "GFLOP/s (2·M·N·K per run) of Triton's f16 matmul with f32 C (sm_80 PTX: mma.sync, "
        "ldmatrix, cp.async), translated to SPIR-V by hal on this device, launched once and "
        "synchronized";
    f.unit = "GFLOP/s";
    f.params = {{"size", std::to_string(size)}, {"dtype", "f16"}};
    f.note = "Triton stores C in f32, the pack's kernels in f16; the arithmetic is the same.";
    f.rate = gflops(2.0 * size * size * size);
    f.problem = [&, size] {
      if (!matmul_data) matmul_data = std::make_unique<WorkloadData>(f16_matmul);
      TritonProblem p;
      p.ptx = &triton_matmul_f16();
      p.grid[0] = ((size + 63) / 64) * ((size + 63) / 64);
      p.inputs = matmul_data->inputs;
      p.f16_inputs = true;
      p.output_count = size_t{size} * size;
      using A = TritonProblem::Arg;
      p.args = {{A::kInput, 0}, {A::kInput, 1}, {A::kOutput}};
      for (int i = 0; i < 6; ++i) p.args.push_back({A::kU32, 0, size});  // M N K lda ldb ldc
      p.reference = matmul_data->reference;
      return p;
    };
    f.candidates = [&, size](const TritonProblem&, std::vector<std::unique_ptr<Instance>>* keep,
                             std::unique_ptr<WorkloadData>*) {
      return pack_candidates(
          ctx, spirv_modules, kSpirvMatmulsF16,
          [size](const std::string& k) { return Workload::matmul(k, size); }, *matmul_data, keep);
    };
    triton.push_back(f);
  }
  {
    const uint32_t heads = ctx.options.quick ? 1 : 2, seq = ctx.options.quick ? 64 : 256;
    const Workload w = Workload::attention_fused("attention_fused_f16_d64", heads, seq);
    TritonFigure f;
    f.name = attention_name;
    f.what =
        "GFLOP/s (4·heads·seq²·64 per run) of Triton's flash attention forward (sm_80 PTX, "
        "two pipeline stages: mma.sync, ldmatrix, cp.async, warp shuffles), translated to "
        "SPIR-V by hal on this device, launched once and synchronized";
    f.unit = "GFLOP/s";
    f.params = w.params();
    f.note = "Triton stores O in f32, the pack's kernels in f16; not causal.";
    f.rate = gflops(w.flop());
    f.problem = [w, heads, seq] {
      const uint32_t dim = 64;
      const WorkloadData data(w);
      TritonProblem p;
      p.ptx = &triton_flash_attention();
      p.grid[0] = (seq + 63) / 64;
      p.grid[1] = heads;
      p.inputs = data.inputs;
      p.f16_inputs = true;
      p.output_count = size_t{heads} * seq * dim;
      using A = TritonProblem::Arg;
      p.args = {{A::kInput, 0},
                {A::kInput, 1},
                {A::kInput, 2},
                {A::kOutput},
                {A::kF32, 0, 0, 1.0f / std::sqrt(static_cast<float>(dim))},
                {A::kU32, 0, seq},
                {A::kU32, 0, seq * dim},
                {A::kU32, 0, dim}};
      p.reference = data.reference;
      return p;
    };
    f.candidates = [&, w](const TritonProblem&, std::vector<std::unique_ptr<Instance>>* keep,
                          std::unique_ptr<WorkloadData>* data) {
      *data = std::make_unique<WorkloadData>(w);
      return pack_candidates(
          ctx, spirv_modules, {"attention_fused_f16_d64"}, [&w](const std::string&) { return w; },
          **data, keep);
    };
    triton.push_back(f);
  }

  // The same PTX through CUDA on an NVIDIA GPU, where there is one beside this device.
  std::unique_ptr<SideDevice> cuda;
  for (const TritonFigure& f : triton) {
    if (!cuda && ctx.wants(f.name + "_vs_cuda")) {
      cuda = std::make_unique<SideDevice>(
          ctx, "cuda",
          [](const hal_device_info& info) {
            return !info.is_cpu && (info.ir_mask & HAL_IR_PTX) != 0;
          },
          HAL_IR_PTX, "CUDA GPU",
          "the same PTX through CUDA is the baseline only where an NVIDIA GPU is present");
    }
  }
  for (const TritonFigure& tf : triton) {
    const bool vs_spirv = ctx.wants(tf.name + "_vs_spirv");
    const bool vs_cuda = ctx.wants(tf.name + "_vs_cuda");
    if (!vs_spirv && !vs_cuda) continue;
    guarded(ctx, tf.name, [&] {
      const TritonProblem problem = tf.problem();
      if (problem.ptx->shared_bytes > ctx.info.max_shared_memory_per_block) {
        ctx.report->note("ptx_vulkan: " + tf.name + " skipped: " + problem.ptx->entry + " needs " +
                         std::to_string(problem.ptx->shared_bytes) +
                         " bytes of shared memory per block");
        return;
      }
      TritonRun translated(ctx, problem);
      const Contestant mine =
          translated.contestant(std::string(problem.ptx->entry) + " (Triton, translated)");
      Figure base;
      base.what = tf.what;
      base.unit = tf.unit;
      base.higher_is_better = true;
      base.params = tf.params;
      base.note = tf.note;
      if (vs_spirv) {
        std::vector<std::unique_ptr<Instance>> keep;
        std::unique_ptr<WorkloadData> data;
        const std::vector<Contestant> candidates = tf.candidates(problem, &keep, &data);
        Figure f = base;
        f.name = tf.name + "_vs_spirv";
        compare(ctx, f, mine, candidates, tf.rate, reps);
      }
      if (vs_cuda) {
        Figure f = base;
        f.name = tf.name + "_vs_cuda";
        f.what += "; against the same PTX through CUDA";
        if (!cuda->available()) {
          f.family = "ptx_vulkan";
          std::vector<std::vector<double>> us;
          time_rotated(1, reps, {mine.run}, &us);
          f.value = Stats::of(us[0]).map(tf.rate);
          f.baseline_missing = cuda->missing();
          ctx.report->add(std::move(f));
          return;
        }
        TritonRun native(cuda->ctx(), problem);
        compare(ctx, f, mine, {native.contestant(cuda->describe())}, tf.rate, reps, false);
      }
    });
  }
}

}  // namespace bench
