// Events on Vulkan: recording one joins the stream's open batch (no submission of its own), the
// ones waiting for it submit that batch, and timestamp queries come from a pool reused from
// record to record.
#include "vk_test_util.h"

#include <chrono>
#include <thread>
#include <vector>

namespace hal_vk_test {
namespace {

constexpr uint32_t kElements = 4096;

class Events : public VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    vadd_ = function(load("vadd"), "main");
    a_ = upload(std::vector<float>(kElements, 1.0f));
    b_ = upload(std::vector<float>(kElements, 2.0f));
    c_ = alloc(kElements * sizeof(float));
    ASSERT_OK(hal_stream_synchronize(stream_));
    ASSERT_OK(hal_event_create(device_, &start_));
    ASSERT_OK(hal_event_create(device_, &end_));
  }
  void TearDown() override {
    for (hal_event event : {start_, end_}) {
      if (event != nullptr) {
        EXPECT_OK(hal_event_destroy(event));
      }
    }
    VulkanTest::TearDown();
  }

  void launch(hal_stream stream, hal_deviceptr a, hal_deviceptr b, hal_deviceptr c) {
    uint32_t n = kElements;
    void* args[] = {&a, &b, &c, &n};
    hal_launch_config config{{kElements / 64, 1, 1}, {0, 0, 0}, 0};
    ASSERT_OK(hal_launch(stream, vadd_, &config, args));
  }

  // Polls |query| (hal_event_query or hal_stream_query) until the work it asks about has
  // completed, for at most a minute: a regression then fails the test instead of hanging it.
  template <typename Query>
  static hal_status poll(Query query) {
    hal_status status = HAL_ERROR_NOT_READY;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (status == HAL_ERROR_NOT_READY && std::chrono::steady_clock::now() < give_up) {
      status = query();
      if (status == HAL_ERROR_NOT_READY) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return status;
  }

  uint64_t submitted(hal_stream stream) {
    auto core = backend_stream_core(stream);
    EXPECT_NE(core, nullptr);
    auto lock = core->lock();
    return core->last_submitted_locked();
  }

  hal_function vadd_ = nullptr;
  hal_deviceptr a_ = 0, b_ = 0, c_ = 0;
  hal_event start_ = nullptr, end_ = nullptr;
};

TEST_F(Events, RecordingDoesNotEndTheBatch) {
  // What a tuner does: record, launch, record, wait, read the time. The kernel and both
  // timestamps go to the device in one submission, so the time is the kernel's alone.
  const uint64_t before = submitted(stream_);
  ASSERT_OK(hal_event_record(start_, stream_));
  launch(stream_, a_, b_, c_);
  ASSERT_OK(hal_event_record(end_, stream_));
  EXPECT_EQ(submitted(stream_), before) << "recording an event submitted the stream's work";
  ASSERT_OK(poll([&] { return hal_event_query(end_); })) << "the event never completed";
  ASSERT_OK(hal_event_synchronize(end_));
  EXPECT_EQ(submitted(stream_), before + 1) << "the three commands took more than one batch";
  EXPECT_OK(hal_event_query(start_));
  if (info_.features & HAL_FEATURE_TIMELINE_SEMAPHORE) {
    float ms = -1;
    const hal_status status = hal_event_elapsed_ms(start_, end_, &ms);
    if (status != HAL_ERROR_NOT_SUPPORTED) {  // a device without timestamps says so
      EXPECT_OK(status);
      EXPECT_GE(ms, 0.0f);
    }
  }
  const std::vector<float> c = download<float>(c_, kElements);
  EXPECT_EQ(c[0], 3.0f);
  EXPECT_EQ(c[kElements - 1], 3.0f);
}

TEST_F(Events, QueryingAnEventStartsItsWork) {
  // Nothing but event queries: the work before the event must still get to the device.
  launch(stream_, a_, b_, c_);
  ASSERT_OK(hal_event_record(end_, stream_));
  ASSERT_OK(poll([&] { return hal_event_query(end_); }))
      << "the event never completed under queries alone";
  const std::vector<float> c = download<float>(c_, kElements);
  EXPECT_EQ(c[kElements / 2], 3.0f);
}

TEST_F(Events, AnotherStreamWaitingSubmitsTheRecordersWork) {
  // Stream 1 writes C and records the event without submitting; stream 2 waits for the event,
  // then adds C to itself into D. Stream 2 completing proves stream 1's batch was submitted for
  // it, and D proves the order.
  hal_stream other = nullptr;
  ASSERT_OK(hal_stream_create(device_, &other));
  const hal_deviceptr d = alloc(kElements * sizeof(float));
  launch(stream_, a_, b_, c_);
  ASSERT_OK(hal_event_record(end_, stream_));
  ASSERT_OK(hal_stream_wait_event(other, end_));
  launch(other, c_, c_, d);
  const hal_status waited = poll([&] { return hal_stream_query(other); });
  // Whatever happened, the first stream's work gets submitted now, so nothing below hangs.
  ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_OK(waited) << "the waiting stream never completed: the event's batch was not submitted";
  ASSERT_OK(hal_stream_synchronize(other));
  std::vector<float> got(kElements);
  ASSERT_OK(hal_memcpy_dtoh(other, got.data(), d, got.size() * sizeof(float)));
  ASSERT_OK(hal_stream_synchronize(other));
  EXPECT_EQ(got[0], 6.0f);
  EXPECT_EQ(got[kElements - 1], 6.0f);
  EXPECT_OK(hal_stream_destroy(other));
}

TEST_F(Events, TimestampQueriesAreReused) {
  auto* device = backend_device(device_);
  ASSERT_NE(device, nullptr);
  if (!device->caps().timestamps) GTEST_SKIP() << "the device has no timestamps";
  // Many more records than one query pool holds, each event waited for: the queries of
  // completed captures are handed out again, so no second pool is created.
  const size_t pools_before = device->timestamps().pool_count();
  for (uint32_t i = 0; i < 3 * hal::vulkan::TimestampPool::kQueriesPerPool; ++i) {
    ASSERT_OK(hal_event_record(start_, stream_));
    ASSERT_OK(hal_event_record(end_, stream_));
    if (i % 64 == 63) {
      ASSERT_OK(hal_event_synchronize(end_));
    }
  }
  ASSERT_OK(hal_event_synchronize(end_));
  float ms = -1;
  EXPECT_OK(hal_event_elapsed_ms(start_, end_, &ms));
  EXPECT_GE(ms, 0.0f);
  EXPECT_LE(device->timestamps().pool_count(), std::max<size_t>(pools_before, 1));
}

}  // namespace
}  // namespace hal_vk_test
