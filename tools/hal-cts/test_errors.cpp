// Area Errors: invalid handles (NULL, garbage, destroyed, of the wrong kind), freed pointers and
// out-of-range copies each give the documented status, hal_last_error() names the call, and the
// device still runs a kernel correctly afterwards.
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

class Errors : public DeviceTest {};

template <typename Handle>
Handle garbage(uintptr_t value) {
  return reinterpret_cast<Handle>(value);
}

TEST_P(Errors, InvalidHandles) {
  Buffer d(device(), 256);
  ASSERT_TRUE(d.ok()) << d.error();
  uint8_t host[16] = {};
  const hal_stream bad_stream = garbage<hal_stream>(0xDEADBEEF0);
  const hal_event bad_event = garbage<hal_event>(0x123456780);
  const hal_device bad_device = garbage<hal_device>(0xBAD0);
  hal_deviceptr p = 0;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_mem_alloc", hal_mem_alloc(nullptr, 16, &p));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_mem_alloc", hal_mem_alloc(bad_device, 16, &p));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_device_synchronize",
                    hal_device_synchronize(bad_device));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_memcpy_htod",
                    hal_memcpy_htod(bad_stream, d.ptr, host, 16));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_memcpy_dtoh",
                    hal_memcpy_dtoh(nullptr, host, d.ptr, 16));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_stream_synchronize",
                    hal_stream_synchronize(bad_stream));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_event_record",
                    hal_event_record(bad_event, stream_));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_event_query", hal_event_query(nullptr));
  // Handles of the wrong kind: an event where a stream is expected and the other way round.
  hal_event event = nullptr;
  CTS_ASSERT_OK(hal_event_create(device(), &event));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_stream_synchronize",
                    hal_stream_synchronize(reinterpret_cast<hal_stream>(event)));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_event_synchronize",
                    hal_event_synchronize(reinterpret_cast<hal_event>(stream_)));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_mem_alloc",
                    hal_mem_alloc(reinterpret_cast<hal_device>(stream_), 16, &p));
  // Destroyed handles.
  hal_stream dead = nullptr;
  CTS_ASSERT_OK(hal_stream_create(device(), &dead));
  CTS_ASSERT_OK(hal_stream_destroy(dead));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_stream_destroy", hal_stream_destroy(dead));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_memcpy_htod",
                    hal_memcpy_htod(dead, d.ptr, host, 16));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_stream_query", hal_stream_query(dead));
  CTS_ASSERT_OK(hal_event_destroy(event));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_event_destroy", hal_event_destroy(event));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_stream_wait_event",
                    hal_stream_wait_event(stream_, event));
  hal_stream fresh = nullptr;
  CTS_ASSERT_OK(hal_stream_create(device(), &fresh));
  EXPECT_NE(fresh, dead) << "handle values are never reused";
  CTS_EXPECT_OK(hal_stream_destroy(fresh));
  hal_device_info di{};
  di.struct_size = sizeof di;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_device_get_info",
                    hal_device_get_info(bad_device, &di));
  expect_device_works("invalid handles");
}

TEST_P(Errors, FreedPointers) {
  hal_deviceptr p = 0;
  CTS_ASSERT_OK(hal_mem_alloc(device(), 4096, &p));
  CTS_ASSERT_OK(hal_mem_free(device(), p));
  std::vector<uint8_t> host(64, 1);
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod",
                    hal_memcpy_htod(stream_, p, host.data(), host.size()));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtoh",
                    hal_memcpy_dtoh(stream_, host.data(), p + 8, 8));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memset_d8", hal_memset_d8(stream_, p, 0, 1));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_mem_free", hal_mem_free(device(), p));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  expect_device_works("uses of freed memory");
}

TEST_P(Errors, OutOfRangeCopies) {
  const size_t bytes = 1000;
  Buffer a(device(), bytes), b(device(), bytes);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error() << b.error();
  std::vector<uint8_t> host(2 * bytes, 3);
  // One byte past the end, starting before the base, in the gap between allocations, at 0.
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod",
                    hal_memcpy_htod(stream_, a.ptr, host.data(), bytes + 1));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_htod",
                    hal_memcpy_htod(stream_, a.ptr + 999, host.data(), 2));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtoh",
                    hal_memcpy_dtoh(stream_, host.data(), a.ptr - 1, 4));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtoh",
                    hal_memcpy_dtoh(stream_, host.data(), 0, 4));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtod",
                    hal_memcpy_dtod(stream_, b.ptr, a.ptr + 1, bytes));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtod",
                    hal_memcpy_dtod(stream_, b.ptr + 1, a.ptr, bytes));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memset_d8",
                    hal_memset_d8(stream_, a.ptr + 500, 0, 501));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memset_d32",
                    hal_memset_d32(stream_, a.ptr, 0, bytes / 4 + 1));
  // A range whose end wraps around the address space.
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memcpy_dtoh",
                    hal_memcpy_dtoh(stream_, host.data(), a.ptr + 8, SIZE_MAX - 4));
  // NULL host pointers with a size.
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_memcpy_htod",
                    hal_memcpy_htod(stream_, a.ptr, nullptr, 4));
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_memcpy_dtoh",
                    hal_memcpy_dtoh(stream_, nullptr, a.ptr, 4));
  // The refused copies wrote nothing: the exact fit still works and the bytes are intact.
  const std::vector<uint8_t> in = pattern(bytes, 4);
  std::vector<uint8_t> out(bytes, 0);
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, a.ptr, in.data(), bytes));
  CTS_EXPECT_STATUS(HAL_ERROR_OUT_OF_RANGE, "hal_memset_d8",
                    hal_memset_d8(stream_, a.ptr + 1, 0, bytes));
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, out.data(), a.ptr, bytes));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(first_difference(in.data(), out.data(), bytes), -1);
  expect_device_works("out-of-range copies");
}

TEST_P(Errors, LastErrorIsPerCallAndPerThread) {
  hal_deviceptr p = 0;
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_mem_alloc", hal_mem_alloc(device(), 0, &p));
  const std::string first = hal_last_error();
  // A successful call leaves it as it was.
  CTS_ASSERT_OK(hal_mem_alloc(device(), 64, &p));
  EXPECT_EQ(std::string(hal_last_error()), first) << "a successful call changed the last error";
  CTS_EXPECT_OK(hal_mem_free(device(), p));
  // Another thread has its own.
  std::string other = "unset";
  std::thread t([&] { other = hal_last_error(); });
  t.join();
  EXPECT_EQ(other, "") << "a thread that has seen no failure has an empty last error";
  EXPECT_NE(std::string(hal_status_string(HAL_ERROR_OUT_OF_RANGE)).find("OUT_OF_RANGE"),
            std::string::npos);
  EXPECT_EQ(std::string(hal_status_string(static_cast<hal_status>(9999))), "HAL_STATUS_UNKNOWN");
}

INSTANTIATE_TEST_SUITE_P(, Errors, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
