// Streams and events, NOT_READY handling, and a small concurrency smoke test.
#include "test_util.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace hal_test {
namespace {

using Events = DoubleTest;

TEST_F(Events, NeverRecordedEvents) {
  hal_event a = event(gpu);
  hal_event b = event(gpu);
  const uint64_t calls = gpu_double->calls();
  // Complete at once, without asking the backend.
  EXPECT_OK(hal_event_query(a));
  EXPECT_OK(hal_event_synchronize(a));
  // Waiting on one is a no-op.
  EXPECT_OK(hal_stream_wait_event(stream, a));
  EXPECT_EQ(gpu_double->calls(), calls);

  float ms = -1;
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_event_elapsed_ms(a, b, &ms));
  EXPECT_TRUE(LastErrorIs("hal_event_elapsed_ms", {"start event was never recorded"}));
  ASSERT_OK(hal_event_record(a, stream));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_event_elapsed_ms(a, b, &ms));
  EXPECT_TRUE(LastErrorIs("hal_event_elapsed_ms", {"end event was never recorded"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_event_elapsed_ms(b, a, &ms));
  EXPECT_TRUE(LastErrorIs("hal_event_elapsed_ms", {"start event was never recorded"}));
  EXPECT_EQ(ms, -1);
}

TEST_F(Events, ElapsedTimeComesFromTheBackend) {
  hal_event start = event(gpu);
  hal_event end = event(gpu);
  hal_deviceptr p = alloc(64);
  ASSERT_OK(hal_event_record(start, stream));
  ASSERT_OK(hal_memset_d8(stream, p, 1, 64));
  ASSERT_OK(hal_memset_d8(stream, p, 2, 64));
  ASSERT_OK(hal_memset_d8(stream, p, 3, 64));
  ASSERT_OK(hal_event_record(end, stream));
  ASSERT_OK(hal_event_synchronize(end));
  ASSERT_OK(hal_event_query(end));
  float ms = -1;
  ASSERT_OK(hal_event_elapsed_ms(start, end, &ms));
  EXPECT_EQ(ms, 4.0f) << "the double counts one unit per stream command";
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_event_elapsed_ms(start, end, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_event_elapsed_ms", {"ms is NULL"}));

  // Re-recording replaces the capture.
  ASSERT_OK(hal_event_record(start, stream));
  ASSERT_OK(hal_event_elapsed_ms(start, end, &ms));
  EXPECT_EQ(ms, -1.0f);
  // Waiting on a recorded event reaches the backend.
  const uint64_t calls = gpu_double->calls();
  ASSERT_OK(hal_stream_wait_event(stream, end));
  EXPECT_EQ(gpu_double->calls(), calls + 1);
  // The event may be destroyed right after; the stream keeps working.
  hal_event temp = nullptr;
  ASSERT_OK(hal_event_create(gpu, &temp));
  ASSERT_OK(hal_event_record(temp, stream));
  ASSERT_OK(hal_stream_wait_event(stream, temp));
  ASSERT_OK(hal_event_destroy(temp));
  EXPECT_OK(hal_stream_synchronize(stream));
}

TEST_F(Events, ElapsedNeedsTimestamps) {
  hal_event a = event(cpu);
  hal_event b = event(cpu);
  ASSERT_OK(hal_event_record(a, cpu_stream));
  ASSERT_OK(hal_event_record(b, cpu_stream));
  float ms = -1;
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, hal_event_elapsed_ms(a, b, &ms));
  EXPECT_TRUE(LastErrorIs("hal_event_elapsed_ms", {"double:0", "no device timestamps"}));
  EXPECT_EQ(ms, -1);
}

TEST_F(Events, NotReadyIsAnAnswerNotAnError) {
  hal_event e = event(gpu);
  hal_event e2 = event(gpu);
  ASSERT_OK(hal_event_record(e, stream));
  ASSERT_OK(hal_event_record(e2, stream));
  ASSERT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_mem_alloc(gpu, 0, nullptr));
  const std::string before = hal_last_error();
  gpu_double->set_pending(true);
  EXPECT_HAL(HAL_ERROR_NOT_READY, hal_stream_query(stream));
  EXPECT_HAL(HAL_ERROR_NOT_READY, hal_event_query(e));
  float ms = 0;
  EXPECT_HAL(HAL_ERROR_NOT_READY, hal_event_elapsed_ms(e, e2, &ms));
  gpu_double->set_pending(false);
  EXPECT_EQ(std::string(hal_last_error()), before);
  EXPECT_OK(hal_stream_query(stream));
  EXPECT_OK(hal_event_query(e));
  EXPECT_EQ(std::string(hal_last_error()), before);
}

using Streams = DoubleTest;

TEST_F(Streams, FailuresFromTheBackendPassThrough) {
  gpu_double->fail_next(HAL_ERROR_LAUNCH_FAILED, "illegal address (injected)");
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_stream_synchronize(stream));
  EXPECT_TRUE(LastErrorIs("hal_stream_synchronize", {"illegal address (injected)"}));
  EXPECT_OK(hal_stream_synchronize(stream));
  hal_event e = event(gpu);
  ASSERT_OK(hal_event_record(e, stream));
  gpu_double->fail_next(HAL_ERROR_LAUNCH_FAILED);
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_event_synchronize(e));
  gpu_double->fail_next(HAL_ERROR_OUT_OF_MEMORY, "no streams left (injected)");
  hal_stream s = reinterpret_cast<hal_stream>(0x77);
  EXPECT_HAL(HAL_ERROR_OUT_OF_MEMORY, hal_stream_create(gpu, &s));
  EXPECT_TRUE(LastErrorIs("hal_stream_create", {"no streams left (injected)"}));
  EXPECT_EQ(s, reinterpret_cast<hal_stream>(0x77));
  gpu_double->fail_next(HAL_ERROR_OUT_OF_MEMORY);
  hal_event ev = reinterpret_cast<hal_event>(0x77);
  EXPECT_HAL(HAL_ERROR_OUT_OF_MEMORY, hal_event_create(gpu, &ev));
  EXPECT_EQ(ev, reinterpret_cast<hal_event>(0x77));
  // A failed record leaves the event unrecorded.
  hal_event fresh = event(gpu);
  gpu_double->fail_next(HAL_ERROR_LAUNCH_FAILED);
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, hal_event_record(fresh, stream));
  float ms = 0;
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_event_elapsed_ms(e, fresh, &ms));
}

TEST_F(Streams, DestroyWaitsAndSucceedsEvenWhenTheWorkFailed) {
  hal_stream s = nullptr;
  ASSERT_OK(hal_stream_create(gpu, &s));
  ASSERT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_stream_create(gpu, nullptr));
  const std::string before = hal_last_error();
  const uint64_t calls = gpu_double->calls();
  gpu_double->fail_next(HAL_ERROR_LAUNCH_FAILED, "fault (injected)");
  EXPECT_OK(hal_stream_destroy(s));
  EXPECT_EQ(gpu_double->calls(), calls + 1) << "destroy synchronises the stream first";
  EXPECT_EQ(std::string(hal_last_error()), before) << "a successful destroy published an error";
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_stream_synchronize(s));
}

TEST_F(Streams, CreateChecksItsArguments) {
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_stream_create(gpu, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_stream_create", {"stream is NULL"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_event_create(gpu, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_event_create", {"event is NULL"}));
}

TEST_F(Streams, ConcurrentCopiesOnOwnAndSharedStreams) {
  constexpr int kThreads = 4;
  constexpr size_t kBytes = 4096;
  constexpr int kRounds = 20;
  hal_deviceptr shared = alloc(kThreads * kBytes);
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      hal_stream own = nullptr;
      hal_deviceptr a = 0;
      hal_deviceptr b = 0;
      if (hal_stream_create(gpu, &own) != HAL_SUCCESS || hal_mem_alloc(gpu, kBytes, &a) ||
          hal_mem_alloc(gpu, kBytes, &b)) {
        ++failures[t];
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        const std::vector<uint8_t> data = pattern(kBytes, static_cast<uint8_t>(t * 31 + round));
        std::vector<uint8_t> back(kBytes);
        // Own stream: host -> a -> b -> host.
        if (hal_memcpy_htod(own, a, data.data(), kBytes) || hal_memcpy_dtod(own, b, a, kBytes) ||
            hal_memcpy_dtoh(own, back.data(), b, kBytes) || hal_stream_synchronize(own)) {
          ++failures[t];
        }
        if (back != data) ++failures[t];
        // The shared stream: each thread its own slice of one allocation.
        std::vector<uint8_t> back2(kBytes);
        const hal_deviceptr slice = shared + static_cast<hal_deviceptr>(t) * kBytes;
        if (hal_memcpy_htod(stream, slice, data.data(), kBytes) ||
            hal_memcpy_dtoh(stream, back2.data(), slice, kBytes) ||
            hal_stream_synchronize(stream)) {
          ++failures[t];
        }
        if (back2 != data) ++failures[t];
      }
      if (hal_mem_free(gpu, a) || hal_mem_free(gpu, b) || hal_stream_destroy(own)) ++failures[t];
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
  }
  EXPECT_EQ(gpu_double->overlapping_stream_calls(), 0u)
      << "the runtime let two calls on one stream reach the backend at once";
}

TEST_F(Streams, DestroyWhileOtherThreadsUseTheStream) {
  hal_stream victim = nullptr;
  ASSERT_OK(hal_stream_create(gpu, &victim));
  hal_deviceptr p = alloc(256);
  std::atomic<bool> go{false};
  std::atomic<int> unexpected{0};
  std::vector<std::thread> users;
  for (int t = 0; t < 3; ++t) {
    users.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      uint8_t byte = 1;
      for (int i = 0; i < 200; ++i) {
        const hal_status s = hal_memcpy_htod(victim, p, &byte, 1);
        if (s != HAL_SUCCESS && s != HAL_ERROR_INVALID_HANDLE) ++unexpected;
      }
    });
  }
  go.store(true);
  std::this_thread::yield();
  EXPECT_OK(hal_stream_destroy(victim));
  for (std::thread& th : users) th.join();
  EXPECT_EQ(unexpected.load(), 0);
  uint8_t byte = 0;
  EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_memcpy_htod(victim, p, &byte, 1));
}

TEST_F(Streams, UnloadAndDestroyWhileOtherThreadsUseTheObjects) {
  const std::vector<uint8_t> blob = spirv_blob(500);
  declare_module(blob, "k(ptr)");
  hal_deviceptr p = alloc(256);
  for (int round = 0; round < 5; ++round) {
    hal_module m = nullptr;
    ASSERT_OK(hal_module_load(gpu, blob.data(), blob.size(), nullptr, &m));
    hal_function f = function(m, "k");
    hal_event e = nullptr;
    ASSERT_OK(hal_event_create(gpu, &e));
    ASSERT_OK(hal_event_record(e, stream));
    std::atomic<bool> go{false};
    std::atomic<int> unexpected{0};
    std::vector<std::thread> users;
    for (int t = 0; t < 3; ++t) {
      users.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        hal_launch_config config{{1, 1, 1}, {16, 1, 1}, 0};
        void* args[] = {&p};
        hal_function g = nullptr;
        hal_function_info info{};
        info.struct_size = sizeof(info);
        for (int i = 0; i < 50; ++i) {
          for (hal_status s :
               {hal_launch(stream, f, &config, args), hal_event_query(e),
                hal_stream_wait_event(stream, e), hal_module_get_function(m, "k", &g),
                hal_function_get_info(f, &info)}) {
            if (s != HAL_SUCCESS && s != HAL_ERROR_INVALID_HANDLE) ++unexpected;
          }
        }
      });
    }
    go.store(true);
    std::this_thread::yield();
    EXPECT_OK(hal_module_unload(m));
    EXPECT_OK(hal_event_destroy(e));
    for (std::thread& th : users) th.join();
    EXPECT_EQ(unexpected.load(), 0);
    hal_function_info info{};
    info.struct_size = sizeof(info);
    EXPECT_HAL(HAL_ERROR_INVALID_HANDLE, hal_function_get_info(f, &info));
  }
  EXPECT_OK(hal_stream_synchronize(stream));
  EXPECT_EQ(gpu_double->overlapping_stream_calls(), 0u);
}

// A free racing with copies and launches that already validated the same pointer: each of them
// either runs on the live allocation or is refused as out of range; none may reach the backend
// with an allocation the backend no longer has (the double answers that with INTERNAL).
TEST_F(Streams, FreeWhileOtherThreadsCopyAndLaunch) {
  const std::vector<uint8_t> blob = spirv_blob(501);
  declare_module(blob, "k(ptr)");
  hal_module module = nullptr;
  ASSERT_OK(hal_module_load(gpu, blob.data(), blob.size(), nullptr, &module));
  hal_function k = nullptr;
  ASSERT_OK(hal_module_get_function(module, "k", &k));
  gpu_double->set_stream_call_delay(std::chrono::microseconds(300));
  for (int round = 0; round < 3; ++round) {
    hal_deviceptr p = 0;
    ASSERT_OK(hal_mem_alloc(gpu, 256, &p));
    std::atomic<int> unexpected{0};
    std::atomic<int> ran{0};
    std::atomic<int> finished{0};
    std::vector<std::thread> users;
    for (int t = 0; t < 3; ++t) {
      users.emplace_back([&, t] {
        hal_stream own = nullptr;
        if (hal_stream_create(gpu, &own) != HAL_SUCCESS) {
          ++unexpected;
          ++finished;
          return;
        }
        const hal_launch_config config = {{1, 1, 1}, {1, 1, 1}, 0};
        void* args[] = {&p};
        uint8_t byte = 7;
        for (int i = 0; i < 20; ++i) {
          const hal_status s =
              (t + i) % 2 ? hal_memcpy_htod(own, p, &byte, 1) : hal_launch(own, k, &config, args);
          if (s == HAL_SUCCESS) {
            ++ran;
          } else if (s != HAL_ERROR_OUT_OF_RANGE) {
            ADD_FAILURE() << hal_status_string(s) << ": " << hal_last_error();
            ++unexpected;
          }
        }
        hal_stream_destroy(own);
        ++finished;
      });
    }
    // Free right after the first use went through, while the rest still run (each thread makes
    // 20 calls of at least 300 us). A fixed sleep here was too short where threads start slowly,
    // as in a sanitizer build, and the free came first.
    while (ran.load() == 0 && finished.load() < 3) std::this_thread::yield();
    EXPECT_OK(hal_mem_free(gpu, p));
    for (std::thread& th : users) th.join();
    EXPECT_EQ(unexpected.load(), 0);
    EXPECT_GT(ran.load(), 0) << "the free came before any use: the race was not exercised";
  }
  gpu_double->set_stream_call_delay(std::chrono::microseconds(0));
  EXPECT_OK(hal_module_unload(module));
}

}  // namespace
}  // namespace hal_test
