// Streams and events: cross-stream waits, event completion, timing, device synchronisation.
#include "vk_test_util.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace hal_vk_test {
namespace {

class Streams : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    add_ = function(load("multi"), "add_value");
  }
  void add(hal_stream stream, hal_deviceptr y, uint32_t value, uint32_t n, int times = 1) {
    void* args[] = {&y, &value, &n};
    hal_launch_config config{{(n + 15) / 16, 1, 1}, {0, 0, 0}, 0};
    for (int i = 0; i < times; ++i) ASSERT_OK(hal_launch(stream, add_, &config, args));
  }
  hal_function add_ = nullptr;
};

TEST_F(Streams, WaitOnAnEventOfAnotherStream) {
  const uint32_t n = 256;
  hal_deviceptr x = upload(std::vector<uint32_t>(n, 0));
  hal_deviceptr y = alloc(n * 4);
  hal_stream other = nullptr;
  ASSERT_OK(hal_stream_create(device_, &other));
  hal_event done = nullptr;
  ASSERT_OK(hal_event_create(device_, &done));
  ASSERT_OK(hal_stream_synchronize(stream_));

  add(other, x, 1, n, 50);  // x becomes 50 on the other stream
  ASSERT_OK(hal_event_record(done, other));
  ASSERT_OK(hal_stream_wait_event(stream_, done));
  ASSERT_OK(hal_event_destroy(done));  // the wait keeps what it captured
  ASSERT_OK(hal_memcpy_dtod(stream_, y, x, n * 4));
  std::vector<uint32_t> out = download<uint32_t>(y, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 50u) << i;
  EXPECT_OK(hal_stream_query(other));
  ASSERT_OK(hal_stream_destroy(other));
}

TEST_F(Streams, UnrecordedEventIsComplete) {
  hal_event event = nullptr;
  ASSERT_OK(hal_event_create(device_, &event));
  EXPECT_OK(hal_event_query(event));
  EXPECT_OK(hal_event_synchronize(event));
  EXPECT_OK(hal_stream_wait_event(stream_, event));
  EXPECT_OK(hal_stream_synchronize(stream_));
  ASSERT_OK(hal_event_destroy(event));
}

TEST_F(Streams, EventSynchronizeCompletesEarlierCopies) {
  const uint32_t n = 100;
  hal_deviceptr y = upload(std::vector<uint32_t>(n, 5));
  add(stream_, y, 10, n);
  std::vector<uint32_t> out(n, 0);
  ASSERT_OK(hal_memcpy_dtoh(stream_, out.data(), y, n * 4));  // staged: pending work precedes
  hal_event event = nullptr;
  ASSERT_OK(hal_event_create(device_, &event));
  ASSERT_OK(hal_event_record(event, stream_));
  ASSERT_OK(hal_event_synchronize(event));
  EXPECT_OK(hal_event_query(event));
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 15u) << i;
  ASSERT_OK(hal_event_destroy(event));
}

TEST_F(Streams, ElapsedTimeIsPositive) {
  if ((info_.features & HAL_FEATURE_TIMESTAMPS) == 0) GTEST_SKIP() << "no timestamps";
  const uint32_t n = 4096;
  hal_deviceptr y = upload(std::vector<uint32_t>(n, 0));
  hal_event start = nullptr, end = nullptr;
  ASSERT_OK(hal_event_create(device_, &start));
  ASSERT_OK(hal_event_create(device_, &end));
  ASSERT_OK(hal_event_record(start, stream_));
  add(stream_, y, 1, n, 20);
  ASSERT_OK(hal_event_record(end, stream_));
  ASSERT_OK(hal_event_synchronize(end));
  float ms = -1.0f;
  ASSERT_OK(hal_event_elapsed_ms(start, end, &ms));
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 60'000.0f);
  std::vector<uint32_t> out = download<uint32_t>(y, n);
  EXPECT_EQ(out[n - 1], 20u);
  ASSERT_OK(hal_event_destroy(start));
  ASSERT_OK(hal_event_destroy(end));
}

TEST_F(Streams, DeviceSynchronizeWaitsForEveryStream) {
  const uint32_t n = 64;
  hal_deviceptr a = upload(std::vector<uint32_t>(n, 0));
  hal_deviceptr b = upload(std::vector<uint32_t>(n, 0));
  ASSERT_OK(hal_stream_synchronize(stream_));
  hal_stream other = nullptr;
  ASSERT_OK(hal_stream_create(device_, &other));
  add(stream_, a, 2, n, 30);
  add(other, b, 3, n, 30);
  ASSERT_OK(hal_device_synchronize(device_));
  EXPECT_OK(hal_stream_query(stream_));
  EXPECT_OK(hal_stream_query(other));
  std::vector<uint32_t> out_a = download<uint32_t>(a, n), out_b = download<uint32_t>(b, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out_a[i], 60u);
    ASSERT_EQ(out_b[i], 90u);
  }
  ASSERT_OK(hal_stream_destroy(other));
}

TEST_F(Streams, ReRecordingReplacesTheCapture) {
  const uint32_t n = 32;
  hal_deviceptr y = upload(std::vector<uint32_t>(n, 0));
  hal_event event = nullptr;
  ASSERT_OK(hal_event_create(device_, &event));
  add(stream_, y, 1, n);
  ASSERT_OK(hal_event_record(event, stream_));
  add(stream_, y, 1, n);
  ASSERT_OK(hal_event_record(event, stream_));
  ASSERT_OK(hal_event_synchronize(event));
  std::vector<uint32_t> out = download<uint32_t>(y, n);
  EXPECT_EQ(out[0], 2u);
  ASSERT_OK(hal_event_destroy(event));
}

TEST_F(Streams, ThreadsWithTheirOwnStreams) {
  const int threads = 4;
  const uint32_t n = 64;
  std::vector<hal_deviceptr> buffers;
  for (int t = 0; t < threads; ++t) buffers.push_back(upload(std::vector<uint32_t>(n, 0)));
  ASSERT_OK(hal_stream_synchronize(stream_));
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      hal_stream stream = nullptr;
      hal_event event = nullptr;
      if (hal_stream_create(device_, &stream) != HAL_SUCCESS ||
          hal_event_create(device_, &event) != HAL_SUCCESS) {
        ++failures;
        return;
      }
      hal_deviceptr y = buffers[t];
      uint32_t value = static_cast<uint32_t>(t + 1), count = n;
      void* args[] = {&y, &value, &count};
      hal_launch_config config{{(n + 15) / 16, 1, 1}, {0, 0, 0}, 0};
      for (int round = 0; round < 20; ++round) {
        hal_deviceptr scratch = 0;
        if (hal_launch(stream, add_, &config, args) != HAL_SUCCESS) ++failures;
        if (hal_mem_alloc(device_, 1024, &scratch) != HAL_SUCCESS) ++failures;
        if (hal_event_record(event, stream) != HAL_SUCCESS) ++failures;
        if (round % 5 == 0 && hal_device_synchronize(device_) != HAL_SUCCESS) ++failures;
        if (hal_event_synchronize(event) != HAL_SUCCESS) ++failures;
        if (hal_mem_free(device_, scratch) != HAL_SUCCESS) ++failures;
      }
      if (hal_event_destroy(event) != HAL_SUCCESS) ++failures;
      if (hal_stream_destroy(stream) != HAL_SUCCESS) ++failures;
    });
  }
  for (std::thread& worker : workers) worker.join();
  EXPECT_EQ(failures.load(), 0) << hal_last_error();
  for (int t = 0; t < threads; ++t) {
    std::vector<uint32_t> out = download<uint32_t>(buffers[t], n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 20u * (t + 1)) << t;
  }
}

}  // namespace
}  // namespace hal_vk_test
