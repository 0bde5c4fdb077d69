// Copy bandwidth: host-to-device, device-to-host and device-to-device, from pageable memory and
// from hal_host_alloc memory, each copy followed by a stream synchronize, against memcpy between
// two pageable host buffers of the same size (the limit on a device that shares host memory).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace bench {

namespace {

// Host memory from hal_host_alloc, freed by the destructor.
class PinnedBuffer {
 public:
  PinnedBuffer(const Context& ctx, size_t bytes) : device_(ctx.device) {
    BENCH_CHECK(hal_host_alloc(ctx.device, bytes, &data));
    std::memset(data, 1, bytes);  // fault the pages in before timing
  }
  ~PinnedBuffer() {
    if (data != nullptr) hal_host_free(device_, data);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* data = nullptr;

 private:
  hal_device device_;
};

uint32_t reps_for(const Context& ctx, size_t bytes) {
  // Enough samples that the median is stable on a shared machine; about a second per size.
  if (ctx.options.quick) return ctx.reps(5, 5);
  if (bytes <= (size_t{1} << 20)) return ctx.reps(100, 5);
  if (bytes <= (size_t{16} << 20)) return ctx.reps(40, 5);
  return ctx.reps(15, 3);
}

std::string copy_note(const Context& ctx, const std::string& direction, bool pinned) {
  if (ctx.is_cuda() && ctx.info.is_cpu) {
    // The CPU PTX driver's copies (src/ptx_cpu/copy.cpp), which hal's CUDA backend calls as it
    // would NVIDIA's: the figures are the driver's, explained so they are not read as hal's.
    std::string note =
        "On the CPU PTX device a copy hal waits for (and one from pageable memory) runs on the "
        "calling thread when its stream is idle, as here: one memmove into the destination. "
        "Otherwise it is work for the stream's worker thread, which the synchronize waits for. ";
    if (direction == "htod" && !pinned) {
      note +=
          "On a busy stream, a copy from pageable memory first copies the source into a "
          "staging buffer (the caller may reuse its memory once the call returns), and the "
          "worker copies it again: about half the bandwidth.";
    } else if (pinned) {
      note +=
          "From or to hal_host_alloc memory the copy is asynchronous, so it goes to the "
          "worker: a few microseconds per copy, which dominates the small sizes.";
    }
    return note;
  }
  if (!ctx.is_vulkan()) return {};
  std::string note =
      "On a device whose memory is host-visible (lavapipe), hal copies with the CPU when the "
      "stream is idle, as it is here (src/vulkan/stream.cpp): one memcpy (memmove for dtod) plus "
      "the call's validation, lookup and locking, about 0.1-0.2 us, which dominates only the "
      "smallest sizes. From 1 MiB up hal runs the same memcpy as the baseline, so a ratio away "
      "from 1 there is the shared machine's noise (compare min and max), not hal. ";
  if (direction == "dtoh" && !pinned) {
    note +=
        "On a busy stream, device-to-host into pageable memory goes through staging memory "
        "and a second memcpy at completion, about half the bandwidth.";
  } else if (direction == "htod") {
    note +=
        "On a busy stream, host-to-device copies the source into staging memory and records "
        "a buffer copy: two copies of the data, about half the bandwidth.";
  }
  return note;
}

}  // namespace

void bench_copy(Context& ctx) {
  std::vector<size_t> sizes;
  if (ctx.options.quick) {
    sizes = {size_t{4} << 10, size_t{1} << 20};
  } else {
    sizes = {size_t{4} << 10, size_t{64} << 10, size_t{1} << 20, size_t{16} << 20,
             size_t{256} << 20};
  }
  const bool cpu_vulkan = ctx.is_vulkan() && ctx.info.is_cpu;
  for (const size_t bytes : sizes) {
    if (bytes > ctx.info.max_allocation_size) {
      ctx.report->note("copy: " + bytes_text(bytes) +
                       " skipped: above the device's largest "
                       "allocation");
      continue;
    }
    const std::string suffix = "_" + std::to_string(bytes >> 10) + "KiB";
    bool wanted = false;
    for (const char* kind : {"copy_htod_pageable", "copy_htod_hostalloc", "copy_dtoh_pageable",
                             "copy_dtoh_hostalloc", "copy_dtod"}) {
      wanted = wanted || ctx.wants(std::string(kind) + suffix);
    }
    if (!wanted) continue;
    const uint32_t reps = reps_for(ctx, bytes);
    // Each sample repeats the copy until it moves about 8 MiB, so that one sample spans the
    // cache and scheduling states a single short copy would land in one of (their bandwidth is
    // bimodal on a shared machine, which makes a median of single copies flip between modes).
    const uint32_t inner = static_cast<uint32_t>(std::max<size_t>(1, (size_t{8} << 20) / bytes));
    DeviceBuffer d_src(ctx, bytes), d_dst(ctx, bytes);
    std::vector<uint8_t> h_src(bytes, 1), h_dst(bytes, 2), m_src(bytes, 3), m_dst(bytes, 4);
    PinnedBuffer p_src(ctx, bytes), p_dst(ctx, bytes);
    BENCH_CHECK(hal_memcpy_htod(ctx.stream, d_src.ptr, h_src.data(), bytes));
    BENCH_CHECK(hal_memcpy_htod(ctx.stream, d_dst.ptr, h_src.data(), bytes));
    BENCH_CHECK(hal_stream_synchronize(ctx.stream));

    struct Case {
      const char* direction;
      bool pinned;
      std::function<void()> run;
    };
    const std::vector<Case> cases = {
        {"htod", false,
         [&] { BENCH_CHECK(hal_memcpy_htod(ctx.stream, d_dst.ptr, h_src.data(), bytes)); }},
        {"htod", true,
         [&] { BENCH_CHECK(hal_memcpy_htod(ctx.stream, d_dst.ptr, p_src.data, bytes)); }},
        {"dtoh", false,
         [&] { BENCH_CHECK(hal_memcpy_dtoh(ctx.stream, h_dst.data(), d_src.ptr, bytes)); }},
        {"dtoh", true,
         [&] { BENCH_CHECK(hal_memcpy_dtoh(ctx.stream, p_dst.data, d_src.ptr, bytes)); }},
        {"dtod", false,
         [&] { BENCH_CHECK(hal_memcpy_dtod(ctx.stream, d_dst.ptr, d_src.ptr, bytes)); }},
    };
    for (const Case& c : cases) {
      const std::string host_kind =
          std::string(c.direction) == "dtod" ? "" : (c.pinned ? "_hostalloc" : "_pageable");
      const std::string name = std::string("copy_") + c.direction + host_kind + "_" +
                               std::to_string(bytes >> 10) + "KiB";
      if (!ctx.wants(name)) continue;
      std::vector<double> hal_us, memcpy_us;
      time_interleaved(
          ctx.options.warmup, reps,
          [&] {
            for (uint32_t i = 0; i < inner; ++i) {
              c.run();
              BENCH_CHECK(hal_stream_synchronize(ctx.stream));
            }
          },
          [&] {
            for (uint32_t i = 0; i < inner; ++i) std::memcpy(m_dst.data(), m_src.data(), bytes);
          },
          &hal_us, &memcpy_us);
      // Keep the compiler from treating the baseline's destination as dead.
      volatile uint8_t sink = m_dst[bytes / 2];
      (void)sink;
      const double moved = static_cast<double>(bytes) * inner;
      auto gbps = [moved](double us) { return us > 0 ? moved / (us * 1e3) : 0.0; };
      Figure f;
      f.family = "copy";
      f.name = name;
      f.what = std::string("GB/s of hal_memcpy_") + c.direction +
               (host_kind.empty() ? ""
                                  : (c.pinned ? " with hal_host_alloc host memory"
                                              : " with pageable host memory")) +
               ", each copy followed by hal_stream_synchronize";
      f.unit = "GB/s";
      f.higher_is_better = true;
      f.params = {
          {"direction", c.direction},
          {"host_memory", host_kind.empty() ? "none" : (c.pinned ? "hal_host_alloc" : "pageable")},
          {"bytes", std::to_string(bytes)},
          {"size", bytes_text(bytes)}};
      f.value = Stats::of(hal_us).map(gbps);
      f.has_baseline = true;
      f.baseline_name = "memcpy between two pageable host buffers of the same size";
      f.baseline = Stats::of(memcpy_us).map(gbps);
      if (cpu_vulkan && bytes >= (size_t{1} << 20)) {
        f.target = {true, false, 0.8, "on lavapipe, copies of 1 MiB and more at least 0.8x memcpy"};
      }
      f.note = copy_note(ctx, c.direction, c.pinned);
      ctx.report->add(std::move(f));
    }
  }
}

}  // namespace bench
