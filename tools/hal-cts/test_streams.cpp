// Area Streams: ordering within a stream, two streams working in parallel with cross-stream
// waits, stream and event queries, event synchronisation and elapsed time.
#include <cmath>
#include <cstring>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

class Streams : public DeviceTest {};

// Copies and fills issued back to back without synchronising: each sees the one before it.
TEST_P(Streams, OrderWithinStream) {
  const size_t bytes = options().quick ? (size_t{1} << 20) : (size_t{8} << 20);
  Buffer x(device(), bytes), y(device(), bytes), z(device(), bytes);
  ASSERT_TRUE(x.ok() && y.ok() && z.ok()) << x.error() << y.error() << z.error();
  const int rounds = options().quick ? 3 : 8;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::vector<uint8_t> a = pattern(bytes, 10 + round), b = pattern(bytes, 50 + round);
    std::vector<uint8_t> got_y(bytes), got_z(bytes), got_x(bytes);
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, x.ptr, a.data(), bytes));
    CTS_ASSERT_OK(hal_memcpy_dtod(stream_, y.ptr, x.ptr, bytes));
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, x.ptr, b.data(), bytes));
    CTS_ASSERT_OK(hal_memcpy_dtod(stream_, z.ptr, x.ptr, bytes));
    CTS_ASSERT_OK(hal_memset_d8(stream_, x.ptr + 1, 0x5A, bytes - 2));
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got_y.data(), y.ptr, bytes));
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got_z.data(), z.ptr, bytes));
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got_x.data(), x.ptr, bytes));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    EXPECT_EQ(first_difference(a.data(), got_y.data(), bytes), -1) << "y: the first copy";
    EXPECT_EQ(first_difference(b.data(), got_z.data(), bytes), -1) << "z: the second copy";
    std::vector<uint8_t> want_x = b;
    std::memset(want_x.data() + 1, 0x5A, bytes - 2);
    EXPECT_EQ(first_difference(want_x.data(), got_x.data(), bytes), -1) << "x: after the fill";
  }
}

// A kernel between copies on one stream sees the copy before it and is seen by the one after.
TEST_P(Streams, KernelOrderWithinStream) {
  Kernel saxpy;
  CTS_LOAD_OR_SKIP(saxpy, "saxpy");
  const uint32_t n = 4099;
  Buffer x(device(), n * 4), y(device(), n * 4);
  ASSERT_TRUE(x.ok() && y.ok()) << x.error() << y.error();
  std::vector<float> hx(n), hy(n), got(n);
  for (uint32_t i = 0; i < n; ++i) {
    hx[i] = static_cast<float>(i % 97);
    hy[i] = 1.0f;
  }
  uint32_t count = n;
  float alpha = 2.0f;
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, x.ptr, hx.data(), n * 4));
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, y.ptr, hy.data(), n * 4));
  for (int i = 0; i < 4; ++i) {
    ASSERT_NO_FATAL_FAILURE(
        saxpy.launch(stream_, (n + 255) / 256, 1, 1, {&x.ptr, &y.ptr, &count, &alpha}));
  }
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, got.data(), y.ptr, n * 4));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  size_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) wrong += got[i] != 1.0f + 8.0f * hx[i];
  EXPECT_EQ(wrong, 0u) << "four saxpy launches in order (exact in fp32 for these values)";
}

// Stream A produces, stream B waits on A's event and consumes; the other way round as well.
TEST_P(Streams, CrossStreamWait) {
  hal_stream other = nullptr;
  CTS_ASSERT_OK(hal_stream_create(device(), &other));
  hal_event produced = nullptr, consumed = nullptr;
  CTS_ASSERT_OK(hal_event_create(device(), &produced));
  CTS_ASSERT_OK(hal_event_create(device(), &consumed));
  const size_t bytes = options().quick ? (size_t{1} << 20) : (size_t{16} << 20);
  Buffer x(device(), bytes), y(device(), bytes);
  ASSERT_TRUE(x.ok() && y.ok()) << x.error() << y.error();
  const int rounds = options().quick ? 3 : 10;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::vector<uint8_t> in = pattern(bytes, 200 + round);
    std::vector<uint8_t> out(bytes, 0);
    // Do not overwrite x before the previous round's consumer has read it.
    CTS_ASSERT_OK(hal_stream_wait_event(stream_, consumed));
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, x.ptr, in.data(), bytes));
    CTS_ASSERT_OK(hal_memset_d8(stream_, x.ptr, static_cast<uint8_t>(round), 7));
    CTS_ASSERT_OK(hal_event_record(produced, stream_));
    CTS_ASSERT_OK(hal_stream_wait_event(other, produced));
    CTS_ASSERT_OK(hal_memcpy_dtod(other, y.ptr, x.ptr, bytes));
    CTS_ASSERT_OK(hal_event_record(consumed, other));
    CTS_ASSERT_OK(hal_memcpy_dtoh(other, out.data(), y.ptr, bytes));
    CTS_ASSERT_OK(hal_stream_synchronize(other));
    std::vector<uint8_t> want = in;
    std::memset(want.data(), round, 7);
    EXPECT_EQ(first_difference(want.data(), out.data(), bytes), -1);
  }
  // A wait on an event never recorded waits for nothing.
  hal_event fresh = nullptr;
  CTS_ASSERT_OK(hal_event_create(device(), &fresh));
  CTS_EXPECT_OK(hal_stream_wait_event(other, fresh));
  CTS_EXPECT_OK(hal_stream_synchronize(other));
  CTS_EXPECT_OK(hal_event_destroy(fresh));
  CTS_EXPECT_OK(hal_event_destroy(produced));
  CTS_EXPECT_OK(hal_event_destroy(consumed));
  CTS_EXPECT_OK(hal_stream_destroy(other));
}

// Two streams each run their own work at the same time; both results are right.
TEST_P(Streams, TwoStreamsInParallel) {
  hal_stream streams[2] = {stream_, nullptr};
  CTS_ASSERT_OK(hal_stream_create(device(), &streams[1]));
  const size_t bytes = options().quick ? (size_t{2} << 20) : (size_t{32} << 20);
  Buffer a0(device(), bytes), b0(device(), bytes), a1(device(), bytes), b1(device(), bytes);
  ASSERT_TRUE(a0.ok() && b0.ok() && a1.ok() && b1.ok())
      << a0.error() << b0.error() << a1.error() << b1.error();
  const hal_deviceptr src[2] = {a0.ptr, a1.ptr}, dst[2] = {b0.ptr, b1.ptr};
  std::vector<uint8_t> in[2] = {pattern(bytes, 1), pattern(bytes, 2)};
  std::vector<uint8_t> out[2] = {std::vector<uint8_t>(bytes), std::vector<uint8_t>(bytes)};
  for (int s = 0; s < 2; ++s) {
    CTS_ASSERT_OK(hal_memcpy_htod(streams[s], src[s], in[s].data(), bytes));
    for (int i = 0; i < 4; ++i) {
      CTS_ASSERT_OK(hal_memcpy_dtod(streams[s], dst[s], src[s], bytes));
    }
    CTS_ASSERT_OK(hal_memcpy_dtoh(streams[s], out[s].data(), dst[s], bytes));
  }
  CTS_ASSERT_OK(hal_device_synchronize(device()));
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(first_difference(in[s].data(), out[s].data(), bytes), -1) << "stream " << s;
    EXPECT_EQ(hal_stream_query(streams[s]), HAL_SUCCESS) << "after hal_device_synchronize";
  }
  CTS_EXPECT_OK(hal_stream_destroy(streams[1]));
}

TEST_P(Streams, Query) {
  CTS_EXPECT_OK(hal_stream_query(stream_));  // nothing issued yet
  hal_event event = nullptr;
  CTS_ASSERT_OK(hal_event_create(device(), &event));
  CTS_EXPECT_OK(hal_event_query(event));  // never recorded: complete
  CTS_EXPECT_OK(hal_event_synchronize(event));
  const size_t bytes = size_t{4} << 20;
  Buffer x(device(), bytes), y(device(), bytes);
  ASSERT_TRUE(x.ok() && y.ok()) << x.error() << y.error();
  CTS_ASSERT_OK(hal_memset_d8(stream_, x.ptr, 1, bytes));
  for (int i = 0; i < 8; ++i) CTS_ASSERT_OK(hal_memcpy_dtod(stream_, y.ptr, x.ptr, bytes));
  CTS_ASSERT_OK(hal_event_record(event, stream_));
  // Pending work answers NOT_READY or SUCCESS; NOT_READY leaves hal_last_error() as it was.
  const std::string before = hal_last_error();
  const hal_status sq = hal_stream_query(stream_);
  EXPECT_TRUE(sq == HAL_SUCCESS || sq == HAL_ERROR_NOT_READY) << describe(sq);
  const hal_status eq = hal_event_query(event);
  EXPECT_TRUE(eq == HAL_SUCCESS || eq == HAL_ERROR_NOT_READY) << describe(eq);
  EXPECT_EQ(std::string(hal_last_error()), before) << "HAL_ERROR_NOT_READY set the last error";
  // Polling reaches SUCCESS without any synchronize.
  const double deadline = now_ms() + 60000;
  hal_status polled = HAL_ERROR_NOT_READY;
  while (polled == HAL_ERROR_NOT_READY && now_ms() < deadline) polled = hal_event_query(event);
  EXPECT_EQ(polled, HAL_SUCCESS) << "the event never completed while polled";
  CTS_EXPECT_OK(hal_event_synchronize(event));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  CTS_EXPECT_OK(hal_stream_query(stream_));
  CTS_EXPECT_OK(hal_event_destroy(event));
}

TEST_P(Streams, ElapsedTime) {
  hal_event start = nullptr, end = nullptr, never = nullptr;
  CTS_ASSERT_OK(hal_event_create(device(), &start));
  CTS_ASSERT_OK(hal_event_create(device(), &end));
  CTS_ASSERT_OK(hal_event_create(device(), &never));
  const size_t bytes = options().quick ? (size_t{4} << 20) : (size_t{64} << 20);
  Buffer x(device(), bytes), y(device(), bytes);
  ASSERT_TRUE(x.ok() && y.ok()) << x.error() << y.error();
  CTS_ASSERT_OK(hal_event_record(start, stream_));
  for (int i = 0; i < 4; ++i) CTS_ASSERT_OK(hal_memcpy_dtod(stream_, y.ptr, x.ptr, bytes));
  CTS_ASSERT_OK(hal_event_record(end, stream_));
  CTS_ASSERT_OK(hal_event_synchronize(end));
  float ms = -1;
  const hal_status s = hal_event_elapsed_ms(start, end, &ms);
  if ((info().features & HAL_FEATURE_TIMESTAMPS) != 0) {
    ASSERT_EQ(s, HAL_SUCCESS) << "the device has timestamps: " << describe(s);
    EXPECT_TRUE(std::isfinite(ms) && ms >= 0) << ms << " ms";
    EXPECT_LT(ms, 60000.0f) << "four copies of " << bytes << " bytes";
    float back = 0;
    CTS_EXPECT_OK(hal_event_elapsed_ms(end, start, &back));
    EXPECT_LE(back, 0.0f) << "end to start is not positive";
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_event_elapsed_ms",
                      hal_event_elapsed_ms(start, never, &ms));
    CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_event_elapsed_ms",
                      hal_event_elapsed_ms(start, end, nullptr));
  } else {
    EXPECT_EQ(s, HAL_ERROR_NOT_SUPPORTED) << "no HAL_FEATURE_TIMESTAMPS: " << describe(s);
  }
  CTS_EXPECT_OK(hal_event_destroy(start));
  CTS_EXPECT_OK(hal_event_destroy(end));
  CTS_EXPECT_OK(hal_event_destroy(never));
}

INSTANTIATE_TEST_SUITE_P(, Streams, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
