// Attention: the fused kernel plan_attention chooses (tuned by hal-tune, or the pack's default
// fused kernel) against the three-kernel version (scores, row softmax, P·V) on the same problem,
// and against the default fused kernel, in GFLOP/s counting the two matrix products
// (4·batch_heads·seq_q·seq_kv·head_dim per run; the softmax is not counted).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common.h"

namespace bench {

namespace {

struct Problem {
  uint32_t batch_heads;
  uint32_t seq;
  uint32_t head_dim;
  const char* dtype;
};

}  // namespace

void bench_attention(Context& ctx) {
  std::vector<Problem> problems;
  if (ctx.info.is_cpu) {
    if (ctx.options.quick) {
      problems = {{1, 64, 64, "f32"}};
    } else {
      problems = {{4, 256, 64, "f32"}, {4, 256, 128, "f32"}, {4, 256, 64, "f16"}};
    }
  } else {
    if (ctx.options.quick) {
      problems = {{8, 512, 64, "f32"}};
    } else {
      problems = {{32, 2048, 64, "f32"},
                  {32, 2048, 128, "f32"},
                  {32, 2048, 64, "f16"},
                  {32, 2048, 128, "f16"}};
    }
  }
  const uint32_t reps = ctx.reps(7, 1);
  for (const Problem& p : problems) {
    const std::string dtype = p.dtype;
    const std::string fused_name = "attention_fused_" + dtype + "_d" + std::to_string(p.head_dim);
    const std::string name = "attention_" + dtype + "_d" + std::to_string(p.head_dim) + "_bh" +
                             std::to_string(p.batch_heads) + "_s" + std::to_string(p.seq);
    const std::string planned_name = "planned_" + name;
    const bool want_split = ctx.wants(name), want_planned = ctx.wants(planned_name);
    if (!want_split && !want_planned) continue;
    const std::string scores_name = "attention_scores_" + dtype;
    const std::string pv_name = "attention_pv_" + dtype;
    if (!Kernel::supported(ctx, fused_name) || !Kernel::supported(ctx, scores_name) ||
        !Kernel::supported(ctx, pv_name)) {
      ctx.report->note("attention: " + name + " skipped: the device lacks a feature it needs");
      continue;
    }
    namespace tune = hal_kernels::tune;
    const std::string family = "attention_" + dtype;
    const tune::AttentionShape shape{p.batch_heads, p.seq, p.seq, p.head_dim, false};
    tune::LaunchPlan plan, base;
    std::string why;
    const std::string no_database;
    if (!tune::plan_attention(ctx.device, family, shape, &plan, &why, &ctx.tuning_dir) ||
        !tune::plan_attention(ctx.device, family, shape, &base, &why, &no_database)) {
      ctx.report->note("attention: " + name + " skipped: " + why);
      continue;
    }
    PlannedKernel fused(ctx, plan), fused_default(ctx, base);
    Kernel scores(ctx, scores_name), softmax(ctx, "softmax_rows_f32"), pv(ctx, pv_name);
    const size_t elem = dtype == "f16" ? 2 : 4;
    const size_t qkv = size_t{p.batch_heads} * p.seq * p.head_dim;
    const size_t s_elems = size_t{p.batch_heads} * p.seq * p.seq;
    DeviceBuffer q(ctx, qkv * elem), k(ctx, qkv * elem), v(ctx, qkv * elem), o(ctx, qkv * elem),
        s(ctx, s_elems * 4);
    const uint32_t small = dtype == "f16" ? 0x2E662E66u : 0x3DCCCCCDu;  // about 0.1
    for (const DeviceBuffer* buffer : {&q, &k, &v}) {
      BENCH_CHECK(hal_memset_d32(ctx.stream, buffer->ptr, small, buffer->bytes / 4));
    }
    uint32_t bh = p.batch_heads, sq = p.seq, skv = p.seq, d = p.head_dim, causal = 0;
    float scale = 1.0f / std::sqrt(static_cast<float>(p.head_dim));
    uint32_t rows = bh * sq, cols = skv;
    const std::vector<void*> fused_args = {&q.ptr, &k.ptr, &v.ptr, &o.ptr, &bh,
                                           &sq,    &skv,   &scale, &causal};
    const std::vector<void*> scores_args = {&q.ptr, &k.ptr, &s.ptr, &bh,    &sq,
                                            &skv,   &d,     &scale, &causal};
    const std::vector<void*> softmax_args = {&s.ptr, &s.ptr, &rows, &cols};
    const std::vector<void*> pv_args = {&s.ptr, &v.ptr, &o.ptr, &bh, &sq, &skv, &d};
    const uint32_t softmax_grid = std::min<uint32_t>(rows, ctx.info.max_grid_dim[0]);
    const double flop = 4.0 * bh * sq * skv * d;
    auto rate = [flop](double t) { return t > 0 ? flop / (t * 1e3) : 0.0; };
    const std::vector<std::pair<std::string, std::string>> params = {
        {"kernel", plan.kernel},
        {"choice", plan.label},
        {"tuned", plan.tuned ? "yes" : "no"},
        {"dtype", dtype},
        {"batch_heads", std::to_string(bh)},
        {"seq_q", std::to_string(sq)},
        {"seq_kv", std::to_string(skv)},
        {"head_dim", std::to_string(d)},
        {"causal", "0"}};
    if (want_split) {
      std::vector<double> fused_us, split_us;
      time_interleaved(
          1, reps,
          [&] {
            fused.launch(ctx.stream, fused_args);
            BENCH_CHECK(hal_stream_synchronize(ctx.stream));
          },
          [&] {
            scores.launch(ctx.stream, (skv + 15) / 16, (sq + 15) / 16, bh, scores_args);
            softmax.launch(ctx.stream, softmax_grid, 1, 1, softmax_args);
            pv.launch(ctx.stream, (d + 15) / 16, (sq + 15) / 16, bh, pv_args);
            BENCH_CHECK(hal_stream_synchronize(ctx.stream));
          },
          &fused_us, &split_us);
      Figure f;
      f.family = "attention";
      f.name = name;
      f.what =
          "GFLOP/s (4·batch_heads·seq_q·seq_kv·head_dim per run) of one launch of the fused "
          "attention plan_attention chooses, followed by a synchronize";
      f.unit = "GFLOP/s";
      f.higher_is_better = true;
      f.params = params;
      f.value = Stats::of(fused_us).map(rate);
      f.has_baseline = true;
      f.baseline_name = scores_name + " + softmax_rows_f32 + " + pv_name +
                        " on the same stream, then one synchronize";
      f.baseline = Stats::of(split_us).map(rate);
      f.note = (plan.tuned ? "tuned: " : "not tuned: ") + plan.source;
      ctx.report->add(std::move(f));
    }

    // What tuning bought: the planned choice against the default fused kernel.
    if (!want_planned) continue;
    std::vector<double> planned_us, default_us;
    time_interleaved(
        1, reps,
        [&] {
          fused.launch(ctx.stream, fused_args);
          BENCH_CHECK(hal_stream_synchronize(ctx.stream));
        },
        [&] {
          fused_default.launch(ctx.stream, fused_args);
          BENCH_CHECK(hal_stream_synchronize(ctx.stream));
        },
        &planned_us, &default_us);
    Figure g;
    g.family = "attention";
    g.name = planned_name;
    g.what = "GFLOP/s of the fused attention plan_attention chooses, one launch and a synchronize";
    g.unit = "GFLOP/s";
    g.higher_is_better = true;
    g.params = params;
    g.value = Stats::of(planned_us).map(rate);
    g.has_baseline = true;
    g.baseline_name = "the family's default (" + base.label + ", " + base.kernel +
                      "), alternated in the same run";
    g.baseline = Stats::of(default_us).map(rate);
    g.note = (plan.tuned ? "tuned: " : "not tuned: ") + plan.source;
    ctx.report->add(std::move(g));
  }
}

}  // namespace bench
