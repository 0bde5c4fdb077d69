// attention: O = softmax(Q K^T * scale, optional causal mask) V over [batch*heads, seq, head_dim]
// on the chosen device, with the kernel pack's fused attention (online softmax) and its
// three-kernel version (scores, row softmax, P*V). The fused kernel is what the pack's
// plan_attention chooses for the shape: the device's tuned choice when hal-tune has run there
// (docs/TUNING.md), else attention_fused; it prints which. Prints time, GFLOP/s and the error
// against the CPU reference for each.
//
//   attention [--device <selector>] [--bh n] [--seq n] [--seq-kv n] [--dim 64|128]
//             [--dtype f32|f16] [--causal] [--mode fused|three|both] [--iters n]
//
// GFLOP/s counts 4 * head_dim flops per visible (query, key) pair. Exit status: 0 when every
// result is within its tolerance bound, 1 when one is not, 2 on errors.
#include <hal_kernels/reference.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sample_util.h"

namespace ref = hal_kernels::ref;

int main(int argc, char** argv) {
  const sample::Args args(argc, argv,
                          "[--device <selector>] [--bh n] [--seq n] [--seq-kv n] [--dim 64|128] "
                          "[--dtype f32|f16] [--causal] [--mode fused|three|both] [--iters n]",
                          {"device", "bh", "seq", "seq-kv", "dim", "dtype", "mode", "iters"},
                          {"causal"});
  uint32_t bh = args.get_u32("bh", 4), seq_q = args.get_u32("seq", 128);
  uint32_t seq_kv = args.get_u32("seq-kv", seq_q), dim = args.get_u32("dim", 64);
  const std::string dtype = args.get("dtype", "f32");
  const std::string mode = args.get("mode", "both");
  uint32_t causal = args.flag("causal") ? 1 : 0;
  const uint32_t iters = args.get_u32("iters", 3);
  float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  if (bh == 0 || seq_q == 0 || seq_kv == 0 || (dim != 64 && dim != 128) ||
      (dtype != "f32" && dtype != "f16") ||
      (mode != "fused" && mode != "three" && mode != "both")) {
    std::fprintf(stderr, "error: bad arguments (dim is 64 or 128, dtype f32 or f16)\n");
    return 2;
  }

  const sample::Device device = sample::open_device(args.get("device", "default"));
  const bool f16 = dtype == "f16";
  const ref::Storage storage = f16 ? ref::Storage::kF16 : ref::Storage::kF32;
  const size_t elem = f16 ? 2 : 4;
  std::vector<float> q = ref::random_uniform(size_t{bh} * seq_q * dim, 11);
  std::vector<float> k = ref::random_uniform(size_t{bh} * seq_kv * dim, 12);
  std::vector<float> v = ref::random_uniform(size_t{bh} * seq_kv * dim, 13);
  if (f16) {
    ref::round_to_half(&q);
    ref::round_to_half(&k);
    ref::round_to_half(&v);
  }
  sample::Buffer dq(device, q.size() * elem), dk(device, k.size() * elem),
      dv(device, v.size() * elem), dout(device, q.size() * elem);
  auto upload = [&](sample::Buffer& buffer, const std::vector<float>& host) {
    if (f16) {
      const std::vector<uint16_t> h = ref::to_half(host);
      buffer.upload(h.data(), h.size() * 2);
    } else {
      buffer.upload(host.data(), host.size() * 4);
    }
  };
  upload(dq, q);
  upload(dk, k);
  upload(dv, v);
  auto download = [&]() {
    std::vector<float> out(q.size());
    if (f16) {
      std::vector<uint16_t> h(q.size());
      dout.download(h.data(), h.size() * 2);
      out = ref::from_half(h);
    } else {
      dout.download(out.data(), out.size() * 4);
    }
    return out;
  };

  const ref::Result want =
      ref::attention(q, k, v, bh, seq_q, seq_kv, dim, scale, causal != 0, storage);
  double pairs = 0;
  for (uint32_t i = 0; i < seq_q; ++i) {
    const int64_t last = causal ? int64_t{i} + seq_kv - seq_q : int64_t{seq_kv} - 1;
    pairs += static_cast<double>(std::clamp<int64_t>(last + 1, 0, seq_kv));
  }
  const double flops = 4.0 * bh * dim * pairs;
  std::printf("attention: batch*heads=%u seq_q=%u seq_kv=%u head_dim=%u %s%s\n", bh, seq_q, seq_kv,
              dim, dtype.c_str(), causal ? " causal" : "");

  bool all_ok = true;
  auto report = [&](const std::string& what, double ms) {
    const ref::Check check = ref::compare(download(), want);
    std::printf("%s: time %.3f ms (median of %u), %.3f GFLOP/s\n", what.c_str(), ms, iters,
                ms > 0 ? flops / (ms * 1e6) : 0.0);
    std::printf("  max abs err %.3g, max rel err %.3g vs CPU reference (double)\n",
                check.max_abs_err, check.max_rel_err);
    std::printf("  %s: %s\n", check.ok() ? "PASS" : "FAIL", check.summary().c_str());
    all_ok = all_ok && check.ok();
  };
  sample::Timer timer(device);

  if (mode != "three") {
    hal_kernels::tune::LaunchPlan plan;
    std::string why;
    if (!hal_kernels::tune::plan_attention(device.device, "attention_" + dtype,
                                           {bh, seq_q, seq_kv, dim, causal != 0}, &plan, &why)) {
      std::fprintf(stderr, "error: no attention plan: %s\n", why.c_str());
      return 2;
    }
    const sample::Kernel fused = sample::load_planned(device, plan);
    const std::string name = plan.kernel + " (" + plan.label + ")";
    const std::vector<void*> params = {&dq.ptr, &dk.ptr, &dv.ptr, &dout.ptr, &bh,
                                       &seq_q,  &seq_kv, &scale,  &causal};
    auto run = [&] { sample::launch(device, fused, plan.grid[0], plan.grid[1], 1, params); };
    run();  // warm-up (builds the pipeline)
    const double ms = sample::median_ms(timer, iters, run);
    // The output of the last run is checked (every run computes the same).
    report(name, ms);
    hal_module_unload(fused.module);
  }
  if (mode != "fused") {
    const sample::Kernel scores = sample::load_kernel(device, "attention_scores_" + dtype);
    const sample::Kernel softmax = sample::load_kernel(device, "softmax_rows_f32");
    const sample::Kernel pv = sample::load_kernel(device, "attention_pv_" + dtype);
    const size_t score_count = size_t{bh} * seq_q * seq_kv;
    sample::Buffer ds(device, score_count * 4), dp(device, score_count * 4);
    uint32_t rows = bh * seq_q, cols = seq_kv;
    const std::vector<void*> p_scores = {&dq.ptr, &dk.ptr, &ds.ptr, &bh,    &seq_q,
                                         &seq_kv, &dim,    &scale,  &causal};
    const std::vector<void*> p_softmax = {&ds.ptr, &dp.ptr, &rows, &cols};
    const std::vector<void*> p_pv = {&dp.ptr, &dv.ptr, &dout.ptr, &bh, &seq_q, &seq_kv, &dim};
    auto run = [&]() {
      sample::launch(device, scores, (seq_kv + 15) / 16, (seq_q + 15) / 16, bh, p_scores);
      sample::launch(device, softmax, std::min(rows, 65535u), 1, 1, p_softmax);
      sample::launch(device, pv, (dim + 15) / 16, (seq_q + 15) / 16, bh, p_pv);
    };
    run();
    const double ms = sample::median_ms(timer, iters, run);
    report("three kernels (attention_scores_" + dtype + ", softmax_rows_f32, attention_pv_" +
               dtype + ")",
           ms);
    hal_module_unload(scores.module);
    hal_module_unload(softmax.module);
    hal_module_unload(pv.module);
  }
  hal_stream_destroy(device.stream);
  return all_ok ? 0 : 1;
}
