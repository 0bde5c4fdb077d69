// Launch overhead: many small dispatches on one stream then one synchronize, and the latency of
// one launch followed by a synchronize, each against the same kernel issued by the benchmark
// itself through the raw API (Vulkan through its own volk copy, or CUDA through the driver
// library hal's backend opened: libcuda, or libhal_ptx_cpu.so on the CPU PTX device).
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "common.h"
#include "raw_cuda.h"
#include "raw_vulkan.h"

namespace bench {

namespace {

constexpr const char* kKernel = "saxpy";
constexpr uint32_t kElements = 256;  // one workgroup: the kernel's work is negligible

// The raw baselines behind one interface: |batched(n)| issues n dispatches and waits once.
struct Raw {
  std::unique_ptr<RawVulkan> vulkan;
  std::unique_ptr<RawCuda> cuda;
  std::string name_batched;
  std::string name_single;
  std::string name_new_buffers;  // Vulkan only: the engine-style baseline
  bool batched(uint32_t n, RawVulkan::Binding binding = RawVulkan::Binding::kBindOnce) {
    struct Push {
      uint32_t n;
      float alpha;
    } push{kElements, 1.0f};
    if (vulkan) return vulkan->run_batched(binding, n, &push, 1);
    return cuda->run_batched(n, 1, kElements);
  }
};

bool open_raw(Context& ctx, Raw* raw, std::string* why) {
  const hal_kernel_blob* blob = hal_kernels_find(kKernel, ctx.ir);
  if (blob == nullptr) {
    *why = "the pack has no saxpy for this IR";
    return false;
  }
  if (ctx.is_vulkan()) {
    raw->vulkan = RawVulkan::open(ctx.info.uuid, ctx.info.name, why);
    if (!raw->vulkan) return false;
    if (!raw->vulkan->prepare(blob->data, blob->size, blob->entry_point, 2, kElements * 4, 8,
                              why)) {
      return false;
    }
    raw->name_batched =
        "raw Vulkan: one command buffer, N dispatches with a memory barrier between them, one "
        "submit, one fence wait";
    raw->name_single = "raw Vulkan: record one dispatch, submit, wait on a fence";
    raw->name_new_buffers =
        "raw Vulkan, engine style: N dispatches alternating between two pairs of buffers, each "
        "allocating a descriptor set from a pool reset per run, writing and binding it; one "
        "submit, one fence wait";
    return true;
  }
  if (ctx.is_cuda()) {
    raw->cuda = RawCuda::open(static_cast<int>(ctx.info.backend_index), why);
    if (!raw->cuda) return false;
    if (!raw->cuda->prepare_saxpy(blob->data, blob->size, blob->entry_point, kElements * 4, why)) {
      return false;
    }
    // Named by the driver library: on the CPU PTX device the baseline is that library's own
    // cuLaunchKernel, so the ratio is hal's cost over the driver it runs on, not over a GPU.
    const std::string by = "raw CUDA (" + raw->cuda->library_name() + ", the library hal opened): ";
    raw->name_batched = by + "N cuLaunchKernel on one stream, one cuStreamSynchronize";
    raw->name_single = by + "one cuLaunchKernel, cuStreamSynchronize";
    return true;
  }
  *why = "no raw baseline for this backend";
  return false;
}

// Both launch figures on the CPU PTX device: what makes them jump between runs.
std::string cpu_ptx_wakeup_note() {
  return "On the CPU PTX device a launch hands the kernel to the stream's worker thread and the "
         "executor's threads, and a synchronize waits for the worker; both spin for up to "
         "100 us before they block, so back-to-back launches take about 10 us each. A sample "
         "that finds a thread blocked pays its wake-up (tens of microseconds on an idle "
         "virtual machine), which is where the maxima come from, on hal's side and the "
         "baseline's alike: it is the driver's thread hand-off, not hal's per-call work.";
}

std::string overhead_note(const Context& ctx) {
  if (ctx.is_cuda() && ctx.info.is_cpu) return cpu_ptx_wakeup_note();
  if (!ctx.is_vulkan()) return {};
  return "Per hal_launch the runtime does work the raw loop does not: handle lookups, argument "
         "validation (every pointer resolved in the allocation table), the stream lock, building "
         "push constants, a descriptor-set reuse check (a launch with the same function and "
         "buffers as the one before it in the batch binds nothing), and a barrier per command "
         "computed from the stages in use; and it ends a batch every 256 commands "
         "(StreamCore::kMaxCommandsPerBatch) with a submit that waits on and signals the "
         "stream's timeline semaphore, where the raw loop submits once. launch_host_time shows "
         "the host side alone.";
}

std::string latency_note(const Context& ctx) {
  if (ctx.is_cuda() && ctx.info.is_cpu) return cpu_ptx_wakeup_note();
  if (!ctx.is_vulkan() || !ctx.info.is_cpu) return {};
  return "On lavapipe one submit-and-wait takes either about 15 us or about 55-60 us, and which "
         "one is fixed for a VkDevice's life: a raw program alternating a fence wait and a "
         "timeline-semaphore wait (hal's kind) on one device saw both at about 15 us in four "
         "processes out of five and both at about 60 us in the fifth. hal-bench holds two "
         "devices, hal's and the baseline's, each of which can land in either mode, so this ratio "
         "reads about 1.0 or about 3-4 (and below 1 when only the baseline is slow) from run to "
         "run. It is the driver's wake-up path, not hal's per-call work; to compare the two, run "
         "--filter launch_latency a few times and take the runs where both are fast.";
}

}  // namespace

void bench_launch(Context& ctx) {
  if (!ctx.wants("launch_overhead") && !ctx.wants("launch_latency") &&
      !ctx.wants("launch_host_time") && !ctx.wants("launch_event_timing")) {
    return;
  }
  const uint32_t n = ctx.options.quick ? 64 : 1000;
  const uint32_t reps = ctx.reps(31, 3);
  Kernel kernel(ctx, kKernel);
  DeviceBuffer x(ctx, kElements * 4), y(ctx, kElements * 4);
  BENCH_CHECK(hal_memset_d32(ctx.stream, x.ptr, 0, kElements));
  BENCH_CHECK(hal_memset_d32(ctx.stream, y.ptr, 0, kElements));
  BENCH_CHECK(hal_stream_synchronize(ctx.stream));
  uint32_t count = kElements;
  float alpha = 1.0f;
  const std::vector<void*> args = {&x.ptr, &y.ptr, &count, &alpha};
  auto hal_batch = [&](uint32_t launches) {
    for (uint32_t i = 0; i < launches; ++i) kernel.launch(ctx.stream, 1, 1, 1, args);
    BENCH_CHECK(hal_stream_synchronize(ctx.stream));
  };

  Raw raw;
  std::string why;
  const bool have_raw = open_raw(ctx, &raw, &why);
  if (!have_raw) ctx.report->note("launch: no raw baseline: " + why);

  if (ctx.wants("launch_overhead")) {
    // One rotation holds every variant, so all see the same machine state. On Vulkan the
    // per-dispatch-buffers pair runs too: hal launching with buffers that change every launch,
    // against the engine-style baseline that writes a descriptor set per dispatch (and, for the
    // note, raw push descriptors where the device has them).
    DeviceBuffer x2(ctx, kElements * 4), y2(ctx, kElements * 4);
    BENCH_CHECK(hal_memset_d32(ctx.stream, x2.ptr, 0, kElements));
    BENCH_CHECK(hal_memset_d32(ctx.stream, y2.ptr, 0, kElements));
    BENCH_CHECK(hal_stream_synchronize(ctx.stream));
    const std::vector<void*> args2 = {&x2.ptr, &y2.ptr, &count, &alpha};
    auto hal_alternating = [&](uint32_t launches) {
      for (uint32_t i = 0; i < launches; ++i) {
        kernel.launch(ctx.stream, 1, 1, 1, i % 2 == 0 ? args : args2);
      }
      BENCH_CHECK(hal_stream_synchronize(ctx.stream));
    };
    auto raw_run = [&](RawVulkan::Binding binding) {
      return [&raw, n, binding] {
        if (!raw.batched(n, binding)) throw HalError("a raw baseline's batched run failed");
      };
    };
    std::vector<std::function<void()>> runs = {[&] { hal_batch(n); }};
    if (have_raw) runs.push_back(raw_run(RawVulkan::Binding::kBindOnce));
    const bool new_buffers = have_raw && raw.vulkan;
    const bool raw_push = new_buffers && raw.vulkan->has_push_descriptors();
    if (new_buffers) {
      runs.push_back([&] { hal_alternating(n); });
      runs.push_back(raw_run(RawVulkan::Binding::kSetPerDispatch));
      if (raw_push) runs.push_back(raw_run(RawVulkan::Binding::kPushPerDispatch));
    }
    std::vector<std::vector<double>> us;
    time_rotated(ctx.options.warmup, reps, runs, &us);
    auto per_dispatch = [&](size_t run) {
      return Stats::of(us[run]).map([&](double t) { return t / n; });
    };

    Figure f;
    f.family = "launch";
    f.name = "launch_overhead";
    f.what =
        "microseconds per dispatch: N launches of a one-workgroup kernel on one stream, the same "
        "buffers each time, then one synchronize, divided by N";
    f.unit = "us";
    f.params = {{"kernel", kKernel}, {"dispatches", std::to_string(n)}};
    f.value = per_dispatch(0);
    f.has_baseline = have_raw;
    f.baseline_missing = why;
    if (have_raw) {
      f.baseline_name = raw.name_batched;
      f.baseline = per_dispatch(1);
    }
    f.target = {true, true, 1.05, "on lavapipe, at most 1.05x raw Vulkan"};
    if (!ctx.is_vulkan() || !ctx.info.is_cpu) f.target.present = false;
    f.note = overhead_note(ctx);
    ctx.report->add(std::move(f));

    if (new_buffers) {
      Figure g;
      g.family = "launch";
      g.name = "launch_overhead_new_buffers";
      g.what =
          "microseconds per dispatch: N launches of a one-workgroup kernel on one stream, "
          "alternating between two pairs of buffers, then one synchronize, divided by N";
      g.unit = "us";
      g.params = {{"kernel", kKernel}, {"dispatches", std::to_string(n)}};
      g.value = per_dispatch(2);
      g.has_baseline = true;
      g.baseline_name = raw.name_new_buffers;
      g.baseline = per_dispatch(3);
      g.target = {true, true, 1.0, "at most the engine-style raw Vulkan"};
      if (raw_push) {
        char median[32];
        std::snprintf(median, sizeof median, "%.3g", per_dispatch(4).median);
        g.note = std::string(
                     "The same dispatches with the buffers pushed "
                     "(VK_KHR_push_descriptor) in raw Vulkan: ") +
                 median + " us per dispatch (median).";
      }
      ctx.report->add(std::move(g));
    }
  }

  if (ctx.wants("launch_host_time")) {
    // Only the calls are timed: the synchronize after each sample is not. 1000 calls stay within
    // what a Vulkan stream keeps in flight (StreamCore::kMaxBatchesInFlight batches of
    // kMaxCommandsPerBatch), so no call waits for the device. On CUDA the baseline times the
    // same number of cuLaunchKernel calls; elsewhere the driver's own launch is not callable
    // from outside hal.
    const uint32_t calls = 1000;
    auto hal_sample = [&] {
      const double t0 = now_us();
      for (uint32_t i = 0; i < calls; ++i) kernel.launch(ctx.stream, 1, 1, 1, args);
      const double t = now_us() - t0;
      BENCH_CHECK(hal_stream_synchronize(ctx.stream));
      return t;
    };
    const bool cuda_baseline = have_raw && raw.cuda;
    auto raw_sample = [&] {
      double t = 0;
      if (!raw.cuda->run_batched(calls, 1, kElements, &t)) {
        throw HalError("the raw baseline's launches failed");
      }
      return t;
    };
    for (uint32_t i = 0; i < ctx.options.warmup; ++i) {
      hal_sample();
      if (cuda_baseline) raw_sample();
    }
    std::vector<double> hal_us, raw_us;
    for (uint32_t i = 0; i < reps; ++i) {
      hal_us.push_back(hal_sample());
      if (cuda_baseline) raw_us.push_back(raw_sample());
    }
    Figure f;
    f.family = "launch";
    f.name = "launch_host_time";
    f.what =
        "microseconds until hal_launch returns, per call: 1000 launches of a one-workgroup "
        "kernel on one stream (the synchronize after them is not timed)";
    f.unit = "us";
    f.params = {{"kernel", kKernel}, {"calls", std::to_string(calls)}};
    f.value = Stats::of(hal_us).map([&](double t) { return t / calls; });
    f.has_baseline = cuda_baseline;
    if (cuda_baseline) {
      f.baseline_name = "raw CUDA (" + raw.cuda->library_name() +
                        "): the same number of cuLaunchKernel calls, timed the same way";
      f.baseline = Stats::of(raw_us).map([&](double t) { return t / calls; });
    } else {
      f.baseline_missing =
          have_raw ? "the driver's own launch call is not reachable from outside hal" : why;
    }
    if (ctx.ir == HAL_IR_BUILTIN) {
      f.note =
          "A device running built-in kernels on the host (the driver skeleton) runs the kernel "
          "inside the call: its threads are part of this time. docs/PERFORMANCE.md splits the "
          "time between hal and the driver.";
    }
    ctx.report->add(std::move(f));
  }

  if (ctx.wants("launch_latency")) {
    const uint32_t samples = ctx.reps(300, 20);
    std::vector<double> hal_us, raw_us;
    if (have_raw) {
      time_interleaved(
          ctx.options.warmup, samples, [&] { hal_batch(1); },
          [&] {
            if (!raw.batched(1)) throw HalError("the raw baseline's single run failed");
          },
          &hal_us, &raw_us);
    } else {
      hal_us = time_runs(ctx.options.warmup, samples, [&] { hal_batch(1); });
    }
    Figure f;
    f.family = "launch";
    f.name = "launch_latency";
    f.what = "microseconds for one launch of a one-workgroup kernel followed by a synchronize";
    f.unit = "us";
    f.params = {{"kernel", kKernel}};
    f.value = Stats::of(hal_us);
    f.has_baseline = have_raw;
    f.baseline_missing = why;
    if (have_raw) {
      f.baseline_name = raw.name_single;
      f.baseline = Stats::of(raw_us);
    }
    f.note = latency_note(ctx);
    ctx.report->add(std::move(f));
  }

  if (ctx.wants("launch_event_timing") && ctx.is_vulkan()) {
    // How the tuner times a kernel (record, launch, record, wait, elapsed), against the same
    // dispatch between two timestamps its command buffer writes directly around it: the two
    // should agree, the events adding no submission gap of their own.
    constexpr uint32_t kBig = 1u << 20;
    const uint32_t groups = kBig / kernel.info->block[0];
    DeviceBuffer bx(ctx, size_t{kBig} * 4), by(ctx, size_t{kBig} * 4);
    BENCH_CHECK(hal_memset_d32(ctx.stream, bx.ptr, 0, kBig));
    BENCH_CHECK(hal_memset_d32(ctx.stream, by.ptr, 0, kBig));
    BENCH_CHECK(hal_stream_synchronize(ctx.stream));
    uint32_t big = kBig;
    const std::vector<void*> big_args = {&bx.ptr, &by.ptr, &big, &alpha};
    hal_event start = nullptr, end = nullptr;
    BENCH_CHECK(hal_event_create(ctx.device, &start));
    BENCH_CHECK(hal_event_create(ctx.device, &end));
    std::string raw_why;
    std::unique_ptr<RawVulkan> timed = RawVulkan::open(ctx.info.uuid, ctx.info.name, &raw_why);
    const hal_kernel_blob* blob = hal_kernels_find(kKernel, ctx.ir);
    if (timed && (blob == nullptr || !timed->prepare(blob->data, blob->size, blob->entry_point, 2,
                                                     size_t{kBig} * 4, 8, &raw_why))) {
      timed.reset();
    }
    struct Push {
      uint32_t n;
      float alpha;
    } push{kBig, 1.0f};
    std::vector<double> hal_ms, raw_ms;
    const uint32_t samples = ctx.reps(31, 5);
    for (uint32_t i = 0; i < ctx.options.warmup + samples; ++i) {
      BENCH_CHECK(hal_event_record(start, ctx.stream));
      kernel.launch(ctx.stream, groups, 1, 1, big_args);
      BENCH_CHECK(hal_event_record(end, ctx.stream));
      BENCH_CHECK(hal_event_synchronize(end));
      float ms = 0;
      BENCH_CHECK(hal_event_elapsed_ms(start, end, &ms));
      double direct = 0;
      if (timed && !timed->time_dispatch(&push, groups, &direct)) {
        raw_why = "the device has no timestamps, or the raw run failed";
        timed.reset();
      }
      if (i < ctx.options.warmup) continue;
      hal_ms.push_back(ms);
      if (timed) raw_ms.push_back(direct);
    }
    hal_event_destroy(start);
    hal_event_destroy(end);
    Figure f;
    f.family = "launch";
    f.name = "launch_event_timing";
    f.what =
        "milliseconds hal_event_elapsed_ms gives for events recorded just before and after one "
        "launch of a 2^20-element saxpy, as the tuner times kernels";
    f.unit = "ms";
    f.params = {{"kernel", kKernel}, {"elements", std::to_string(kBig)}};
    f.value = Stats::of(hal_ms);
    f.has_baseline = timed != nullptr;
    if (timed) {
      f.baseline_name =
          "raw Vulkan: the same dispatch between two timestamps written in its own command "
          "buffer";
      f.baseline = Stats::of(raw_ms);
    } else {
      f.baseline_missing = raw_why;
    }
    f.note = "A ratio near 1 means event timings are the kernel's own device time.";
    ctx.report->add(std::move(f));
  }
}

}  // namespace bench
