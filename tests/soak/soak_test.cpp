// Concurrency soak on the Vulkan device: several threads, each with its own streams, launch,
// copy and record events for a fixed time, ordering their reads of each other's results only
// with hal_stream_wait_event; every result is checked exactly. A second test has threads create
// and destroy modules, streams, events and allocations at once. A watchdog aborts the process
// with a message when no thread makes progress for kStallLimit, so a hang fails CI instead of
// stalling it.
#include "vulkan/validation.h"

#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kThreads = 4;
constexpr auto kDuration = std::chrono::seconds(3);     // how long each soak runs
constexpr auto kStallLimit = std::chrono::seconds(20);  // no progress this long: abort
constexpr uint32_t kCount = 512;                        // floats per buffer
constexpr size_t kBytes = kCount * sizeof(float);

// Aborts the process when tick() has not been called for kStallLimit.
class Watchdog {
 public:
  explicit Watchdog(const char* what) : what_(what), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void tick() { progress_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t ticks() const { return progress_.load(); }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    uint64_t last = progress_.load();
    Clock::time_point last_change = Clock::now();
    while (!done_) {
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      const uint64_t now_ticks = progress_.load();
      if (now_ticks != last) {
        last = now_ticks;
        last_change = Clock::now();
      } else if (!done_ && Clock::now() - last_change > kStallLimit) {
        std::fprintf(stderr,
                     "soak watchdog: %s made no progress for %lld s after %llu steps; a call "
                     "is hung (deadlock or lost wake-up). Aborting.\nhal_last_error on the "
                     "watchdog thread: %s\n",
                     what_, static_cast<long long>(kStallLimit.count()),
                     static_cast<unsigned long long>(now_ticks), hal_last_error());
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  const char* what_;
  std::atomic<uint64_t> progress_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Collects failures from worker threads (gtest assertions are reported from the main thread).
class Failures {
 public:
  void add(std::string text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (list_.size() < 20) list_.push_back(std::move(text));
    ++count_;
  }
  bool check(hal_status status, const char* what, int thread) {
    if (status == HAL_SUCCESS) return true;
    add("thread " + std::to_string(thread) + ": " + what + " returned " +
        hal_status_string(status) + ": " + hal_last_error());
    return false;
  }
  void report() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& text : list_) ADD_FAILURE() << text;
    EXPECT_EQ(count_, 0u) << "failures in worker threads (the first 20 are listed)";
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> list_;
  size_t count_ = 0;
};

hal_device vulkan_device() {
  hal_device device = nullptr;
  EXPECT_EQ(hal_device_find("vulkan:0", &device), HAL_SUCCESS) << hal_last_error();
  return device;
}

const hal_kernel_blob& vector_add() {
  const hal_kernel_blob* blob = hal_kernels_find("vector_add_f32", HAL_IR_SPIRV);
  if (blob == nullptr) {
    std::fprintf(stderr, "vector_add_f32 is missing from the kernel pack\n");
    std::abort();
  }
  return *blob;
}

// Per thread: a compute stream producing C = A + B and recording |done|; a read stream that
// waits on the neighbour's |done| and copies the neighbour's C. The host never synchronises the
// producer before the reader issues its copy, so only the event orders them.
struct Lane {
  hal_stream compute = nullptr, read = nullptr;
  hal_event done = nullptr;
  hal_deviceptr a = 0, b = 0, c = 0, copy = 0;
};

float value_a(int lane, uint64_t round, uint32_t i) {
  return static_cast<float>((lane * 131 + round * 17 + i) % 4096);
}
float value_b(int lane, uint64_t round, uint32_t i) {
  return static_cast<float>((lane * 7 + round * 3 + i * 5) % 2048);
}

TEST(Soak, StreamsLaunchCopyAndWaitAcrossThreads) {
  hal_device device = vulkan_device();
  ASSERT_NE(device, nullptr);
  hal_module module = nullptr;
  hal_function fn = nullptr;
  ASSERT_EQ(hal_module_load(device, vector_add().data, vector_add().size, nullptr, &module),
            HAL_SUCCESS)
      << hal_last_error();
  ASSERT_EQ(hal_module_get_function(module, "vector_add_f32", &fn), HAL_SUCCESS);

  std::vector<Lane> lanes(kThreads);
  for (Lane& lane : lanes) {
    ASSERT_EQ(hal_stream_create(device, &lane.compute), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_stream_create(device, &lane.read), HAL_SUCCESS) << hal_last_error();
    ASSERT_EQ(hal_event_create(device, &lane.done), HAL_SUCCESS) << hal_last_error();
    for (hal_deviceptr* ptr : {&lane.a, &lane.b, &lane.c, &lane.copy}) {
      ASSERT_EQ(hal_mem_alloc(device, kBytes, ptr), HAL_SUCCESS) << hal_last_error();
    }
  }

  Failures failures;
  Watchdog watchdog("the stream soak");
  std::atomic<bool> stop{false};
  uint64_t rounds = 0;
  const Clock::time_point start = Clock::now();
  // The completion step runs once per phase, when every thread has arrived.
  auto on_phase = [&]() noexcept {
    watchdog.tick();
    if (Clock::now() - start >= kDuration) stop.store(true);
  };
  std::barrier sync(kThreads, on_phase);

  auto worker = [&](int t) {
    Lane& mine = lanes[t];
    const int neighbour = (t + 1) % kThreads;
    Lane& theirs = lanes[neighbour];
    std::vector<float> a(kCount), b(kCount), seen(kCount);
    uint32_t n = kCount;
    const hal_launch_config config = {{kCount / 256, 1, 1}, {256, 1, 1}, 0};
    for (uint64_t round = 0; !stop.load(); ++round) {
      for (uint32_t i = 0; i < kCount; ++i) {
        a[i] = value_a(t, round, i);
        b[i] = value_b(t, round, i);
      }
      void* args[] = {&mine.a, &mine.b, &mine.c, &n};
      failures.check(hal_memcpy_htod(mine.compute, mine.a, a.data(), kBytes), "htod A", t);
      failures.check(hal_memcpy_htod(mine.compute, mine.b, b.data(), kBytes), "htod B", t);
      failures.check(hal_launch(mine.compute, fn, &config, args), "hal_launch", t);
      failures.check(hal_event_record(mine.done, mine.compute), "hal_event_record", t);
      sync.arrive_and_wait();  // every lane has recorded this round's event
      failures.check(hal_stream_wait_event(mine.read, theirs.done), "hal_stream_wait_event", t);
      failures.check(hal_memcpy_dtod(mine.read, mine.copy, theirs.c, kBytes), "dtod", t);
      failures.check(hal_memcpy_dtoh(mine.read, seen.data(), mine.copy, kBytes), "dtoh", t);
      if (failures.check(hal_stream_synchronize(mine.read), "hal_stream_synchronize", t)) {
        for (uint32_t i = 0; i < kCount; ++i) {
          const float expected = value_a(neighbour, round, i) + value_b(neighbour, round, i);
          if (seen[i] != expected) {
            failures.add("thread " + std::to_string(t) + " round " + std::to_string(round) +
                         ": neighbour's C[" + std::to_string(i) + "] = " + std::to_string(seen[i]) +
                         ", expected " + std::to_string(expected));
            break;
          }
        }
      }
      watchdog.tick();
      sync.arrive_and_wait();  // every read is done before the next round overwrites C
      if (t == 0) rounds = round + 1;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& thread : threads) thread.join();
  failures.report();
  std::printf("soak: %llu rounds on %d threads in %.1f s\n",
              static_cast<unsigned long long>(rounds), kThreads,
              std::chrono::duration<double>(Clock::now() - start).count());
  std::fflush(stdout);
  EXPECT_GT(rounds, 0u);

  for (Lane& lane : lanes) {
    EXPECT_EQ(hal_stream_destroy(lane.compute), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_stream_destroy(lane.read), HAL_SUCCESS) << hal_last_error();
    EXPECT_EQ(hal_event_destroy(lane.done), HAL_SUCCESS) << hal_last_error();
    for (hal_deviceptr ptr : {lane.a, lane.b, lane.c, lane.copy}) {
      EXPECT_EQ(hal_mem_free(device, ptr), HAL_SUCCESS) << hal_last_error();
    }
  }
  EXPECT_EQ(hal_module_unload(module), HAL_SUCCESS);
  EXPECT_EQ(hal::vulkan::validation_error_count(), 0u);
}

// Threads create and destroy objects at once; each cycle also runs vector_add on its own objects
// and checks the sums. With |churn_streams| each cycle creates and destroys its stream too;
// otherwise each thread keeps one stream for the whole run.
void create_and_destroy(bool churn_streams) {
  hal_device device = vulkan_device();
  ASSERT_NE(device, nullptr);
  Failures failures;
  Watchdog watchdog("the create/destroy soak");
  std::atomic<uint64_t> cycles{0};
  const Clock::time_point start = Clock::now();

  auto worker = [&](int t) {
    constexpr uint32_t kSmall = 256;
    std::vector<float> a(kSmall), out(kSmall);
    hal_stream kept = nullptr;
    if (!churn_streams) failures.check(hal_stream_create(device, &kept), "hal_stream_create", t);
    for (uint64_t cycle = 0; Clock::now() - start < kDuration; ++cycle) {
      hal_module module = nullptr;
      hal_function fn = nullptr;
      hal_stream stream = nullptr;
      hal_event event = nullptr;
      hal_deviceptr da = 0, dc = 0;
      void* host = nullptr;
      bool ok = failures.check(
          hal_module_load(device, vector_add().data, vector_add().size, nullptr, &module),
          "hal_module_load", t);
      ok = ok && failures.check(hal_module_get_function(module, "vector_add_f32", &fn),
                                "hal_module_get_function", t);
      if (churn_streams) {
        ok = ok && failures.check(hal_stream_create(device, &stream), "hal_stream_create", t);
      } else {
        stream = kept;
      }
      ok = ok && failures.check(hal_event_create(device, &event), "hal_event_create", t);
      ok = ok && failures.check(hal_mem_alloc(device, kSmall * 4, &da), "hal_mem_alloc", t);
      ok = ok && failures.check(hal_mem_alloc(device, kSmall * 4, &dc), "hal_mem_alloc", t);
      ok = ok && failures.check(hal_host_alloc(device, 64, &host), "hal_host_alloc", t);
      if (ok) {
        for (uint32_t i = 0; i < kSmall; ++i) a[i] = static_cast<float>(t * 1000 + cycle + i);
        uint32_t n = kSmall;
        void* args[] = {&da, &da, &dc, &n};
        const hal_launch_config config = {{1, 1, 1}, {256, 1, 1}, 0};
        failures.check(hal_memcpy_htod(stream, da, a.data(), kSmall * 4), "htod", t);
        failures.check(hal_launch(stream, fn, &config, args), "hal_launch", t);
        failures.check(hal_memcpy_dtoh(stream, out.data(), dc, kSmall * 4), "dtoh", t);
        failures.check(hal_event_record(event, stream), "hal_event_record", t);
        if (failures.check(hal_event_synchronize(event), "hal_event_synchronize", t)) {
          for (uint32_t i = 0; i < kSmall; ++i) {
            if (out[i] != 2 * a[i]) {
              failures.add("thread " + std::to_string(t) + " cycle " + std::to_string(cycle) +
                           ": C[" + std::to_string(i) + "] = " + std::to_string(out[i]) +
                           ", expected " + std::to_string(2 * a[i]));
              break;
            }
          }
        }
      }
      // Destroy in an order that varies by thread, while work may still be pending.
      if (!churn_streams) stream = nullptr;
      if (t % 2 == 0) {
        if (module) failures.check(hal_module_unload(module), "hal_module_unload", t);
        if (stream) failures.check(hal_stream_destroy(stream), "hal_stream_destroy", t);
      } else {
        if (stream) failures.check(hal_stream_destroy(stream), "hal_stream_destroy", t);
        if (module) failures.check(hal_module_unload(module), "hal_module_unload", t);
      }
      if (event) failures.check(hal_event_destroy(event), "hal_event_destroy", t);
      if (da) failures.check(hal_mem_free(device, da), "hal_mem_free", t);
      if (dc) failures.check(hal_mem_free(device, dc), "hal_mem_free", t);
      if (host) failures.check(hal_host_free(device, host), "hal_host_free", t);
      cycles.fetch_add(1);
      watchdog.tick();
    }
    if (kept) failures.check(hal_stream_destroy(kept), "hal_stream_destroy", t);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& thread : threads) thread.join();
  failures.report();
  std::printf("churn: %llu create/destroy cycles on %d threads in %.1f s\n",
              static_cast<unsigned long long>(cycles.load()), kThreads,
              std::chrono::duration<double>(Clock::now() - start).count());
  std::fflush(stdout);
  EXPECT_GT(cycles.load(), static_cast<uint64_t>(kThreads));
  EXPECT_EQ(hal::vulkan::validation_error_count(), 0u);
}

// Streams live for the whole run here; each thread still creates and destroys modules, events
// and allocations every cycle. The process must also exit cleanly after it (a driver thread
// touching a destroyed semaphore used to crash it at exit now and then).
TEST(Soak, CreateAndDestroyModulesEventsAndAllocationsAcrossThreads) {
  create_and_destroy(/*churn_streams=*/false);
}

// Streams created and destroyed by several threads at once: every stream destruction destroys a
// timeline semaphore that the driver's queue thread may still be finishing with (a hang here
// used to show it; see StreamCore's destructor).
TEST(Soak, CreateAndDestroyStreamsAcrossThreads) {
  create_and_destroy(/*churn_streams=*/true);
}

}  // namespace
