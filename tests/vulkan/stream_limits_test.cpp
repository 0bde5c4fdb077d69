// Limits of a stream's batching: work issued without ever synchronising holds bounded resources
// (batches in flight, staging memory per batch), and completes correctly.
#include "vk_test_util.h"

#include "vulkan/stream.h"
#include "vulkan/stream_core.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace hal_vk_test {
namespace {

using hal::vulkan::StreamCore;

class StreamLimits : public VulkanTest {
 protected:
  static std::shared_ptr<StreamCore> core(hal_stream stream) { return backend_stream_core(stream); }
};

TEST_F(StreamLimits, LaunchesWithoutSynchronisationKeepFewBatchesInFlight) {
  hal_function add = function(load("multi"), "add_value");
  ASSERT_NE(add, nullptr);
  std::shared_ptr<StreamCore> stream_core = core(stream_);
  ASSERT_NE(stream_core, nullptr);
  const uint32_t n = 16;
  hal_deviceptr dy = upload(std::vector<uint32_t>(n, 0));
  uint32_t one = 1, count = n;
  void* args[] = {&dy, &one, &count};
  hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};
  // More batches than may be in flight, and no synchronisation or query in between: nothing
  // but the stream itself retires them.
  const uint32_t launches =
      (StreamCore::kMaxBatchesInFlight + 4) * StreamCore::kMaxCommandsPerBatch;
  for (uint32_t i = 0; i < launches; ++i) ASSERT_OK(hal_launch(stream_, add, &config, args));
  {
    auto lock = stream_core->lock();
    EXPECT_GE(stream_core->last_submitted_locked(), StreamCore::kMaxBatchesInFlight + 4);
    EXPECT_LE(stream_core->in_flight_count_locked(), StreamCore::kMaxBatchesInFlight);
  }
  std::vector<uint32_t> out = download<uint32_t>(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], launches) << i;
}

TEST_F(StreamLimits, StagingMemoryEndsABatch) {
  hal_function add = function(load("multi"), "add_value");
  ASSERT_NE(add, nullptr);
  std::shared_ptr<StreamCore> stream_core = core(stream_);
  ASSERT_NE(stream_core, nullptr);
  const size_t size = 3 * StreamCore::kStagingChunkSize / 2;  // each copy stages on its own
  const size_t copies = StreamCore::kMaxStagingBytesPerBatch / size + 2;
  hal_deviceptr dst = alloc(size);
  hal_deviceptr busy = upload(std::vector<uint32_t>(16, 0));
  uint32_t one = 1, count = 16;
  void* args[] = {&busy, &one, &count};
  hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};
  ASSERT_OK(hal_stream_synchronize(stream_));
  uint64_t submitted_before = 0;
  {
    auto lock = stream_core->lock();
    submitted_before = stream_core->last_submitted_locked();
  }
  // A launch first, so the copies are recorded behind it rather than done on the host.
  ASSERT_OK(hal_launch(stream_, add, &config, args));
  std::vector<uint8_t> bytes(size);
  for (size_t c = 0; c < copies; ++c) {
    std::fill(bytes.begin(), bytes.end(), static_cast<uint8_t>(c + 1));
    ASSERT_OK(hal_memcpy_htod(stream_, dst, bytes.data(), size));
  }
  {
    auto lock = stream_core->lock();
    EXPECT_GT(stream_core->last_submitted_locked(), submitted_before)
        << copies * size << " bytes of staging stayed in one unsubmitted batch";
  }
  std::vector<uint8_t> out = download<uint8_t>(dst, size);
  for (size_t i = 0; i < size; i += 4099) ASSERT_EQ(out[i], static_cast<uint8_t>(copies)) << i;
}

// Waiting for an event whose work is done still joins the next submission (the semaphore wait
// carries the memory dependency), but repeated waits on one stream's events stay one wait.
TEST_F(StreamLimits, WaitsOnAnotherStreamAreMergedIntoOne) {
  std::shared_ptr<StreamCore> stream_core = core(stream_);
  ASSERT_NE(stream_core, nullptr);
  hal_deviceptr x = upload(std::vector<uint32_t>(64, 9));
  hal_deviceptr y = alloc(64 * 4);
  hal_stream other = nullptr;
  ASSERT_OK(hal_stream_create(device_, &other));
  hal_event event = nullptr;
  ASSERT_OK(hal_event_create(device_, &event));
  ASSERT_OK(hal_stream_synchronize(stream_));
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(hal_memset_d32(other, x, static_cast<uint32_t>(i), 64));
    ASSERT_OK(hal_event_record(event, other));
    if (i % 2 == 0) {  // done before the wait, or not
      ASSERT_OK(hal_event_synchronize(event));
    }
    ASSERT_OK(hal_stream_wait_event(stream_, event));
  }
  {
    auto lock = stream_core->lock();
    EXPECT_LE(stream_core->wait_count_locked(), 1u);
  }
  ASSERT_OK(hal_memcpy_dtod(stream_, y, x, 64 * 4));
  std::vector<uint32_t> out = download<uint32_t>(y, 64);
  for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(out[i], 99u) << i;
  ASSERT_OK(hal_event_destroy(event));
  ASSERT_OK(hal_stream_destroy(other));
}

// A stream that waits for its oldest batch (more than kMaxBatchesInFlight issued) releases its
// lock meanwhile; device synchronisation and event queries from another thread run in that gap
// and must neither corrupt the stream nor lose work.
TEST_F(StreamLimits, OtherThreadsRunWhileAStreamWaitsForABatch) {
  hal_function add = function(load("multi"), "add_value");
  ASSERT_NE(add, nullptr);
  const uint32_t n = 16;
  hal_deviceptr a = upload(std::vector<uint32_t>(n, 0));
  hal_deviceptr b = upload(std::vector<uint32_t>(n, 0));
  ASSERT_OK(hal_stream_synchronize(stream_));
  hal_stream other = nullptr;
  ASSERT_OK(hal_stream_create(device_, &other));
  hal_event event = nullptr;
  ASSERT_OK(hal_event_create(device_, &event));
  uint32_t one = 1, count = n;
  void* args_a[] = {&a, &one, &count};
  void* args_b[] = {&b, &one, &count};
  hal_launch_config config{{1, 1, 1}, {0, 0, 0}, 0};

  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread observer([&] {
    while (!done.load()) {
      if (hal_device_synchronize(device_) != HAL_SUCCESS) ++failures;
      const hal_status query = hal_event_query(event);
      if (query != HAL_SUCCESS && query != HAL_ERROR_NOT_READY) ++failures;
    }
  });
  const uint32_t launches =
      (StreamCore::kMaxBatchesInFlight + 4) * StreamCore::kMaxCommandsPerBatch;
  uint32_t other_launches = 0;
  for (uint32_t i = 0; i < launches; ++i) {
    ASSERT_OK(hal_launch(stream_, add, &config, args_a));
    if (i % 64 == 0) {  // cross-stream waits, so flushes from the observer have work to submit
      ASSERT_OK(hal_launch(other, add, &config, args_b));
      ++other_launches;
      ASSERT_OK(hal_event_record(event, other));
      ASSERT_OK(hal_stream_wait_event(stream_, event));
    }
  }
  done.store(true);
  observer.join();
  EXPECT_EQ(failures.load(), 0) << hal_last_error();
  ASSERT_OK(hal_stream_synchronize(other));
  std::vector<uint32_t> out_a = download<uint32_t>(a, n);
  std::vector<uint32_t> out_b = download<uint32_t>(b, n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out_a[i], launches) << i;
    ASSERT_EQ(out_b[i], other_launches) << i;
  }
  ASSERT_OK(hal_event_destroy(event));
  ASSERT_OK(hal_stream_destroy(other));
}

}  // namespace
}  // namespace hal_vk_test
