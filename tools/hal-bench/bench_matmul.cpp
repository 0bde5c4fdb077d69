// Matmul: every matmul kernel of the pack at several sizes, in GFLOP/s (2·M·N·K per run),
// against a vendor BLAS on the same shape: OpenBLAS sgemm on the host CPU for CPU devices
// (lavapipe, and the CPU PTX device, a CUDA device with is_cpu), cuBLAS for CUDA GPUs: sgemm for
// fp32 kernels, and for fp16 kernels cublasGemmEx with fp16 storage and fp32 accumulation (the
// same contract, on the tensor cores). Inputs are constant (timing does not depend on the
// values; the kernel tests check correctness). On CPU devices fp16 kernels are compared with the
// fp32 sgemm (OpenBLAS has no fp16 gemm).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "plan.h"
#include "raw_cuda.h"

#ifdef HAL_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace bench {

namespace {

// The vendor BLAS baseline for this device, or why there is none.
class Blas {
 public:
  explicit Blas(Context& ctx) : ctx_(ctx) {
    if (ctx.info.is_cpu) {
#ifndef HAL_BENCH_HAVE_OPENBLAS
      missing_ = "OpenBLAS was not found when hal-bench was built (install libopenblas-dev)";
#endif
    } else if (ctx.is_cuda()) {
      cuda_ = RawCuda::open(static_cast<int>(ctx.info.backend_index), &missing_);
    } else {
      missing_ =
          "no vendor BLAS baseline for a Vulkan GPU (cuBLAS is used on CUDA devices, "
          "OpenBLAS on CPU devices)";
    }
  }
  bool available() const {
    return missing_.empty();
  }
  // What the baseline of a kernel with fp16 (|f16|) or fp32 storage is.
  std::string name(bool f16) const {
    if (ctx_.info.is_cpu)
      return "OpenBLAS cblas_sgemm on the host CPU (fp32, row-major, same shape)";
    return f16 ? "cuBLAS cublasGemmEx on the same device (fp16 storage, fp32 compute, same shape)"
               : "cuBLAS cublasSgemm on the same device (fp32, same shape)";
  }
  const std::string& missing() const {
    return missing_;
  }

  // GFLOP/s samples for an M = N = K = |size| gemm (measured once per size and dtype).
  const std::vector<double>& gflops(uint32_t size, bool f16, uint32_t reps) {
    if (ctx_.info.is_cpu) f16 = false;  // the fp32 sgemm stands for both
    const auto key = std::make_pair(size, f16);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::vector<double> us;
    const double flop = 2.0 * size * size * size;
#ifdef HAL_BENCH_HAVE_OPENBLAS
    if (ctx_.info.is_cpu) {
      std::vector<float> a(size_t{size} * size, 1.0f), b(a.size(), 1.0f), c(a.size(), 0.0f);
      const int n = static_cast<int>(size);
      us = time_runs(1, reps, [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                    n, 0.0f, c.data(), n);
      });
    }
#endif
    if (cuda_) {
      std::string why;
      if (!cuda_->prepare_gemm(size, size, size, f16, &why)) {
        missing_ = why;
        cache_[key] = {};
        return cache_[key];
      }
      us = time_runs(1, reps, [&] {
        if (!cuda_->run_gemm()) throw HalError(f16 ? "cublasGemmEx failed" : "cublasSgemm failed");
      });
    }
    std::vector<double> rates;
    for (double t : us) rates.push_back(t > 0 ? flop / (t * 1e3) : 0.0);
    return cache_[key] = rates;
  }

 private:
  Context& ctx_;
  std::string missing_;
  std::unique_ptr<RawCuda> cuda_;
  std::map<std::pair<uint32_t, bool>, std::vector<double>> cache_;
};

// One square problem, M = N = K = |size|: A and B all ones (timing does not depend on the
// values; the kernel tests check correctness), C, and the kernel arguments for them.
struct SquareMatmul {
  SquareMatmul(Context& ctx, uint32_t size, bool f16)
      : bytes(size_t{size} * size * (f16 ? 2 : 4)),
        a(ctx, bytes),
        b(ctx, bytes),
        c(ctx, bytes),
        m(size),
        n(size),
        k(size),
        lda(size),
        ldb(size),
        ldc(size) {
    // 1.0 in every element (two fp16 ones per word for f16).
    const uint32_t one = f16 ? 0x3C003C00u : 0x3F800000u;
    BENCH_CHECK(hal_memset_d32(ctx.stream, a.ptr, one, bytes / 4));
    BENCH_CHECK(hal_memset_d32(ctx.stream, b.ptr, one, bytes / 4));
    args = {&a.ptr, &b.ptr, &c.ptr, &m, &n, &k, &lda, &ldb, &ldc, &alpha, &beta};
  }
  SquareMatmul(const SquareMatmul&) = delete;  // |args| points into this object
  SquareMatmul& operator=(const SquareMatmul&) = delete;
  size_t bytes;
  DeviceBuffer a, b, c;
  uint32_t m, n, k, lda, ldb, ldc;
  float alpha = 1.0f, beta = 0.0f;
  std::vector<void*> args;
};

// For each tiled family: what plan_matmul chooses for the shape (tuned by hal-tune, or the
// default) against the family's default, alternated run by run in the same run, so the ratio
// is the speedup tuning bought on this device.
void bench_planned(Context& ctx, const std::vector<uint32_t>& sizes, uint32_t reps) {
  namespace tune = hal_kernels::tune;
  for (const std::string& family : tune::MatmulProblem::families()) {
    for (uint32_t size : sizes) {
      const std::string name = "planned_" + family + "_" + std::to_string(size);
      if (!ctx.wants(name)) continue;
      std::string why;
      tune::LaunchPlan plan;
      if (!tune::plan_matmul(ctx.device, family, {size, size, size}, &plan, &why,
                             &ctx.tuning_dir)) {
        ctx.report->note("matmul: " + name + " skipped: " + why);
        continue;
      }
      // The default: the same family with no database (what plan_matmul falls back to).
      tune::LaunchPlan base;
      const std::string no_database;
      if (!tune::plan_matmul(ctx.device, family, {size, size, size}, &base, &why, &no_database)) {
        ctx.report->note("matmul: " + name + " skipped: " + why);
        continue;
      }
      const bool f16 = family.size() > 4 && family.compare(family.size() - 4, 4, "_f16") == 0;
      const SquareMatmul problem(ctx, size, f16);
      const std::vector<void*>& args = problem.args;
      PlannedKernel planned(ctx, plan), fallback(ctx, base);
      std::vector<double> planned_us, base_us;
      time_interleaved(
          1, reps,
          [&] {
            planned.launch(ctx.stream, args);
            BENCH_CHECK(hal_stream_synchronize(ctx.stream));
          },
          [&] {
            fallback.launch(ctx.stream, args);
            BENCH_CHECK(hal_stream_synchronize(ctx.stream));
          },
          &planned_us, &base_us);
      const double flop = 2.0 * size * size * size;
      auto rate = [flop](double t) { return t > 0 ? flop / (t * 1e3) : 0.0; };
      Figure f;
      f.family = "matmul";
      f.name = name;
      f.what = "GFLOP/s of what plan_matmul chooses for M = N = K = size, launch and synchronize";
      f.unit = "GFLOP/s";
      f.higher_is_better = true;
      f.params = {{"family", family},
                  {"size", std::to_string(size)},
                  {"choice", plan.label},
                  {"tuned", plan.tuned ? "yes" : "no"}};
      f.value = Stats::of(planned_us).map(rate);
      f.has_baseline = true;
      f.baseline_name = "the family's default (" + base.label + "), alternated in the same run";
      f.baseline = Stats::of(base_us).map(rate);
      f.note = (plan.tuned ? "tuned: " : "not tuned: ") + plan.source;
      ctx.report->add(std::move(f));
    }
  }
}

}  // namespace

void bench_matmul(Context& ctx) {
  std::vector<uint32_t> sizes;
  if (ctx.info.is_cpu) {
    sizes = ctx.options.quick ? std::vector<uint32_t>{64} : std::vector<uint32_t>{128, 256, 512};
  } else {
    sizes =
        ctx.options.quick ? std::vector<uint32_t>{256} : std::vector<uint32_t>{1024, 2048, 4096};
  }
  const uint32_t reps = ctx.reps(7, 1);
  Blas blas(ctx);
  if (!blas.available()) ctx.report->note("matmul: no BLAS baseline: " + blas.missing());

  // The tuned plans also at 1024^3 on a CPU device, the size hal-tune tunes by default (too
  // slow there for every kernel of the pack).
  std::vector<uint32_t> planned_sizes = sizes;
  if (ctx.info.is_cpu && !ctx.options.quick) planned_sizes.push_back(1024);
  bench_planned(ctx, planned_sizes, reps);

  for (uint32_t index = 0; index < hal_kernels_count(); ++index) {
    const hal_kernel_info* info = hal_kernels_get(index);
    const std::string family = info->family;
    if (family.rfind("matmul_", 0) != 0) continue;
    const std::string kernel_name = info->name;
    bool any = false;
    for (uint32_t size : sizes) any = any || ctx.wants(kernel_name + "_" + std::to_string(size));
    if (!any) continue;
    if (hal_kernels_find(kernel_name.c_str(), ctx.ir) == nullptr) continue;  // another IR only
    if (char why[512]; !hal_kernels_runs_on(info, ctx.ir, &ctx.info, why, sizeof why)) {
      ctx.report->note("matmul: " + kernel_name + " skipped: " + why);
      continue;
    }
    Kernel kernel(ctx, kernel_name);
    const bool f16 = std::string(info->dtype) == "f16";
    // The tile of C one workgroup computes.
    uint32_t bm = 16, bn = 16;
    hal_kernels_matmul_tile(info, nullptr, &bm, &bn);
    for (uint32_t size : sizes) {
      const std::string name = kernel_name + "_" + std::to_string(size);
      if (!ctx.wants(name)) continue;
      const SquareMatmul problem(ctx, size, f16);
      const std::vector<void*>& args = problem.args;
      const uint32_t gx = (size + bn - 1) / bn, gy = (size + bm - 1) / bm;
      const std::vector<double> us = time_runs(1, reps, [&] {
        kernel.launch(ctx.stream, gx, gy, 1, args);
        BENCH_CHECK(hal_stream_synchronize(ctx.stream));
      });
      const double flop = 2.0 * size * size * size;
      Figure f;
      f.family = "matmul";
      f.name = name;
      f.what = "GFLOP/s of one C = A·B launch (M = N = K = size) followed by a synchronize";
      f.unit = "GFLOP/s";
      f.higher_is_better = true;
      f.params = {{"kernel", kernel_name}, {"dtype", info->dtype}, {"size", std::to_string(size)}};
      f.value = Stats::of(us).map([flop](double t) { return t > 0 ? flop / (t * 1e3) : 0.0; });
      if (blas.available()) {
        const std::vector<double>& rates = blas.gflops(size, f16, reps);
        f.has_baseline = blas.available();
        f.baseline_name = blas.name(f16);
        f.baseline = Stats::of(rates);
      }
      f.baseline_missing = blas.missing();
      if (f16) {
        f.note = ctx.info.is_cpu ? "fp16 storage, fp32 arithmetic, against the fp32 sgemm"
                                 : "fp16 storage, fp32 arithmetic";
      }
      ctx.report->add(std::move(f));
    }
  }
}

}  // namespace bench
