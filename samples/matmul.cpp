// matmul: runs one matmul kernel of the pack, C = alpha * A * B + beta * C, on the chosen device,
// prints its time and GFLOP/s, and checks the result against the CPU reference. Without
// --kernel it runs what the pack's plan_matmul chooses for the shape: the device's tuned choice
// when hal-tune has run there (docs/TUNING.md), else the default; it prints which.
//
//   matmul [--device <selector>] [--m M] [--n N] [--k K] [--dtype f32|f16] [--kernel <name>]
//          [--alpha a] [--beta b] [--iters n] [--ir spirv|ptx]
//
// --ir loads the kernel in that IR instead of the device's own choice (SPIR-V on a Vulkan
// device): `--device vulkan:0 --ir ptx` runs the pack's PTX there, translated to SPIR-V by hal.
// A plan for another IR (a tuned SPIR-V plan specializes the tiles) then gives only its kernel,
// loaded by name with the tiles it was built with; where the device refuses that kernel in this
// IR, the default kernel runs.
//
// Exit status: 0 when every element is within the tolerance bound, 1 when one is not, 2 on
// errors, 77 when there is no device to run on (none matches the selector, or it does not take
// the IR asked for).
#include <hal_kernels/reference.h>

#include <cstdio>
#include <string>
#include <vector>

#include "sample_util.h"

namespace ref = hal_kernels::ref;

int main(int argc, char** argv) {
  const sample::Args args(
      argc, argv,
      "[--device <selector>] [--m M] [--n N] [--k K] [--dtype f32|f16] "
      "[--kernel <name>] [--alpha a] [--beta b] [--iters n] [--ir spirv|ptx]",
      {"device", "m", "n", "k", "dtype", "kernel", "alpha", "beta", "iters", "ir"}, {});
  const uint32_t M = args.get_u32("m", 256), N = args.get_u32("n", 256), K = args.get_u32("k", 256);
  const std::string dtype = args.get("dtype", "f32");
  const std::string requested = args.get("kernel", "");
  const float alpha = args.get_float("alpha", 1.0f), beta = args.get_float("beta", 0.0f);
  const uint32_t iters = args.get_u32("iters", 3);
  if (M == 0 || N == 0 || K == 0 || (dtype != "f32" && dtype != "f16")) {
    std::fprintf(stderr, "error: M, N and K must be >= 1 and the dtype f32 or f16\n");
    return 2;
  }

  const sample::Device device =
      sample::open_device(args.get("device", "default"), args.get("ir", ""));
  hal_kernels::tune::LaunchPlan plan;
  if (requested.empty()) {
    std::string why;
    if (!hal_kernels::tune::plan_matmul(device.device, "matmul_" + dtype, {M, N, K}, &plan, &why)) {
      std::fprintf(stderr, "error: no matmul plan: %s\n", why.c_str());
      return 2;
    }
  }
  // The plan as made, where it is for the IR to run; else its kernel, by name, in that IR.
  const bool planned = requested.empty() && plan.ir == device.ir;
  if (requested.empty() && !planned) {
    std::printf("plan: %s (%s), %s; its kernel runs in %s with the tiles it was built with\n",
                plan.kernel.c_str(), plan.label.c_str(), plan.source.c_str(),
                device.ir == HAL_IR_PTX ? "PTX" : "SPIR-V");
  }
  sample::Kernel kernel;
  if (planned) {
    kernel = sample::load_planned(device, plan);
  } else if (!requested.empty()) {
    kernel = sample::load_kernel(device, requested);
  } else if (std::string refused;
             !sample::try_load_kernel(device, plan.kernel, &kernel, &refused)) {
    // Tuned in the device's own IR, the choice may be a kernel this IR cannot run here (warp-level
    // PTX on a device without 32-lane subgroups): the untuned default runs instead, saying so.
    const std::string no_database;
    std::string why;
    if (!hal_kernels::tune::plan_matmul(device.device, "matmul_" + dtype, {M, N, K}, &plan, &why,
                                        &no_database)) {
      std::fprintf(stderr, "error: no matmul plan: %s\n", why.c_str());
      return 2;
    }
    std::printf("plan: the device refuses that kernel in this IR (%s); running the default, %s\n",
                refused.c_str(), plan.kernel.c_str());
    kernel = sample::load_kernel(device, plan.kernel);
  }
  const std::string name = kernel.info->name;
  const bool f16 = std::string(kernel.info->dtype) == "f16";
  const ref::Storage storage = f16 ? ref::Storage::kF16 : ref::Storage::kF32;
  const size_t elem = f16 ? 2 : 4;

  std::vector<float> a = ref::random_uniform(size_t{M} * K, 1);
  std::vector<float> b = ref::random_uniform(size_t{K} * N, 2);
  std::vector<float> c = ref::random_uniform(size_t{M} * N, 3);
  if (f16) {
    ref::round_to_half(&a);
    ref::round_to_half(&b);
    ref::round_to_half(&c);
  }
  sample::Buffer da(device, a.size() * elem), db(device, b.size() * elem),
      dc(device, c.size() * elem);
  auto upload = [&](sample::Buffer& buffer, const std::vector<float>& host) {
    if (f16) {
      const std::vector<uint16_t> h = ref::to_half(host);
      buffer.upload(h.data(), h.size() * 2);
    } else {
      buffer.upload(host.data(), host.size() * 4);
    }
  };
  upload(da, a);
  upload(db, b);
  upload(dc, c);

  // The block's tile of C, for the grid of a kernel loaded by name.
  uint32_t bm = 16, bn = 16;
  hal_kernels_matmul_tile(kernel.info, nullptr, &bm, &bn);
  uint32_t m = M, n = N, k = K, lda = K, ldb = N, ldc = N;
  float al = alpha, be = beta;
  const std::vector<void*> params = {&da.ptr, &db.ptr, &dc.ptr, &m,  &n, &k,
                                     &lda,    &ldb,    &ldc,    &al, &be};
  const uint32_t gx = planned ? plan.grid[0] : (N + bn - 1) / bn;
  const uint32_t gy = planned ? plan.grid[1] : (M + bm - 1) / bm;

  // The checked run (it also builds the pipeline), then the timed runs.
  sample::launch(device, kernel, gx, gy, 1, params);
  std::vector<float> got(c.size());
  if (f16) {
    std::vector<uint16_t> h(c.size());
    dc.download(h.data(), h.size() * 2);
    got = ref::from_half(h);
  } else {
    dc.download(got.data(), got.size() * 4);
  }
  sample::Timer timer(device);
  const double ms =
      sample::median_ms(timer, iters, [&] { sample::launch(device, kernel, gx, gy, 1, params); });
  const double gflops = ms > 0 ? 2.0 * M * N * K / (ms * 1e6) : 0.0;

  const ref::Result want = ref::matmul(a, b, c, M, N, K, K, N, N, alpha, beta, storage);
  const ref::Check check = ref::compare(got, want);
  std::printf("%s: M=%u N=%u K=%u alpha=%g beta=%g\n", name.c_str(), M, N, K, alpha, beta);
  std::printf("time %.3f ms (median of %u), %.3f GFLOP/s\n", ms, iters, gflops);
  std::printf("max abs err %.3g, max rel err %.3g vs CPU reference (double)\n", check.max_abs_err,
              check.max_rel_err);
  std::printf("%s: %s\n", check.ok() ? "PASS" : "FAIL", check.summary().c_str());

  hal_module_unload(kernel.module);
  hal_stream_destroy(device.stream);
  return check.ok() ? 0 : 1;
}
