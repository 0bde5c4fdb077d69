// Memory management under load: what a hal_mem_free costs while another stream of the device is
// busy, against the same free on an idle device. A free used to wait for every stream of the
// device, so its cost was whatever work the other streams had left; an engine freeing scratch
// memory in its step loop, or Python collecting an array with the GIL held, stalled on it.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common.h"

namespace bench {

namespace {

constexpr const char* kKernel = "saxpy";
constexpr uint32_t kElements = 1u << 22;  // one element per invocation: 16384 workgroups of 256
constexpr size_t kScratchBytes = size_t{1} << 20;

// A stream of the family's own, destroyed with it.
class OwnStream {
 public:
  explicit OwnStream(const Context& ctx) { BENCH_CHECK(hal_stream_create(ctx.device, &stream)); }
  ~OwnStream() {
    if (stream != nullptr) hal_stream_destroy(stream);
  }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  hal_stream stream = nullptr;
};

std::string free_note(const Context& ctx, uint32_t ended_early, uint32_t samples) {
  std::string note;
  if (ctx.is_cuda()) {
    note =
        "The CUDA backend still synchronises the context before cuMemFree, so its free waits for "
        "the busy stream's work: the value is about that work's length. ";
  }
  if (ended_early > 0) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "In %u of %u samples the busy stream had finished when the free returned.",
                  ended_early, samples);
    note += text;
  }
  return note;
}

}  // namespace

void bench_memory(Context& ctx) {
  if (!ctx.wants("memory") && !ctx.wants("free_while_busy")) return;
  if (!Kernel::supported(ctx, kKernel)) {
    ctx.report->note("memory: the pack's saxpy does not run on this device");
    return;
  }
  const uint32_t reps = ctx.reps(31, 5);
  const double busy_target_us = ctx.options.quick ? 20e3 : 100e3;

  Kernel kernel(ctx, kKernel);
  OwnStream busy(ctx);
  DeviceBuffer x(ctx, kElements * 4), y(ctx, kElements * 4);
  BENCH_CHECK(hal_memset_d32(busy.stream, x.ptr, 0, kElements));
  BENCH_CHECK(hal_memset_d32(busy.stream, y.ptr, 0, kElements));
  BENCH_CHECK(hal_stream_synchronize(busy.stream));
  uint32_t count = kElements;
  float alpha = 1.0f;
  const std::vector<void*> args = {&x.ptr, &y.ptr, &count, &alpha};
  const uint32_t grid = kElements / kernel.info->block[0];
  auto issue = [&](uint32_t launches) {
    for (uint32_t i = 0; i < launches; ++i) kernel.launch(busy.stream, grid, 1, 1, args);
  };

  // The busy work: enough launches for about |busy_target_us|, from the time of a few.
  issue(1);
  BENCH_CHECK(hal_stream_synchronize(busy.stream));
  const double one_us = std::max(1.0, Stats::of(time_runs(0, 3, [&] {
                                        issue(1);
                                        BENCH_CHECK(hal_stream_synchronize(busy.stream));
                                      })).median);
  const auto launches = static_cast<uint32_t>(std::clamp(busy_target_us / one_us, 1.0, 10000.0));

  // One sample each way, alternating: the free of 1 MiB allocated just before, timed alone,
  // with the busy stream's work submitted and running, and with the device idle. The anchor
  // keeps the scratch memory's block alive in both: a free that empties a block may give the
  // block back to the driver, a cost the idle free would pay and the deferred one pay later.
  DeviceBuffer anchor(ctx, 256);
  std::vector<double> busy_us, idle_us, work_us;
  uint32_t ended_early = 0;
  auto alloc_free = [&] {
    hal_deviceptr scratch = 0;
    BENCH_CHECK(hal_mem_alloc(ctx.device, kScratchBytes, &scratch));
    const double start = now_us();
    BENCH_CHECK(hal_mem_free(ctx.device, scratch));
    return now_us() - start;
  };
  for (uint32_t i = 0; i < ctx.options.warmup + reps; ++i) {
    // Each timed free follows an untimed pair on the idle device, which brings the allocator's
    // and the runtime's data back into the cache (the device's work evicts it), so both sides
    // time the free rather than cache misses. (That pair must not come once the work runs: a
    // free that waits would wait there instead.)
    alloc_free();
    const double work_start = now_us();
    issue(launches);
    const hal_status submitted = hal_stream_query(busy.stream);  // submits what was recorded
    if (submitted != HAL_ERROR_NOT_READY) BENCH_CHECK(submitted);
    const double busy_free = alloc_free();
    const bool running = hal_stream_query(busy.stream) == HAL_ERROR_NOT_READY;
    BENCH_CHECK(hal_stream_synchronize(busy.stream));
    const double work = now_us() - work_start;
    alloc_free();
    const double idle_free = alloc_free();
    if (i < ctx.options.warmup) continue;
    busy_us.push_back(busy_free);
    idle_us.push_back(idle_free);
    work_us.push_back(work);
    if (!running) ++ended_early;
  }

  Figure f;
  f.family = "memory";
  f.name = "free_while_busy";
  f.what =
      "microseconds of one hal_mem_free of 1 MiB while another stream of the device runs "
      "saxpy launches (the busy work); the baseline is the same free with the device idle";
  f.unit = "us";
  char busy_ms[32];
  std::snprintf(busy_ms, sizeof busy_ms, "%.1f", Stats::of(work_us).median / 1e3);
  f.params = {{"kernel", kKernel},
              {"launches", std::to_string(launches)},
              {"busy_work_ms", busy_ms},
              {"bytes", std::to_string(kScratchBytes)}};
  f.value = Stats::of(busy_us);
  f.has_baseline = true;
  f.baseline_name = "the same hal_mem_free with the device idle";
  f.baseline = Stats::of(idle_us);
  f.target = {true, true, 10.0,
              "at most 10x a free on an idle device (not the busy work's length)"};
  if (!ctx.is_vulkan()) f.target.present = false;
  f.note = free_note(ctx, ended_early, reps);
  ctx.report->add(std::move(f));
}

}  // namespace bench
